// Package kubelet stands in for the kubelets that do not run here.
//
// By default a pod marked for deletion is finished at once (deleted with
// grace period 0), as its kubelet would once its containers stopped, so
// that preemption victims go and their preemptors can be bound: what a
// test of one scheduling instant needs.
//
// With Options.Lifecycle, pods keep a node's time instead, for tests that
// run over time (a Job controller beside it, replays checked against a
// cluster):
//
//   - a pod bound to a node starts: phase Running, status.startTime, its
//     containers running and the pod Ready;
//   - a running pod annotated with RunForAnnotation ("wasched.io/run-for",
//     a Go duration such as "90s") whose restartPolicy is Never or
//     OnFailure succeeds that long after the instant it was started
//     (status.startTime is kept in whole seconds; a pod started before a
//     restart of the stand-in counts from that): phase Succeeded, its
//     containers terminated with exit code 0;
//   - a bound pod marked for deletion stays terminating for the grace
//     period it was (last) deleted with — its terminationGracePeriodSeconds
//     unless the deleter chose one —, counted from when the deletion was
//     seen, then its containers are killed (phase Failed, exit code 137,
//     unless it had already finished) and it is deleted with grace period
//     0. A pod with finalizers stays until they are removed, as on a
//     cluster.
//
// A pod not bound to a node, or already finished, is deleted at once in
// both modes. Each pod is
// reconciled one step at a time from its current state (a work queue keyed
// by pod); every status write carries the resourceVersion it was decided
// on, so a stale decision is refused and the pod reconciled again, and a
// failed write is retried.
package kubelet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// RunForAnnotation on a pod is how long its containers run once started
// (a Go duration: "90s", "1h30m"); with Options.Lifecycle the pod then
// succeeds. A pod without it runs until deleted. A value that is not a
// positive duration, or the annotation on a pod that restarts Always
// (which never finishes), is reported as a Warning Event on the pod
// (reason InvalidRunFor) and the pod runs until deleted.
const RunForAnnotation = "wasched.io/run-for"

// Options choose how the stand-in keeps time.
type Options struct {
	// Lifecycle starts bound pods, completes them after RunForAnnotation
	// and keeps pods being deleted for their grace period (see the package
	// documentation). Without it, a pod marked for deletion goes at once
	// and nothing else is written.
	Lifecycle bool
}

// Finish deletes a terminating pod with grace period 0 and says whether
// this call deleted it. The UID precondition makes sure a new pod of the
// same name is never touched; a pod already gone, or replaced, is not an
// error.
func Finish(ctx context.Context, client kubernetes.Interface, pod *v1.Pod) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	zero := int64(0)
	uid := pod.UID
	err := client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero,
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return false, nil
	}
	return err == nil, err
}

// Run stands in for the kubelets until ctx is done, acting on every pod
// that is, or becomes, due. It returns once its informer has synced.
func Run(ctx context.Context, client kubernetes.Interface, options Options) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Core().V1().Pods()
	k := &standIn{
		ctx: ctx, client: client, options: options, pods: informer.Lister(),
		queue:  workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]()),
		warned: map[cache.ObjectName]types.UID{},
		clock:  map[types.UID]*podClock{},
	}
	enqueue := func(obj any) {
		if name, err := cache.DeletionHandlingObjectToName(obj); err == nil {
			k.queue.Add(name)
		}
	}
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if pod, ok := obj.(*v1.Pod); ok {
				k.forget(pod.UID)
			}
			enqueue(obj)
		},
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	for _, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return ctx.Err()
		}
	}
	go func() {
		<-ctx.Done()
		k.queue.ShutDown()
	}()
	for range workers {
		go k.work()
	}
	return nil
}

// workers is how many pods are reconciled at once.
const workers = 4

// standIn is the kubelets of every node.
type standIn struct {
	ctx     context.Context
	client  kubernetes.Interface
	options Options
	pods    corelisters.PodLister
	queue   workqueue.TypedRateLimitingInterface[cache.ObjectName]

	mu sync.Mutex
	// warned holds, per pod name, the UID of the pod of that name a
	// warning was recorded for.
	warned map[cache.ObjectName]types.UID
	// clock holds, per pod, the instants this stand-in started it and
	// will kill it: status.startTime and deletionTimestamp are written in
	// whole seconds, a kubelet counts from the instant itself.
	clock map[types.UID]*podClock
}

