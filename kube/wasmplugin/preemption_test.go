package wasmplugin

// Table tests of the workload-aware preemption's pure parts (no control
// plane): the order check, the preemptor, the disruption units, the ongoing
// preemption, the candidate victims and the trial with its reprieves, over
// upstream's test wrappers, NodeInfos and snapshot and a minimal handle.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"example.invalid/wasched/kube/wasm"
)

// fakeHandle is the part of a framework handle the code under test calls:
// the profile's name and informers (the feed, the PodDisruptionBudgets),
// and the filter, PreFilter extension and Reserve runs of the reprieves.
// Any other method panics (the embedded Handle is nil).
type fakeHandle struct {
	fwk.Handle
	profile   string
	informers informers.SharedInformerFactory

	// addStatus is what every PreFilter extension AddPod answers.
	addStatus *fwk.Status
	// filtered are the pods filtered, in order; a node admits as many pods
	// as its label "slots" says.
	filtered             []string
	addExt, removeExt    int
	reserved, unreserved int
}

func newFakeHandle(profile string) *fakeHandle {
	return &fakeHandle{profile: profile, informers: informers.NewSharedInformerFactory(fake.NewClientset(), 0)}
}

func (h *fakeHandle) ProfileName() string                                    { return h.profile }
func (h *fakeHandle) SharedInformerFactory() informers.SharedInformerFactory { return h.informers }

func (h *fakeHandle) RunFilterPluginsWithNominatedPods(_ context.Context, _ fwk.CycleState, pod *v1.Pod, info fwk.NodeInfo) *fwk.Status {
	h.filtered = append(h.filtered, pod.Name)
	slots, err := strconv.Atoi(info.Node().Labels["slots"])
	if err != nil {
		return fwk.AsStatus(err)
	}
	if len(info.GetPods()) >= slots {
		return fwk.NewStatus(fwk.Unschedulable, "node is full")
	}
	return nil
}

func (h *fakeHandle) RunPreFilterExtensionAddPod(context.Context, fwk.CycleState, *v1.Pod, fwk.PodInfo, fwk.NodeInfo) *fwk.Status {
	h.addExt++
	return h.addStatus
}

func (h *fakeHandle) RunPreFilterExtensionRemovePod(context.Context, fwk.CycleState, *v1.Pod, fwk.PodInfo, fwk.NodeInfo) *fwk.Status {
	h.removeExt++
	return nil
}

func (h *fakeHandle) RunReservePluginsReserve(context.Context, fwk.CycleState, *v1.Pod, string) *fwk.Status {
	h.reserved++
	return nil
}

func (h *fakeHandle) RunReservePluginsUnreserve(context.Context, fwk.CycleState, *v1.Pod, string) {
	h.unreserved++
}

// podGroups and compositePodGroups are listers over fixed objects, by
// "namespace/name"; a missing one is an error, as the snapshot's are.
type podGroups map[string]*schedulingv1beta1.PodGroup

func (m podGroups) Get(namespace, name string) (*schedulingv1beta1.PodGroup, error) {
	if pg, ok := m[namespace+"/"+name]; ok {
		return pg, nil
	}
	return nil, fmt.Errorf("pod group %s/%s not found", namespace, name)
}

type compositePodGroups map[string]*schedulingv1alpha3.CompositePodGroup

func (m compositePodGroups) Get(namespace, name string) (*schedulingv1alpha3.CompositePodGroup, error) {
	if cpg, ok := m[namespace+"/"+name]; ok {
		return cpg, nil
	}
	return nil, fmt.Errorf("composite pod group %s/%s not found", namespace, name)
}

func groupsOf(pgs ...*schedulingv1beta1.PodGroup) podGroups {
	m := podGroups{}
	for _, pg := range pgs {
		m[pg.Namespace+"/"+pg.Name] = pg
	}
	return m
}

func compositesOf(cpgs ...*schedulingv1alpha3.CompositePodGroup) compositePodGroups {
	m := compositePodGroups{}
	for _, cpg := range cpgs {
		m[cpg.Namespace+"/"+cpg.Name] = cpg
	}
	return m
}

const ns = "ns"

// at is a start time, minutes after a fixed instant.
func at(minutes int) metav1.Time {
	return metav1.NewTime(time.Date(2026, 1, 1, 0, minutes, 0, 0, time.UTC))
}

// running is a lone pod of priority on node, started at start.
func running(name, node string, priority int32, start int) *st.PodWrapper {
	return st.MakePod().Namespace(ns).Name(name).UID("uid-" + name).Node(node).Priority(priority).StartTime(at(start))
}

func group(name string) *st.PodGroupWrapper {
	return st.MakePodGroup().Namespace(ns).Name(name).UID(types.UID("uid-" + name))
}

// composite is a CompositePodGroup; parent "" is a root, priority nil none.
func composite(name, parent string, all bool, priority *int32) *schedulingv1alpha3.CompositePodGroup {
	cpg := &schedulingv1alpha3.CompositePodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)}}
	if parent != "" {
		cpg.Spec.ParentCompositePodGroupName = &parent
	}
	if all {
		cpg.Spec.DisruptionMode = &schedulingv1alpha3.CompositeDisruptionMode{All: &schedulingv1alpha3.AllCompositeDisruptionMode{}}
	}
	cpg.Spec.Priority = priority
	return cpg
}

// nodeInfos are NodeInfos of nodes holding pods (by their spec.nodeName),
// in the nodes' order.
func nodeInfos(nodes []*v1.Node, pods ...*v1.Pod) []fwk.NodeInfo {
	infos := make([]fwk.NodeInfo, 0, len(nodes))
	for _, node := range nodes {
		info := framework.NewNodeInfo()
		for _, pod := range pods {
			if pod.Spec.NodeName == node.Name {
				info.AddPod(pod)
			}
		}
		info.SetNode(node)
		infos = append(infos, info)
	}
	return infos
}

