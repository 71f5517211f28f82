package engine

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Result is what kube-scheduler decided, read back from the API server and
// from the harness's watch: every pod that existed during the run, every
// PodGroup, and how long it took.
type Result struct {
	// Pods, sorted by namespace and name.
	Pods []Pod `json:"pods"`
	// PodGroups, sorted by namespace and name.
	PodGroups []Group `json:"podGroups"`
	// CompositePodGroups, sorted by namespace and name.
	CompositePodGroups []Group `json:"compositePodGroups"`
	// Stats of the run.
	Stats Stats `json:"stats"`
}

// Printed is what `wasched-kube schedule` prints: how many objects were
// loaded, and the result. The Rust side reads it as
// host/src/cluster/readback.rs's KubeResult; both decode
// testdata/abi/harness-result.json strictly.
type Printed struct {
	Loaded int `json:"loaded"`
	Result
}

// Pod is one pod's final state.
type Pod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Node it is bound to (empty: pending).
	Node string `json:"node,omitempty"`
	// NominatedNode from its status.
	NominatedNode string `json:"nominatedNode,omitempty"`
	// Deleted: the pod is gone (a victim, once its termination finished).
	Deleted bool `json:"deleted,omitempty"`
	// Disruption is its DisruptionTarget condition, if it got one.
	Disruption *Condition `json:"disruption,omitempty"`
	// PreemptedBy is the preemptor the Preempted event named ("PodGroup
	// ns/name", "Pod ns/name").
	PreemptedBy string `json:"preemptedBy,omitempty"`
	// Scheduled is its PodScheduled condition.
	Scheduled *Condition `json:"scheduled,omitempty"`
	// BoundOrder orders the bindings of the run (1 = first); 0 if it was
	// not bound during the run.
	BoundOrder uint64 `json:"boundOrder,omitempty"`
	// Tie is the top score class its node came from (with Options.Ties).
	Tie *Tie `json:"tie,omitempty"`
}

// Group is a PodGroup's or CompositePodGroup's final state.
type Group struct {
	Namespace  string      `json:"namespace"`
	Name       string      `json:"name"`
	Conditions []Condition `json:"conditions,omitempty"`
	// PlacementTie is the top class of its last placement scoring.
	PlacementTies []Tie `json:"placementTies,omitempty"`
	// FirstScheduled is the first PodGroupInitiallyScheduled=True the
	// group carried during the run, kept when a later cycle wrote False
	// over it (kube-scheduler means never to regress the condition, but
	// decides that on its cached copy of the group, which can be stale).
	FirstScheduled *Condition `json:"firstScheduled,omitempty"`
}

// Condition is a status condition.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Stats of a run.
type Stats struct {
	// Cycles is the number of scheduling cycles (pods and pod groups popped).
	Cycles int64 `json:"cycles"`
	// DecidedSeconds is the time from the start of scheduling to the last
	// change that decided something (binding, nomination, eviction).
	DecidedSeconds float64 `json:"decidedSeconds"`
	// QuietSeconds is the time from the start of scheduling until the
	// scheduler was seen quiet (DecidedSeconds plus retries and settling).
	QuietSeconds float64 `json:"quietSeconds"`
	// Finished counts terminating pods the harness deleted with grace
	// period 0 in place of their kubelets.
	Finished int64 `json:"finished"`
}

func condition(c metav1.Condition) Condition {
	return Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message}
}

func podCondition(c *v1.PodCondition) *Condition {
	if c == nil {
		return nil
	}
	return &Condition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message}
}

// Result reads the decisions back.
func (s *Scheduler) Result(ctx context.Context, config *rest.Config) (*Result, error) {
	quiet := time.Since(s.started)
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	result := &Result{Pods: []Pod{}, PodGroups: []Group{}, CompositePodGroups: []Group{}}
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	for _, state := range s.watch.snapshot() {
		p := state.pod
		pod := Pod{
			Namespace:     p.Namespace,
			Name:          p.Name,
			Node:          p.Spec.NodeName,
			NominatedNode: p.Status.NominatedNodeName,
			Deleted:       state.deleted,
			Disruption:    podCondition(state.disrupted),
			BoundOrder:    state.boundSeq,
		}
		key := p.Namespace + "/" + p.Name
		pod.PreemptedBy = s.rec.preemptors[key]
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == v1.PodScheduled {
				pod.Scheduled = podCondition(&p.Status.Conditions[i])
			}
		}
		if s.rec.ties && pod.Node != "" && pod.BoundOrder > 0 {
			tie := tieFor(s.rec.nodeTies[key], pod.Node)
			pod.Tie = &tie
		}
		result.Pods = append(result.Pods, pod)
	}
	sortBy(result.Pods, func(p Pod) string { return p.Namespace + "/" + p.Name })
	// Bindings numbered 1, 2, ... in the order they were observed.
	order := make([]int, 0, len(result.Pods))
	for i, p := range result.Pods {
		if p.BoundOrder > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return result.Pods[order[a]].BoundOrder < result.Pods[order[b]].BoundOrder })
	for n, i := range order {
		result.Pods[i].BoundOrder = uint64(n + 1)
	}

	groups, err := client.SchedulingV1beta1().PodGroups(v1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot list PodGroups: %w", err)
	}
	for _, g := range groups.Items {
		group := Group{Namespace: g.Namespace, Name: g.Name}
		for _, c := range g.Status.Conditions {
			group.Conditions = append(group.Conditions, condition(c))
		}
		group.PlacementTies = s.rec.groupTies[g.Namespace+"/"+g.Name]
		group.FirstScheduled = s.watch.firstScheduled(g.Namespace + "/" + g.Name)
		result.PodGroups = append(result.PodGroups, group)
	}
	sortBy(result.PodGroups, func(g Group) string { return g.Namespace + "/" + g.Name })
	composites, err := client.SchedulingV1alpha3().CompositePodGroups(v1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot list CompositePodGroups: %w", err)
	}
	for _, c := range composites.Items {
		group := Group{Namespace: c.Namespace, Name: c.Name}
		for _, cond := range c.Status.Conditions {
			group.Conditions = append(group.Conditions, condition(cond))
		}
		group.PlacementTies = s.rec.groupTies[c.Namespace+"/"+c.Name]
		result.CompositePodGroups = append(result.CompositePodGroups, group)
	}
	sortBy(result.CompositePodGroups, func(g Group) string { return g.Namespace + "/" + g.Name })

	decided := time.Duration(0)
	if last := s.watch.lastChange.Load(); last > 0 {
		decided = max(0, time.Unix(0, last).Sub(s.started))
	}
	result.Stats = Stats{
		Cycles:         s.sched.SchedulingQueue.SchedulingCycle(),
		DecidedSeconds: decided.Seconds(),
		QuietSeconds:   quiet.Seconds(),
		Finished:       s.watch.finished.Load(),
	}
	return result, nil
}

func sortBy[T any](items []T, key func(T) string) {
	sort.SliceStable(items, func(i, j int) bool { return key(items[i]) < key(items[j]) })
}
