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
//     a Go duration such as "90s") succeeds that long after its start:
//     phase Succeeded, its containers terminated with exit code 0;
//   - a bound pod marked for deletion stays terminating until its
//     deletionTimestamp, i.e. for the grace period it was deleted with
//     (its terminationGracePeriodSeconds unless the deleter chose one),
//     then its containers stop (phase Failed, exit code 143, unless it had
//     already finished) and it is deleted with grace period 0. A pod with
//     finalizers stays until they are removed, as on a cluster.
//
// A pod not bound to a node is finished at once in both modes.
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
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// RunForAnnotation on a pod is how long its containers run once started
// (a Go duration: "90s", "1h30m"); with Options.Lifecycle the pod then
// succeeds. A pod without it runs until deleted. A value that is not a
// positive duration is reported as a Warning Event on the pod
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
	k := &standIn{ctx: ctx, client: client, options: options, pods: map[types.UID]*lifecycle{}}
	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Core().V1().Pods().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    k.seen,
		UpdateFunc: func(_, obj any) { k.seen(obj) },
		DeleteFunc: k.gone,
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	for _, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return ctx.Err()
		}
	}
	return nil
}

// standIn is the kubelets of every node, with what each pod is due.
type standIn struct {
	ctx     context.Context
	client  kubernetes.Interface
	options Options

	mu   sync.Mutex
	pods map[types.UID]*lifecycle
}

// lifecycle is what the stand-in has set in motion for one pod; each step
// happens once.
type lifecycle struct {
	started, completing, stopping bool
	timers                        []*time.Timer
}

func (k *standIn) seen(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	if !k.options.Lifecycle {
		if pod.DeletionTimestamp != nil {
			go func() { _, _ = Finish(k.ctx, k.client, pod) }()
		}
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	state := k.pods[pod.UID]
	if state == nil {
		state = &lifecycle{}
		k.pods[pod.UID] = state
	}
	switch {
	case pod.DeletionTimestamp != nil:
		if state.stopping {
			return
		}
		state.stopping = true
		for _, timer := range state.timers {
			timer.Stop()
		}
		if pod.Spec.NodeName == "" {
			go func() { _, _ = Finish(k.ctx, k.client, pod) }()
			return
		}
		state.after(time.Until(pod.DeletionTimestamp.Time), func() { k.stop(pod) })
	case pod.Spec.NodeName == "" || terminal(pod):
	case pod.Status.Phase != v1.PodRunning:
		if !state.started {
			state.started = true
			go k.start(pod)
		}
	case !state.completing:
		state.completing = true
		runFor, ok := k.runFor(pod)
		if !ok {
			return
		}
		started := pod.CreationTimestamp.Time
		if pod.Status.StartTime != nil {
			started = pod.Status.StartTime.Time
		}
		state.after(time.Until(started.Add(runFor)), func() { k.complete(pod) })
	}
}

func (k *standIn) gone(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if state := k.pods[pod.UID]; state != nil {
		for _, timer := range state.timers {
			timer.Stop()
		}
		delete(k.pods, pod.UID)
	}
}

// after runs act once d has passed (at once when it has), unless stopped.
func (l *lifecycle) after(d time.Duration, act func()) {
	l.timers = append(l.timers, time.AfterFunc(max(d, 0), act))
}

// runFor reads RunForAnnotation; a bad value is reported on the pod.
func (k *standIn) runFor(pod *v1.Pod) (time.Duration, bool) {
	value, ok := pod.Annotations[RunForAnnotation]
	if !ok {
		return 0, false
	}
	runFor, err := time.ParseDuration(value)
	if err == nil && runFor <= 0 {
		err = fmt.Errorf("%s is not positive", value)
	}
	if err != nil {
		go k.warn(pod, "InvalidRunFor", fmt.Sprintf("annotation %s: %v; the pod runs until deleted", RunForAnnotation, err))
		return 0, false
	}
	return runFor, true
}

// start marks a bound pod as running, as its kubelet does once its
// containers have started.
func (k *standIn) start(pod *v1.Pod) {
	now := metav1.Now()
	started := now
	if pod.Status.StartTime != nil {
		started = *pod.Status.StartTime
	}
	status := map[string]any{
		"phase":     v1.PodRunning,
		"startTime": started,
		"conditions": []v1.PodCondition{
			{Type: v1.PodInitialized, Status: v1.ConditionTrue, LastTransitionTime: now},
			{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: now},
			{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: now},
		},
		"containerStatuses": containers(pod, func(c v1.Container) v1.ContainerStatus {
			return v1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true, Started: ptr(true),
				State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: now}}}
		}),
	}
	k.patchStatus(pod, status)
}

// complete marks a running pod as succeeded.
func (k *standIn) complete(pod *v1.Pod) {
	k.terminate(pod, v1.PodSucceeded, 0, "Completed")
}

// stop ends a terminating pod once its grace period is over: its
// containers are stopped (the pod fails unless it had finished), then it
// is deleted with grace period 0.
func (k *standIn) stop(pod *v1.Pod) {
	current, err := k.client.CoreV1().Pods(pod.Namespace).Get(k.ctx, pod.Name, metav1.GetOptions{})
	if err != nil || current.UID != pod.UID {
		return
	}
	if !terminal(current) {
		k.terminate(current, v1.PodFailed, 143, "Error")
	}
	_, _ = Finish(k.ctx, k.client, current)
}

// terminate writes a terminal phase, its containers terminated with code.
func (k *standIn) terminate(pod *v1.Pod, phase v1.PodPhase, code int32, reason string) {
	now := metav1.Now()
	started := now
	if pod.Status.StartTime != nil {
		started = *pod.Status.StartTime
	}
	status := map[string]any{
		"phase": phase,
		"conditions": []v1.PodCondition{
			{Type: v1.ContainersReady, Status: v1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: now},
			{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: now},
		},
		"containerStatuses": containers(pod, func(c v1.Container) v1.ContainerStatus {
			return v1.ContainerStatus{Name: c.Name, Image: c.Image, Started: ptr(false),
				State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
					ExitCode: code, Reason: reason, StartedAt: started, FinishedAt: now}}}
		}),
	}
	k.patchStatus(pod, status)
}

// patchStatus merges status into the pod's (a strategic merge: conditions
// by type, containers by name, so a DisruptionTarget condition stays).
// The pod's UID in the patch makes the write fail on another pod of the
// same name (an immutable field changed), which is left alone.
func (k *standIn) patchStatus(pod *v1.Pod, status map[string]any) {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": pod.UID},
		"status":   status,
	})
	if err != nil {
		klog.ErrorS(err, "kubelet stand-in: status patch", "pod", klog.KObj(pod))
		return
	}
	ctx, cancel := context.WithTimeout(k.ctx, 30*time.Second)
	defer cancel()
	_, err = k.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil && !replaced(err) && k.ctx.Err() == nil {
		klog.ErrorS(err, "kubelet stand-in: cannot update the pod's status", "pod", klog.KObj(pod))
	}
}

// warn records a Warning Event on the pod, as a kubelet does.
func (k *standIn) warn(pod *v1.Pod, reason, message string) {
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

func ptr[T any](v T) *T { return &v }
