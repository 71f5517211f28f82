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

// MinGoodRate is the least rate, in pods per second, at which kube-scheduler
// must keep binding other pods while a component misbehaves beside them.
const MinGoodRate = 2.0

// TestAHostileComponentIsContainedAtEveryPoint loads the Hostile fixture
// into kube-scheduler at each extension point this plugin maps, spinning
// (cpu) at that point for PodGroup "bad": the bad group stays pending with
// the plugin's failure as its reason, and kube-scheduler keeps binding the
// other pods at MinGoodRate or better (PreEnqueue runs on the queue's
// path: a component stuck there must not stall the queue).
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
			rate, node, reason := runHostile(t, config, good, point == "pod-group-post-filter")
			t.Logf("%s: %.1f good pods bound per second beside the failing component", point, rate)
			if rate < MinGoodRate {
				t.Errorf("%s: %.1f good pods bound per second, want at least %.1f", point, rate, MinGoodRate)
			}
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

// runHostile schedules a bad PodGroup and good lone pods under config;
// it returns the rate the good pods were bound at, and the bad pod's node
// and reason. With preempting, the bad group outranks a running pod and
// cannot fit, so that kube-scheduler asks its PodGroupPostFilter plugins.
func runHostile(t *testing.T, config string, good int, preempting bool) (float64, string, string) {
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
	start := time.Now()
	sched.Run()
	// kube-scheduler keeps retrying the bad group, so it is never quiet:
	// wait for the good pods instead.
	var elapsed time.Duration
	for {
		list, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		bound := 0
		for _, p := range list.Items {
			if strings.HasPrefix(p.Name, "good-") && p.Spec.NodeName != "" {
				bound++
			}
		}
		if bound == good {
			elapsed = time.Since(start)
			break
		}
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("%d of %d good pods bound within 2m", bound, good)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The bad pod's fate, once its failure had time to be written.
	time.Sleep(2 * time.Second)
	pod, err := client.CoreV1().Pods("default").Get(ctx, "bad-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reason := ""
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled {
			reason = c.Message
		}
	}
	return float64(good) / elapsed.Seconds(), pod.Spec.NodeName, reason
}
