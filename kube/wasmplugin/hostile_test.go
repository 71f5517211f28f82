package wasmplugin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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

// hostilePoints are the plugin configurations that put the Hostile
// fixture at each extension point this plugin maps.
var hostilePoints = map[string]string{
	"pre-enqueue":        "preEnqueue: {enabled: [{name: Hostile}], disabled: [{name: GangScheduling}]}",
	"filter":             "preFilter: {enabled: [{name: Hostile}]}\n      filter: {enabled: [{name: Hostile}]}",
	"score":              "preScore: {enabled: [{name: Hostile}]}\n      score: {enabled: [{name: Hostile}]}",
	"permit":             "permit: {enabled: [{name: Hostile}], disabled: [{name: GangScheduling}]}",
	"placement-generate": "placementGenerate: {enabled: [{name: Hostile}], disabled: [{name: TopologyPlacementGenerator}]}",
	// Hostile's generator splits the cluster in two when it scores
	// placements, so that there are placements to score.
	"placement-score":       "placementGenerate: {enabled: [{name: Hostile}], disabled: [{name: TopologyPlacementGenerator}]}\n      placementScore: {enabled: [{name: Hostile}]}",
	"pod-group-post-filter": "podGroupPostFilter: {enabled: [{name: Hostile}], disabled: [{name: DefaultPreemption}]}",
}

// hostileModes are the misbehaviours tried at every point.
var hostileModes = []string{"panic", "loop", "flood-logs", "huge-reason"}

