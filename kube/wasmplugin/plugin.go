package wasmplugin

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"example.invalid/wasched/kube/wasm"
)

// PermitTimeout is how long a gang member waits at Permit for the rest of
// its group (upstream GangScheduling's permitTimeoutDuration).
const PermitTimeout = 5 * time.Minute

// PermitRejectDelay is how long a pod the component rejects (or fails on)
// at Permit is held before it is rejected. kube-scheduler v1.37.2 requeues
// a PodGroup whose cycle succeeded but whose pods were rejected at Permit
// at once, without backoff and ahead of everything else, so rejecting
// immediately would retry the group in a loop and starve every other pod
// (seen with a component failing at Permit); the hold is that backoff.
const PermitRejectDelay = time.Second

var (
	runtimeOnce sync.Once
	sharedRT    *wasm.Runtime
	runtimeErr  error
)

// sharedRuntime is the process's one wasm runtime (engine, compiled
// components).
func sharedRuntime() (*wasm.Runtime, error) {
	runtimeOnce.Do(func() { sharedRT, runtimeErr = wasm.NewRuntime() })
	return sharedRT, runtimeErr
}

// Plugin forwards kube-scheduler's extension points to one wasched
// component (see the package documentation for the mapping). It
// implements every point the contract has; at a point its component does
// not export it answers neutrally (Skip where the framework allows it), so
// enable it at the points its component exports, not through multiPoint.
type Plugin struct {
	name   string
	handle fwk.Handle
	comp   *wasm.Plugin
	feed   *feed
}

var (
	_ fwk.PreEnqueuePlugin  = (*Plugin)(nil)
	_ fwk.PreFilterPlugin   = (*Plugin)(nil)
	_ fwk.FilterPlugin      = (*Plugin)(nil)
	_ fwk.PreScorePlugin    = (*Plugin)(nil)
	_ fwk.ScorePlugin       = (*Plugin)(nil)
	_ fwk.PermitPlugin      = (*Plugin)(nil)
	_ fwk.EnqueueExtensions = (*Plugin)(nil)

	_ fwk.PlacementGeneratePlugin  = (*Plugin)(nil)
	_ fwk.PlacementScorePlugin     = (*Plugin)(nil)
	_ fwk.PodGroupPostFilterPlugin = (*Plugin)(nil)
)

// Factory makes the factory kube-scheduler calls for the plugin named name.
func Factory(name string) func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return FactoryWithComponent(name, "")
}

// FactoryWithComponent is Factory for a component file, used unless the
// plugin's pluginConfig args name another.
func FactoryWithComponent(name, component string) func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return func(_ context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		s, err := spec(name, args)
		if err != nil {
			return nil, err
		}
		if s.Component == "" {
			s.Component = component
		}
		rt, err := sharedRuntime()
		if err != nil {
			return nil, err
		}
		comp, err := rt.Load(s)
		if err != nil {
			return nil, err
		}
		registerMetrics.Do(registerHealthMetrics)
		f, err := feedFor(h, currentGates())
		if err != nil {
			comp.Close()
			return nil, err
		}
		klog.InfoS("wasched component loaded", "plugin", name, "source", comp.Info.Source,
			"contract", comp.Info.Contract, "points", comp.Info.Points, "failurePolicy", comp.Info.FailurePolicy)
		return &Plugin{name: name, handle: h, comp: comp, feed: f}, nil
	}
}

// Name is the plugin's name in kube-scheduler's configuration.
func (p *Plugin) Name() string { return p.name }

// ask calls the component; a request the view cannot answer (an object
// it does not hold) is an Error status naming the plugin.
func (p *Plugin) ask(req wasm.Request) (wasm.Response, *fwk.Status) {
	var resp wasm.Response
	if err := p.comp.Call(p.feed.view, req, &resp); err != nil {
		return resp, fwk.AsStatus(fmt.Errorf("%s: %w", p.name, err)).WithPlugin(p.name)
	}
	for _, line := range resp.Logs {
		klog.V(logVerbosity(line.Level)).InfoS(line.Message, "plugin", p.name, "level", line.Level)
	}
	if resp.Failure != nil {
		p.failed(req, resp.Failure)
	}
	if resp.Failure != nil && resp.Failure.Cause != wasm.CircuitOpen {
		klog.ErrorS(nil, "wasched component failed", "plugin", p.name, "cause", resp.Failure.Cause,
			"message", resp.Failure.Message, "policy", p.comp.Info.FailurePolicy)
	}
	if resp.Breaker != "" {
		p.breakerChanged(req, resp)
	}
	return resp, nil
}

