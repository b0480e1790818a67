#!/usr/bin/env bash
# The README's second command: every test. Installs and builds first when
# needed (a fresh clone), so CI runs exactly this.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh
start=$SECONDS
bash scripts/build.sh
echo "== build: $((SECONDS - start)) s"

export PYTHONPATH="$root/build/python${PYTHONPATH:+:$PYTHONPATH}"
python=/usr/bin/python3
failed=()
run() { # name, command...
  local name=$1 start=$SECONDS; shift
  echo "== $name"
  if "$@"; then echo "== $name: ok ($((SECONDS - start)) s)"
  else echo "== $name: FAILED ($((SECONDS - start)) s)"; failed+=("$name"); fi
}

run "lit (dialect, frontend, lowering, transforms, C ABI)" \
  cmake --build build --target check-kina
# One worker per core (pytest-xdist), each test file on one worker, so a
# file's compiled modules are compiled once.
run "pytest (execution through the C ABI, Python API, validations)" \
  "$python" -m pytest -q -p no:cacheprovider -n auto --dist loadfile \
  --durations=15 \
  test/Target test/python
# The notebooks, two at a time (most of each is one core's compiling),
# longest first; each one's output is printed whole once all have run.
notebooks=(examples/gpt.ipynb examples/train.ipynb examples/jit.ipynb
           examples/storylm0.ipynb)
results=$(mktemp -d)
printf '%s\n' "${notebooks[@]}" | xargs -P 2 -I{} bash -c '
  out="$2/$(basename "$1" .ipynb)"; start=$SECONDS
  if "$0" scripts/validate/run_notebook.py "$1" > "$out.log" 2>&1
  then status=ok; else status=FAILED; fi
  echo "$status ($((SECONDS - start)) s)" > "$out.status"' "$python" {} "$results"
for notebook in "${notebooks[@]}"; do
  out="$results/$(basename "$notebook" .ipynb)"
  echo "== notebook $notebook"
  cat "$out.log"
  echo "== notebook $notebook: $(cat "$out.status")"
  grep -q '^ok' "$out.status" || failed+=("notebook $notebook")
done
rm -rf "$results"
# ASan + UBSan build, sanitized suites, generated code under ASan, fuzzers
# (KINA_SKIP_HARDENING=1 skips it in a quick local loop).
if [ "${KINA_SKIP_HARDENING:-0}" != 1 ]; then
  run "hardening (scripts/hardening.sh)" bash scripts/hardening.sh
fi

if [ ${#failed[@]} -ne 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all test stages passed"
