#!/usr/bin/env bash
# The bad-input contract, checked: Kina's own code built with ASan + UBSan
# (and libFuzzer) into build-hardening/, then
#   1. the lit suite and the pytest suites run on the sanitized build,
#   2. every example compiled with --sanitize-address and called on
#      exact-size heap buffers by the sanitized kina-abi-check, with ids in
#      range, negative and huge,
#   3. each fuzzer replays its regression inputs, then runs for
#      KINA_FUZZ_SECONDS (default 30) from the committed seeds.
# Exits non-zero on any failure or sanitizer report.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
v=$(tr -d '[:space:]' < LLVM_VERSION)
build="$root/build-hardening"
seconds="${KINA_FUZZ_SECONDS:-30}"

start=$SECONDS
KINA_BUILD_DIR="$build" KINA_CMAKE_ARGS="-DKINA_FUZZ=ON" bash scripts/build.sh
echo "== sanitized build: $((SECONDS - start)) s"
runtime="$("clang-$v" -print-resource-dir)/lib/linux/libclang_rt.asan-x86_64.so"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons new slabs when
# the code including it is ASan-built; our instrumented copies of it
# interpose on the uninstrumented libMLIR.so, whose inlined allocations then
# look like use-after-poison. Heap, stack and global checks are unaffected.
common_asan="allow_user_poisoning=0:strict_string_checks=1"
export ASAN_OPTIONS="detect_leaks=1:$common_asan"
failed=()
run() {
  local name=$1 start=$SECONDS; shift
  echo "== $name"
  if "$@"; then echo "== $name: ok ($((SECONDS - start)) s)"
  else echo "== $name: FAILED ($((SECONDS - start)) s)"; failed+=("$name"); fi
}

run "lit under ASan+UBSan" "/usr/lib/llvm-$v/bin/lit" -q "$build/test"
# Python itself is not instrumented: preload the runtime, skip its leaks.
# OpenMPI is not either (its daemons would inherit the preload): the MPI
# tests run in the plain suite; the collectives' runtime code runs here
# under the simulator.
run "pytest under ASan+UBSan" env LD_PRELOAD="$runtime" \
  ASAN_OPTIONS="detect_leaks=0:$common_asan" KINA_BIN="$build/bin" KINA_UNDER_ASAN=1 \
  KINA_PYTHON_DIR="$build/python" PYTHONPATH="$build/python" KINA_SKIP_MPI=1 \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider -n auto --dist loadfile \
  test/Target test/python

generated() {
  local tmp status=0
  tmp=$(mktemp -d)
  for example in examples/*.kina test/Target/Inputs/element-types.kina; do
    local so="$tmp/$(basename "$example" .kina).so"
    "$build/bin/kina-translate" --kina-to-so --sanitize-address "$example" \
      -o "$so" || status=1
    for ids in in-range negative huge; do
      echo "-- $(basename "$example") --ids=$ids"
      "$build/bin/kina-abi-check" "$so" --ids="$ids" || status=1
    done
  done
  rm -rf "$tmp"
  return $status
}
run "generated code under ASan (every example and element type, every function)" generated

fuzz() { # harness, seed directories...
  local harness=$1; shift
  local corpus="$build/fuzz-corpus/$harness"
  mkdir -p "$corpus" "fuzz/regressions/$harness"
  local regressions=(fuzz/regressions/"$harness"/*)
  # The harnesses link libFuzzer statically and ASan's runtime as a shared
  # library, which must come first: preload it.
  if [ -e "${regressions[0]}" ]; then
    LD_PRELOAD="$runtime" "$build/bin/$harness" "${regressions[@]}"
  fi
  LD_PRELOAD="$runtime" "$build/bin/$harness" -max_total_time="$seconds" -timeout=20 \
    -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-crash-$harness-" "$corpus" "$@"
}
# test/Differentiate seeds both: reverseMode programs (.test) and kina IR
# with kina.reverse_mode and explicit collectives (.mlir).
run "fuzz-frontend (${seconds}s)" fuzz fuzz-frontend examples test/Frontend test/Frontend/errors \
  test/Frontend/errors/sharding test/Differentiate
run "fuzz-dialect (${seconds}s)" fuzz fuzz-dialect test/Dialect/Kina test/Conversion/KinaToLinalg \
  test/Sharding test/Differentiate
run "fuzz-compile (${seconds}s)" fuzz fuzz-compile

if [ ${#failed[@]} -ne 0 ]; then
  echo "hardening FAILED: ${failed[*]}"
  exit 1
fi
echo "hardening: all stages passed"
