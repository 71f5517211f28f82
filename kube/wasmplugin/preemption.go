package wasmplugin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	apipod "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework/parallelize"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"

	"example.invalid/wasched/kube/wasm"
)

// preemptionDomain is the one domain of workload-aware preemption inside
// kube-scheduler v1.37.2: the whole cluster (its PodGroupEvaluator's
// "cluster" domain), since the PodGroupSchedulingFunc it passes runs the
// group's whole placement search at once.
const preemptionDomain = "cluster"

// groupPreemption prefixes the plugin's own verdicts as DefaultPreemption
// prefixes its group preemption's.
const groupPreemption = "pod group preemption: "

// victim is one unit a preemption may evict, as kube-scheduler's Victim
// (for its importance order and PodDisruptionBudget accounting) and as the
// contract's victim-unit.
type victim struct {
	preemption.Victim
	unit wasm.Victim
	// violations is how many of its pods' evictions would violate a
	// PodDisruptionBudget.
	violations int
}

// PodGroupPostFilter runs workload-aware preemption for a unit
// kube-scheduler could not place, the trials in kube-scheduler (contract
// 0.3.0's decision) and the choices in the component: the candidate
// victims (units of strictly lower priority, grouped by disruption mode as
// kube-scheduler groups them) are ordered by order-victims, all removed
// from the snapshot, the group tried once through trial; if it fits they
// are put back in the component's order while every assigned pod still
// passes its node's filters; select-candidate then accepts (or declines)
// the one candidate, and the victims left are evicted. A component without
// the point, or one that declines, answers Unschedulable so that the next
// PodGroupPostFilter plugin is asked.
func (p *Plugin) PodGroupPostFilter(ctx context.Context, _ fwk.PodGroupCycleState, pg fwk.PodGroupInfo, trial fwk.PodGroupSchedulingFunc) (_ *fwk.PodGroupPostFilterResult, status *fwk.Status) {
	if !p.comp.Info.Implements("pod-group-post-filter") {
		return nil, fwk.NewStatus(fwk.Unschedulable).WithPlugin(p.name)
	}
	defer func() {
		schedmetrics.WorkloadPreemptionAttempts.WithLabelValues(status.Code().String()).Inc()
	}()
	preemptor := newPreemptor(pg)
	if preemptor.policy == schedulingv1beta1.PreemptNever {
		return nil, fwk.NewStatus(fwk.Unschedulable, groupPreemption+"not eligible due to preemptionPolicy=Never.").WithPlugin(p.name)
	}
	// The mutation session first: it may give the snapshot new NodeInfos,
	// and the trial, the filters and the reprieves must share one set.
	lister := p.handle.MutableSnapshotSharedLister()
	if err := lister.StartMutations(); err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("%s: %w", p.name, err)).WithPlugin(p.name)
	}
	ended := false
	end := func() error {
		if ended {
			return nil
		}
		ended = true
		return lister.EndMutations()
	}
	defer func() { _ = end() }()
	nodes, err := lister.NodeInfos().List()
	if err != nil {
		return nil, fwk.AsStatus(err).WithPlugin(p.name)
	}
	groups, composites := p.groupListers()
	if nominations, ok := ongoingPreemption(preemptor, nodes, groups, composites); ok {
		return &fwk.PodGroupPostFilterResult{NominatingInfos: nominations}, fwk.NewStatus(fwk.Success, groupPreemption+"ongoing preemption on nominated nodes")
	}
	victims, err := p.victims(nodes, preemptor.priority, groups, composites)
	if err != nil {
		return nil, fwk.AsStatus(err).WithPlugin(p.name)
	}
	if len(victims) == 0 {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, groupPreemption+"No preemption victims found for incoming preemptor").WithPlugin(p.name)
	}

	// The component orders the candidates on the cluster as it stands.
	if err := p.feed.syncNodes(nodes, false); err != nil {
		return nil, fwk.AsStatus(err).WithPlugin(p.name)
	}
	p.feed.ensureUnit(pg)
	units := make([]wasm.Victim, len(victims))
	for i, v := range victims {
		units[i] = v.unit
	}
	resp, st := p.ask(wasm.Request{Point: "order-victims", Preemptor: preemptor.ref, Units: units})
	if st != nil {
		return nil, st
	}
	if st := p.postFilterStatus(resp.Status); st != nil {
		return nil, st
	}
	order, err := permutation(resp.Order, len(victims))
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("%s: order-victims: %w", p.name, err)).WithPlugin(p.name)
	}

	evict, assignments, st := p.trialAndReprieve(ctx, lister, nodes, victims, order, trial)
	if err := end(); err != nil && st == nil {
		st = fwk.AsStatus(fmt.Errorf("%s: %w", p.name, err)).WithPlugin(p.name)
	}
	if st != nil {
		return nil, st
	}

	// The component chooses on the cluster as it stands again.
	restored, err := p.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, fwk.AsStatus(err).WithPlugin(p.name)
	}
	if err := p.feed.syncNodes(restored, false); err != nil {
		return nil, fwk.AsStatus(err).WithPlugin(p.name)
	}
	candidate := wasm.Candidate{Domain: preemptionDomain}
	for _, v := range evict {
		candidate.Victims = append(candidate.Victims, v.unit)
	}
	nominations := make(map[types.NamespacedName]*fwk.NominatingInfo, len(assignments))
	for _, a := range assignments {
		candidate.Assignments = append(candidate.Assignments, [2]string{podKey(a.GetPod()), a.GetNodeName()})
		nominations[types.NamespacedName{Namespace: a.GetPod().Namespace, Name: a.GetPod().Name}] = &fwk.NominatingInfo{
			NominatingMode: fwk.ModeOverride, NominatedNodeName: a.GetNodeName(),
		}
	}
	resp, st = p.ask(wasm.Request{Point: "select-candidate", Preemptor: preemptor.ref, Candidates: []wasm.Candidate{candidate}})
	if st != nil {
		return nil, st
	}
	if st := p.postFilterStatus(resp.Status); st != nil {
		return nil, st
	}
	if resp.Candidate == nil || *resp.Candidate != 0 {
		return nil, fwk.NewStatus(fwk.Error, fmt.Sprintf("%s: select-candidate chose no candidate of one", p.name)).WithPlugin(p.name)
	}
	observeVictims(preemptor, evict)
	if err := p.evict(ctx, preemptor, evict); err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("%s: %w", p.name, err)).WithPlugin(p.name)
	}
	n := 0
	for _, v := range evict {
		n += len(v.Pods())
	}
	return &fwk.PodGroupPostFilterResult{NominatingInfos: nominations},
		fwk.NewStatus(fwk.Success, fmt.Sprintf(groupPreemption+"found a placement for podgroup, preempting %d victims", n))
}

