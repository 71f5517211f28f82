package wasmplugin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// whatIf is a configuration of deploy/what-if/, its profile renamed to
// the scheduler the test pods name (the files' is default-scheduler).
func whatIf(t *testing.T, name string) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "deploy", "what-if", name))
	if err != nil {
		t.Fatal(err)
	}
	const profile = "schedulerName: default-scheduler"
	if strings.Count(string(text), profile) != 1 {
		t.Fatalf("%s: want one profile, %s", name, profile)
	}
	_, scheduler := sample(t)
	return strings.Replace(string(text), profile, "schedulerName: "+scheduler, 1)
}

// TestTheWhatIfConfigurationsRunInKubeScheduler loads each configuration
// of deploy/what-if/ into the real kube-scheduler v1.37.2 (with the
// components registered, the harness's gates on) and runs urgentGang
// through it: with workload-aware preemption the gang preempts one low
// pod per node and binds; with groupPreemption off it preempts nothing
// and stays pending; kube-scheduler's own default profile (the file run
// with the GenericWorkload gate off in production) is accepted and runs.
func TestTheWhatIfConfigurationsRunInKubeScheduler(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	for _, name := range []string{"gang-workload-preemption.yaml", "gang-pod-preemption.yaml", "pod-by-pod.yaml"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			setup, pending := urgentGang(t)
			cp, sched, cfg := startScheduler(ctx, t, setup, pending, whatIf(t, name), registry())
			if _, scheduler := sample(t); len(cfg.Profiles) != 1 || cfg.Profiles[0].SchedulerName != scheduler {
				t.Fatalf("profiles: %+v", cfg.Profiles)
			}
			deleted, nodes := preempted(t, runUntilQuiet(ctx, t, cp, sched))
			switch name {
			case "gang-workload-preemption.yaml":
				if deleted["n1"] != 1 || deleted["n2"] != 1 || nodes["urgent-0"] == "" || nodes["urgent-1"] == "" {
					t.Errorf("victims per node %v, nodes %v: want one victim per node and the gang bound", deleted, nodes)
				}
			case "gang-pod-preemption.yaml":
				if len(deleted) != 0 || nodes["urgent-0"] != "" || nodes["urgent-1"] != "" {
					t.Errorf("victims per node %v, nodes %v: want no victim and the gang pending", deleted, nodes)
				}
			}
		})
	}
}
