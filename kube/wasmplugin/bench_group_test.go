package wasmplugin

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/gangscheduling"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/topologyaware"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
)

// noActivation is a queue that activates nothing (the benchmarks' groups
// are complete, so nothing waits to be activated).
type noActivation struct{}

func (noActivation) Activate(klog.Logger, map[string]*v1.Pod) {}

// groupBench is a framework handle as kube-scheduler builds one for a
// profile (its PodGroupManager, snapshot and waiting pods) holding one
// PodGroup of members pods; with assume, each is assumed on a node of its
// own: the state a complete gang is in at Permit.
type groupBench struct {
	handle fwk.Handle
	group  *schedulingv1beta1.PodGroup
	pods   []*v1.Pod
}

func newGroupBench(b *testing.B, members int, topology string, assume bool) *groupBench {
	b.Helper()
	featuregatetesting.SetFeatureGateDuringTest(b, utilfeature.DefaultFeatureGate, features.GenericWorkload, true)
	featuregatetesting.SetFeatureGateDuringTest(b, utilfeature.DefaultFeatureGate, features.TopologyAwareWorkloadScheduling, true)
	schedmetrics.Register() // the cache reports to them
	ctx := context.Background()
	logger := klog.Background()
	cache := internalcache.New(ctx, nil, true, false)
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	groups := factory.Scheduling().V1beta1().PodGroups()
	snapshot := internalcache.NewEmptySnapshot()
	// A profile of its own: the plugins' views are per profile.
	profile := &config.KubeSchedulerProfile{SchedulerName: b.Name()}
	handle, err := frameworkruntime.NewFramework(ctx, nil, profile,
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithPodGroupManager(cache),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
		frameworkruntime.WithPodActivator(noActivation{}),
		frameworkruntime.WithSnapshotSharedLister(snapshot),
	)
	if err != nil {
		b.Fatal(err)
	}
	spec := schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
		Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: int32(members)}}}
	if topology != "" {
		spec.SchedulingConstraints = &schedulingv1beta1.PodGroupSchedulingConstraints{
			Topology: []schedulingv1beta1.TopologyConstraint{{Key: topology}}}
	}
	group := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "bench", UID: "uid-train", ResourceVersion: "1"}, Spec: spec}
	if err := groups.Informer().GetStore().Add(group); err != nil {
		b.Fatal(err)
	}
	cache.AddPodGroup(group)
	g := &groupBench{handle: handle, group: group}
	name := group.Name
	for i := range members {
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("train-%d", i), Namespace: "bench", UID: types.UID(fmt.Sprintf("uid-train-%d", i)), ResourceVersion: "1"},
			Spec: v1.PodSpec{SchedulerName: profile.SchedulerName, SchedulingGroup: &v1.PodSchedulingGroup{PodGroupName: &name},
				Containers: []v1.Container{{Name: "c"}}},
		}
		cache.AddPodGroupMember(pod)
		g.pods = append(g.pods, pod)
	}
	for i, pod := range g.pods {
		if !assume {
			break
		}
		assumed := pod.DeepCopy()
		assumed.Spec.NodeName = fmt.Sprintf("node-%05d", i)
		if err := cache.AssumePod(logger, assumed); err != nil {
			b.Fatal(err)
		}
	}
	if err := cache.UpdateSnapshot(logger, snapshot); err != nil {
		b.Fatal(err)
	}
	return g
}

// component makes the bundled component named name a plugin on the
// bench's handle.
func (g *groupBench) component(b *testing.B, name string) *Plugin {
	b.Helper()
	plugin, err := Factory(name)(context.Background(), nil, g.handle)
	if err != nil {
		b.Fatal(err)
	}
	// What kube-scheduler's informers would have delivered: the members,
	// pending.
	p := plugin.(*Plugin)
	for _, pod := range g.pods {
		p.feed.ensurePod(pod)
	}
	return p
}

// BenchmarkGang prices the gang decisions of one member of a complete
// 64-pod PodGroup: PreEnqueue (is the group complete?) and Permit (with
// every member assumed: allow the group), the in-tree GangScheduling
// against the bundled WaschedGangScheduling through cgo, on the same
// handle, PodGroup and pods.
func BenchmarkGang(b *testing.B) {
	g := newGroupBench(b, 64, "", true)
	ctx := context.Background()
	fts := feature.Features{EnableGenericWorkload: true}
	inTree, err := gangscheduling.New(ctx, nil, g.handle, fts)
	if err != nil {
		b.Fatal(err)
	}
	gang := inTree.(*gangscheduling.GangScheduling)
	component := g.component(b, "WaschedGangScheduling")
	pod := g.pods[0]
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = "node-00000"
	for _, side := range []struct {
		name     string
		enqueue  func() *fwk.Status
		permitOf func() *fwk.Status
	}{
		{"in-tree/GangScheduling",
			func() *fwk.Status { return gang.PreEnqueue(ctx, pod) },
			func() *fwk.Status {
				st, _ := gang.Permit(ctx, framework.NewCycleState(), assumed, "node-00000")
				return st
			}},
		{"component/WaschedGangScheduling",
			func() *fwk.Status { return component.PreEnqueue(ctx, pod) },
			func() *fwk.Status {
				st, _ := component.Permit(ctx, framework.NewCycleState(), assumed, "node-00000")
				return st
			}},
	} {
		b.Run("PreEnqueue/"+side.name, func(b *testing.B) {
			for b.Loop() {
				if st := side.enqueue(); !st.IsSuccess() {
					b.Fatal(st)
				}
			}
		})
		b.Run("Permit/"+side.name, func(b *testing.B) {
			for b.Loop() {
				if st := side.permitOf(); !st.IsSuccess() {
					b.Fatal(st)
				}
			}
		})
	}
}

// BenchmarkTopologyPlacements prices generating the placements of one
// topology-constrained PodGroup (8 members, key `rack`) over 5,000 nodes
// in 50 racks: the in-tree TopologyPlacementGenerator against the
// bundled WaschedTopologyPlacement through cgo (the parent's node names
// in, the placements back by name, mapped to the parent's NodeInfos), on
// the same handle, nodes and PodGroup.
func BenchmarkTopologyPlacements(b *testing.B) {
	g := newGroupBench(b, 8, "rack", false)
	ctx := context.Background()
	nodes, pods, _ := benchCluster(5000)
	parent := &fwk.Placement{}
	for i, node := range nodes {
		node.Labels = map[string]string{"rack": fmt.Sprintf("rack-%02d", i%50)}
		info := framework.NewNodeInfo(pods[i]...)
		info.SetNode(node)
		parent.Nodes = append(parent.Nodes, info)
	}
	pg := &framework.PodGroupInfo{Namespace: "bench", Name: "train", Type: fwk.PodGroupKeyType,
		UnscheduledPods: g.pods, PodGroup: g.group}
	inTree, err := topologyaware.New(ctx, nil, g.handle, feature.Features{EnableGenericWorkload: true})
	if err != nil {
		b.Fatal(err)
	}
	component := g.component(b, "WaschedTopologyPlacement")
	for _, side := range []struct {
		name string
		gen  fwk.PlacementGeneratePlugin
	}{{"in-tree/TopologyPlacementGenerator", inTree}, {"component/WaschedTopologyPlacement", component}} {
		b.Run(side.name, func(b *testing.B) {
			for b.Loop() {
				result, st := side.gen.GeneratePlacements(ctx, nil, pg, parent)
				if !st.IsSuccess() || len(result.Placements) != 50 {
					b.Fatalf("%v: %d placements", st, len(result.Placements))
				}
			}
		})
	}
}