// observeVictims records a preemption in kube-scheduler's metrics under
// upstream's names, as its executor does: the victim pods, the groups
// disrupted, the PodDisruptionBudget violations.
func observeVictims(preemptor *groupPreemptor, evict []*victim) {
	pods, groups, violations := 0, 0, 0
	for _, v := range evict {
		pods += len(v.Pods())
		violations += v.violations
		if v.IsGroup() {
			groups++
		}
	}
	schedmetrics.WorkloadPreemptionVictims.Observe(float64(pods))
	if groups > 0 {
		schedmetrics.PreemptionWorkloadDisruptions.WithLabelValues(preemptor.kind).Observe(float64(groups))
	}
	if violations > 0 {
		schedmetrics.PreemptionPDBViolations.WithLabelValues(preemptor.kind).Add(float64(violations))
	}
}

// postFilterStatus is a pod-group-post-filter answer as kube-scheduler's
// status: nil to go on; a declining component (Unschedulable, or Skip
// under failurePolicy Ignore) Unschedulable, so the next plugin is asked.
func (p *Plugin) postFilterStatus(s wasm.Status) *fwk.Status {
	switch s.Code {
	case wasm.Success:
		return nil
	case wasm.Skip:
		return fwk.NewStatus(fwk.Unschedulable, s.Reason).WithPlugin(p.name)
	}
	return p.status(s)
}

