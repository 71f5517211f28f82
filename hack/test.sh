#!/usr/bin/env bash
# The project's test run (`make test`, the README's test command):
#
#   1. the Go side: the C-ABI library, the harness kube/bin/wasched-kube
#      (the real kube-apiserver and kube-scheduler v1.37.2) and
#      kube/bin/kube-scheduler with wasched's components;
#   2. the Rust tests of the workspace (the differential tests against the
#      real kube-scheduler among them);
#   3. the Rust tests that need a tool (Chromium, kubectl): they are
#      #[ignore]d with the tool as their reason and run here, with
#      --ignored, when the tool is installed;
#   4. the plugins written in Python and JavaScript (hack/polyglot.sh):
#      built with their pinned toolchains, their own tests run (pytest,
#      node's test runner), then the Rust tests that load them
#      (host/tests/polyglot.rs, #[ignore]d otherwise), when the
#      toolchains are installed;
#   5. the Go tests (and package wasm under the race detector);
#
# then a summary (hack/test-summary.awk): tests passed, failed and
# skipped (each with its reason), each test binary's and Go package's wall
# time, the steps' times and the control planes started. Every step runs
# even when an earlier one failed (but the build); the exit status is
# non-zero when any step failed.
#
# WASCHED_REQUIRE_ALL_TESTS=1 (set by .ci/run) runs the tool tests whether
# or not the tool is found, and fails the run when anything was skipped.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
logs=$root/target/test-logs
rm -rf "$logs"
# target/ made here, not by cargo, would lack cargo's CACHEDIR.TAG, by which
# host/build.rs finds the target dir for the components the Go tests load.
if [ ! -e target/CACHEDIR.TAG ]; then
  mkdir -p target
  printf '%s\n' 'Signature: 8a477f597d28d172789f06886806bc55' \
    '# This file is a cache directory tag created by cargo.' \
    '# For information about cache directory tags see https://bford.info/cachedir/' \
    >target/CACHEDIR.TAG
fi
mkdir -p "$logs"

export WASCHED_KUBE=$root/kube/bin/wasched-kube
export WASCHED_CONTROL_PLANE_LOG=$logs/control-planes.log
: >"$WASCHED_CONTROL_PLANE_LOG"
require_all=${WASCHED_REQUIRE_ALL_TESTS:-}

failed=0
# step NAME COMMAND...: runs COMMAND, its output shown and kept in
# $logs/NAME.log, its wall time and status in $logs/steps.
step() {
  local name=$1
  shift
  local start=$SECONDS
  echo "==> $name: $*"
  "$@" 2>&1 | tee "$logs/$name.log"
  local status=${PIPESTATUS[0]}
  echo "$name $((SECONDS - start)) $status" >>"$logs/steps"
  [ "$status" -eq 0 ] || failed=1
  return "$status"
}

# A tool test runs when its tool is here (or everything must run).
has() { [ -n "$require_all" ] || command -v "$1" >/dev/null 2>&1; }

summary() {
  touch "$logs/python.log" "$logs/javascript.log"
  awk -v require_all="$require_all" -f "$root/hack/test-summary.awk" \
    "$logs"/rust*.log "$logs"/go.log "$logs"/python.log "$logs"/javascript.log \
    "$logs/steps" "$WASCHED_CONTROL_PLANE_LOG" \
    || failed=1
}

if ! step build make -C kube build; then
  touch "$logs/rust.log" "$logs/go.log"
  summary
  exit 1
fi
step rust cargo test --workspace
# The tool tests select their binaries from the whole workspace, as the run
# above: the same features resolve, so nothing is built again (with
# `-p wasched` the other members' dev-dependencies drop out of the feature
# resolution, and kube, the host and its tests would be rebuilt).
if has chromium || [ -n "${WASCHED_CHROMIUM:-}" ]; then
  step rust-chromium cargo test --workspace --test browser -- --ignored
else
  echo "==> rust-chromium: Chromium not found; the browser tests stay ignored"
fi
if has kubectl; then
  step rust-kubectl cargo test --workspace --test cluster --test shadow -- --ignored
else
  echo "==> rust-kubectl: kubectl not found; the tests that need it stay ignored"
fi
# The plugins in other languages run when their toolchain is installed
# (make -C plugins/python/team-gpu-isolation; npm ci in
# plugins/javascript/team-gpu-isolation); a missing one is a counted skip.
py_tool=plugins/python/team-gpu-isolation/.venv/bin/componentize-py
js_tool=plugins/javascript/team-gpu-isolation/node_modules/@bytecodealliance/componentize-js/src/cli.js
polyglot=1
if [ -n "$require_all" ] || [ -x "$py_tool" ]; then
  step python hack/polyglot.sh python || polyglot=0
else
  echo "SKIPPED: the Python plugin's tests: its toolchain is not installed (make -C plugins/python/team-gpu-isolation installs it)" | tee "$logs/python.log"
  polyglot=0
fi
if [ -n "$require_all" ] || [ -f "$js_tool" ]; then
  step javascript hack/polyglot.sh javascript || polyglot=0
else
  echo "SKIPPED: the JavaScript plugin's tests: its toolchain is not installed (npm ci in plugins/javascript/team-gpu-isolation installs it)" | tee "$logs/javascript.log"
  polyglot=0
fi
if [ "$polyglot" = 1 ]; then
  step rust-polyglot cargo test --workspace --test polyglot -- --ignored
else
  echo "==> rust-polyglot: a component is missing; the tests that load them stay ignored"
fi
step go make -C kube test
summary
exit "$failed"