func makeNodes(names ...string) []*v1.Node {
	nodes := make([]*v1.Node, len(names))
	for i, name := range names {
		nodes[i] = st.MakeNode().Name(name).UID("uid-" + name).Obj()
	}
	return nodes
}

// TestPermutationAcceptsExactlyAReorderingOfTheUnits checks order-victims'
// answer: a permutation of 0..n-1 comes back as indices, anything else is
// an error saying what is wrong.
func TestPermutationAcceptsExactlyAReorderingOfTheUnits(t *testing.T) {
	for _, tc := range []struct {
		name    string
		order   []uint32
		n       int
		want    []int
		wantErr string
	}{
		{name: "the identity order is kept", order: []uint32{0, 1, 2}, n: 3, want: []int{0, 1, 2}},
		{name: "any reordering is kept as given", order: []uint32{2, 0, 1}, n: 3, want: []int{2, 0, 1}},
		{name: "one unit, one index", order: []uint32{0}, n: 1, want: []int{0}},
		{name: "no units, no indices", order: nil, n: 0, want: []int{}},
		{name: "a repeated index is refused", order: []uint32{0, 2, 0}, n: 3, wantErr: "index 0 is out of range or repeated"},
		{name: "an index past the last unit is refused", order: []uint32{0, 3, 1}, n: 3, wantErr: "index 3 is out of range or repeated"},
		{name: "the largest index does not wrap around", order: []uint32{4294967295}, n: 1, wantErr: "index 4294967295 is out of range or repeated"},
		{name: "too few indices are refused", order: []uint32{1, 0}, n: 3, wantErr: "2 indices for 3 units"},
		{name: "too many indices are refused", order: []uint32{0, 1, 2, 3}, n: 3, wantErr: "4 indices for 3 units"},
		{name: "indices for no units are refused", order: []uint32{0}, n: 0, wantErr: "1 indices for 0 units"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := permutation(tc.order, tc.n)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("permutation(%v, %d) = %v, %v; want error %q", tc.order, tc.n, got, err, tc.wantErr)
				}
				if got != nil {
					t.Errorf("an error came with indices %v", got)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("permutation(%v, %d) = %#v, %v; want %#v", tc.order, tc.n, got, err, tc.want)
			}
		})
	}
}