// trialAndReprieve removes every victim from the snapshot, runs the group
// once through trial, and puts the victims back in order while every
// assigned pod still passes its node's filters (kube-scheduler's own
// reprieve, selectVictimsOnDomain); it returns the victims that must go and
// the assignments they make room for. The snapshot is mutated: the caller
// ends the mutations.
func (p *Plugin) trialAndReprieve(ctx context.Context, lister fwk.MutableSnapshotSharedLister, nodes []fwk.NodeInfo, victims []*victim, order []int, trial fwk.PodGroupSchedulingFunc) ([]*victim, []fwk.ProposedAssignment, *fwk.Status) {
	logger := klog.FromContext(ctx)
	fail := func(err error) ([]*victim, []fwk.ProposedAssignment, *fwk.Status) {
		return nil, nil, fwk.AsStatus(fmt.Errorf("%s: %w", p.name, err)).WithPlugin(p.name)
	}
	byName := make(map[string]fwk.NodeInfo, len(nodes))
	for _, info := range nodes {
		if node := info.Node(); node != nil {
			byName[node.Name] = info
		}
	}
	for _, v := range victims {
		for _, pi := range v.Pods() {
			if err := lister.RemovePod(logger, pi.GetPod(), pi.GetPod().Spec.NodeName); err != nil {
				return fail(err)
			}
		}
	}
	result, st := trial(ctx)
	if !st.IsSuccess() {
		return nil, nil, st
	}
	var assignments []fwk.ProposedAssignment
	for _, a := range result.ProposedAssignments {
		if a.GetNodeName() != "" {
			assignments = append(assignments, a)
		}
	}
	// reprieve puts v back; it stays if every assigned pod still fits.
	reprieve := func(v *victim) (fits bool, err error) {
		for _, pi := range v.Pods() {
			if err := lister.AddPod(pi, pi.GetPod().Spec.NodeName); err != nil {
				return false, err
			}
			for _, a := range assignments {
				if st := p.handle.RunPreFilterExtensionAddPod(ctx, a.GetCycleState(), a.GetPod(), pi, byName[pi.GetPod().Spec.NodeName]); !st.IsSuccess() {
					return false, st.AsError()
				}
			}
		}
		var undo []func() error
		defer func() {
			for i := len(undo) - 1; i >= 0; i-- {
				err = errors.Join(err, undo[i]())
			}
		}()
		for _, a := range assignments {
			info := byName[a.GetNodeName()]
			if st := p.handle.RunFilterPluginsWithNominatedPods(ctx, a.GetCycleState(), a.GetPod(), info); !st.IsSuccess() {
				for _, pi := range v.Pods() {
					if err := lister.RemovePod(logger, pi.GetPod(), pi.GetPod().Spec.NodeName); err != nil {
						return false, err
					}
					for _, a := range assignments {
						if st := p.handle.RunPreFilterExtensionRemovePod(ctx, a.GetCycleState(), a.GetPod(), pi, byName[pi.GetPod().Spec.NodeName]); !st.IsSuccess() {
							return false, st.AsError()
						}
					}
				}
				return false, nil
			}
			// The assigned pod is assumed for the next one's check, as
			// kube-scheduler's cycle had it.
			if err := lister.AddPod(a.GetPodInfo(), a.GetNodeName()); err != nil {
				return false, err
			}
			p.handle.RunReservePluginsReserve(ctx, a.GetCycleState(), a.GetPod(), a.GetNodeName())
			undo = append(undo, func() error {
				p.handle.RunReservePluginsUnreserve(ctx, a.GetCycleState(), a.GetPod(), a.GetNodeName())
				return lister.RemovePod(logger, a.GetPod(), a.GetNodeName())
			})
		}
		return true, nil
	}
	var evict []*victim
	for _, i := range order {
		fits, err := reprieve(victims[i])
		if err != nil {
			return fail(err)
		}
		if !fits {
			evict = append(evict, victims[i])
		}
	}
	return evict, assignments, nil
}

