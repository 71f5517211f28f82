# `make test` is the project's test command (the README's second set-up
# command, and what .ci/run calls): hack/test.sh builds the Go side (kube/:
# the C-ABI library it links, target/debug/libwasched_ffi.a, in the dev
# profile the Rust tests build anyway; the harness kube/bin/wasched-kube,
# the real kube-apiserver and kube-scheduler v1.37.2; kube-scheduler with
# wasched's components, kube/bin/kube-scheduler), then runs the Rust tests
# (the differential tests against kube-scheduler included), the Rust tests
# that need an installed tool when it is there, and the Go tests, one build
# at a time, and ends with a summary (tests run and skipped with reasons,
# wall time per test binary and package, control planes started). The
# logs stay in target/test-logs/.
#
# `make book` builds the documentation (docs/, mdBook) into target/book
# and checks its internal links and anchors offline.

.PHONY: test harness book

test:
	hack/test.sh

harness:
	$(MAKE) -C kube build

book:
	hack/book.sh
