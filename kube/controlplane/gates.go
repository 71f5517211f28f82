package controlplane

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// FeatureGates are the gates this control plane turns on for the API
// server and the scheduler alike (they share one process-wide gate):
// Kubernetes v1.37's workload-aware scheduling, which is off by default.
//
//   - GenericWorkload (beta): Workload and PodGroup, gang scheduling,
//     workload-aware preemption;
//   - TopologyAwareWorkloadScheduling (alpha): placements per topology
//     domain (TopologyPlacementGenerator, PodGroupPodsCount);
//   - CompositePodGroup (alpha): PodGroup hierarchies;
//   - PodGroupPreemptionPolicy (alpha): spec.preemptionPolicy of groups;
//   - WorkloadWithJob (alpha): a Job's spec.scheduling, and the Job
//     controller (package jobcontroller, when it runs) creating each Job's
//     Workload and PodGroup;
//   - SchedulerAsyncPreemption (beta, on by default) is turned off: victims
//     are then deleted inside the scheduling cycle instead of by a detached
//     goroutine the queue cannot see, so that "quiet" is observable. The
//     victims chosen are the same.
var FeatureGates = map[string]bool{
	"GenericWorkload":                 true,
	"TopologyAwareWorkloadScheduling": true,
	"CompositePodGroup":               true,
	"PodGroupPreemptionPolicy":        true,
	"WorkloadWithJob":                 true,
	"SchedulerAsyncPreemption":        false,
}

var gatesOnce sync.Once
var gatesErr error

// SetFeatureGates applies FeatureGates to the process-wide gate, once and
// before anything reads it, and exposes them as kube-apiserver does
// (kubernetes_feature_enabled{name,stage} on /metrics).
func SetFeatureGates() error {
	gatesOnce.Do(func() {
		if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(FeatureGates); err != nil {
			gatesErr = fmt.Errorf("feature gates %s: %w", GatesFlag(), err)
			return
		}
		utilfeature.DefaultMutableFeatureGate.AddMetrics()
	})
	return gatesErr
}

// OverrideGates changes FeatureGates from a --feature-gates value
// ("Name=true,Other=false") before SetFeatureGates applies them: a cluster
// with one of the workload gates off, as some clusters run.
func OverrideGates(spec string) error {
	if spec == "" {
		return nil
	}
	for _, part := range strings.Split(spec, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		on, err := strconv.ParseBool(value)
		if !ok || name == "" || err != nil {
			return fmt.Errorf("--feature-gates: %q is not Name=true or Name=false", part)
		}
		FeatureGates[name] = on
	}
	return nil
}

// GatesFlag is FeatureGates as a --feature-gates value, sorted.
func GatesFlag() string {
	names := make([]string, 0, len(FeatureGates))
	for name := range FeatureGates {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s=%t", name, FeatureGates[name])
	}
	return strings.Join(parts, ",")
}