func logVerbosity(level string) klog.Level {
	switch level {
	case "debug":
		return 5
	case "info":
		return 2
	default:
		return 0
	}
}

// status is a component status as kube-scheduler's.
func (p *Plugin) status(s wasm.Status) *fwk.Status {
	var code fwk.Code
	switch s.Code {
	case wasm.Success:
		return nil
	case wasm.Error:
		code = fwk.Error
	case wasm.Unschedulable:
		code = fwk.Unschedulable
	case wasm.UnschedulableAndUnresolvable:
		code = fwk.UnschedulableAndUnresolvable
	case wasm.Wait:
		code = fwk.Wait
	case wasm.Skip:
		code = fwk.Skip
	default:
		return fwk.NewStatus(fwk.Error, fmt.Sprintf("%s: unknown status code %q", p.name, s.Code)).WithPlugin(p.name)
	}
	reasons := []string{}
	if s.Reason != "" {
		reasons = append(reasons, s.Reason)
	}
	return fwk.NewStatus(code, reasons...).WithPlugin(p.name)
}

// groupOf is the PodGroup key of a pod's scheduling group, or "".
func groupOf(pod *v1.Pod) string {
	if pod.Spec.SchedulingGroup == nil || pod.Spec.SchedulingGroup.PodGroupName == nil {
		return ""
	}
	return pod.Namespace + "/" + *pod.Spec.SchedulingGroup.PodGroupName
}

// EventsToRegister says which cluster events may change a component's
// verdict, from events.json (the table wasched replay's queue reads too).
// A component with node-level points (filter, score, placement
// generation) sees the whole view: any pod, node or PodGroup event may
// help. One that only gates groups (pre-enqueue, permit) decides on its
// group's own members and PodGroup, so only those events requeue its
// rejected pods, as upstream GangScheduling's hints do (without them every
// pod added would run PreEnqueue again for every pod held, O(n²) on the
// queue's path).
func (p *Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	for _, point := range componentEvents.nodeLevelPoints {
		if p.comp.Info.Implements(point) {
			return slices.Clone(componentEvents.nodeLevel), nil
		}
	}
	return slices.Clone(componentEvents.gateOnly), nil
}

