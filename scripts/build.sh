#!/usr/bin/env bash
# Configures (once) and builds Kina into build/ with Ninja and clang.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
v=$(tr -d '[:space:]' < "$root/LLVM_VERSION")
build="${KINA_BUILD_DIR:-$root/build}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE="${KINA_BUILD_TYPE:-Release}" \
    -DCMAKE_C_COMPILER="clang-$v" -DCMAKE_CXX_COMPILER="clang++-$v" \
    -DLLVM_USE_LINKER=lld \
    -DCMAKE_EXE_LINKER_FLAGS="-fuse-ld=/usr/lib/llvm-$v/bin/ld.lld" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fuse-ld=/usr/lib/llvm-$v/bin/ld.lld" \
    -DCMAKE_MODULE_LINKER_FLAGS="-fuse-ld=/usr/lib/llvm-$v/bin/ld.lld" \
    ${KINA_CMAKE_ARGS:-}
fi
cmake --build "$build" -j "$(nproc)"
# The built package is importable by /usr/bin/python3 from anywhere, as an
# installed one would be: a .pth file in its site-packages (the user's
# when not root) names build/python. Only the default build is named, not
# another build directory (the sanitizer build's).
if [ -z "${KINA_BUILD_DIR:-}" ]; then
  site=$(/usr/bin/python3 -c 'import os, site
print(site.getsitepackages()[0] if os.geteuid() == 0 else site.getusersitepackages())')
  mkdir -p "$site"
  echo "$build/python" > "$site/kina.pth"
fi
