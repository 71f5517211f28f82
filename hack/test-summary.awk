# The summary that ends `make test` (hack/test.sh), read from the run's
# logs under target/test-logs/:
#
#   rust*.log            cargo test's output: "Running <binary>", one
#                        "test NAME ... ok|FAILED|ignored[, REASON]" line per
#                        test, "test result: ... finished in Ns" per binary;
#   go.log               go test -v's output: "--- PASS|FAIL|SKIP: Test (Ns)"
#                        (a skip's reason on the next, indented line), then
#                        "ok|FAIL <package> <N>s" per package;
#   python.log           pytest -v's output: "FILE::TEST PASSED|FAILED|SKIPPED";
#   javascript.log       node --test's TAP: "ok N - TEST", "not ok N - TEST";
#                        either may instead hold one "SKIPPED: REASON" line
#                        (the toolchain is not installed), a skip;
#   steps                "<step> <seconds> <exit status>" per step;
#   control-planes.log   one "<program> <url>" line per control plane started.
#
# A Rust test ignored in one invocation and run in another (a tool test,
# run with --ignored) counts as run. Prints tests passed, failed and
# skipped (each skip with its reason, each failure with the first lines
# it printed of why), the wall time per test binary and Go
# package, the steps' times and the control planes started; ends with the
# plain line "tests: N passed, N failed, N skipped". Exits 1 when a test or
# step failed, or when require_all is set and anything was skipped.

function rust_label(line,    path, base, parts) {
  # "     Running unittests src/lib.rs (target/debug/deps/wasched-0a1b)"
  # "     Running tests/browser.rs (target/debug/deps/browser-0a1b)"
  match(line, /\(.*\)$/)
  path = substr(line, RSTART + 1, RLENGTH - 2)
  base = path
  sub(/.*\//, "", base)
  sub(/-[0-9a-f]+$/, "", base)
  split(line, parts, " ")
  if (parts[2] == "unittests") return base " " parts[3]
  return parts[2]
}

function note_test(label, name, state, reason,    key) {
  key = label SUBSEP name
  if (!(key in state_of)) order[++tests] = key
  # FAILED beats ok beats ignored, whichever invocation said it.
  if (state == "FAILED" || state_of[key] == "" || (state == "ok" && state_of[key] == "ignored"))
    state_of[key] = state
  if (state == "ignored" && !(key in reason_of)) reason_of[key] = reason
}

# why(key, line): keeps the first few lines a failing test printed of
# why, each cut to a screen's width.
function why(key, line) {
  if (why_lines[key] >= 4) return
  if (length(line) > 200) line = substr(line, 1, 200) "…"
  why_of[key] = why_of[key] "      " line "\n"
  why_lines[key]++
}

FILENAME ~ /(^|\/)rust[^\/]*\.log$/ {
  if ($0 ~ /^     Running /) { label = rust_label($0); next }
  # A failing test's output: "---- NAME stdout ----", then what it
  # printed and its panic message, up to the "note: run with" line.
  if ($0 ~ /^---- .* stdout ----$/) {
    failing = "rust:" label SUBSEP substr($0, 6, length($0) - 5 - 12)
    next
  }
  if (failing != "") {
    if ($0 ~ /^note: run with / || $0 ~ /^failures:$/) failing = ""
    else if ($0 !~ /^ *$/) {
      # The panic says why; what the test printed before it may not.
      if ($0 ~ /^thread .* panicked at /) { why_of[failing] = ""; why_lines[failing] = 0 }
      why(failing, $0)
    }
  }
  if ($0 ~ /^   Doc-tests /) { label = "doc-tests " $2; next }
  if ($0 ~ /^test .* \.\.\. (ok|FAILED|ignored)/) {
    at = index($0, " ... ")
    name = substr($0, 6, at - 6)
    result = substr($0, at + 5)
    reason = ""
    if (result ~ /^ignored, /) reason = substr(result, 10)
    sub(/,.*/, "", result)
    note_test("rust:" label, name, result, reason)
    next
  }
  if ($0 ~ /^test result: /) {
    secs = $NF
    sub(/s$/, "", secs)
    if (!(label in wall)) binaries[++nbinaries] = label
    wall[label] += secs
  }
  next
}

FILENAME ~ /(^|\/)go\.log$/ {
  if ($0 ~ /^=== race detector/) { race = " (race)"; next }
  if (skip_pending != "") {
    if ($0 ~ /^    /) {
      reason = $0
      sub(/^ +/, "", reason)
      sub(/^[A-Za-z0-9_]+\.go:[0-9]+: /, "", reason)
      go_reason[skip_pending] = reason
    }
    skip_pending = ""
  }
  # go test -v names the test its next lines are of; a test's t.Error
  # and t.Fatal lines are indented and start with the file and line.
  if ($0 ~ /^=== (RUN|CONT|NAME) /) { go_running = $3; next }
  if ($0 ~ /^ +[A-Za-z0-9_]+\.go:[0-9]+: /) {
    line = $0
    sub(/^ +/, "", line)
    go_why[go_running] = go_why[go_running] line "\n"
    next
  }
  if ($0 ~ /^--- (PASS|FAIL|SKIP): /) {
    result = $2
    sub(/:$/, "", result)
    go_pending[++ngo_pending] = $3
    go_pending_result[ngo_pending] = result
    if (result == "SKIP") skip_pending = ngo_pending
    next
  }
  if ($1 ~ /^(ok|FAIL)$/ && NF >= 3 && $3 ~ /s$/) {
    package = $2 race
    secs = $3
    sub(/s$/, "", secs)
    packages[++npackages] = package
    package_wall[package] = secs
    package_result[package] = $1
    for (i = 1; i <= ngo_pending; i++) {
      state = go_pending_result[i] == "PASS" ? "ok" : go_pending_result[i] == "FAIL" ? "FAILED" : "ignored"
      note_test("go:" package, go_pending[i], state, go_reason[i])
      if (state == "FAILED") {
        n = split(go_why[go_pending[i]], lines, "\n")
        for (j = 1; j < n; j++) why("go:" package SUBSEP go_pending[i], lines[j])
      }
      delete go_reason[i]
    }
    delete go_why
    ngo_pending = 0
    if ($1 == "FAIL") failed_packages++
  }
  next
}

FILENAME ~ /(^|\/)(python|javascript)\.log$/ {
  lang = FILENAME
  sub(/.*\//, "", lang)
  sub(/\.log$/, "", lang)
  if ($0 ~ /^SKIPPED: /) { note_test(lang ":tests", "(all)", "ignored", substr($0, 10)); next }
  if (lang == "python" && $0 ~ /^[^ ]+::[^ ]+ (PASSED|FAILED|SKIPPED|ERROR)/) {
    state = $2 == "PASSED" ? "ok" : $2 == "SKIPPED" ? "ignored" : "FAILED"
    note_test("python:pytest", $1, state, "")
    next
  }
  if (lang == "javascript" && $0 ~ /^(not )?ok [0-9]+ - /) {
    name = $0
    sub(/^(not )?ok [0-9]+ - /, "", name)
    state = $0 ~ /^not / ? "FAILED" : name ~ /# SKIP/ ? "ignored" : "ok"
    note_test("javascript:node", name, state, "")
    next
  }
  next
}

FILENAME ~ /(^|\/)steps$/ {
  step_names[++nsteps] = $1
  step_secs[$1] = $2
  if ($3 != 0) failed_steps = failed_steps " " $1
  next
}

FILENAME ~ /control-planes\.log$/ {
  control_planes++
  by_program[$1]++
  next
}

function short(key,    parts) {
  split(key, parts, SUBSEP)
  return parts[1] " :: " parts[2]
}

END {
  for (i = 1; i <= tests; i++) {
    key = order[i]
    lang = substr(key, 1, index(key, ":") - 1)
    if (state_of[key] == "ok") passed[lang]++
    else if (state_of[key] == "FAILED") { failed[lang]++; failures[++nfailures] = key }
    else { skipped[lang]++; skips[++nskips] = key }
  }
  total_passed = passed["rust"] + passed["go"] + passed["python"] + passed["javascript"]
  total_failed = failed["rust"] + failed["go"] + failed["python"] + failed["javascript"]
  total_skipped = skipped["rust"] + skipped["go"] + skipped["python"] + skipped["javascript"]

  print ""
  print "==> test summary"
  printf "Rust: %d passed, %d failed, %d ignored\n", passed["rust"], failed["rust"], skipped["rust"]
  printf "Go:   %d passed, %d failed, %d skipped\n", passed["go"], failed["go"], skipped["go"]
  printf "Python (pytest): %d passed, %d failed, %d skipped\n", passed["python"], failed["python"], skipped["python"]
  printf "JavaScript (node --test): %d passed, %d failed, %d skipped\n", passed["javascript"], failed["javascript"], skipped["javascript"]
  if (nskips > 0) {
    print "Not run:"
    for (i = 1; i <= nskips; i++) {
      reason = reason_of[skips[i]]
      printf "  %s: %s\n", short(skips[i]), reason == "" ? "(no reason given)" : reason
    }
  }
  if (nfailures > 0) {
    print "Failed:"
    for (i = 1; i <= nfailures; i++) printf "  %s\n%s", short(failures[i]), why_of[failures[i]]
  }
  print "Wall time per Rust test binary (seconds, all invocations):"
  for (i = 1; i <= nbinaries; i++) printf "  %8.1f  %s\n", wall[binaries[i]], binaries[i]
  print "Wall time per Go package (seconds):"
  for (i = 1; i <= npackages; i++) printf "  %8.1f  %s %s\n", package_wall[packages[i]], packages[i], package_result[packages[i]]
  print "Steps (seconds; build includes compiling, the test steps compile their tests too):"
  for (i = 1; i <= nsteps; i++) printf "  %8d  %s\n", step_secs[step_names[i]], step_names[i]
  printf "Control planes started: %d", control_planes
  sep = " ("
  for (program in by_program) { programs[++nprograms] = program }
  # A stable order for the per-program counts.
  for (i = 1; i <= nprograms; i++)
    for (j = i + 1; j <= nprograms; j++)
      if (programs[j] < programs[i]) { t = programs[i]; programs[i] = programs[j]; programs[j] = t }
  for (i = 1; i <= nprograms; i++) { printf "%s%s %d", sep, programs[i], by_program[programs[i]]; sep = ", " }
  print (nprograms > 0 ? ")" : "")
  if (failed_steps != "") print "Failed steps:" failed_steps
  status = 0
  if (total_failed > 0 || failed_steps != "" || failed_packages > 0) status = 1
  if (require_all != "" && total_skipped > 0) {
    print "WASCHED_REQUIRE_ALL_TESTS is set, and " total_skipped " test(s) did not run"
    status = 1
  }
  printf "tests: %d passed, %d failed, %d skipped\n", total_passed, total_failed, total_skipped
  exit status
}