// sameGroupPod queues a held pod when a pod of its own PodGroup came.
func sameGroupPod(_ klog.Logger, pod *v1.Pod, _, newObj any) (fwk.QueueingHint, error) {
	added, ok := newObj.(*v1.Pod)
	if !ok {
		return fwk.Queue, nil
	}
	if group := groupOf(pod); group != "" && group == groupOf(added) {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// ownPodGroup queues a held pod when its own PodGroup came or changed.
func ownPodGroup(_ klog.Logger, pod *v1.Pod, _, newObj any) (fwk.QueueingHint, error) {
	group, ok := newObj.(metav1.Object)
	if !ok {
		return fwk.Queue, nil
	}
	if groupOf(pod) == group.GetNamespace()+"/"+group.GetName() {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// PreEnqueue asks pre-enqueue about the pod's PodGroup (the contract asks
// about units); a pod of no group passes, as upstream's GangScheduling
// lets it.
func (p *Plugin) PreEnqueue(_ context.Context, pod *v1.Pod) *fwk.Status {
	group := groupOf(pod)
	if group == "" || !p.comp.Info.Implements("pre-enqueue") {
		return nil
	}
	p.feed.ensurePod(pod)
	p.feed.ensureGroup(p.handle, pod.Namespace, *pod.Spec.SchedulingGroup.PodGroupName)
	resp, st := p.ask(wasm.Request{Point: "pre-enqueue", Unit: &wasm.Unit{PodGroup: group}})
	if st != nil {
		return st
	}
	return p.status(resp.Status)
}

// filterState is one pod's filter verdicts, asked once for every node at
// PreFilter and read per node at Filter; a node that changed since is asked
// again at Filter and its new verdict kept the same way, so that a
// preemption's dry run (which filters the assigned nodes again at each
// reprieve step) asks only about nodes that changed since it last asked.
// Filter runs on parallel workers: mu guards the maps.
type filterState struct {
	mu       sync.Mutex
	rejected map[string]*fwk.Status
	prints   map[string]uint64
}

// verdict is the node's kept verdict if its fingerprint is still fp.
func (s *filterState) verdict(node string, fp uint64) (*fwk.Status, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if kept, ok := s.prints[node]; ok && kept == fp {
		return s.rejected[node], true
	}
	return nil, false
}

// keep records the node's verdict at fingerprint fp.
func (s *filterState) keep(node string, fp uint64, verdict *fwk.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prints[node] = fp
	if verdict == nil {
		delete(s.rejected, node)
	} else {
		s.rejected[node] = verdict
	}
}

func (s *filterState) Clone() fwk.StateData { return s }

// scoreState is one pod's scores, asked once at PreScore.
type scoreState struct{ scores map[string]int64 }

func (s *scoreState) Clone() fwk.StateData { return s }

func (p *Plugin) filterKey() fwk.StateKey { return fwk.StateKey("wasched/filter/" + p.name) }
func (p *Plugin) scoreKey() fwk.StateKey  { return fwk.StateKey("wasched/score/" + p.name) }

// PreFilter brings the view up to the snapshot's nodes and asks filter
// about every node at once (one call per pod, not per node); Filter reads
// the answer. Without a filter export it skips, so Filter is not called.
func (p *Plugin) PreFilter(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if !p.comp.Info.Implements("filter") {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	if err := p.feed.syncNodes(nodes, true); err != nil {
		return nil, fwk.AsStatus(err).WithPlugin(p.name)
	}
	p.feed.ensurePod(pod)
	resp, st := p.ask(wasm.Request{Point: "filter", Pod: podKey(pod)})
	if st != nil {
		return nil, st
	}
	fs := &filterState{rejected: map[string]*fwk.Status{}, prints: map[string]uint64{}}
	switch resp.Status.Code {
	case wasm.Success, wasm.Unschedulable:
		for _, r := range resp.Rejections {
			st := fwk.NewStatus(fwk.Unschedulable, r.Reason).WithPlugin(p.name)
			for _, n := range r.Nodes {
				fs.rejected[n] = st
			}
		}
	default: // Error (failurePolicy Fail) fails the pod; Skip (Ignore) lets every node pass.
		if st := p.status(resp.Status); st != nil && st.Code() != fwk.Skip {
			return nil, st
		}
	}
	for _, info := range nodes {
		if node := info.Node(); node != nil {
			fs.prints[node.Name] = fingerprint(info)
		}
	}
	state.Write(p.filterKey(), fs)
	return nil, nil
}

// PreFilterExtensions: none; a node changed since PreFilter (preemption's
// trials remove victims from a copy) is asked again at Filter.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter reads PreFilter's verdict for the node, or asks again for a node
// that changed since (preemption trials).
func (p *Plugin) Filter(_ context.Context, state fwk.CycleState, pod *v1.Pod, info fwk.NodeInfo) *fwk.Status {
	node := info.Node()
	if node == nil {
		return fwk.NewStatus(fwk.Error, "node not found").WithPlugin(p.name)
	}
	data, err := state.Read(p.filterKey())
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("%s: PreFilter did not run: %w", p.name, err)).WithPlugin(p.name)
	}
	fs := data.(*filterState)
	fp := fingerprint(info)
	if verdict, ok := fs.verdict(node.Name, fp); ok {
		return verdict
	}
	if err := p.feed.syncNodes([]fwk.NodeInfo{info}, false); err != nil {
		return fwk.AsStatus(err).WithPlugin(p.name)
	}
	resp, st := p.ask(wasm.Request{Point: "filter", Pod: podKey(pod), Nodes: []string{node.Name}})
	if st != nil {
		return st
	}
	var verdict *fwk.Status
	for _, r := range resp.Rejections {
		verdict = fwk.NewStatus(fwk.Unschedulable, r.Reason).WithPlugin(p.name)
		break
	}
	if st := p.status(resp.Status); verdict == nil && st != nil && st.Code() != fwk.Skip && st.Code() != fwk.Unschedulable {
		return st
	}
	fs.keep(node.Name, fp, verdict)
	return verdict
}

// PreScore asks score about the feasible nodes at once; Score reads it.
func (p *Plugin) PreScore(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	if !p.comp.Info.Implements("score") {
		return fwk.NewStatus(fwk.Skip)
	}
	if err := p.feed.syncNodes(nodes, false); err != nil {
		return fwk.AsStatus(err).WithPlugin(p.name)
	}
	p.feed.ensurePod(pod)
	names := make([]string, 0, len(nodes))
	for _, info := range nodes {
		if node := info.Node(); node != nil {
			names = append(names, node.Name)
		}
	}
	if len(names) == 0 { // an empty list would mean every node of the view
		return fwk.NewStatus(fwk.Skip)
	}
	resp, st := p.ask(wasm.Request{Point: "score", Pod: podKey(pod), Nodes: names})
	if st != nil {
		return st
	}
	if resp.Status.Code != wasm.Success {
		return p.status(resp.Status)
	}
	// The component scores the nodes in the view's (name) order.
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	if len(resp.Scores) != len(sorted) {
		return fwk.NewStatus(fwk.Error, fmt.Sprintf("%s: %d scores for %d nodes", p.name, len(resp.Scores), len(sorted))).WithPlugin(p.name)
	}
	ss := &scoreState{scores: make(map[string]int64, len(sorted))}
	for i, n := range sorted {
		ss.scores[n] = resp.Scores[i]
	}
	state.Write(p.scoreKey(), ss)
	return nil
}

// Score reads PreScore's score for the node (0–100, kube-scheduler's scale).
func (p *Plugin) Score(_ context.Context, state fwk.CycleState, _ *v1.Pod, info fwk.NodeInfo) (int64, *fwk.Status) {
	data, err := state.Read(p.scoreKey())
	if err != nil {
		return 0, fwk.AsStatus(fmt.Errorf("%s: PreScore did not run: %w", p.name, err)).WithPlugin(p.name)
	}
	return data.(*scoreState).scores[info.Node().Name], nil
}

// ScoreExtensions: none; a component's scores are already on
// kube-scheduler's 0–100 scale (the host checks every answer).
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }

// Permit maps the gang verdict onto Permit (contract 0.3.0's decision):
// progress is the group's scheduled pods (assigned plus assumed, this one
// included) and its pods not yet scheduled; Wait holds the pod (and
// activates the rest of its group), Success allows every waiting member,
// a rejection rejects the pod.
func (p *Plugin) Permit(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) (*fwk.Status, time.Duration) {
	group := groupOf(pod)
	if group == "" || !p.comp.Info.Implements("permit") {
		return nil, 0
	}
	states, err := p.handle.PodGroupManager().PodGroupStates().Get(pod.Namespace, *pod.Spec.SchedulingGroup.PodGroupName)
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("%s: %w", p.name, err)).WithPlugin(p.name), 0
	}
	scheduled := states.ScheduledPodsCount()
	unscheduled := states.UnscheduledPods()
	p.feed.ensureGroup(p.handle, pod.Namespace, *pod.Spec.SchedulingGroup.PodGroupName)
	resp, st := p.ask(wasm.Request{Point: "permit", Unit: &wasm.Unit{PodGroup: group},
		Progress: &wasm.Progress{Scheduled: uint32(scheduled), Remaining: uint32(len(unscheduled))}})
	if st != nil {
		return st, 0
	}
	switch resp.Status.Code {
	case wasm.Wait:
		p.handle.Activate(klog.Background(), unscheduled)
		return p.status(resp.Status), PermitTimeout
	case wasm.Success, wasm.Skip:
		for uid := range states.AssumedPods() {
			if waiting := p.handle.GetWaitingPod(uid); waiting != nil {
				waiting.Allow(p.name)
			}
		}
		return nil, 0
	default:
		// A rejection or a failure: held, then rejected with its reason.
		reason := p.status(resp.Status).Message()
		uid := pod.UID
		time.AfterFunc(PermitRejectDelay, func() {
			if waiting := p.handle.GetWaitingPod(uid); waiting != nil {
				waiting.Reject(p.name, reason)
			}
		})
		return fwk.NewStatus(fwk.Wait, reason).WithPlugin(p.name), PermitTimeout
	}
}

func podKey(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }
