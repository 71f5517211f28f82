package engine

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	alpha3listers "k8s.io/client-go/listers/scheduling/v1alpha3"
	beta1listers "k8s.io/client-go/listers/scheduling/v1beta1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

func ptr(s string) *string { return &s }

func member(name, group string) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
	if group != "" {
		pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr(group)}
	}
	return pod
}

// A preemptionGate over listers holding a two-level tree root > mid > leaf, a
// PodGroup "solo", pods of both and a lone pod.
func testPreemptionGate(t *testing.T) (*preemptionGate, cache.Indexer, map[string][]*v1.Pod) {
	t.Helper()
	index := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	pods, groups, composites := index(), index(), index()
	for _, c := range []*schedulingv1alpha3.CompositePodGroup{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "root"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "mid"}, Spec: schedulingv1alpha3.CompositePodGroupSpec{ParentCompositePodGroupName: ptr("root")}},
	} {
		if err := composites.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []*schedulingv1beta1.PodGroup{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "leaf"}, Spec: schedulingv1beta1.PodGroupSpec{ParentCompositePodGroupName: ptr("mid")}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "solo"}},
	} {
		if err := groups.Add(g); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []*v1.Pod{member("leaf-0", "leaf"), member("solo-0", "solo"), member("lone", ""), member("victim", "")} {
		if err := pods.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	state := map[string][]*v1.Pod{}
	s := &preemptionGate{
		pods: corelisters.NewPodLister(pods),
		cached: func(pod *v1.Pod) (*v1.Pod, error) {
			for _, p := range state["cached"] {
				if p.UID == pod.UID {
					return p, nil
				}
			}
			return nil, fmt.Errorf("pod %s not in the cache", pod.UID)
		},
		podGroups:  beta1listers.NewPodGroupLister(groups),
		composites: alpha3listers.NewCompositePodGroupLister(composites),
		active:     func() []*v1.Pod { return state["active"] },
		activate: func(_ klog.Logger, activated map[string]*v1.Pod) {
			for _, p := range activated {
				state["active"] = append(state["active"], p)
				state["activated"] = append(state["activated"], p)
			}
		},
	}
	return s, pods, state
}

func TestPreemptionGateKnowsAPreemptorsPods(t *testing.T) {
	s, _, _ := testPreemptionGate(t)
	cases := []struct {
		pod  *v1.Pod
		p    preemption
		want bool
	}{
		{member("lone", ""), preemption{kind: "Pod", namespace: "ns", name: "lone"}, true},
		{member("lone", ""), preemption{kind: "Pod", namespace: "ns", name: "other"}, false},
		{member("solo-0", "solo"), preemption{kind: "PodGroup", namespace: "ns", name: "solo"}, true},
		{member("solo-0", "solo"), preemption{kind: "PodGroup", namespace: "ns", name: "leaf"}, false},
		{member("leaf-0", "leaf"), preemption{kind: "CompositePodGroup", namespace: "ns", name: "root"}, true},
		{member("leaf-0", "leaf"), preemption{kind: "CompositePodGroup", namespace: "ns", name: "mid"}, true},
		{member("solo-0", "solo"), preemption{kind: "CompositePodGroup", namespace: "ns", name: "root"}, false},
		{member("lone", ""), preemption{kind: "CompositePodGroup", namespace: "ns", name: "root"}, false},
	}
	for _, c := range cases {
		if got := s.memberOf(c.pod, c.p); got != c.want {
			t.Errorf("memberOf(%s, %s %s) = %v, want %v", c.pod.Name, c.p.kind, c.p.name, got, c.want)
		}
	}
}

func TestSettleWaitsForVictimsThenActivatesThePreemptor(t *testing.T) {
	s, pods, state := testPreemptionGate(t)
	item, _, _ := pods.GetByKey("ns/victim")
	victim := item.(*v1.Pod)
	state["cached"] = []*v1.Pod{victim}
	p := []preemption{{victimNamespace: "ns", victimName: "victim", victimUID: victim.UID, kind: "CompositePodGroup", namespace: "ns", name: "root"}}
	if s.victimsGone(p) {
		t.Fatal("the victim is still in the informer and the cache")
	}
	if err := pods.Delete(victim); err != nil {
		t.Fatal(err)
	}
	// Gone from the informer's store, not yet from the scheduler's cache
	// (its delete handler has not run): the next cycle would still see it.
	if s.victimsGone(p) {
		t.Fatal("the victim is still in kube-scheduler's cache")
	}
	state["cached"] = nil
	if !s.victimsGone(p) {
		t.Fatal("the victim is gone")
	}
	if s.preemptorsActive(klog.Background(), p) {
		t.Fatal("the preemptor was not active yet")
	}
	if got := state["activated"]; len(got) != 1 || got[0].Name != "leaf-0" {
		t.Fatalf("activated %v, want the tree's pod leaf-0", got)
	}
	if !s.preemptorsActive(klog.Background(), p) {
		t.Fatal("the preemptor is active now")
	}
	s.await(klog.Background(), p)
	if len(state["activated"]) != 1 {
		t.Fatalf("await activated again: %v", state["activated"])
	}
}
