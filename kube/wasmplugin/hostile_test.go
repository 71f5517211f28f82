package wasmplugin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// hostileComponent is the Hostile fixture (testdata/plugins/hostile,
// built by the host's build script into the Cargo target directory).
func hostileComponent(t *testing.T) string {
	t.Helper()
	target := os.Getenv("CARGO_TARGET_DIR")
	if target == "" {
		target = filepath.Join("..", "..", "target")
	}
	path, err := filepath.Abs(filepath.Join(target, "wasm-plugins", "wasm32-wasip2", "plugin", "hostile.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the hostile fixture is built by `cargo build -p wasched`: %v", err)
	}
	return path
}

// TestAHostileComponentIsContainedAtEveryPoint loads the Hostile fixture
// into kube-scheduler at each extension point this plugin maps, spinning
// (cpu) at that point for PodGroup "bad": the bad group stays pending with
// the plugin's failure as its reason, and kube-scheduler binds every other
// pod beside it (PreEnqueue runs on the queue's path: a component stuck
// there must not stall the queue). The test asserts what happens, never
// how fast: the context's deadline only bounds a hang.
func TestAHostileComponentIsContainedAtEveryPoint(t *testing.T) {
	if testing.Short() {
		t.Skip("starts control planes")
	}
	component := hostileComponent(t)
	points := map[string]string{
		"pre-enqueue":        "preEnqueue: {enabled: [{name: Hostile}], disabled: [{name: GangScheduling}]}",
		"filter":             "preFilter: {enabled: [{name: Hostile}]}\n    filter: {enabled: [{name: Hostile}]}",
		"score":              "preScore: {enabled: [{name: Hostile}]}\n    score: {enabled: [{name: Hostile}]}",
		"permit":             "permit: {enabled: [{name: Hostile}], disabled: [{name: GangScheduling}]}",
		"placement-generate": "placementGenerate: {enabled: [{name: Hostile}], disabled: [{name: TopologyPlacementGenerator}]}",
		// Hostile's generator splits the cluster in two when it scores
		// placements, so that there are placements to score.
		"placement-score":       "placementGenerate: {enabled: [{name: Hostile}], disabled: [{name: TopologyPlacementGenerator}]}\n    placementScore: {enabled: [{name: Hostile}]}",
		"pod-group-post-filter": "podGroupPostFilter: {enabled: [{name: Hostile}], disabled: [{name: DefaultPreemption}]}",
	}
	for _, point := range []string{"pre-enqueue", "filter", "score", "permit", "placement-generate", "placement-score", "pod-group-post-filter"} {
		t.Run(point, func(t *testing.T) {
			config := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 100
clientConnection: {qps: 5000, burst: 5000}
leaderElection: {leaderElect: false}
profiles:
- schedulerName: wasched-kube-scheduler
  plugins:
    %s
  pluginConfig:
  - name: Hostile
    args: {component: %s, fuel: 20000000, timeout: 1s, args: {point: %s, misbehave: loop}}
`, points[point], component, point)
			const good = 20
			node, reason := runHostile(t, config, good, point == "pod-group-post-filter", point != "pre-enqueue")
			if node != "" {
				t.Errorf("%s: the bad group's pod was bound on %s", point, node)
			}
			// A pod held at PreEnqueue gets no condition; elsewhere the
			// failure is the bad pod's reason, naming the plugin.
			if point != "pre-enqueue" && !strings.Contains(reason, "Hostile") {
				t.Errorf("%s: the bad pod's reason %q does not name the plugin", point, reason)
			}
		})
	}
}

// runHostile schedules a bad PodGroup and good lone pods under config,
// waits until every good pod is bound and, when conditioned, until the bad
// pod carries kube-scheduler's PodScheduled condition, and returns the bad
// pod's node and reason. With preempting, the bad group outranks a running
// pod and cannot fit, so that kube-scheduler asks its PodGroupPostFilter
// plugins. The good pods are created after the bad one, so that their
// binding shows kube-scheduler has taken the bad one in.
func runHostile(t *testing.T, config string, good int, preempting, conditioned bool) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	setup := []*unstructured.Unstructured{node(t, "n1", "r1", 0), node(t, "n2", "r2", 0), podGroup(t, "bad", 1, "")}
	pending := []*unstructured.Unstructured{pod(t, "bad-0", "bad", "1", 0)}
	if preempting {
		setup[2].Object["spec"].(map[string]any)["priorityClassName"] = "high"
		setup = append([]*unstructured.Unstructured{priorityClass(t, "high", 1000)}, setup...)
		pending[0] = pod(t, "bad-0", "bad", "100", 0)
		pending[0].Object["spec"].(map[string]any)["priorityClassName"] = "high"
		running := pod(t, "running", "", "1", 0)
		running.Object["spec"].(map[string]any)["nodeName"] = "n1"
		setup = append(setup, running)
	}
	for i := 0; i < good; i++ {
		pending = append(pending, pod(t, fmt.Sprintf("good-%d", i), "", "100m", 0))
	}
	registry := frameworkruntime.Registry{"Hostile": FactoryWithComponent("Hostile", "")}
	cp, sched, _ := startScheduler(ctx, t, setup, pending, config, registry)
	client, err := kubernetes.NewForConfig(cp.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	sched.Run()
	// kube-scheduler keeps retrying the bad group, so it is never quiet:
	// wait for the good pods, and for the bad pod's failure to be written.
	for {
		if ctx.Err() != nil {
			t.Fatalf("the good pods were not all bound, or the bad pod's failure not written: %v", ctx.Err())
		}
		list, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		bound, node, reason := 0, "", ""
		for _, p := range list.Items {
			if strings.HasPrefix(p.Name, "good-") && p.Spec.NodeName != "" {
				bound++
			}
			if p.Name == "bad-0" {
				node = p.Spec.NodeName
				for _, c := range p.Status.Conditions {
					if c.Type == v1.PodScheduled {
						reason = c.Message
					}
				}
			}
		}
		if bound == good && (node != "" || reason != "" || !conditioned) {
			return node, reason
		}
		time.Sleep(50 * time.Millisecond)
	}
}
