package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// Tie is the class of equally good choices the scheduler chose among: the
// nodes (or placements) that shared the top total score.
type Tie struct {
	// Score is the top total score.
	Score int64 `json:"score"`
	// Choices are the nodes or placements with that score, sorted.
	Choices []string `json:"choices"`
}

func (t Tie) contains(choice string) bool {
	i := sort.SearchStrings(t.Choices, choice)
	return i < len(t.Choices) && t.Choices[i] == choice
}

// Preferences break kube-scheduler's ties toward given choices: where the
// preferred node of a pod is among the nodes sharing the top score, it is
// taken; where the placement holding a group's preferred node is among the
// placements sharing the top score, it is taken. kube-scheduler breaks such
// ties arbitrarily (nodes) or at random (placements); the decision stays one
// it makes on its own scores. A comparison uses this to follow another
// scheduler's tie-breaks instead of diverging at every tie.
type Preferences struct {
	// Nodes maps a pod's "namespace/name" to its preferred node.
	Nodes map[string]string `json:"nodes"`
	// Groups maps a PodGroup's or CompositePodGroup's "namespace/name" to
	// a node its placement should hold.
	Groups map[string]string `json:"groups"`
	// Jobs maps a Job's "namespace/name" to the nodes its pods were bound
	// to, in order, one entry per binding: for the Job's pods (whose names
	// the Job controller draws at random) of the tied nodes the one where
	// the most of its listed bindings are still to be made (listed minus
	// made by kube-scheduler so far, pods gone or not) is taken, and of its
	// group's tied placements the one holding the most of them.
	Jobs map[string][]string `json:"jobs,omitempty"`
}

// ReadPreferences reads Preferences from a JSON file.
func ReadPreferences(path string) (*Preferences, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	prefer := &Preferences{}
	if err := json.Unmarshal(data, prefer); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return prefer, nil
}

// jobOf is the "namespace/name" of the Job a pod belongs to ("" if none).
func jobOf(pod *v1.Pod) string {
	if name := pod.Labels[batchv1.JobNameLabel]; name != "" {
		return pod.Namespace + "/" + name
	}
	return ""
}

// jobNode is, of the tied nodes, the one where the most of job's listed
// bindings are still to be made (listed there minus made there, whether
// the pods bound are still there or not; the first listed on a tie), or
// "" when none is.
func (p *Preferences) jobNode(job string, tie Tie, made map[string]int) string {
	left := p.toMake(job, made)
	best, most := "", 0
	for _, node := range p.Jobs[job] {
		if tie.contains(node) && left[node] > most {
			best, most = node, left[node]
		}
	}
	return best
}

// toMake is, per node, how many of job's listed bindings are still to be
// made there: listed minus made (negative where more were made).
func (p *Preferences) toMake(job string, made map[string]int) map[string]int {
	left := map[string]int{}
	for _, node := range p.Jobs[job] {
		left[node]++
	}
	for node, n := range made {
		left[node] -= n
	}
	return left
}

// bindings keeps, per Job, the node of every pod of it kube-scheduler
// reserved and did not take back (Unreserve): the bindings made so far,
// counted whether the pods are still there or not.
type bindings struct {
	mu   sync.Mutex
	jobs map[string]map[types.UID]string
}

// reserve records pod's reservation on node; a pod of no Job is ignored.
func (b *bindings) reserve(pod *v1.Pod, node string) {
	job := jobOf(pod)
	if job == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.jobs == nil {
		b.jobs = map[string]map[types.UID]string{}
	}
	if b.jobs[job] == nil {
		b.jobs[job] = map[types.UID]string{}
	}
	b.jobs[job][pod.UID] = node
}

// unreserve takes pod's reservation back.
func (b *bindings) unreserve(pod *v1.Pod) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.jobs[jobOf(pod)], pod.UID)
}

// made counts job's bindings per node.
func (b *bindings) made(job string) map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	counts := map[string]int{}
	for _, node := range b.jobs[job] {
		counts[node]++
	}
	return counts
}

// recorder keeps what the harness learns from inside kube-scheduler: the
// top score classes of every scoring (so that a comparison can accept any
// node of the class where kube-scheduler breaks a tie arbitrarily), and the
// events it records (preemptions name their preemptor there). With
// preferences it also breaks ties (see Preferences).
type recorder struct {
	ties   bool
	prefer *Preferences

	// bound are the bindings made, for the preferences of Jobs.
	bound bindings

	mu         sync.Mutex
	nodeTies   map[string][]Tie // pod "ns/name" → scorings, oldest first
	groupTies  map[string][]Tie // pod group "ns/name" → placement scorings
	preemptors map[string]string
	// fresh are the preemptions since the last takePreemptions.
	fresh []preemption
}

