// Command kube-scheduler is upstream's kube-scheduler v1.37.2 built with
// wasched's out-of-tree plugin (package wasmplugin), as scheduler-plugins
// builds theirs: the bundled wasched components, and every plugin whose
// pluginConfig args name a `component` file, run through wasmtime over cgo.
//
// Flags and configuration are kube-scheduler's own. A component that is
// not a component, is built against an unknown contract version, or
// imports anything outside wasched:scheduler stops it at start with one
// line naming the file.
package main

import (
	"fmt"
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"example.invalid/wasched/kube/wasmplugin"
)

func main() {
	options, err := wasmplugin.Options(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "kube-scheduler:", err)
		os.Exit(1)
	}
	os.Exit(cli.Run(app.NewSchedulerCommand(options...)))
}
