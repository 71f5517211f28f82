package wasmplugin

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics/testutil"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// TestALoopingFilterOpensItsBreakerDuringAGangPreemption runs the sample
// configuration with the Hostile fixture added as a filter under
// failurePolicy Ignore, looping for the pods of PodGroup bad-urgent: a
// high-priority gang that fits on none of 100 full nodes, so that
// kube-scheduler filters every node for it and the preemption component's
// dry run filters again at each reprieve. The component's breaker opens
// after 3 timed-out calls; it is not called again (every later call is
// refused without running it, counted under cause circuit-open), the
// preemption completes with one victim on each of two nodes, the pods
// created beside the gang all bind, and one Event says the breaker opened.
// Without the breaker each of those calls would take the component's
// timeout: minutes per preemption.
func TestALoopingFilterOpensItsBreakerDuringAGangPreemption(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	config, _ := sample(t)
	for _, point := range []string{"preFilter", "filter"} {
		old := fmt.Sprintf("%s: {enabled: [{name: WaschedGpuBinPacking}]}", point)
		if !strings.Contains(config, old) {
			t.Fatalf("the sample configuration no longer has %q", old)
		}
		config = strings.Replace(config, old, fmt.Sprintf("%s: {enabled: [{name: WaschedGpuBinPacking}, {name: Hostile}]}", point), 1)
	}
	config += `      - name: Hostile
        args: {failurePolicy: Ignore, timeout: 100ms, fuel: 100000000000, circuitBreaker: {failures: 3, window: 1m, coolDown: 10m}, args: {point: filter, misbehave: loop}}
`
	urgent := podGroup(t, "bad-urgent", 2, "")
	urgent.Object["spec"].(map[string]any)["priorityClassName"] = "high"
	setup := []*unstructured.Unstructured{priorityClass(t, "high", 1000), urgent}
	const nodes = 100
	for i := 0; i < nodes; i++ {
		name := fmt.Sprintf("n%03d", i)
		setup = append(setup, node(t, name, fmt.Sprintf("r%d", i%4), 0))
		for j := 0; j < 2; j++ {
			low := pod(t, fmt.Sprintf("low-%03d-%d", i, j), "", "3", 0)
			low.Object["spec"].(map[string]any)["nodeName"] = name
			setup = append(setup, low)
		}
	}
	var pending []*unstructured.Unstructured
	for i := 0; i < 2; i++ {
		p := pod(t, fmt.Sprintf("urgent-%d", i), "bad-urgent", "5", 0)
		p.Object["spec"].(map[string]any)["priorityClassName"] = "high"
		pending = append(pending, p)
	}
	const others = 10
	for i := 0; i < others; i++ {
		pending = append(pending, pod(t, fmt.Sprintf("other-%d", i), "", "100m", 0))
	}
	// Other tests of this process run components called Hostile too: the
	// counters are compared with their values before.
	registerMetrics.Do(registerHealthMetrics)
	failures := func(cause string) float64 {
		v, _ := testutil.GetCounterMetricValue(componentFailures.WithLabelValues("Hostile", "filter", cause))
		return v
	}
	openings := func() float64 {
		v, _ := testutil.GetCounterMetricValue(breakerOpened.WithLabelValues("Hostile"))
		return v
	}
	timeoutsBefore, refusedBefore, openedBefore := failures("timeout"), failures("circuit-open"), openings()
	reg := registry()
	reg["Hostile"] = FactoryWithComponent("Hostile", hostileComponent(t))
	cp, sched, _ := startScheduler(ctx, t, setup, pending, config, frameworkruntime.Registry(reg))
	result := runUntilQuiet(ctx, t, cp, sched)

	victims, bound := 0, map[string]string{}
	for _, p := range result.Pods {
		if strings.HasPrefix(p.Name, "low-") && p.Deleted {
			victims++
		}
		if p.Node != "" && !p.Deleted {
			bound[p.Name] = p.Node
		}
	}
	if victims != 2 || bound["urgent-0"] == "" || bound["urgent-1"] == "" {
		t.Errorf("preemption: %d victims, urgent on %q and %q; want 2 victims and both bound", victims, bound["urgent-0"], bound["urgent-1"])
	}
	for i := 0; i < others; i++ {
		if name := fmt.Sprintf("other-%d", i); bound[name] == "" {
			t.Errorf("%s is not bound", name)
		}
	}
	if timeouts := failures("timeout") - timeoutsBefore; timeouts != 3 {
		t.Errorf("wasched_plugin_errors_total{plugin=Hostile,extension_point=filter,cause=timeout} grew by %v, want 3: the component ran until its breaker opened, and never after", timeouts)
	}
	if refused := failures("circuit-open") - refusedBefore; refused < 1 {
		t.Errorf("calls refused while open: %v, want some", refused)
	}
	if opened := openings() - openedBefore; opened != 1 {
		t.Errorf("wasched_plugin_circuit_breaker_opened_total{plugin=Hostile} grew by %v, want 1", opened)
	}
	if open, err := testutil.GetGaugeMetricValue(breakerOpen.WithLabelValues("Hostile")); err != nil || open < 1 {
		t.Errorf("wasched_plugin_circuit_breaker_open{plugin=Hostile} = %v (%v), want at least 1", open, err)
	}
	// The Event is written asynchronously by kube-scheduler's broadcaster.
	client, err := kubernetes.NewForConfig(cp.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	for {
		events, err := client.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var opened []string
		for _, e := range events.Items {
			if e.Reason == "CircuitBreakerOpened" {
				opened = append(opened, e.Regarding.Kind+" "+e.Regarding.Name+": "+e.Note)
			}
		}
		if len(opened) == 1 && strings.Contains(opened[0], "plugin Hostile: circuit breaker opened") {
			return
		}
		if len(opened) > 1 || ctx.Err() != nil {
			t.Fatalf("CircuitBreakerOpened events: %q, want one naming Hostile", opened)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestFilterVerdictsAreKeptPerNodeFingerprint: a verdict is reused only
// while the node's fingerprint is the one it was asked at.
func TestFilterVerdictsAreKeptPerNodeFingerprint(t *testing.T) {
	fs := &filterState{rejected: map[string]*fwk.Status{}, prints: map[string]uint64{}}
	if _, ok := fs.verdict("n1", 7); ok {
		t.Fatal("a verdict for a node never asked")
	}
	no := fwk.NewStatus(fwk.Unschedulable, "no")
	fs.keep("n1", 7, no)
	if v, ok := fs.verdict("n1", 7); !ok || v != no {
		t.Fatalf("kept verdict: %v, %v", v, ok)
	}
	if _, ok := fs.verdict("n1", 8); ok {
		t.Fatal("a verdict reused after the node changed")
	}
	fs.keep("n1", 8, nil)
	if v, ok := fs.verdict("n1", 8); !ok || v != nil {
		t.Fatalf("kept pass: %v, %v", v, ok)
	}
}

// TestAnEventQuotesAFailureCutToFitItsNote: an Event's note is at most
// 1 KiB; the quoted failure is cut at a character boundary.
func TestAnEventQuotesAFailureCutToFitItsNote(t *testing.T) {
	long := strings.Repeat("é", 600) // 1,200 bytes
	got := cut(long, eventMessageBytes)
	if len(got) > eventMessageBytes+len("… (cut)") || !strings.HasSuffix(got, "… (cut)") || !utf8.ValidString(got) {
		t.Fatalf("cut to %d bytes: %q", len(got), got)
	}
	if cut("short", eventMessageBytes) != "short" {
		t.Fatal("a short message is cut")
	}
}
