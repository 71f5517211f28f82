package kubelet

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"example.invalid/wasched/kube/controlplane"
)

func pod(name string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1.PodSpec{
			NodeName:   "node-0",
			Containers: []v1.Container{{Name: "c", Image: "x"}},
		},
	}
}

// startControlPlane starts a control plane for the test and a client of
// it; ctx bounds the test.
func startControlPlane(t *testing.T) (context.Context, kubernetes.Interface) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(cp.Stop)
	return ctx, kubernetes.NewForConfigOrDie(cp.RestConfig())
}

// TestStandIn runs the stand-in against the real API server: a bound pod
// deleted with its grace period goes at once, and Finish never deletes a
// pod recreated under the same name.
func TestStandIn(t *testing.T) {
	ctx, client := startControlPlane(t)
	pods := client.CoreV1().Pods("default")

	// Finish with a stale UID: the pod of that name now is another one.
	old, err := pods.Create(ctx, pod("recreated"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if err := pods.Delete(ctx, "recreated", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, pod("recreated"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted, err := Finish(ctx, client, old)
	if deleted || err != nil {
		t.Fatalf("Finish(stale UID) = %v, %v; want false, nil", deleted, err)
	}
	if _, err := pods.Get(ctx, "recreated", metav1.GetOptions{}); err != nil {
		t.Fatalf("the recreated pod was touched: %v", err)
	}

	// The stand-in finishes a pod being deleted.
	if err := Run(ctx, client, Options{}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := pods.Create(ctx, pod("victim"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "victim", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := pods.Get(ctx, "victim", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pod being deleted was not finished: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// observed is one change of a pod as a watch saw it, and when.
type observed struct {
	at   time.Time
	kind watch.EventType
	pod  *v1.Pod
}

// TestLifecycle runs the stand-in with Lifecycle against the real API
// server: a bound pod starts, one annotated with run-for succeeds after
// it, a deleted one stays terminating for its grace period and fails
// before it goes, and a bad annotation is reported on its pod.
func TestLifecycle(t *testing.T) {
	ctx, client := startControlPlane(t)
	pods := client.CoreV1().Pods("default")
	w, err := pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := Run(ctx, client, Options{Lifecycle: true}); err != nil {
		t.Fatalf("Run: %v", err)
	}

	short := pod("short")
	short.Spec.RestartPolicy = v1.RestartPolicyNever
	short.Annotations = map[string]string{RunForAnnotation: "1s"}
	grace := int64(2)
	long := pod("long")
	long.Spec.TerminationGracePeriodSeconds = &grace
	bad := pod("bad")
	bad.Annotations = map[string]string{RunForAnnotation: "soon"}
	for _, p := range []*v1.Pod{short, long, bad} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	history := map[string][]observed{}
	next := func(until func() bool) {
		t.Helper()
		for !until() {
			select {
			case event := <-w.ResultChan():
				if p, ok := event.Object.(*v1.Pod); ok {
					history[p.Name] = append(history[p.Name], observed{time.Now(), event.Type, p})
				}
			case <-ctx.Done():
				t.Fatalf("timed out; seen: %v", phases(history))
			}
		}
	}
	last := func(name string) *v1.Pod {
		h := history[name]
		if len(h) == 0 {
			return nil
		}
		return h[len(h)-1].pod
	}
	phase := func(name string, want v1.PodPhase) func() bool {
		return func() bool { p := last(name); return p != nil && p.Status.Phase == want }
	}

	next(phase("short", v1.PodSucceeded))
	started, done := last("short").Status.StartTime, last("short").Status.ContainerStatuses
	if started == nil || len(done) != 1 || done[0].State.Terminated == nil || done[0].State.Terminated.ExitCode != 0 {
		t.Fatalf("short: status %+v", last("short").Status)
	}
	if ran := done[0].State.Terminated.FinishedAt.Sub(started.Time); ran < time.Second {
		t.Errorf("short ran %v, annotated 1s", ran)
	}
	if seen := phases(history)["short"]; seen != "Pending Running Succeeded" {
		t.Errorf("short went through %q, want Pending Running Succeeded", seen)
	}

	next(phase("long", v1.PodRunning))
	next(phase("bad", v1.PodRunning))
	if err := pods.Delete(ctx, "long", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	next(func() bool { h := history["long"]; return h[len(h)-1].kind == watch.Deleted })
	var marked *v1.Pod
	var failed bool
	for _, o := range history["long"] {
		if marked == nil && o.pod.DeletionTimestamp != nil {
			marked = o.pod
		}
		if o.pod.Status.Phase == v1.PodFailed {
			statuses := o.pod.Status.ContainerStatuses
			// Killed at the end of its grace period.
			failed = len(statuses) == 1 && statuses[0].State.Terminated != nil && statuses[0].State.Terminated.ExitCode == 137
		}
	}
	gone := history["long"][len(history["long"])-1].at
	if marked == nil {
		t.Fatal("long went without being marked for deletion")
	}
	// deletionTimestamp is whole seconds: the pod may go up to one second
	// before the instant it names.
	if earliest := marked.DeletionTimestamp.Add(-time.Second); gone.Before(earliest) {
		t.Errorf("long went at %v, before its grace period ended (%v)", gone, marked.DeletionTimestamp)
	}
	if !failed {
		t.Errorf("long went without its containers killed (phase Failed, exit code 137): %s", phases(history)["long"])
	}
	if p := last("bad"); p.Status.Phase != v1.PodRunning {
		t.Errorf("bad: phase %s, want Running (a bad run-for runs until deleted)", p.Status.Phase)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		events, err := client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=bad"})
		if err != nil {
			t.Fatal(err)
		}
		if len(events.Items) == 1 && events.Items[0].Reason == "InvalidRunFor" &&
			strings.Contains(events.Items[0].Message, RunForAnnotation) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no InvalidRunFor event for bad: %+v", events.Items)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// phases is each pod's phases in order, repeats folded.
func phases(history map[string][]observed) map[string]string {
	out := map[string]string{}
	for name, h := range history {
		var seen []string
		for _, o := range h {
			p := string(o.pod.Status.Phase)
			if len(seen) == 0 || seen[len(seen)-1] != p {
				seen = append(seen, p)
			}
		}
		out[name] = strings.Join(seen, " ")
	}
	return out
}