// permutation checks that order is a permutation of 0..n-1.
func permutation(order []uint32, n int) ([]int, error) {
	if len(order) != n {
		return nil, fmt.Errorf("%d indices for %d units", len(order), n)
	}
	seen := make([]bool, n)
	out := make([]int, n)
	for i, index := range order {
		if int(index) >= n || seen[index] {
			return nil, fmt.Errorf("index %d is out of range or repeated", index)
		}
		seen[index] = true
		out[i] = int(index)
	}
	return out, nil
}

// groupPreemptor is the unit preempting: its members, priority and policy
// as kube-scheduler resolves them, and its name for the component.
type groupPreemptor struct {
	pods     []*v1.Pod
	priority int32
	policy   schedulingv1beta1.PreemptionPolicy
	obj      runtime.Object
	kind     string
	key      string
	ref      *wasm.Preemptor
}

func newPreemptor(pg fwk.PodGroupInfo) *groupPreemptor {
	gated := utilfeature.DefaultFeatureGate.Enabled(features.PodGroupPreemptionPolicy)
	key := pg.GetNamespace() + "/" + pg.GetName()
	p := &groupPreemptor{pods: pg.GetUnscheduledPods(), policy: schedulingv1beta1.PreemptLowerPriority, key: key}
	var declared *schedulingv1beta1.PreemptionPolicy
	if cpg := pg.GetCompositePodGroup(); cpg != nil {
		p.priority = schedutil.CompositePodGroupPriority(cpg)
		p.obj, p.kind = cpg, string(fwk.CompositePodGroupKeyType)
		p.ref = &wasm.Preemptor{CompositePodGroup: key}
		if cpg.Spec.PreemptionPolicy != nil {
			policy := schedulingv1beta1.PreemptNever
			if *cpg.Spec.PreemptionPolicy == schedulingv1alpha3.PreemptLowerPriority {
				policy = schedulingv1beta1.PreemptLowerPriority
			}
			declared = &policy
		}
	} else {
		group := pg.GetPodGroup()
		p.priority = schedutil.PodGroupPriority(group)
		p.obj, p.kind = group, string(fwk.PodGroupKeyType)
		p.ref = &wasm.Preemptor{PodGroup: key}
		declared = group.Spec.PreemptionPolicy
	}
	// kube-scheduler's resolvePreemptionPolicy: the group's own policy
	// under PodGroupPreemptionPolicy, else Never if any member says so.
	switch {
	case gated && declared != nil:
		p.policy = *declared
	case !gated:
		for _, pod := range p.pods {
			if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever {
				p.policy = schedulingv1beta1.PreemptNever
			}
		}
	}
	return p
}

// groupListers are the snapshot's PodGroup and (under its gate)
// CompositePodGroup listers, as kube-scheduler's evaluator holds them.
func (p *Plugin) groupListers() (fwk.PodGroupLister, fwk.CompositePodGroupLister) {
	lister := p.handle.MutableSnapshotSharedLister()
	var composites fwk.CompositePodGroupLister
	if utilfeature.DefaultFeatureGate.Enabled(features.CompositePodGroup) {
		composites = lister.CompositePodGroups()
	}
	return lister.PodGroups(), composites
}

// ongoingPreemption says whether a member of the preemptor is nominated to
// a node where a lower-priority pod is terminating by preemption (then the
// current nominations stand and nothing is evicted again).
func ongoingPreemption(preemptor *groupPreemptor, nodes []fwk.NodeInfo, groups fwk.PodGroupLister, composites fwk.CompositePodGroupLister) (map[types.NamespacedName]*fwk.NominatingInfo, bool) {
	nominated := map[string]bool{}
	for _, pod := range preemptor.pods {
		if pod.Status.NominatedNodeName != "" {
			nominated[pod.Status.NominatedNodeName] = true
		}
	}
	ongoing := false
	for _, info := range nodes {
		if info.Node() == nil || !nominated[info.Node().Name] {
			continue
		}
		for _, pi := range info.GetPods() {
			pod := pi.GetPod()
			if preemption.GetPodPriority(pod, groups, composites) < preemptor.priority && preemption.PodTerminatingByPreemption(pod) {
				ongoing = true
			}
		}
	}
	if !ongoing {
		return nil, false
	}
	nominations := map[types.NamespacedName]*fwk.NominatingInfo{}
	for _, pod := range preemptor.pods {
		nominations[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}] = &fwk.NominatingInfo{
			NominatingMode: fwk.ModeOverride, NominatedNodeName: pod.Status.NominatedNodeName,
		}
	}
	return nominations, true
}

