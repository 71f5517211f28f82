package engine

import (
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	alpha3listers "k8s.io/client-go/listers/scheduling/v1alpha3"
	beta1listers "k8s.io/client-go/listers/scheduling/v1beta1"
	"k8s.io/klog/v2"
)

// preemptionWaitLimit bounds how long the next scheduling cycle waits for one
// cycle's preemptions to be done.
const preemptionWaitLimit = 5 * time.Second

// preemption is one victim of one preemptor, as its Preempted event named
// them.
type preemption struct {
	victimNamespace, victimName string
	// victimUID keys the victim in kube-scheduler's cache.
	victimUID types.UID
	// kind is Pod, PodGroup or CompositePodGroup.
	kind            string
	namespace, name string
}

// preemptionGate holds the next scheduling cycle back until the preemptions of
// the last one have run their course: every victim gone from the
// scheduler's informer and from its cache (which the next cycle's
// snapshot is taken from), then every preemptor moved to the active queue
// (the queue's Activate, as a plugin's podsToActivate would), past the
// backoff its failed attempt earned.
//
// Victims here stop at once (the watch finishes them). Left alone, a
// preemptor waits out its backoff (a second or more) while the loop
// schedules whatever comes next, so which entities ran before its retry —
// and saw its pods or not — would depend on how fast this machine is.
// With the hold, the preemptor is retried next if it is the most
// important entity queued, as when its victims stop before anything else
// is scheduled; what kube-scheduler decides no longer depends on timing.
type preemptionGate struct {
	pods corelisters.PodLister
	// cached finds a pod in kube-scheduler's cache (Cache.GetPod, keyed by
	// UID). client-go deletes a pod from the informer's store before its
	// handlers run, and only the scheduler's delete handler takes the pod
	// out of the cache: in between, a cycle would still see the victim on
	// its node. nil: not checked.
	cached     func(*v1.Pod) (*v1.Pod, error)
	podGroups  beta1listers.PodGroupLister
	composites alpha3listers.CompositePodGroupLister
	active     func() []*v1.Pod
	activate   func(logger klog.Logger, pods map[string]*v1.Pod)
}

// await waits, at most preemptionWaitLimit, until every preemption is done:
// its victims gone and its preemptors active.
func (s *preemptionGate) await(logger klog.Logger, preemptions []preemption) {
	if len(preemptions) == 0 {
		return
	}
	deadline := time.Now().Add(preemptionWaitLimit)
	for !s.victimsGone(preemptions) {
		if time.Now().After(deadline) {
			logger.V(2).Info("Victims did not go; scheduling on", "preemptions", len(preemptions))
			return
		}
		time.Sleep(time.Millisecond)
	}
	for !s.preemptorsActive(logger, preemptions) {
		if time.Now().After(deadline) {
			logger.V(2).Info("Preemptions not done in time; scheduling on", "preemptions", len(preemptions))
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func (s *preemptionGate) victimsGone(preemptions []preemption) bool {
	for _, p := range preemptions {
		if _, err := s.pods.Pods(p.victimNamespace).Get(p.victimName); !apierrors.IsNotFound(err) {
			return false
		}
		if s.cached != nil && p.victimUID != "" {
			key := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: p.victimUID, Namespace: p.victimNamespace, Name: p.victimName}}
			if _, err := s.cached(key); err == nil {
				return false
			}
		}
	}
	return true
}

// preemptorsActive activates the preemptors not in the active queue yet
// and says whether all were already there.
func (s *preemptionGate) preemptorsActive(logger klog.Logger, preemptions []preemption) bool {
	active := map[string]bool{}
	for _, pod := range s.active() {
		active[pod.Namespace+"/"+pod.Name] = true
	}
	waiting := map[string]*v1.Pod{}
	for _, p := range preemptions {
		pods, err := s.pods.Pods(p.namespace).List(labels.Everything())
		if err != nil {
			continue
		}
		for _, pod := range pods {
			key := pod.Namespace + "/" + pod.Name
			if pod.Spec.NodeName == "" && !active[key] && s.memberOf(pod, p) {
				waiting[key] = pod
			}
		}
	}
	if len(waiting) == 0 {
		return true
	}
	s.activate(logger, waiting)
	return false
}

// memberOf says whether pod is the preemptor or one of its pods.
func (s *preemptionGate) memberOf(pod *v1.Pod, p preemption) bool {
	if p.kind == "Pod" {
		return pod.Name == p.name
	}
	group := pod.Spec.SchedulingGroup
	if group == nil || group.PodGroupName == nil {
		return false
	}
	if p.kind == "PodGroup" {
		return *group.PodGroupName == p.name
	}
	pg, err := s.podGroups.PodGroups(pod.Namespace).Get(*group.PodGroupName)
	if err != nil {
		return false
	}
	parent := pg.Spec.ParentCompositePodGroupName
	// A tree is a few levels deep (the API allows at most 4); the bound
	// guards against a cycle in bad data.
	for depth := 0; parent != nil && depth < 8; depth++ {
		if *parent == p.name {
			return true
		}
		cpg, err := s.composites.CompositePodGroups(pod.Namespace).Get(*parent)
		if err != nil {
			return false
		}
		parent = cpg.Spec.ParentCompositePodGroupName
	}
	return false
}
