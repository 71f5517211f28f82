# `make test` is the project's test command (the README's second set-up
# command, and what .ci/run calls): it builds the Go side (kube/: the
# C-ABI library it links, target/debug/libwasched_ffi.a, in the dev profile
# the Rust tests build anyway; the harness kube/bin/wasched-kube, the real
# kube-apiserver and kube-scheduler v1.37.2; kube-scheduler with wasched's
# components, kube/bin/kube-scheduler), then runs the Rust tests (the
# differential tests against kube-scheduler included) and the Go tests,
# one build at a time.

HARNESS := $(CURDIR)/kube/bin/wasched-kube

.PHONY: test harness rust-test go-test

test: harness rust-test go-test

harness:
	$(MAKE) -C kube build

rust-test: harness
	WASCHED_KUBE=$(HARNESS) cargo test --workspace

go-test: harness
	$(MAKE) -C kube test
