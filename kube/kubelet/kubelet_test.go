package kubelet

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// TestStandIn runs the stand-in against the real API server: a bound pod
// deleted with its grace period goes at once, and Finish never deletes a
// pod recreated under the same name.
func TestStandIn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer cp.Stop()
	client := kubernetes.NewForConfigOrDie(cp.RestConfig())
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
	if err := Run(ctx, client); err != nil {
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
