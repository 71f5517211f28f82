# `make test` is the project's test command (the README's second set-up
# command, and what .ci/run calls): it builds the Go harness (the real
# kube-apiserver and kube-scheduler v1.37.2, kube/bin/wasched-kube) and the
# C-ABI library the Go side links (ffi/, target/debug/libwasched_ffi.a, in
# the dev profile the Rust tests build anyway), then runs the Rust tests
# (the differential tests against kube-scheduler included) and the Go
# tests, one build at a time.

HARNESS := $(CURDIR)/kube/bin/wasched-kube

.PHONY: test harness ffi rust-test go-test

test: harness ffi rust-test go-test

harness:
	$(MAKE) -C kube build

ffi:
	cargo build -p wasched-ffi

rust-test: harness
	WASCHED_KUBE=$(HARNESS) cargo test --workspace

go-test: harness ffi
	$(MAKE) -C kube test
