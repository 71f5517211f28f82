// Package jobcontroller runs upstream's Job controller
// (k8s.io/kubernetes/pkg/controller/job, v1.37.2) against a control plane,
// as kube-controller-manager runs it: a Job's pods are created, a
// preempted or failed pod is replaced (after the controller's own backoff,
// within the Job's backoffLimit and podReplacementPolicy), and the Job is
// marked Complete or Failed. With the WorkloadWithJob gate on (the
// harness's default, see controlplane.FeatureGates) the controller also
// creates each Job's Workload and PodGroup, a gang when the Job's
// spec.scheduling asks for one.
//
// Nothing else of kube-controller-manager runs: no garbage collector (a
// deleted Job's pods stay) and no pod GC (finished pods stay).
package jobcontroller

import (
	"context"
	"fmt"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	schedulinginformers "k8s.io/client-go/informers/scheduling/v1beta1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/pkg/controller/job"
	"k8s.io/kubernetes/pkg/features"
)

// Workers is how many Jobs are synced at once: kube-controller-manager's
// default --concurrent-job-syncs.
const Workers = 5

// Run starts the Job controller with a client of its own (user agent
// job-controller) and returns once its informers have synced; it runs
// until ctx is done. The process's feature gates must be set first
// (controlplane.SetFeatureGates).
func Run(ctx context.Context, config *rest.Config) error {
	config = rest.CopyConfig(config)
	config.UserAgent = "job-controller"
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	var workloads schedulinginformers.WorkloadInformer
	var podGroups schedulinginformers.PodGroupInformer
	if utilfeature.DefaultFeatureGate.Enabled(features.WorkloadWithJob) {
		workloads = factory.Scheduling().V1beta1().Workloads()
		podGroups = factory.Scheduling().V1beta1().PodGroups()
	}
	controller, err := job.NewController(ctx, client, factory.Core().V1().Pods(), factory.Batch().V1().Jobs(), workloads, podGroups)
	if err != nil {
		return fmt.Errorf("the Job controller: %w", err)
	}
	factory.Start(ctx.Done())
	for informer, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("the Job controller's informer of %v did not sync: %w", informer, ctx.Err())
		}
	}
	go controller.Run(ctx, Workers)
	return nil
}