// podClock is what the stand-in saw of a pod's time.
type podClock struct {
	started time.Time
	// deadline is the end of the grace period of the pod's deletion, from
	// when it was first (or last, with a shorter grace) seen deleted.
	deadline time.Time
}

// startedAt is when the pod started: the instant the stand-in started it,
// else (it started the pod before a restart) its status.startTime, else its
// creation.
func (k *standIn) startedAt(pod *v1.Pod) time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c := k.clock[pod.UID]; c != nil && !c.started.IsZero() {
		return c.started
	}
	if pod.Status.StartTime != nil {
		return pod.Status.StartTime.Time
	}
	return pod.CreationTimestamp.Time
}

// killAt is when a pod being deleted is killed: its grace period counted
// from when the stand-in saw the deletion (a shorter one from when it saw
// that), never after its deletionTimestamp's second ends.
func (k *standIn) killAt(pod *v1.Pod) time.Time {
	grace := time.Duration(0)
	if pod.DeletionGracePeriodSeconds != nil {
		grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	}
	deadline := time.Now().Add(grace)
	if latest := pod.DeletionTimestamp.Time.Add(time.Second); deadline.After(latest) {
		deadline = latest
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	c := k.clock[pod.UID]
	if c == nil {
		c = &podClock{}
		k.clock[pod.UID] = c
	}
	if c.deadline.IsZero() || deadline.Before(c.deadline) {
		c.deadline = deadline
	}
	return c.deadline
}

// forget drops what the stand-in kept of a pod that is gone (called on
// every deletion the informer sees, whoever deleted it).
func (k *standIn) forget(uid types.UID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.clock, uid)
}

func (k *standIn) work() {
	for {
		name, shutdown := k.queue.Get()
		if shutdown {
			return
		}
		err := k.reconcile(name)
		switch {
		case err == nil:
			k.queue.Forget(name)
		case apierrors.IsConflict(err):
			// Decided on a stale pod: the newer version's own event brings
			// the pod back, to be decided from its current state.
			k.queue.Forget(name)
		default:
			if k.ctx.Err() == nil {
				klog.ErrorS(err, "kubelet stand-in: retrying", "pod", name)
			}
			k.queue.AddRateLimited(name)
		}
		k.queue.Done(name)
	}
}

// reconcile takes the one step the pod is due, or schedules its next
// check for when its next step falls due.
func (k *standIn) reconcile(name cache.ObjectName) error {
	pod, err := k.pods.Pods(name.Namespace).Get(name.Name)
	if apierrors.IsNotFound(err) {
		k.mu.Lock()
		delete(k.warned, name)
		k.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case pod.DeletionTimestamp != nil:
		// Nothing runs in a pod not bound, or finished: it goes at once.
		if !k.options.Lifecycle || pod.Spec.NodeName == "" || terminal(pod) {
			return k.finish(pod)
		}
		if wait := time.Until(k.killAt(pod)); wait > 0 {
			k.queue.AddAfter(name, wait)
			return nil
		}
		// Killed at the end of its grace period; deleted once the failure
		// is written (the next step).
		return k.terminate(pod, v1.PodFailed, 137, "Error")
	case !k.options.Lifecycle || pod.Spec.NodeName == "" || terminal(pod):
		return nil
	case pod.Status.Phase != v1.PodRunning:
		return k.start(pod)
	}
	runFor, ok := k.runFor(pod)
	if !ok {
		return nil
	}
	if wait := time.Until(k.startedAt(pod).Add(runFor)); wait > 0 {
		k.queue.AddAfter(name, wait)
		return nil
	}
	return k.terminate(pod, v1.PodSucceeded, 0, "Completed")
}

// finish deletes a terminating pod with grace period 0 (Finish).
func (k *standIn) finish(pod *v1.Pod) error {
	_, err := Finish(k.ctx, k.client, pod)
	return err
}

// runFor reads RunForAnnotation; a bad value, or the annotation on a pod
// that restarts Always, is reported on the pod once.
func (k *standIn) runFor(pod *v1.Pod) (time.Duration, bool) {
	value, ok := pod.Annotations[RunForAnnotation]
	if !ok {
		return 0, false
	}
	runFor, err := time.ParseDuration(value)
	switch {
	case err != nil:
	case runFor <= 0:
		err = fmt.Errorf("%s is not positive", value)
	case pod.Spec.RestartPolicy == v1.RestartPolicyAlways || pod.Spec.RestartPolicy == "":
		err = errors.New("a pod that restarts Always never finishes")
	}
	if err != nil {
		k.warnOnce(pod, "InvalidRunFor", fmt.Sprintf("annotation %s: %v; the pod runs until deleted", RunForAnnotation, err))
		return 0, false
	}
	return runFor, true
}