// victims are the cluster's units of priority below priority, as
// kube-scheduler forms them (getCrossNodesVictims): the pods under the
// root-most PodGroup or CompositePodGroup with disruption mode All go
// together, every other pod alone; a unit's priority is its root group's.
// They come most important first (MoreImportantVictim), each marked if its
// eviction would violate a PodDisruptionBudget, taken in that order.
func (p *Plugin) victims(nodes []fwk.NodeInfo, priority int32, groups fwk.PodGroupLister, composites fwk.CompositePodGroupLister) ([]*victim, error) {
	type gathered struct {
		key  fwk.EntityKey
		pods []fwk.PodInfo
	}
	var order []*gathered
	byKey := map[fwk.EntityKey]*gathered{}
	for _, info := range nodes {
		for _, pi := range info.GetPods() {
			pod := pi.GetPod()
			key, shared := disruptionUnit(pod, groups, composites)
			if !shared {
				key = fwk.PodKey(pod.Namespace, pod.Name)
			}
			g, ok := byKey[key]
			if !ok {
				g = &gathered{key: key}
				byKey[key] = g
				order = append(order, g)
			}
			g.pods = append(g.pods, pi)
		}
	}
	var victims []*victim
	for _, g := range order {
		first := g.pods[0].GetPod()
		unitPriority := preemption.GetPodPriority(first, groups, composites)
		if unitPriority >= priority {
			continue
		}
		keyType := g.key.Type
		if keyType == fwk.PodKeyType && first.Spec.SchedulingGroup != nil && groups != nil {
			keyType = fwk.PodGroupKeyType
		}
		v, err := preemption.NewVictim(g.pods, unitPriority, keyType)
		if err != nil {
			return nil, err
		}
		unit := wasm.Victim{Priority: unitPriority}
		for _, pi := range g.pods {
			unit.Pods = append(unit.Pods, podKey(pi.GetPod()))
		}
		slices.Sort(unit.Pods)
		if g.key.Type != fwk.PodKeyType {
			unit.Group = groupOf(first)
		}
		if start := v.EarliestStartTime(); start != nil {
			unit.StartTime = start.Unix()
		}
		victims = append(victims, &victim{Victim: v, unit: unit})
	}
	// Ties keep the pods' first-key order, so the same cluster gives the
	// same list.
	sort.SliceStable(victims, func(i, j int) bool { return victims[i].unit.Pods[0] < victims[j].unit.Pods[0] })
	sort.SliceStable(victims, func(i, j int) bool { return preemption.MoreImportantVictim(victims[i], victims[j]) })
	pdbs, err := p.handle.SharedInformerFactory().Policy().V1().PodDisruptionBudgets().Lister().List(labels.Everything())
	if err != nil {
		return nil, err
	}
	violating, _ := preemption.FilterVictimsWithPDBViolation(victims, pdbs)
	for _, v := range violating {
		v.Victim.unit.ViolatesBudget = true
		v.Victim.violations = v.ViolateCount
	}
	return victims, nil
}

// disruptionUnit is the root-most PodGroup or CompositePodGroup above pod
// with disruption mode All (kube-scheduler's getHighestAllAncestor).
func disruptionUnit(pod *v1.Pod, groups fwk.PodGroupLister, composites fwk.CompositePodGroupLister) (fwk.EntityKey, bool) {
	if pod.Spec.SchedulingGroup == nil || pod.Spec.SchedulingGroup.PodGroupName == nil || groups == nil {
		return fwk.EntityKey{}, false
	}
	name := *pod.Spec.SchedulingGroup.PodGroupName
	if composites == nil {
		pg, err := groups.Get(pod.Namespace, name)
		if err != nil || pg == nil || pg.Spec.DisruptionMode == nil || pg.Spec.DisruptionMode.All == nil {
			return fwk.EntityKey{}, false
		}
		return fwk.PodGroupKey(pod.Namespace, name), true
	}
	var found fwk.EntityKey
	var ok bool
	preemption.TraverseHierarchyUp(pod.Namespace, fwk.PodGroupKey(pod.Namespace, name), groups, composites,
		func(key fwk.EntityKey, pg *schedulingv1beta1.PodGroup, cpg *schedulingv1alpha3.CompositePodGroup) bool {
			if (pg != nil && pg.Spec.DisruptionMode != nil && pg.Spec.DisruptionMode.All != nil) ||
				(cpg != nil && cpg.Spec.DisruptionMode != nil && cpg.Spec.DisruptionMode.All != nil) {
				found, ok = key, true
			}
			return false
		})
	return found, ok
}