// TestHostileComponentsBesideOtherProfiles runs one kube-scheduler with a
// profile per extension point and misbehaviour of the Hostile fixture
// (panic, an endless loop, 16 MiB of logs per call, a 4 MiB reason), each
// with a PodGroup of its own it misbehaves for, beside a profile without
// it: every pod of the good profile is bound, and each bad group is
// decided as its misbehaviour makes it — the flood of logs is capped and
// the component's neutral answer after it honoured (its pod bound, except
// at PodGroupPostFilter, where the group fits nowhere), the 4 MiB reason
// is capped on the pod's condition, a request about 16 M duplicate node
// ids is refused by the host and the neutral answer after it honoured (its
// pod bound), and a panic or a loop leaves the group
// pending with a reason naming the plugin (PreEnqueue holds the pod
// without a condition). The test asserts what
// happens, never how fast: the context's deadline only bounds a hang.
func TestHostileComponentsBesideOtherProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	component := hostileComponent(t)
	points := make([]string, 0, len(hostilePoints))
	for point := range hostilePoints {
		points = append(points, point)
	}
	sort.Strings(points)

	var config strings.Builder
	config.WriteString(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 100
clientConnection: {qps: 5000, burst: 5000}
leaderElection: {leaderElect: false}
profiles:
- schedulerName: good
`)
	setup := []*unstructured.Unstructured{priorityClass(t, "high", 1000), node(t, "n1", "r1", 0), node(t, "n2", "r2", 0)}
	running := pod(t, "running", "", "1", 0)
	running.Object["spec"].(map[string]any)["nodeName"] = "n1"
	setup = append(setup, running)
	var pending []*unstructured.Unstructured
	type bad struct{ point, mode, pod string }
	var bads []bad
	type misbehaviour struct{ point, mode string }
	var cases []misbehaviour
	for _, point := range points {
		for _, mode := range hostileModes {
			cases = append(cases, misbehaviour{point, mode})
		}
	}
	// 16 M duplicate node ids in one host call, refused before the host
	// allocates for them; the fixture needs 64 MiB of its own for them.
	cases = append(cases, misbehaviour{"filter", "duplicate-ids"})
	bounds := map[string]string{"duplicate-ids": "fuel: 1000000000, memoryLimit: 160Mi"}
	for _, c := range cases {
		point, mode := c.point, c.mode
		bound, ok := bounds[mode]
		if !ok {
			bound = "fuel: 20000000"
		}
		profile := fmt.Sprintf("%s-%s", point, mode)
		fmt.Fprintf(&config, `- schedulerName: %s
  plugins:
    %s
  pluginConfig:
  - name: Hostile
    args: {component: %s, %s, timeout: 1s, args: {point: %s, misbehave: %s}}
`, profile, strings.ReplaceAll(hostilePoints[point], "\n      ", "\n    "), component, bound, point, mode)
		group := podGroup(t, "bad-"+profile, 1, "")
		cpu := "1"
		if point == "pod-group-post-filter" {
			cpu = "100"
		}
		member := pod(t, "bad-"+profile, "bad-"+profile, cpu, 0)
		if point == "pod-group-post-filter" {
			// It outranks the running pod and fits nowhere, so that
			// kube-scheduler asks its PodGroupPostFilter plugins.
			group.Object["spec"].(map[string]any)["priorityClassName"] = "high"
			member.Object["spec"].(map[string]any)["priorityClassName"] = "high"
		}
		member.Object["spec"].(map[string]any)["schedulerName"] = profile
		setup = append(setup, group)
		pending = append(pending, member)
		bads = append(bads, bad{point, mode, member.GetName()})
	}
	// The good pods come after the bad ones, so that their binding shows
	// kube-scheduler has taken the bad ones in.
	const good = 20
	for i := 0; i < good; i++ {
		p := pod(t, fmt.Sprintf("good-%d", i), "", "100m", 0)
		p.Object["spec"].(map[string]any)["schedulerName"] = "good"
		pending = append(pending, p)
	}
	registry := frameworkruntime.Registry{"Hostile": FactoryWithComponent("Hostile", "")}
	cp, sched, _ := startScheduler(ctx, t, setup, pending, config.String(), registry)
	client, err := kubernetes.NewForConfig(cp.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	sched.Run()

	// What each bad pod must come to: bound, or pending with a reason
	// naming the plugin (a condition), or held at PreEnqueue (none).
	decided := func(b bad, p *v1.Pod) (bool, string) {
		reason := scheduledReason(p)
		switch {
		case (b.mode == "flood-logs" || b.mode == "duplicate-ids") && b.point != "pod-group-post-filter":
			return p.Spec.NodeName != "", "bound"
		case p.Spec.NodeName != "":
			return false, "bound, though its component misbehaved"
		case b.point == "pre-enqueue":
			return reason == "", "held at PreEnqueue, without a condition"
		case b.mode == "flood-logs":
			return reason != "", "pending, with a reason"
		case b.mode == "huge-reason":
			// The 4 MiB answer is the reason of a rejection (it need not
			// name the plugin), capped before it reaches the pod.
			return reason != "" && len(reason) <= 4096, "pending, with a reason of at most 4 KiB"
		default:
			return strings.Contains(reason, "Hostile"), "pending, with a reason naming Hostile"
		}
	}
	bound, undecided := 0, []string{"nothing read yet"}
	for {
		if ctx.Err() != nil {
			t.Fatalf("%d of %d good pods bound; not as they should be: %s", bound, good, strings.Join(undecided, "; "))
		}
		list, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			if ctx.Err() != nil {
				continue
			}
			t.Fatal(err)
		}
		pods := map[string]*v1.Pod{}
		bound, undecided = 0, nil
		for i := range list.Items {
			p := &list.Items[i]
			pods[p.Name] = p
			if strings.HasPrefix(p.Name, "good-") && p.Spec.NodeName != "" {
				bound++
			}
		}
		for _, b := range bads {
			if ok, want := decided(b, pods[b.pod]); !ok {
				undecided = append(undecided, fmt.Sprintf("%s: want %s (node %q, reason %.200q, %d bytes)", b.pod, want,
					pods[b.pod].Spec.NodeName, scheduledReason(pods[b.pod]), len(scheduledReason(pods[b.pod]))))
			}
		}
		if bound == good && len(undecided) == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// scheduledReason is the message of the pod's PodScheduled=False
// condition, if any.
func scheduledReason(p *v1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
			return c.Message
		}
	}
	return ""
}
