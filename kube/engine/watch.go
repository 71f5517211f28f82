package engine

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"example.invalid/wasched/kube/kubelet"
)

// podState is what the harness knows of one pod over the run.
type podState struct {
	pod *v1.Pod
	// deleted is set once the pod is gone from the API server.
	deleted bool
	// disrupted is set once the pod carried DisruptionTarget.
	disrupted *v1.PodCondition
	// boundSeq orders bindings: the change number when nodeName appeared.
	boundSeq uint64
}

// watch follows every pod on the API server through an informer of its
// own (not the scheduler's): it counts changes that can affect a decision
// (a binding, a nomination, a disruption, a deletion), keeps every pod's
// last state (deleted ones too), and, unless a kubelet stand-in keeps
// pods' time beside it (Options.Lifecycle), acts as the kubelets that do
// not run here — a pod marked for deletion is finished at once (deleted
// with grace period 0), as if its containers had stopped.
type watch struct {
	client kubernetes.Interface
	// finishes says whether this watch finishes pods marked for deletion.
	finishes bool

	// changes counts decision-relevant changes; quiet() reads it.
	changes atomic.Uint64
	// lastChange is when changes last moved (unix nanoseconds).
	lastChange atomic.Int64
	// terminating counts pods marked for deletion not yet gone.
	terminating atomic.Int64
	// finished counts pods this watch deleted with grace period 0.
	finished atomic.Int64

	mu   sync.Mutex
	pods map[types.UID]*podState
	// scheduled holds, per PodGroup "namespace/name", the first
	// PodGroupInitiallyScheduled=True condition it carried: kube-scheduler
	// may write False over it from a later cycle that read a stale copy
	// of the group (its updatePodGroupCondition means never to regress).
	scheduled map[string]*Condition

	factory informers.SharedInformerFactory
	synced  cache.InformerSynced
}

func newWatch(client kubernetes.Interface, finishes bool) *watch {
	w := &watch{client: client, finishes: finishes, pods: map[types.UID]*podState{}, scheduled: map[string]*Condition{}}
	w.factory = informers.NewSharedInformerFactory(client, 0)
	groups := w.factory.Scheduling().V1beta1().PodGroups().Informer()
	groups.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observeGroup(obj) },
		UpdateFunc: func(_, obj any) { w.observeGroup(obj) },
	})
	informer := w.factory.Core().V1().Pods().Informer()
	informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod, ok := obj.(*v1.Pod); ok {
				w.observe(nil, pod)
			}
		},
		UpdateFunc: func(old, obj any) {
			oldPod, _ := old.(*v1.Pod)
			if pod, ok := obj.(*v1.Pod); ok {
				w.observe(oldPod, pod)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if pod, ok := obj.(*v1.Pod); ok {
				w.gone(pod)
			}
		},
	})
	w.synced = func() bool { return informer.HasSynced() && groups.HasSynced() }
	return w
}

// observeGroup remembers a PodGroup's first PodGroupInitiallyScheduled=True.
func (w *watch) observeGroup(obj any) {
	group, ok := obj.(*schedulingv1beta1.PodGroup)
	if !ok {
		return
	}
	c := apimeta.FindStatusCondition(group.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled)
	if c == nil || c.Status != metav1.ConditionTrue {
		return
	}
	key := group.Namespace + "/" + group.Name
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.scheduled[key] == nil {
		first := condition(*c)
		w.scheduled[key] = &first
	}
}

// firstScheduled is the first PodGroupInitiallyScheduled=True the PodGroup
// key carried, if any.
func (w *watch) firstScheduled(key string) *Condition {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.scheduled[key]
}

// start runs the informer until run is done and waits, at most until wait
// is done, for it to sync.
func (w *watch) start(run, wait context.Context) bool {
	w.factory.Start(run.Done())
	return cache.WaitForCacheSync(wait.Done(), w.synced)
}

func (w *watch) changed() {
	w.changes.Add(1)
	w.lastChange.Store(time.Now().UnixNano())
}

func disruption(pod *v1.Pod) *v1.PodCondition {
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue {
			return c
		}
	}
	return nil
}

func (w *watch) observe(old, pod *v1.Pod) {
	w.mu.Lock()
	state, known := w.pods[pod.UID]
	if !known {
		state = &podState{}
		w.pods[pod.UID] = state
	}
	state.pod = pod
	relevant := false
	if old != nil {
		relevant = old.Spec.NodeName != pod.Spec.NodeName ||
			old.Status.NominatedNodeName != pod.Status.NominatedNodeName ||
			(old.DeletionTimestamp == nil) != (pod.DeletionTimestamp == nil)
		if old.Spec.NodeName == "" && pod.Spec.NodeName != "" {
			state.boundSeq = w.changes.Load() + 1
		}
	}
	if c := disruption(pod); c != nil && state.disrupted == nil {
		state.disrupted = c.DeepCopy()
		relevant = true
	}
	terminating := pod.DeletionTimestamp != nil && (old == nil || old.DeletionTimestamp == nil)
	w.mu.Unlock()
	if relevant {
		w.changed()
	}
	if terminating {
		w.terminating.Add(1)
		if w.finishes {
			go w.finish(pod)
		}
	}
}

func (w *watch) gone(pod *v1.Pod) {
	w.mu.Lock()
	state, known := w.pods[pod.UID]
	if !known {
		state = &podState{pod: pod}
		w.pods[pod.UID] = state
	}
	wasTerminating := state.pod != nil && state.pod.DeletionTimestamp != nil
	state.deleted = true
	w.mu.Unlock()
	if wasTerminating {
		w.terminating.Add(-1)
	}
	w.changed()
}

// finish deletes a terminating pod with grace period 0, as its kubelet
// would once its containers stopped (kubelet.Finish).
func (w *watch) finish(pod *v1.Pod) {
	if deleted, _ := kubelet.Finish(context.Background(), w.client, pod); deleted {
		w.finished.Add(1)
	}
	// Otherwise leave it terminating: quiet() then never holds and the
	// run's timeout names the pod.
}

// snapshot copies every pod's state.
func (w *watch) snapshot() []podState {
	w.mu.Lock()
	defer w.mu.Unlock()
	states := make([]podState, 0, len(w.pods))
	for _, s := range w.pods {
		states = append(states, *s)
	}
	return states
}

func typeName(object any) string {
	t := reflect.TypeOf(object)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}