// evict carries the preemption out as kube-scheduler's executor does
// (prepareCandidate), the victim pods in parallel: a pod waiting at
// Permit is preempted in memory, a pod in PreBind has its binding
// cancelled, any other gets the DisruptionTarget condition and is deleted.
// A pod already being deleted, or gone, is left alone, so nothing is
// evicted twice. The first error stops the rest.
func (p *Plugin) evict(ctx context.Context, preemptor *groupPreemptor, victims []*victim) error {
	var pods []*v1.Pod
	for _, v := range victims {
		for _, pi := range v.Pods() {
			if pod := pi.GetPod(); pod.DeletionTimestamp == nil {
				pods = append(pods, pod)
			}
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := parallelize.NewResultChannel[error]()
	p.handle.Parallelizer().Until(ctx, len(pods), func(i int) {
		if err := p.evictPod(ctx, preemptor, pods[i]); err != nil {
			errs.SendWithCancel(err, cancel)
		}
	}, p.name)
	return errs.Receive()
}

// evictPod evicts one victim (upstream's Executor.PreemptPod).
func (p *Plugin) evictPod(ctx context.Context, preemptor *groupPreemptor, pod *v1.Pod) error {
	message := fmt.Sprintf("Preempted by %s %s (%s)", preemptor.kind, preemptor.key, p.name)
	if waiting := p.handle.GetWaitingPod(pod.UID); waiting != nil && waiting.Preempt(p.name, "preempted") {
		p.handle.EventRecorder().Eventf(pod, preemptor.obj, v1.EventTypeNormal, "Preempted", "Preempting", message+" (in kube-scheduler memory).")
		return nil
	}
	if binding := p.handle.GetPodInPreBind(pod.UID); binding != nil && binding.CancelPod("preempted by "+p.name) {
		p.handle.EventRecorder().Eventf(pod, preemptor.obj, v1.EventTypeNormal, "Preempted", "Preempting", message+" (in kube-scheduler memory).")
		return nil
	}
	condition := &v1.PodCondition{
		Type:               v1.DisruptionTarget,
		ObservedGeneration: apipod.CalculatePodConditionObservedGeneration(&pod.Status, pod.Generation, v1.DisruptionTarget),
		Status:             v1.ConditionTrue,
		Reason:             v1.PodReasonPreemptionByScheduler,
		Message:            fmt.Sprintf("%s: preempting to accommodate a higher priority %s", p.handle.ProfileName(), preemptor.kind),
	}
	cs := p.handle.ClientSet()
	status := pod.Status.DeepCopy()
	if apipod.UpdatePodCondition(status, condition) {
		if err := schedutil.PatchPodStatus(ctx, cs, pod.Name, pod.Namespace, &pod.Status, status); err != nil {
			if apierrors.IsNotFound(err) {
				return nil // gone already
			}
			return fmt.Errorf("victim %s: %w", podKey(pod), err)
		}
	}
	if err := schedutil.DeletePod(ctx, cs, pod); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("victim %s: %w", podKey(pod), err)
	}
	klog.FromContext(ctx).V(2).Info("wasched preemption evicted a pod", "plugin", p.name, "victim", klog.KObj(pod))
	p.handle.EventRecorder().Eventf(pod, preemptor.obj, v1.EventTypeNormal, "Preempted", "Preempting", message)
	return nil
}
