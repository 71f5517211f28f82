package wasmplugin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	"sigs.k8s.io/yaml"

	"example.invalid/wasched/kube/controlplane"
	"example.invalid/wasched/kube/engine"
	"example.invalid/wasched/kube/objects"
)

// sample is the configuration deploy/kube-scheduler/base/config.yaml
// ships, and the scheduler name it configures.
func sample(t *testing.T) (string, string) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "deploy", "kube-scheduler", "base", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(text), "wasched-kube-scheduler"
}

func registry() frameworkruntime.Registry {
	r := frameworkruntime.Registry{}
	for _, name := range BundledNames() {
		r[name] = Factory(name)
	}
	return r
}

func object(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(text), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func node(t *testing.T, name, rack string, gpus int) *unstructured.Unstructured {
	return object(t, fmt.Sprintf(`apiVersion: v1
kind: Node
metadata: {name: %s, labels: {kubernetes.io/hostname: %s, rack: %s}}
status:
  capacity: {cpu: "8", memory: 64Gi, pods: "110", nvidia.com/gpu: "%d"}
  allocatable: {cpu: "8", memory: 64Gi, pods: "110", nvidia.com/gpu: "%d"}
  conditions: [{type: Ready, status: "True"}]
`, name, name, rack, gpus, gpus))
}

func podGroup(t *testing.T, name string, min int, topology string) *unstructured.Unstructured {
	constraints := ""
	if topology != "" {
		constraints = fmt.Sprintf(", schedulingConstraints: {topology: [{key: %s}]}", topology)
	}
	return object(t, fmt.Sprintf(`apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: %s, namespace: default}
spec: {schedulingPolicy: {gang: {minCount: %d}}%s}
`, name, min, constraints))
}

// priorityClass is a PriorityClass; a PodGroup names it in
// spec.priorityClassName (the API server computes its priority from it).
func priorityClass(t *testing.T, name string, value int) *unstructured.Unstructured {
	return object(t, fmt.Sprintf(`apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: %s}
value: %d
`, name, value))
}

func pod(t *testing.T, name, group, cpu string, gpus int) *unstructured.Unstructured {
	member := ""
	if group != "" {
		member = fmt.Sprintf("  schedulingGroup: {podGroupName: %s}\n", group)
	}
	return object(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default}
spec:
  schedulerName: wasched-kube-scheduler
%s  containers: [{name: main, image: busybox, resources: {requests: {cpu: "%s", nvidia.com/gpu: "%d"}, limits: {nvidia.com/gpu: "%d"}}}]
`, name, member, cpu, gpus, gpus))
}

// TestComponentsScheduleInsideKubeScheduler runs the real kube-scheduler
// v1.37.2 on the real control plane with the sample configuration of
// deploy/kube-scheduler/base/config.yaml: a complete gang is admitted whole, a gang
// short of minCount is held back at PreEnqueue, a gang that cannot fit
// whole binds nothing (and does not hold up the queue), bin-packing puts
// GPU pods on the GPU node already in use and keeps CPU pods off GPU
// nodes, and the topology component keeps a gang in one rack where the
// in-tree scores alone would spread it over both.
func TestComponentsScheduleInsideKubeScheduler(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	setup := []*unstructured.Unstructured{
		node(t, "cpu-1", "r1", 0), node(t, "cpu-2", "r2", 0), node(t, "cpu-3", "r2", 0),
		node(t, "gpu-1", "r1", 4), node(t, "gpu-2", "r2", 4),
		podGroup(t, "trainer", 3, ""), podGroup(t, "short", 3, ""), podGroup(t, "wide", 3, ""),
		podGroup(t, "ring", 3, "rack"),
	}
	pending := []*unstructured.Unstructured{
		pod(t, "trainer-0", "trainer", "1", 1), pod(t, "trainer-1", "trainer", "1", 1), pod(t, "trainer-2", "trainer", "1", 1),
		pod(t, "short-0", "short", "1", 0), pod(t, "short-1", "short", "1", 0),
		pod(t, "wide-0", "wide", "1", 3), pod(t, "wide-1", "wide", "1", 3), pod(t, "wide-2", "wide", "1", 3),
		pod(t, "ring-0", "ring", "3", 0), pod(t, "ring-1", "ring", "3", 0), pod(t, "ring-2", "ring", "3", 0),
		pod(t, "web", "", "1", 0),
	}
	config, name := sample(t)
	cp, sched, cfg := startScheduler(ctx, t, setup, pending, config, registry())
	if cfg.Profiles[0].SchedulerName != name {
		t.Fatalf("the sample's profile: %s", cfg.Profiles[0].SchedulerName)
	}
	result := runUntilQuiet(ctx, t, cp, sched)
	nodes := map[string]string{}
	for _, p := range result.Pods {
		nodes[p.Name] = p.Node
	}
	// Bin-packing: the gang's GPU pods share one GPU node (weight 5 beats
	// the in-tree spreading scores); the CPU-only pod is kept off GPU nodes.
	first := nodes["trainer-0"]
	if !strings.HasPrefix(first, "gpu-") || nodes["trainer-1"] != first || nodes["trainer-2"] != first {
		t.Errorf("the gang's GPU pods: %v, want all on one GPU node", nodes)
	}
	if !strings.HasPrefix(nodes["web"], "cpu-") {
		t.Errorf("web on %q, want a CPU node (GPU nodes reserved for GPU pods)", nodes["web"])
	}
	// Rack r1 has one CPU node (room for two of ring's three pods), r2 two.
	for _, p := range []string{"ring-0", "ring-1", "ring-2"} {
		if nodes[p] != "cpu-2" && nodes[p] != "cpu-3" {
			t.Errorf("ring's pods: %v, want all in rack r2 (cpu-2, cpu-3)", nodes)
			break
		}
	}
	if nodes["short-0"] != "" || nodes["short-1"] != "" {
		t.Errorf("a gang short of minCount was bound: %v", nodes)
	}
	if nodes["wide-0"] != "" || nodes["wide-1"] != "" || nodes["wide-2"] != "" {
		t.Errorf("a gang that does not fit whole was bound in part: %v", nodes)
	}
}

func TestArgsSplitComponentFromConfig(t *testing.T) {
	tests := []struct {
		name      string
		args      runtime.Object
		component string
		config    string
		err       string
	}{
		{"no pluginConfig", nil, "", "", ""},
		{"bounds and args", &runtime.Unknown{Raw: []byte(`{"component": "/x.wasm", "fuel": 5, "args": {"a": 1}}`)}, "/x.wasm", `{"args":{"a":1},"fuel":5}`, ""},
		{"not an object", &runtime.Unknown{Raw: []byte(`[1]`)}, "", "", "pluginConfig P: args:"},
		{"component not a string", &runtime.Unknown{Raw: []byte(`{"component": 1}`)}, "", "", "args.component"},
	}
	for _, tc := range tests {
		s, err := spec("P", tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || s.Component != tc.component || string(s.Config) != tc.config {
			t.Errorf("%s: %+v %s, %v", tc.name, s, s.Config, err)
		}
	}
}

// startScheduler starts a control plane with the setup objects, then
// kube-scheduler under config with the registry's plugins, then creates
// the pending pods in order and waits for its queue to hold them; it has
// not started scheduling (sched.Run). Both stop when the test ends.
func startScheduler(ctx context.Context, t *testing.T, setup, pending []*unstructured.Unstructured, config string, registry frameworkruntime.Registry) (*controlplane.ControlPlane, *engine.Scheduler, *schedconfig.KubeSchedulerConfiguration) {
	t.Helper()
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)
	loader, err := objects.NewLoader(cp.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loader.Load(ctx, setup); err != nil {
		t.Fatal(err)
	}
	cfg, err := engine.LoadConfig([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	sched, err := engine.New(ctx, cp.RestConfig(), engine.Options{Config: cfg, Plugins: registry})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sched.Stop)
	queued, err := loader.LoadInOrder(ctx, pending)
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.Queued(ctx, queued.Objects); err != nil {
		t.Fatal(err)
	}
	return cp, sched, cfg
}

// TestComponentsPreemptInsideKubeScheduler runs workload-aware preemption
// through the bundled preemption component (the sample configuration's
// PodGroupPostFilter): a PodGroup of higher priority that fits nowhere
// has kube-scheduler's trial remove the lower-priority pods, the
// component order the reprieves, and only the pods it cannot do without
// evicted, one per node (each node keeps one of its two), before the
// group binds whole.
func TestComponentsPreemptInsideKubeScheduler(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	victimsBefore := histogramSum(t, "scheduler_workload_preemption_victims")
	setup, pending := urgentGang(t)
	config, _ := sample(t)
	cp, sched, _ := startScheduler(ctx, t, setup, pending, config, registry())
	deleted, nodes := preempted(t, runUntilQuiet(ctx, t, cp, sched))
	if deleted["n1"] != 1 || deleted["n2"] != 1 {
		t.Errorf("victims per node %v, want one on each (%v)", deleted, nodes)
	}
	if nodes["urgent-0"] == "" || nodes["urgent-1"] == "" || nodes["urgent-0"] == nodes["urgent-1"] {
		t.Errorf("urgent's pods: %v, want bound on the two nodes", nodes)
	}
	// kube-scheduler's metrics, under upstream's names (this process's
	// registry; no other test here preempts).
	if n, err := testutil.GetCounterMetricValue(schedmetrics.WorkloadPreemptionAttempts.WithLabelValues("Success")); err != nil || n < 1 {
		t.Errorf("scheduler_workload_preemption_attempts_total{result=Success} = %v (%v), want at least 1", n, err)
	}
	if sum := histogramSum(t, "scheduler_workload_preemption_victims") - victimsBefore; sum != 2 {
		t.Errorf("scheduler_workload_preemption_victims: sum grew by %v, want 2", sum)
	}
}

// histogramSum is the sum of a histogram of this process's registry (0
// before anything was observed).
func histogramSum(t *testing.T, name string) float64 {
	t.Helper()
	h, err := testutil.GetHistogramVecFromGatherer(legacyregistry.DefaultGatherer, name, nil)
	if err != nil {
		return 0
	}
	return h.GetAggregatedSampleSum()
}

// urgentGang is a cluster of two nodes, each full with two low-priority
// pods of 3 CPUs, and a high-priority gang of two 5-CPU pods that fits
// only if one low pod per node goes.
func urgentGang(t *testing.T) (setup, pending []*unstructured.Unstructured) {
	urgent := podGroup(t, "urgent", 2, "")
	urgent.Object["spec"].(map[string]any)["priorityClassName"] = "high"
	setup = []*unstructured.Unstructured{priorityClass(t, "high", 1000), node(t, "n1", "r1", 0), node(t, "n2", "r2", 0), urgent}
	for i, host := range []string{"n1", "n1", "n2", "n2"} {
		low := pod(t, fmt.Sprintf("low-%d", i), "", "3", 0)
		low.Object["spec"].(map[string]any)["nodeName"] = host
		setup = append(setup, low)
	}
	pending = []*unstructured.Unstructured{pod(t, "urgent-0", "urgent", "5", 0), pod(t, "urgent-1", "urgent", "5", 0)}
	for _, p := range pending { // a group's pods have its priority
		p.Object["spec"].(map[string]any)["priorityClassName"] = "high"
	}
	return setup, pending
}

// preempted reads urgentGang's outcome: low pods deleted per node (each
// checked to be the gang's victim) and each pod's node.
func preempted(t *testing.T, result *engine.Result) (map[string]int, map[string]string) {
	t.Helper()
	deleted := map[string]int{}
	nodes := map[string]string{}
	for _, p := range result.Pods {
		nodes[p.Name] = p.Node
		if strings.HasPrefix(p.Name, "low-") && p.Deleted {
			deleted[p.Node]++
			if p.PreemptedBy != "PodGroup default/urgent" {
				t.Errorf("%s preempted by %q", p.Name, p.PreemptedBy)
			}
		}
	}
	return deleted, nodes
}

// runUntilQuiet starts scheduling, waits until kube-scheduler is quiet and
// reads its decisions back.
func runUntilQuiet(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, sched *engine.Scheduler) *engine.Result {
	t.Helper()
	sched.Run()
	if err := sched.WaitQuiet(ctx, 2*time.Minute, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	result, err := sched.Result(ctx, cp.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	return result
}
