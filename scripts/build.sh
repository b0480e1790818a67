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