func newRecorder(ties bool, prefer *Preferences) *recorder {
	return &recorder{
		ties:       ties,
		prefer:     prefer,
		nodeTies:   map[string][]Tie{},
		groupTies:  map[string][]Tie{},
		preemptors: map[string]string{},
	}
}

func topClass[T any](items []T, total func(T) int64, name func(T) string) Tie {
	tie := Tie{}
	for i, item := range items {
		switch score := total(item); {
		case i == 0 || score > tie.Score:
			tie = Tie{Score: score, Choices: []string{name(item)}}
		case score == tie.Score:
			tie.Choices = append(tie.Choices, name(item))
		}
	}
	sort.Strings(tie.Choices)
	return tie
}

// tieFor is the score class a choice came from: of the scorings made for
// key, the latest in which choice had the top score. Without one (a single
// feasible node, or a nominated node taken without scoring) the choice was
// the only one.
func tieFor(scorings []Tie, choice string) Tie {
	for i := len(scorings) - 1; i >= 0; i-- {
		if scorings[i].contains(choice) {
			return scorings[i]
		}
	}
	return Tie{Choices: []string{choice}}
}

// recordingFramework is a profile's framework that also tells the recorder
// the total scores of every node scoring and placement scoring. Everything
// else is the framework itself.
type recordingFramework struct {
	framework.Framework
	rec *recorder
}

func (f *recordingFramework) RunScorePlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodePluginScores, *fwk.Status) {
	scores, status := f.Framework.RunScorePlugins(ctx, state, pod, nodes)
	if status.IsSuccess() && len(scores) > 0 {
		tie := topClass(scores, func(s fwk.NodePluginScores) int64 { return s.TotalScore },
			func(s fwk.NodePluginScores) string { return s.Name })
		key := pod.Namespace + "/" + pod.Name
		f.rec.mu.Lock()
		if f.rec.ties {
			f.rec.nodeTies[key] = append(f.rec.nodeTies[key], tie)
		}
		f.rec.mu.Unlock()
		if f.rec.prefer != nil && len(tie.Choices) > 1 {
			node, ok := f.rec.prefer.Nodes[key]
			if !ok || !tie.contains(node) {
				job := jobOf(pod)
				node = f.rec.prefer.jobNode(job, tie, f.rec.bound.made(job))
				ok = node != ""
			}
			if ok {
				klog.InfoS("Tie between nodes broken toward the preferred", "pod", key, "node", node, "tied", tie.Choices)
				for i := range scores {
					if scores[i].Name == node {
						scores[i].TotalScore++
					}
				}
			}
		}
	}
	return scores, status
}

func (f *recordingFramework) RunPlacementScorePlugins(ctx context.Context, state fwk.PodGroupCycleState, group fwk.PodGroupInfo, placements []*fwk.PodGroupAssignments, states []fwk.PlacementCycleState) ([]fwk.PlacementPluginScores, *fwk.Status) {
	scores, status := f.Framework.RunPlacementScorePlugins(ctx, state, group, placements, states)
	if status.IsSuccess() && len(scores) > 0 {
		tie := topClass(scores, func(s fwk.PlacementPluginScores) int64 { return s.TotalScore },
			func(s fwk.PlacementPluginScores) string { return s.Placement.Name })
		key := group.GetNamespace() + "/" + group.GetName()
		f.rec.mu.Lock()
		if f.rec.ties {
			f.rec.groupTies[key] = append(f.rec.groupTies[key], tie)
		}
		f.rec.mu.Unlock()
		if f.rec.prefer != nil && len(tie.Choices) > 1 {
			chosen := -1
			if node, ok := f.rec.prefer.Groups[key]; ok {
				for i := range scores {
					if scores[i].TotalScore == tie.Score && holds(scores[i].Placement, node) {
						chosen = i
						break
					}
				}
			}
			if chosen < 0 {
				chosen = f.rec.prefer.jobPlacement(group, scores, tie.Score, f.rec.bound.made)
			}
			if chosen >= 0 {
				klog.InfoS("Tie between placements broken toward the preferred", "group", key, "placement", scores[chosen].Placement.Name, "tied", tie.Choices)
				scores[chosen].TotalScore++
			}
		}
	}
	return scores, status
}

