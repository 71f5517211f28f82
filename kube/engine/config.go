package engine

import (
	"fmt"

	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	schedvalidation "k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
)

// DefaultConfig is the configuration the harness runs kube-scheduler with
// when none is given: upstream's default profile (with the workload gates
// on, defaulting adds GangScheduling, TopologyPlacementGenerator,
// PodGroupPodsCount and the PodGroupPostFilter of DefaultPreemption), and
// two settings that make its decisions comparable with a simulator's:
//
//   - percentageOfNodesToScore: 100 — every feasible node is scored
//     (upstream's adaptive default samples a share of the nodes of
//     clusters of 100 nodes or more, starting where the last pod's search
//     stopped, on parallel workers, so which nodes it finds is a race);
//     wasched is compared with it at 100 too;
//   - client QPS/burst 5000, as upstream's own scheduler_perf harness uses,
//     so that the API client's rate limit does not dominate the run time.
const DefaultConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 100
clientConnection:
  qps: 5000
  burst: 5000
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
`

// LoadConfig decodes and validates a KubeSchedulerConfiguration (YAML or
// JSON, kubescheduler.config.k8s.io/v1), filling upstream's defaults. The
// feature gates must be set before: defaulting adds plugins per gate.
func LoadConfig(data []byte) (*schedconfig.KubeSchedulerConfiguration, error) {
	if len(data) == 0 {
		data = []byte(DefaultConfig)
	}
	object, gvk, err := schedscheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("not a KubeSchedulerConfiguration: %w", err)
	}
	config, ok := object.(*schedconfig.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("not a KubeSchedulerConfiguration: got %s", gvk)
	}
	config.TypeMeta.APIVersion = gvk.GroupVersion().String()
	if err := schedvalidation.ValidateKubeSchedulerConfiguration(config); err != nil {
		return nil, fmt.Errorf("invalid KubeSchedulerConfiguration: %w", err)
	}
	return config, nil
}
