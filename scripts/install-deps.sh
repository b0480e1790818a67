#!/usr/bin/env bash
# Installs the Debian packages Kina needs, only those missing (idempotent).
# The LLVM/MLIR major version comes from the file LLVM_VERSION.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
v=$(tr -d '[:space:]' < "$root/LLVM_VERSION")
packages=(
  "llvm-$v-dev" "libmlir-$v-dev" "mlir-$v-tools" "llvm-$v-tools" "clang-$v" "lld-$v"
  "libclang-rt-$v-dev" libzstd-dev zlib1g-dev libz3-dev
  cmake ninja-build libgtest-dev pybind11-dev python3-pybind11 python3-numpy python3-dev
  python3-pytest python3-pytest-xdist python3-torch python3-matplotlib jupyter-nbconvert
  python3-nbformat python3-ipykernel python3-threadpoolctl
  libopenblas0-pthread
  openmpi-bin libopenmpi-dev
  fortunes
  coinor-libcbc-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