// start marks a bound pod as running, as its kubelet does once its
// containers have started.
func (k *standIn) start(pod *v1.Pod) error {
	now := metav1.Now()
	started := now
	if pod.Status.StartTime != nil {
		started = *pod.Status.StartTime
	} else {
		k.mu.Lock()
		if k.clock[pod.UID] == nil {
			k.clock[pod.UID] = &podClock{started: now.Time}
		}
		k.mu.Unlock()
	}
	return k.patchStatus(pod, map[string]any{
		"phase":     v1.PodRunning,
		"startTime": started,
		"conditions": []v1.PodCondition{
			{Type: v1.PodInitialized, Status: v1.ConditionTrue, LastTransitionTime: now},
			{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: now},
			{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: now},
		},
		"containerStatuses": containers(pod, func(c v1.Container) v1.ContainerStatus {
			return v1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true, Started: ptr.To(true),
				State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: now}}}
		}),
	})
}

// terminate writes a terminal phase, its containers terminated with code.
func (k *standIn) terminate(pod *v1.Pod, phase v1.PodPhase, code int32, reason string) error {
	now := metav1.Now()
	started := now
	if pod.Status.StartTime != nil {
		started = *pod.Status.StartTime
	}
	return k.patchStatus(pod, map[string]any{
		"phase": phase,
		"conditions": []v1.PodCondition{
			{Type: v1.ContainersReady, Status: v1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: now},
			{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: now},
		},
		"containerStatuses": containers(pod, func(c v1.Container) v1.ContainerStatus {
			return v1.ContainerStatus{Name: c.Name, Image: c.Image, Started: ptr.To(false),
				State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
					ExitCode: code, Reason: reason, StartedAt: started, FinishedAt: now}}}
		}),
	})
}

// patchStatus merges status into the pod's (a strategic merge: conditions
// by type, so a DisruptionTarget condition stays; containerStatuses is an
// atomic list, replaced whole). The resourceVersion the step was decided
// on makes the write conditional: if the pod changed since, it is refused
// with a conflict and the pod reconciled again; a pod gone or replaced
// meanwhile is left alone.
func (k *standIn) patchStatus(pod *v1.Pod, status map[string]any) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": pod.UID, "resourceVersion": pod.ResourceVersion},
		"status":   status,
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(k.ctx, 30*time.Second)
	defer cancel()
	_, err = k.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil && !apierrors.IsConflict(err) && replaced(err) {
		return nil
	}
	return err
}

// warnOnce records a Warning Event on the pod, as a kubelet does, once
// per pod.
func (k *standIn) warnOnce(pod *v1.Pod, reason, message string) {
	name := cache.MetaObjectToName(pod)
	k.mu.Lock()
	if k.warned[name] == pod.UID {
		k.mu.Unlock()
		return
	}
	k.warned[name] = pod.UID
	k.mu.Unlock()
	now := metav1.Now()
	event := &v1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: pod.Namespace},
		InvolvedObject: v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace,
			Name: pod.Name, UID: pod.UID},
		Reason: reason, Message: message, Type: v1.EventTypeWarning,
		Source:         v1.EventSource{Component: "kubelet", Host: pod.Spec.NodeName},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if _, err := k.client.CoreV1().Events(pod.Namespace).Create(k.ctx, event, metav1.CreateOptions{}); err != nil && k.ctx.Err() == nil {
		klog.ErrorS(err, "kubelet stand-in: cannot record an event", "pod", klog.KObj(pod), "reason", reason)
	}
}

// replaced says whether a write failed because the pod is gone or is
// another one of the same name now (its UID differs from the patch's).
func replaced(err error) bool {
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return true
	}
	var status apierrors.APIStatus
	if apierrors.IsInvalid(err) && errors.As(err, &status) && status.Status().Details != nil {
		for _, cause := range status.Status().Details.Causes {
			if cause.Field == "metadata.uid" {
				return true
			}
		}
	}
	return false
}

func terminal(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
}

func containers(pod *v1.Pod, status func(v1.Container) v1.ContainerStatus) []v1.ContainerStatus {
	statuses := make([]v1.ContainerStatus, len(pod.Spec.Containers))
	for i, c := range pod.Spec.Containers {
		statuses[i] = status(c)
	}
	return statuses
}
