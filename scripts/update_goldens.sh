#!/usr/bin/env bash
# Regenerates the committed linalg-level goldens of the four examples
# (test/Conversion/KinaToLinalg/Inputs). Review the diff before committing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="${KINA_BUILD_DIR:-$root/build}/bin"
for example in forward tp_heads tp_vocab tp_proj; do
  "$bin/kina-translate" --import-kina "$root/examples/storylm0_$example.kina" |
    "$bin/kina-opt" --kina-to-linalg \
      > "$root/test/Conversion/KinaToLinalg/Inputs/storylm0_$example.linalg.mlir"
done
echo "goldens written; review with: git diff test/Conversion/KinaToLinalg/Inputs"
