package jobcontroller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"example.invalid/wasched/kube/controlplane"
	"example.invalid/wasched/kube/engine"
	"example.invalid/wasched/kube/kubelet"
)

// gangJob is a Job of two pods of one CPU each, scheduled as a gang (its
// Workload and PodGroup made by the Job controller), each pod running for
// runFor and terminating for one second.
func gangJob(name, priorityClass, runFor string) *batchv1.Job {
	two, grace := int32(2), int64(1)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: batchv1.JobSpec{
			Parallelism: &two,
			Completions: &two,
			Scheduling: &batchv1.JobSchedulingConfiguration{
				SchedulingPolicy: &schedulingv1alpha3.WorkloadPodGroupSchedulingPolicy{
					Gang: &schedulingv1alpha3.WorkloadPodGroupGangSchedulingPolicy{},
				},
			},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{kubelet.RunForAnnotation: runFor}},
				Spec: v1.PodSpec{
					RestartPolicy:                 v1.RestartPolicyNever,
					PriorityClassName:             priorityClass,
					TerminationGracePeriodSeconds: &grace,
					Containers: []v1.Container{{Name: "main", Image: "busybox", Resources: v1.ResourceRequirements{
						Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}}},
				},
			},
		},
	}
}

// TestPreemptedJobPodsAreReplaced runs upstream's Job controller with
// kube-scheduler and the kubelet stand-in keeping time: a gang Job of low
// priority runs on a node it fills; a gang Job of high priority preempts
// it; the preempted pods stay terminating for their grace period, the Job
// controller replaces them, and both Jobs complete. Asserted in counts:
// six pods, each bound, two victims, two replacements.
func TestPreemptedJobPodsAreReplaced(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	client := kubernetes.NewForConfigOrDie(cp.RestConfig())
	pods, err := client.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pods.Stop()

	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0"}}
	if node, err = client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	capacity := v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("4Gi"), v1.ResourcePods: resource.MustParse("110")}
	node.Status = v1.NodeStatus{Allocatable: capacity, Capacity: capacity,
		Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, value := range map[string]int32{"low": 10, "high": 1000} {
		class := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		if _, err := client.SchedulingV1().PriorityClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	sched, err := engine.Start(ctx, cp.RestConfig(), engine.Options{UpstreamBackoff: true, Lifecycle: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sched.Stop()
	if err := Run(ctx, cp.RestConfig()); err != nil {
		t.Fatal(err)
	}

	jobs := client.BatchV1().Jobs("default")
	if _, err := jobs.Create(ctx, gangJob("train", "low", "10m"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Every pod's last state.
	last := map[string]*v1.Pod{}
	running := func(job string) int {
		n := 0
		for _, p := range last {
			if p.Labels[batchv1.JobNameLabel] == job && p.Status.Phase == v1.PodRunning && p.DeletionTimestamp == nil {
				n++
			}
		}
		return n
	}
	follow := func(what string, until func() bool) {
		t.Helper()
		for !until() {
			select {
			case event := <-pods.ResultChan():
				if p, ok := event.Object.(*v1.Pod); ok {
					last[p.Name] = p
				}
			case <-time.After(200 * time.Millisecond):
			case <-ctx.Done():
				t.Fatalf("%s: %v; pods: %s", what, ctx.Err(), describe(last))
			}
		}
	}
	follow("train running", func() bool { return running("train") == 2 })

	if _, err := jobs.Create(ctx, gangJob("urgent", "high", "2s"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	complete := func(name string) bool {
		job, err := jobs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range job.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == v1.ConditionTrue {
				return true
			}
		}
		return false
	}
	follow("urgent complete", func() bool { return complete("urgent") })
	follow("train replaced and running", func() bool { return running("train") == 2 })

	var victims, trainPods, urgentPods int
	for name, p := range last {
		if p.Spec.NodeName == "" {
			t.Errorf("%s was never bound", name)
		}
		switch p.Labels[batchv1.JobNameLabel] {
		case "train":
			trainPods++
			if p.DeletionTimestamp != nil {
				victims++
				if p.Status.Phase != v1.PodFailed {
					t.Errorf("victim %s went in phase %s, want Failed", name, p.Status.Phase)
				}
			}
		case "urgent":
			urgentPods++
			if p.Status.Phase != v1.PodSucceeded {
				t.Errorf("urgent pod %s: phase %s, want Succeeded", name, p.Status.Phase)
			}
		}
	}
	if victims != 2 || trainPods != 4 || urgentPods != 2 {
		t.Errorf("victims %d, train pods %d, urgent pods %d; want 2, 4 (2 replacements), 2; pods: %s",
			victims, trainPods, urgentPods, describe(last))
	}
	train, err := jobs.Get(ctx, "train", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if train.Status.Failed != 2 {
		t.Errorf("train: status.failed %d, want 2 (the preempted pods)", train.Status.Failed)
	}
	groups, err := client.SchedulingV1beta1().PodGroups("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(groups.Items) != 2 {
		t.Errorf("%d PodGroups, want one per Job", len(groups.Items))
	}
	for _, g := range groups.Items {
		if g.Spec.SchedulingPolicy.Gang == nil || g.Spec.SchedulingPolicy.Gang.MinCount != 2 {
			t.Errorf("PodGroup %s: policy %+v, want a gang of 2", g.Name, g.Spec.SchedulingPolicy)
		}
	}
}

func describe(pods map[string]*v1.Pod) string {
	var parts []string
	for name, p := range pods {
		parts = append(parts, fmt.Sprintf("%s(%s node=%q deleting=%t)", name, p.Status.Phase, p.Spec.NodeName, p.DeletionTimestamp != nil))
	}
	return strings.Join(parts, " ")
}