// TestNewPreemptorResolvesPriorityPolicyAndName checks the preemptor as
// kube-scheduler resolves it: the group's (or composite's) priority, its
// name for the component, and its policy: the group's own under
// PodGroupPreemptionPolicy, else Never if any member says so.
func TestNewPreemptorResolvesPriorityPolicyAndName(t *testing.T) {
	never, lower := v1.PreemptNever, v1.PreemptLowerPriority
	member := func(name string, policy *v1.PreemptionPolicy) *v1.Pod {
		w := st.MakePod().Namespace(ns).Name(name).UID("uid-" + name).PodGroupName("train")
		if policy != nil {
			w = w.PreemptionPolicy(*policy)
		}
		return w.Obj()
	}
	podGroupInfo := func(pg *schedulingv1beta1.PodGroup, pods ...*v1.Pod) *framework.PodGroupInfo {
		return &framework.PodGroupInfo{Namespace: ns, Name: pg.Name, Type: fwk.PodGroupKeyType, PodGroup: pg, UnscheduledPods: pods}
	}
	compositeInfo := func(cpg *schedulingv1alpha3.CompositePodGroup, policy *schedulingv1alpha3.PreemptionPolicy, children ...*framework.PodGroupInfo) *framework.PodGroupInfo {
		cpg.Spec.PreemptionPolicy = policy
		return &framework.PodGroupInfo{Namespace: ns, Name: cpg.Name, Type: fwk.CompositePodGroupKeyType, CompositePodGroup: cpg, Children: children}
	}
	cNever, cLower := schedulingv1alpha3.PreemptNever, schedulingv1alpha3.PreemptLowerPriority
	podGroupRef := &wasm.Preemptor{PodGroup: "ns/train"}
	compositeRef := &wasm.Preemptor{CompositePodGroup: "ns/job"}

	for _, tc := range []struct {
		name string
		// gated is PodGroupPreemptionPolicy.
		gated bool
		pg    *framework.PodGroupInfo

		priority int32
		policy   schedulingv1beta1.PreemptionPolicy
		kind     string
		ref      *wasm.Preemptor
		members  []string
	}{
		{
			name:     "a PodGroup preempts at its own priority, named as a PodGroup",
			pg:       podGroupInfo(group("train").Priority(7).Obj(), member("train-0", nil), member("train-1", &lower)),
			priority: 7, policy: schedulingv1beta1.PreemptLowerPriority, kind: "podgroup", ref: podGroupRef,
			members: []string{"train-0", "train-1"},
		},
		{
			name:     "a PodGroup without a priority preempts at 0",
			pg:       podGroupInfo(group("train").Obj(), member("train-0", nil)),
			priority: 0, policy: schedulingv1beta1.PreemptLowerPriority, kind: "podgroup", ref: podGroupRef,
			members: []string{"train-0"},
		},
		{
			name:     "without the gate one member's Never makes the group Never",
			pg:       podGroupInfo(group("train").Priority(7).Obj(), member("train-0", &lower), member("train-1", &never)),
			priority: 7, policy: schedulingv1beta1.PreemptNever, kind: "podgroup", ref: podGroupRef,
			members: []string{"train-0", "train-1"},
		},
		{
			name:     "without the gate the group's own policy is not read",
			pg:       podGroupInfo(group("train").Priority(7).PreemptionPolicy(schedulingv1beta1.PreemptNever).Obj(), member("train-0", nil)),
			priority: 7, policy: schedulingv1beta1.PreemptLowerPriority, kind: "podgroup", ref: podGroupRef,
			members: []string{"train-0"},
		},
		{
			name:     "under the gate the group's Never stands over its members",
			gated:    true,
			pg:       podGroupInfo(group("train").Priority(7).PreemptionPolicy(schedulingv1beta1.PreemptNever).Obj(), member("train-0", &lower)),
			priority: 7, policy: schedulingv1beta1.PreemptNever, kind: "podgroup", ref: podGroupRef,
			members: []string{"train-0"},
		},
		{
			name:     "under the gate the group's PreemptLowerPriority overrides a member's Never",
			gated:    true,
			pg:       podGroupInfo(group("train").Priority(7).PreemptionPolicy(schedulingv1beta1.PreemptLowerPriority).Obj(), member("train-0", &never)),
			priority: 7, policy: schedulingv1beta1.PreemptLowerPriority, kind: "podgroup", ref: podGroupRef,
			members: []string{"train-0"},
		},
		{
			name:     "under the gate a group without a policy preempts, whatever its members say",
			gated:    true,
			pg:       podGroupInfo(group("train").Priority(7).Obj(), member("train-0", &never)),
			priority: 7, policy: schedulingv1beta1.PreemptLowerPriority, kind: "podgroup", ref: podGroupRef,
			members: []string{"train-0"},
		},
		{
			name: "a composite preempts at its priority with its children's members, named as a composite",
			pg: compositeInfo(composite("job", "", false, new(int32(9))), nil,
				podGroupInfo(group("a").Obj(), member("a-0", nil)), podGroupInfo(group("b").Obj(), member("b-0", nil), member("b-1", nil))),
			priority: 9, policy: schedulingv1beta1.PreemptLowerPriority, kind: "compositepodgroup", ref: compositeRef,
			members: []string{"a-0", "b-0", "b-1"},
		},
		{
			name: "without the gate a composite's member saying Never makes it Never",
			pg: compositeInfo(composite("job", "", false, new(int32(9))), &cLower,
				podGroupInfo(group("a").Obj(), member("a-0", nil)), podGroupInfo(group("b").Obj(), member("b-0", &never))),
			priority: 9, policy: schedulingv1beta1.PreemptNever, kind: "compositepodgroup", ref: compositeRef,
			members: []string{"a-0", "b-0"},
		},
		{
			name:  "under the gate a composite's Never stands",
			gated: true,
			pg: compositeInfo(composite("job", "", false, nil), &cNever,
				podGroupInfo(group("a").Obj(), member("a-0", &lower))),
			priority: 0, policy: schedulingv1beta1.PreemptNever, kind: "compositepodgroup", ref: compositeRef,
			members: []string{"a-0"},
		},
		{
			name:  "under the gate a composite's PreemptLowerPriority overrides a member's Never",
			gated: true,
			pg: compositeInfo(composite("job", "", false, nil), &cLower,
				podGroupInfo(group("a").Obj(), member("a-0", &never))),
			priority: 0, policy: schedulingv1beta1.PreemptLowerPriority, kind: "compositepodgroup", ref: compositeRef,
			members: []string{"a-0"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gates := featuregatetesting.FeatureOverrides{features.PodGroupPreemptionPolicy: tc.gated}
			if tc.gated {
				gates[features.GenericWorkload] = true
			}
			featuregatetesting.SetFeatureGatesDuringTest(t, utilfeature.DefaultFeatureGate, gates)
			p := newPreemptor(tc.pg)
			if p.priority != tc.priority || p.policy != tc.policy || p.kind != tc.kind {
				t.Errorf("priority %d, policy %s, kind %s; want %d, %s, %s", p.priority, p.policy, p.kind, tc.priority, tc.policy, tc.kind)
			}
			key := ns + "/" + tc.pg.Name
			if p.key != key || !reflect.DeepEqual(p.ref, tc.ref) {
				t.Errorf("key %q, ref %+v; want %q, %+v", p.key, p.ref, key, tc.ref)
			}
			var obj runtime.Object = tc.pg.PodGroup
			if tc.pg.CompositePodGroup != nil {
				obj = tc.pg.CompositePodGroup
			}
			if p.obj != obj {
				t.Errorf("the preemptor's object is %v, want the group's own %v", p.obj, obj)
			}
			var members []string
			for _, pod := range p.pods {
				members = append(members, pod.Name)
			}
			if !slices.Equal(members, tc.members) {
				t.Errorf("members %v, want %v", members, tc.members)
			}
		})
	}
}

