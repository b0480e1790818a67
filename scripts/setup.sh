#!/usr/bin/env bash
# The README's first command: install what is missing, build, then the main
# job -- compile examples/storylm0_tp_vocab.kina to a shared object and
# validate it against the unsharded forward (scripts/validate/validate_tp_vocab.py).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"

echo "== main job: examples/storylm0_tp_vocab.kina"
mkdir -p "$root/build/examples"
"$root/build/bin/kina-translate" --kina-to-so \
  "$root/examples/storylm0_tp_vocab.kina" \
  -o "$root/build/examples/storylm0_tp_vocab.so" --emit-header
echo "wrote build/examples/storylm0_tp_vocab.so and .h"
/usr/bin/python3 "$root/scripts/validate/validate_tp_vocab.py"
