#!/usr/bin/env bash
# Builds the scheduling plugins written in Python and JavaScript and the
# test fixtures built the same way, and runs the plugins' own tests:
#
#   hack/polyglot.sh python       plugins/python/team-gpu-isolation (make:
#                                 componentize-py; make test: pytest), the
#                                 probe fixture with and without WASI stubs
#   hack/polyglot.sh javascript   plugins/javascript/team-gpu-isolation
#                                 (npm run build: componentize-js; npm
#                                 test: node's test runner), its probe
#   hack/polyglot.sh              both
#
# The toolchains are pinned in each project (requirements.txt, installed
# into .venv by its Makefile; package.json and package-lock.json,
# installed by `npm ci`). host/tests/polyglot.rs then loads the
# components.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
py=plugins/python/team-gpu-isolation
js=plugins/javascript/team-gpu-isolation

python() {
  make -C "$py" build test
  local probe=testdata/plugins/probe-python
  mkdir -p "$probe/build"
  # The probe imports the plugin's log module; the same stubs, and once
  # without them (a component importing WASI, which the host refuses).
  (cd "$probe" && "$root/$py/.venv/bin/componentize-py" -d "$root/wit" -w score-plugin \
    componentize --stub-wasi -p . -p "$root/$py" probe -o build/probe.wasm)
  (cd "$probe" && "$root/$py/.venv/bin/componentize-py" -d "$root/wit" -w score-plugin \
    componentize -p . -p "$root/$py" probe -o build/probe-with-wasi.wasm)
}

javascript() {
  if [ ! -f "$js/node_modules/@bytecodealliance/componentize-js/src/cli.js" ]; then
    (cd "$js" && npm ci --no-audit --no-fund)
  fi
  (cd "$js" && npm run build && npm test)
  local probe=testdata/plugins/probe-javascript
  mkdir -p "$probe/build"
  node "$js/node_modules/@bytecodealliance/componentize-js/src/cli.js" "$probe/probe.js" --wit wit --world-name score-plugin \
    --disable stdio random clocks http fetch-event --out "$probe/build/probe.wasm"
}

case "${1:-all}" in
  python) python ;;
  javascript) javascript ;;
  all) python; javascript ;;
  *) echo "usage: hack/polyglot.sh [python|javascript]" >&2; exit 2 ;;
esac