// TestDisruptionUnitIsTheRootMostAncestorWithDisruptionModeAll checks the
// key a pod is evicted under: the root-most PodGroup or CompositePodGroup
// above it with disruption mode All, or none.
func TestDisruptionUnitIsTheRootMostAncestorWithDisruptionModeAll(t *testing.T) {
	member := func(group string) *v1.Pod {
		return st.MakePod().Namespace(ns).Name(group + "-0").UID("uid-" + group + "-0").PodGroupName(group).Obj()
	}
	lone := st.MakePod().Namespace(ns).Name("lone").UID("uid-lone").Obj()
	flat := groupsOf(
		group("all").DisruptionModeAll().Obj(),
		group("single").DisruptionModeSingle().Obj(),
		group("unset").Obj(),
	)
	tree := groupsOf(
		// all-in-all: All under "mid" (All) under "root" (not All).
		group("all-in-all").DisruptionModeAll().ParentCompositePodGroup("mid").Obj(),
		// single-in-all: Single under "mid".
		group("single-in-all").DisruptionModeSingle().ParentCompositePodGroup("mid").Obj(),
		// all-in-none: All under "root" alone.
		group("all-in-none").DisruptionModeAll().ParentCompositePodGroup("root").Obj(),
		// all-in-top: All under "top" (All, a root itself).
		group("all-in-top").DisruptionModeAll().ParentCompositePodGroup("top").Obj(),
		// orphan: its parent composite is not known.
		group("orphan").DisruptionModeAll().ParentCompositePodGroup("gone").Obj(),
		group("unset").Obj(),
	)
	composites := compositesOf(
		composite("root", "", false, nil),
		composite("mid", "root", true, nil),
		composite("top", "", true, nil),
	)
	for _, tc := range []struct {
		name       string
		pod        *v1.Pod
		groups     fwk.PodGroupLister
		composites fwk.CompositePodGroupLister
		want       fwk.EntityKey
		shared     bool
	}{
		{name: "a pod of no group is alone", pod: lone, groups: flat},
		{name: "without a PodGroup lister a member is alone", pod: member("all")},
		{name: "a PodGroup with disruption mode All is the unit", pod: member("all"), groups: flat,
			want: fwk.PodGroupKey(ns, "all"), shared: true},
		{name: "a PodGroup with disruption mode Single is no unit", pod: member("single"), groups: flat},
		{name: "a PodGroup without a disruption mode is no unit", pod: member("unset"), groups: flat},
		{name: "an unknown PodGroup is no unit", pod: member("gone"), groups: flat},
		{name: "without a composite lister the PodGroup alone decides", pod: member("all-in-all"), groups: tree,
			want: fwk.PodGroupKey(ns, "all-in-all"), shared: true},
		{name: "the root-most ancestor with All wins over the PodGroup's own", pod: member("all-in-all"), groups: tree, composites: composites,
			want: fwk.CompositePodGroupKey(ns, "mid"), shared: true},
		{name: "a composite with All takes its Single PodGroup's pods", pod: member("single-in-all"), groups: tree, composites: composites,
			want: fwk.CompositePodGroupKey(ns, "mid"), shared: true},
		{name: "a PodGroup with All under a composite without it is the unit", pod: member("all-in-none"), groups: tree, composites: composites,
			want: fwk.PodGroupKey(ns, "all-in-none"), shared: true},
		{name: "a root composite with All is the unit", pod: member("all-in-top"), groups: tree, composites: composites,
			want: fwk.CompositePodGroupKey(ns, "top"), shared: true},
		{name: "an unknown parent composite leaves the PodGroup's own All", pod: member("orphan"), groups: tree, composites: composites,
			want: fwk.PodGroupKey(ns, "orphan"), shared: true},
		{name: "with a composite lister a PodGroup without All and no parent is no unit", pod: member("unset"), groups: tree, composites: composites},
		{name: "with a composite lister an unknown PodGroup is no unit", pod: member("gone"), groups: tree, composites: composites},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, shared := disruptionUnit(tc.pod, tc.groups, tc.composites)
			if got != tc.want || shared != tc.shared {
				t.Errorf("disruptionUnit(%s) = %+v, %v; want %+v, %v", tc.pod.Name, got, shared, tc.want, tc.shared)
			}
		})
	}
}

// TestOngoingPreemptionKeepsTheNominationsWhileAVictimTerminates checks
// that a member nominated where a lower-priority pod is terminating by
// preemption keeps every member's nomination, and that nothing else counts
// as an ongoing preemption.
func TestOngoingPreemptionKeepsTheNominationsWhileAVictimTerminates(t *testing.T) {
	nodes := makeNodes("n1", "n2")
	member := func(name, nominated string) *v1.Pod {
		return st.MakePod().Namespace(ns).Name(name).UID("uid-" + name).PodGroupName("train").NominatedNodeName(nominated).Obj()
	}
	preempted := func(w *st.PodWrapper) *v1.Pod {
		return w.Terminating().Condition(v1.DisruptionTarget, v1.ConditionTrue, v1.PodReasonPreemptionByScheduler).Obj()
	}
	groups := groupsOf(group("cheap").Priority(1).Obj(), group("train").Priority(50).Obj())
	members := []*v1.Pod{member("train-0", "n1"), member("train-1", "")}
	keep := map[types.NamespacedName]*fwk.NominatingInfo{
		{Namespace: ns, Name: "train-0"}: {NominatingMode: fwk.ModeOverride, NominatedNodeName: "n1"},
		{Namespace: ns, Name: "train-1"}: {NominatingMode: fwk.ModeOverride, NominatedNodeName: ""},
	}
	for _, tc := range []struct {
		name    string
		members []*v1.Pod
		pods    []*v1.Pod
		want    map[types.NamespacedName]*fwk.NominatingInfo
	}{
		{
			name:    "a lower-priority pod terminating by preemption on a member's node keeps every nomination",
			members: members,
			pods:    []*v1.Pod{running("busy", "n1", 100, 0).Obj(), preempted(running("victim", "n1", 10, 0))},
			want:    keep,
		},
		{
			name:    "a victim's priority is its group's",
			members: members,
			pods:    []*v1.Pod{preempted(running("cheap-0", "n1", 100, 0).PodGroupName("cheap"))},
			want:    keep,
		},
		{
			name:    "a pod terminating for another reason is no preemption",
			members: members,
			pods:    []*v1.Pod{running("leaving", "n1", 10, 0).Terminating().Obj()},
		},
		{
			name:    "a preempted pod not yet terminating is no ongoing preemption",
			members: members,
			pods:    []*v1.Pod{running("marked", "n1", 10, 0).Condition(v1.DisruptionTarget, v1.ConditionTrue, v1.PodReasonPreemptionByScheduler).Obj()},
		},
		{
			name:    "a terminating victim of the preemptor's own priority is not its preemption",
			members: members,
			pods:    []*v1.Pod{preempted(running("peer", "n1", 50, 0))},
		},
		{
			name:    "a terminating victim on a node no member is nominated to does not count",
			members: members,
			pods:    []*v1.Pod{preempted(running("elsewhere", "n2", 10, 0))},
		},
		{
			name:    "no member nominated, no ongoing preemption",
			members: []*v1.Pod{member("train-0", ""), member("train-1", "")},
			pods:    []*v1.Pod{preempted(running("victim", "n1", 10, 0)), preempted(running("victim-2", "n2", 10, 0))},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			preemptor := &groupPreemptor{pods: tc.members, priority: 50}
			got, ok := ongoingPreemption(preemptor, nodeInfos(nodes, tc.pods...), groups, nil)
			if ok != (tc.want != nil) || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ongoingPreemption = %v, %v; want %v", describe(got), ok, describe(tc.want))
			}
		})
	}
}

