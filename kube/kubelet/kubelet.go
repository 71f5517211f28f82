// Package kubelet stands in for the kubelets that do not run here: a pod
// marked for deletion is finished at once (deleted with grace period 0),
// as its kubelet would once its containers stopped, so that preemption
// victims go and their preemptors can be bound.
package kubelet

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

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

// Run finishes every pod that is, or becomes, marked for deletion, until
// ctx is done. It returns once its informer has synced.
func Run(ctx context.Context, client kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Core().V1().Pods().Informer()
	finish := func(obj any) {
		if pod, ok := obj.(*v1.Pod); ok && pod.DeletionTimestamp != nil {
			go func() { _, _ = Finish(ctx, client, pod) }()
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    finish,
		UpdateFunc: func(_, obj any) { finish(obj) },
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