// jobPlacement is the index of the placement of the top score that holds
// the most of the listed bindings of the group's Job still to be made (the
// first on a tie), or -1 when the group is no Job's or none holds any.
func (p *Preferences) jobPlacement(group fwk.PodGroupInfo, scores []fwk.PlacementPluginScores, top int64, made func(job string) map[string]int) int {
	job := ""
	for _, pod := range group.GetUnscheduledPods() {
		if job = jobOf(pod); job != "" {
			break
		}
	}
	if len(p.Jobs[job]) == 0 {
		return -1
	}
	left := p.toMake(job, made(job))
	best, most := -1, 0
	for i := range scores {
		if scores[i].TotalScore != top {
			continue
		}
		held := 0
		for node, n := range left {
			if n > 0 && holds(scores[i].Placement, node) {
				held += n
			}
		}
		if held > most {
			best, most = i, held
		}
	}
	return best
}

func (f *recordingFramework) RunReservePluginsReserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	status := f.Framework.RunReservePluginsReserve(ctx, state, pod, nodeName)
	if status.IsSuccess() {
		f.rec.bound.reserve(pod, nodeName)
	}
	return status
}

func (f *recordingFramework) RunReservePluginsUnreserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) {
	f.Framework.RunReservePluginsUnreserve(ctx, state, pod, nodeName)
	f.rec.bound.unreserve(pod)
}

// holds reports whether placement includes node.
func holds(placement *fwk.Placement, node string) bool {
	if placement == nil {
		return false
	}
	for _, n := range placement.Nodes {
		if n.Node() != nil && n.Node().Name == node {
			return true
		}
	}
	return false
}

// wrap replaces every profile's framework with a recording one.
func (r *recorder) wrap(profiles profile.Map) {
	if !r.ties && r.prefer == nil {
		return
	}
	for name, f := range profiles {
		profiles[name] = &recordingFramework{Framework: f, rec: r}
	}
}

// recorderFactory gives each profile an event recorder that posts to the
// API server through broadcaster, as kube-scheduler's does, and tells r of
// every Preempted event at the moment kube-scheduler records it.
func (r *recorder) recorderFactory(broadcaster events.EventBroadcaster) profile.RecorderFactory {
	upstream := profile.NewRecorderFactory(broadcaster)
	return func(name string) events.EventRecorderLogger {
		return &eventRecorder{EventRecorderLogger: upstream(name), rec: r}
	}
}

type eventRecorder struct {
	events.EventRecorderLogger
	rec *recorder
}

func (e *eventRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	e.observe(regarding, related, reason)
	e.EventRecorderLogger.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

func (e *eventRecorder) WithLogger(logger klog.Logger) events.EventRecorderLogger {
	return &eventRecorder{EventRecorderLogger: e.EventRecorderLogger.WithLogger(logger), rec: e.rec}
}

func (e *eventRecorder) observe(regarding, related runtime.Object, reason string) {
	if reason != "Preempted" || regarding == nil || related == nil {
		return
	}
	victim, err := meta.Accessor(regarding)
	if err != nil {
		return
	}
	preemptor, err := meta.Accessor(related)
	if err != nil {
		return
	}
	kind := "Pod"
	if gvk := related.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		kind = gvk.Kind
	} else {
		switch related.(type) {
		case *v1.Pod:
		default:
			kind = typeName(related)
		}
	}
	e.rec.mu.Lock()
	e.rec.preemptors[victim.GetNamespace()+"/"+victim.GetName()] = kind + " " + preemptor.GetNamespace() + "/" + preemptor.GetName()
	e.rec.fresh = append(e.rec.fresh, preemption{
		victimNamespace: victim.GetNamespace(),
		victimName:      victim.GetName(),
		victimUID:       victim.GetUID(),
		kind:            kind,
		namespace:       preemptor.GetNamespace(),
		name:            preemptor.GetName(),
	})
	e.rec.mu.Unlock()
}

// takePreemptions returns the preemptions recorded since the last call.
func (r *recorder) takePreemptions() []preemption {
	r.mu.Lock()
	defer r.mu.Unlock()
	fresh := r.fresh
	r.fresh = nil
	return fresh
}