func describe(nominations map[types.NamespacedName]*fwk.NominatingInfo) string {
	var parts []string
	for key, info := range nominations {
		parts = append(parts, fmt.Sprintf("%s→%q(%d)", key, info.NominatedNodeName, info.NominatingMode))
	}
	slices.Sort(parts)
	return "[" + strings.Join(parts, " ") + "]"
}

// TestVictimsAreTheLowerPriorityUnitsMostImportantFirst checks the
// candidate victims as kube-scheduler forms them: units of strictly lower
// priority, a group with disruption mode All as one unit at its root's
// priority and every other pod alone, most important first, each marked if
// evicting it would violate a PodDisruptionBudget.
func TestVictimsAreTheLowerPriorityUnitsMostImportantFirst(t *testing.T) {
	type row struct {
		Unit       wasm.Victim
		Violations int
		Type       fwk.EntityKeyType
	}
	unit := func(priority int32, start int, group string, pods ...string) wasm.Victim {
		return wasm.Victim{Pods: pods, Group: group, Priority: priority, StartTime: at(start).Unix()}
	}
	nodes := makeNodes("n1", "n2", "n3")
	pdb := func(namespace, name, app string, allowed int32) *policyv1.PodDisruptionBudget {
		one := intstr.FromInt32(1)
		return &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-pdb-" + namespace + "-" + name)},
			Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
			Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
		}
	}
	for _, tc := range []struct {
		name       string
		pods       []*v1.Pod
		groups     fwk.PodGroupLister
		composites fwk.CompositePodGroupLister
		pdbs       []*policyv1.PodDisruptionBudget
		want       []row
	}{
		{
			name: "only units of strictly lower priority are victims",
			pods: []*v1.Pod{
				running("above", "n1", 100, 0).Obj(),
				running("equal", "n1", 50, 0).Obj(),
				running("below", "n2", 49, 3).Obj(),
			},
			want: []row{{Unit: unit(49, 3, "", "ns/below"), Type: fwk.PodKeyType}},
		},
		{
			name: "no pod of lower priority, no victims",
			pods: []*v1.Pod{running("above", "n1", 100, 0).Obj(), running("equal", "n2", 50, 0).Obj()},
		},
		{
			name: "a group with disruption mode All is one unit at the group's priority, its pods sorted, started with its first pod",
			pods: []*v1.Pod{
				running("gang-1", "n1", 99, 4).PodGroupName("gang").Obj(),
				running("gang-0", "n2", 99, 2).PodGroupName("gang").Obj(),
				running("gang-2", "n3", 99, 7).PodGroupName("gang").Obj(),
			},
			groups: groupsOf(group("gang").DisruptionModeAll().Priority(10).Obj()),
			want:   []row{{Unit: unit(10, 2, "ns/gang", "ns/gang-0", "ns/gang-1", "ns/gang-2"), Type: fwk.PodGroupKeyType}},
		},
		{
			name: "a group above the preemptor's priority shields its pods, whatever theirs",
			pods: []*v1.Pod{
				running("gang-0", "n1", 1, 0).PodGroupName("gang").Obj(),
				running("gang-1", "n2", 1, 0).PodGroupName("gang").Obj(),
			},
			groups: groupsOf(group("gang").DisruptionModeAll().Priority(80).Obj()),
		},
		{
			name: "the pods of a group with disruption mode Single are units of their own at the group's priority",
			pods: []*v1.Pod{
				running("single-0", "n1", 99, 1).PodGroupName("single").Obj(),
				running("single-1", "n2", 99, 2).PodGroupName("single").Obj(),
			},
			groups: groupsOf(group("single").DisruptionModeSingle().Priority(10).Obj()),
			want: []row{
				{Unit: unit(10, 1, "", "ns/single-0"), Type: fwk.PodGroupKeyType},
				{Unit: unit(10, 2, "", "ns/single-1"), Type: fwk.PodGroupKeyType},
			},
		},
		{
			name: "without a PodGroup lister every pod is alone at its own priority",
			pods: []*v1.Pod{
				running("gang-0", "n1", 20, 1).PodGroupName("gang").Obj(),
				running("gang-1", "n2", 30, 2).PodGroupName("gang").Obj(),
			},
			want: []row{
				{Unit: unit(30, 2, "", "ns/gang-1"), Type: fwk.PodKeyType},
				{Unit: unit(20, 1, "", "ns/gang-0"), Type: fwk.PodKeyType},
			},
		},
		{
			name: "units come by priority, then groups before pods, larger groups first, then the earlier start",
			pods: []*v1.Pod{
				running("low", "n1", 1, 0).Obj(),
				running("lone-a", "n1", 10, 6).Obj(),
				running("gang-1", "n1", 10, 4).PodGroupName("gang").Obj(),
				running("single-0", "n2", 10, 1).PodGroupName("single").Obj(),
				running("lone-b", "n2", 10, 5).Obj(),
				running("solo-0", "n3", 10, 0).PodGroupName("solo").Obj(),
				running("mid", "n3", 20, 9).Obj(),
				running("gang-0", "n3", 10, 3).PodGroupName("gang").Obj(),
			},
			groups: groupsOf(
				group("gang").DisruptionModeAll().Priority(10).Obj(),
				group("solo").DisruptionModeAll().Priority(10).Obj(),
				group("single").DisruptionModeSingle().Priority(10).Obj(),
			),
			want: []row{
				{Unit: unit(20, 9, "", "ns/mid"), Type: fwk.PodKeyType},
				{Unit: unit(10, 3, "ns/gang", "ns/gang-0", "ns/gang-1"), Type: fwk.PodGroupKeyType},
				{Unit: unit(10, 0, "ns/solo", "ns/solo-0"), Type: fwk.PodGroupKeyType},
				{Unit: unit(10, 1, "", "ns/single-0"), Type: fwk.PodGroupKeyType},
				{Unit: unit(10, 5, "", "ns/lone-b"), Type: fwk.PodKeyType},
				{Unit: unit(10, 6, "", "ns/lone-a"), Type: fwk.PodKeyType},
				{Unit: unit(1, 0, "", "ns/low"), Type: fwk.PodKeyType},
			},
		},
		{
			name: "equal units keep their first pod's name order",
			pods: []*v1.Pod{
				running("c", "n1", 5, 0).Obj(),
				running("a", "n2", 5, 0).Obj(),
				running("b", "n3", 5, 0).Obj(),
			},
			want: []row{
				{Unit: unit(5, 0, "", "ns/a"), Type: fwk.PodKeyType},
				{Unit: unit(5, 0, "", "ns/b"), Type: fwk.PodKeyType},
				{Unit: unit(5, 0, "", "ns/c"), Type: fwk.PodKeyType},
			},
		},
		{
			name: "a composite root with disruption mode All takes its subtree at its priority; a PodGroup with All under a plain root is its own unit at the root's priority",
			pods: []*v1.Pod{
				running("left-0", "n1", 99, 2).PodGroupName("left").Obj(),
				running("right-0", "n2", 99, 1).PodGroupName("right").Obj(),
				running("own-0", "n3", 99, 5).PodGroupName("own").Obj(),
				running("own-1", "n3", 99, 6).PodGroupName("own").Obj(),
			},
			groups: groupsOf(
				group("left").ParentCompositePodGroup("root").Obj(),
				group("right").DisruptionModeSingle().ParentCompositePodGroup("root").Obj(),
				group("own").DisruptionModeAll().Priority(1).ParentCompositePodGroup("other").Obj(),
			),
			composites: compositesOf(composite("root", "", true, new(int32(30))), composite("other", "", false, new(int32(40)))),
			want: []row{
				{Unit: unit(40, 5, "ns/own", "ns/own-0", "ns/own-1"), Type: fwk.PodGroupKeyType},
				{Unit: unit(30, 1, "ns/left", "ns/left-0", "ns/right-0"), Type: fwk.CompositePodGroupKeyType},
			},
		},
		{
			name: "a unit is marked when evicting it would violate a PodDisruptionBudget, its violating pods counted",
			pods: []*v1.Pod{
				running("web-1", "n1", 5, 2).Label("app", "web").Obj(),
				running("web-0", "n2", 5, 1).Label("app", "web").Obj(),
				running("db-0", "n1", 5, 3).Label("app", "db").PodGroupName("db").Obj(),
				running("db-1", "n2", 5, 4).Label("app", "db").PodGroupName("db").Obj(),
				running("free", "n3", 5, 9).Label("app", "free").Obj(),
			},
			groups: groupsOf(group("db").DisruptionModeAll().Priority(5).Obj()),
			pdbs: []*policyv1.PodDisruptionBudget{
				pdb(ns, "web", "web", 1),
				pdb(ns, "db", "db", 0),
				// Another namespace's budget does not cover these pods.
				pdb("elsewhere", "free", "free", 0),
			},
			want: []row{
				{Unit: wasm.Victim{Pods: []string{"ns/db-0", "ns/db-1"}, Group: "ns/db", Priority: 5, StartTime: at(3).Unix(), ViolatesBudget: true}, Violations: 2, Type: fwk.PodGroupKeyType},
				// The budget allows one disruption: the more important pod takes it.
				{Unit: unit(5, 1, "", "ns/web-0"), Type: fwk.PodKeyType},
				{Unit: wasm.Victim{Pods: []string{"ns/web-1"}, Priority: 5, StartTime: at(2).Unix(), ViolatesBudget: true}, Violations: 1, Type: fwk.PodKeyType},
				{Unit: unit(5, 9, "", "ns/free"), Type: fwk.PodKeyType},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newFakeHandle(t.Name())
			store := h.informers.Policy().V1().PodDisruptionBudgets().Informer().GetStore()
			for _, pdb := range tc.pdbs {
				if err := store.Add(pdb); err != nil {
					t.Fatal(err)
				}
			}
			p := &Plugin{name: "WaschedWorkloadPreemption", handle: h}
			victims, err := p.victims(nodeInfos(nodes, tc.pods...), 50, tc.groups, tc.composites)
			if err != nil {
				t.Fatal(err)
			}
			var got []row
			for _, v := range victims {
				got = append(got, row{Unit: v.unit, Violations: v.violations, Type: v.Type()})
				if len(v.Pods()) != len(v.unit.Pods) || v.Priority() != v.unit.Priority {
					t.Errorf("kube-scheduler's victim (%d pods, priority %d) differs from the component's %+v", len(v.Pods()), v.Priority(), v.unit)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("victims:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// proposed is one ProposedAssignment of a trial.
type proposed struct {
	info fwk.PodInfo
	node string
}

func (a proposed) GetPod() *v1.Pod               { return a.info.GetPod() }
func (a proposed) GetPodInfo() fwk.PodInfo       { return a.info }
func (a proposed) GetNodeName() string           { return a.node }
func (a proposed) GetCycleState() fwk.CycleState { return framework.NewCycleState() }

// TestTrialAndReprieveEvictsOnlyTheVictimsThatCannotGoBack checks the
// trial over the real mutable snapshot: every victim is removed, the group
// tried once, and the victims put back in the component's order while
// every assigned pod still passes its node's filters; those that cannot go
// back (a group's pods together) are evicted, the assigned pods are not
// left in the snapshot, and every Reserve is undone.
func TestTrialAndReprieveEvictsOnlyTheVictimsThatCannotGoBack(t *testing.T) {
	node := func(name string, slots int) *v1.Node {
		return st.MakeNode().Name(name).UID("uid-"+name).Label("slots", strconv.Itoa(slots)).Obj()
	}
	type assignment = [2]string // pod, node
	for _, tc := range []struct {
		name    string
		nodes   []*v1.Node
		running []*v1.Pod
		// units are the victims, by their pods' names; order indexes them.
		units       [][]string
		order       []int
		assign      []assignment
		trialStatus *fwk.Status
		addStatus   *fwk.Status

		wantEvict    []string
		wantAssigned []assignment
		wantCode     fwk.Code
		wantMessage  string
		// wantLeft is every node's pods after the call.
		wantLeft     map[string][]string
		wantFiltered []string
		// wantExt counts the PreFilter extensions' AddPod and RemovePod.
		wantExt [2]int
	}{
		{
			name:  "the first victims in the component's order go back while the group fits; the rest are evicted",
			nodes: []*v1.Node{node("n1", 2), node("n2", 1)},
			running: []*v1.Pod{
				running("a", "n1", 1, 0).Obj(), running("b", "n1", 1, 0).Obj(), running("c", "n2", 1, 0).Obj(),
			},
			units:        [][]string{{"a"}, {"b"}, {"c"}},
			order:        []int{0, 1, 2},
			assign:       []assignment{{"p0", "n1"}, {"p1", "n2"}},
			wantEvict:    []string{"b", "c"},
			wantAssigned: []assignment{{"p0", "n1"}, {"p1", "n2"}},
			wantLeft:     map[string][]string{"n1": {"a"}, "n2": nil},
			wantFiltered: []string{"p0", "p1", "p0", "p0", "p1"},
			wantExt:      [2]int{6, 4},
		},
		{
			name:  "another order reprieves another victim",
			nodes: []*v1.Node{node("n1", 2), node("n2", 1)},
			running: []*v1.Pod{
				running("a", "n1", 1, 0).Obj(), running("b", "n1", 1, 0).Obj(), running("c", "n2", 1, 0).Obj(),
			},
			units:        [][]string{{"a"}, {"b"}, {"c"}},
			order:        []int{1, 0, 2},
			assign:       []assignment{{"p0", "n1"}, {"p1", "n2"}},
			wantEvict:    []string{"a", "c"},
			wantAssigned: []assignment{{"p0", "n1"}, {"p1", "n2"}},
			wantLeft:     map[string][]string{"n1": {"b"}, "n2": nil},
			wantFiltered: []string{"p0", "p1", "p0", "p0", "p1"},
			wantExt:      [2]int{6, 4},
		},
		{
			name:  "the evicted come in the component's order",
			nodes: []*v1.Node{node("n1", 2), node("n2", 1)},
			running: []*v1.Pod{
				running("a", "n1", 1, 0).Obj(), running("b", "n1", 1, 0).Obj(), running("c", "n2", 1, 0).Obj(),
			},
			units:        [][]string{{"a"}, {"b"}, {"c"}},
			order:        []int{2, 1, 0},
			assign:       []assignment{{"p0", "n1"}, {"p1", "n2"}},
			wantEvict:    []string{"c", "a"},
			wantAssigned: []assignment{{"p0", "n1"}, {"p1", "n2"}},
			wantLeft:     map[string][]string{"n1": {"b"}, "n2": nil},
			wantFiltered: []string{"p0", "p1", "p0", "p1", "p0"},
			wantExt:      [2]int{6, 4},
		},
		{
			name:  "when every victim fits back, none is evicted",
			nodes: []*v1.Node{node("n1", 4), node("n2", 2)},
			running: []*v1.Pod{
				running("a", "n1", 1, 0).Obj(), running("b", "n1", 1, 0).Obj(), running("c", "n2", 1, 0).Obj(),
			},
			units:        [][]string{{"a"}, {"b"}, {"c"}},
			order:        []int{0, 1, 2},
			assign:       []assignment{{"p0", "n1"}, {"p1", "n2"}},
			wantAssigned: []assignment{{"p0", "n1"}, {"p1", "n2"}},
			wantLeft:     map[string][]string{"n1": {"a", "b"}, "n2": {"c"}},
			wantFiltered: []string{"p0", "p1", "p0", "p1", "p0", "p1"},
			wantExt:      [2]int{6, 0},
		},
		{
			name:  "a group victim goes back whole or is evicted whole, even its pods off the way",
			nodes: []*v1.Node{node("n1", 1), node("n2", 1), node("n3", 1)},
			running: []*v1.Pod{
				running("g-0", "n1", 1, 0).Obj(), running("g-1", "n2", 1, 0).Obj(), running("x", "n3", 1, 0).Obj(),
			},
			units:        [][]string{{"g-0", "g-1"}, {"x"}},
			order:        []int{0, 1},
			assign:       []assignment{{"p0", "n1"}},
			wantEvict:    []string{"g-0+g-1"},
			wantAssigned: []assignment{{"p0", "n1"}},
			wantLeft:     map[string][]string{"n1": nil, "n2": nil, "n3": {"x"}},
			wantFiltered: []string{"p0", "p0"},
			wantExt:      [2]int{3, 2},
		},
		{
			name:         "a member the trial left unassigned is neither returned nor checked",
			nodes:        []*v1.Node{node("n1", 1)},
			running:      []*v1.Pod{running("a", "n1", 1, 0).Obj()},
			units:        [][]string{{"a"}},
			order:        []int{0},
			assign:       []assignment{{"p0", "n1"}, {"p1", ""}},
			wantEvict:    []string{"a"},
			wantAssigned: []assignment{{"p0", "n1"}},
			wantLeft:     map[string][]string{"n1": nil},
			wantFiltered: []string{"p0"},
			wantExt:      [2]int{1, 1},
		},
		{
			name:        "a trial that fails returns its status and evicts nothing",
			nodes:       []*v1.Node{node("n1", 1)},
			running:     []*v1.Pod{running("a", "n1", 1, 0).Obj()},
			units:       [][]string{{"a"}},
			order:       []int{0},
			trialStatus: fwk.NewStatus(fwk.Unschedulable, "no room even so"),
			wantCode:    fwk.Unschedulable,
			wantMessage: "no room even so",
			// The caller's EndMutations restores the victims.
			wantLeft: map[string][]string{"n1": nil},
		},
		{
			name:        "a failing PreFilter extension fails the reprieve, naming the plugin",
			nodes:       []*v1.Node{node("n1", 2)},
			running:     []*v1.Pod{running("a", "n1", 1, 0).Obj()},
			units:       [][]string{{"a"}},
			order:       []int{0},
			assign:      []assignment{{"p0", "n1"}},
			addStatus:   fwk.AsStatus(errors.New("addPod broke")),
			wantCode:    fwk.Error,
			wantMessage: "WaschedWorkloadPreemption: addPod broke",
			wantLeft:    map[string][]string{"n1": {"a"}},
			wantExt:     [2]int{1, 0},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			snapshot := internalcache.NewSnapshot(tc.running, tc.nodes)
			if err := snapshot.StartMutations(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := snapshot.EndMutations(); err != nil {
					t.Error(err)
				}
			}()
			nodes, err := snapshot.NodeInfos().List()
			if err != nil {
				t.Fatal(err)
			}
			// The victims, built from the snapshot's own PodInfos.
			infos := map[string]fwk.PodInfo{}
			for _, info := range nodes {
				for _, pi := range info.GetPods() {
					infos[pi.GetPod().Name] = pi
				}
			}
			victims := make([]*victim, len(tc.units))
			for i, names := range tc.units {
				var pods []fwk.PodInfo
				for _, name := range names {
					pods = append(pods, infos[name])
				}
				v, err := preemption.NewVictim(pods, 1, fwk.PodKeyType)
				if err != nil {
					t.Fatal(err)
				}
				victims[i] = &victim{Victim: v}
			}
			pods := func() map[string][]string {
				left := map[string][]string{}
				for _, n := range tc.nodes {
					info, err := snapshot.NodeInfos().Get(n.Name)
					if err != nil {
						t.Fatal(err)
					}
					var names []string
					for _, pi := range info.GetPods() {
						names = append(names, pi.GetPod().Name)
					}
					slices.Sort(names)
					left[n.Name] = names
				}
				return left
			}
			tried := 0
			trial := func(context.Context) (*fwk.PodGroupAssignments, *fwk.Status) {
				tried++
				for node, names := range pods() {
					if len(names) != 0 {
						t.Errorf("the trial ran with %v still on %s", names, node)
					}
				}
				if tc.trialStatus != nil {
					return nil, tc.trialStatus
				}
				result := &fwk.PodGroupAssignments{}
				for _, a := range tc.assign {
					pi, err := framework.NewPodInfo(st.MakePod().Namespace(ns).Name(a[0]).UID("uid-" + a[0]).PodGroupName("train").Obj())
					if err != nil {
						t.Fatal(err)
					}
					result.ProposedAssignments = append(result.ProposedAssignments, proposed{info: pi, node: a[1]})
				}
				return result, nil
			}
			h := newFakeHandle(t.Name())
			h.addStatus = tc.addStatus
			p := &Plugin{name: "WaschedWorkloadPreemption", handle: h}

			evict, assigned, status := p.trialAndReprieve(ctx, snapshot, nodes, victims, tc.order, trial)

			if tried != 1 {
				t.Errorf("the trial ran %d times, want once", tried)
			}
			if status.Code() != tc.wantCode || status.Message() != tc.wantMessage {
				t.Errorf("status %v %q, want %v %q", status.Code(), status.Message(), tc.wantCode, tc.wantMessage)
			}
			if tc.wantCode == fwk.Error && status.Plugin() != p.name {
				t.Errorf("the error names plugin %q", status.Plugin())
			}
			var evicted []string
			for _, v := range evict {
				var names []string
				for _, pi := range v.Pods() {
					names = append(names, pi.GetPod().Name)
				}
				evicted = append(evicted, strings.Join(names, "+"))
			}
			if !slices.Equal(evicted, tc.wantEvict) {
				t.Errorf("evicted %v, want %v", evicted, tc.wantEvict)
			}
			var got []assignment
			for _, a := range assigned {
				got = append(got, assignment{a.GetPod().Name, a.GetNodeName()})
			}
			if !slices.Equal(got, tc.wantAssigned) {
				t.Errorf("assignments %v, want %v", got, tc.wantAssigned)
			}
			if left := pods(); !reflect.DeepEqual(left, tc.wantLeft) {
				t.Errorf("the snapshot holds %v, want %v", left, tc.wantLeft)
			}
			if !slices.Equal(h.filtered, tc.wantFiltered) {
				t.Errorf("filtered %v, want %v", h.filtered, tc.wantFiltered)
			}
			if ext := [2]int{h.addExt, h.removeExt}; ext != tc.wantExt {
				t.Errorf("PreFilter extensions AddPod/RemovePod ran %v times, want %v", ext, tc.wantExt)
			}
			if h.reserved != h.unreserved {
				t.Errorf("%d Reserves, %d Unreserves: a trial's reservation outlived it", h.reserved, h.unreserved)
			}
		})
	}
}
