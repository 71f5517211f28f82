package wasmplugin

// Table tests of the placement points (no control plane): the names the
// component is given, and GeneratePlacements/ScorePlacement with real
// components loaded through the package's factories on a minimal handle.

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"example.invalid/wasched/kube/wasm"
)

// TestPlacementNameNamesTheUnnamedCluster checks the placement names the
// component is given: kube-scheduler's own, or "cluster" for the whole
// cluster's, which it leaves unnamed.
func TestPlacementNameNamesTheUnnamedCluster(t *testing.T) {
	for _, tc := range []struct {
		name      string
		placement *fwk.Placement
		want      string
	}{
		{name: "the unnamed placement is the cluster", placement: &fwk.Placement{}, want: "cluster"},
		{name: "the unnamed placement is the cluster whatever its nodes", placement: &fwk.Placement{Nodes: nodeInfos(makeNodes("n1"))}, want: "cluster"},
		{name: "a named placement keeps its name", placement: &fwk.Placement{Name: "example.com/rack=a"}, want: "example.com/rack=a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := placementName(tc.placement); got != tc.want {
				t.Errorf("placementName = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestUnitOfNamesTheCycleGroupAsTheContractsUnit checks the unit a pod
// group cycle asks about: its CompositePodGroup if it is one, else its
// PodGroup, by namespace/name.
func TestUnitOfNamesTheCycleGroupAsTheContractsUnit(t *testing.T) {
	pg := group("train").Obj()
	for _, tc := range []struct {
		name string
		pg   fwk.PodGroupInfo
		want *wasm.Unit
	}{
		{name: "a PodGroup cycle asks about its PodGroup",
			pg:   &framework.PodGroupInfo{Namespace: ns, Name: "train", Type: fwk.PodGroupKeyType, PodGroup: pg},
			want: &wasm.Unit{PodGroup: "ns/train"}},
		{name: "a composite cycle asks about its CompositePodGroup",
			pg: &framework.PodGroupInfo{Namespace: ns, Name: "job", Type: fwk.CompositePodGroupKeyType, CompositePodGroup: composite("job", "", false, nil),
				Children: []*framework.PodGroupInfo{{Namespace: ns, Name: "train", Type: fwk.PodGroupKeyType, PodGroup: pg}}},
			want: &wasm.Unit{CompositePodGroup: "ns/job"}},
		{name: "a cycle of no object is named as a PodGroup",
			pg:   &framework.PodGroupInfo{Namespace: "other", Name: "gone", Type: fwk.PodGroupKeyType},
			want: &wasm.Unit{PodGroup: "other/gone"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unitOf(tc.pg); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("unitOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

const rack = "example.com/rack"

// placementCluster is five nodes, n1 and n3 in rack a, n2 in rack b, n5 in
// rack c, n4 in none.
func placementCluster() []*v1.Node {
	racks := []string{"a", "b", "a", "", "c"}
	nodes := makeNodes("n1", "n2", "n3", "n4", "n5")
	for i, r := range racks {
		if r != "" {
			nodes[i].Labels = map[string]string{rack: r}
		}
	}
	return nodes
}

// loadPlugin makes a plugin of the component name (a bundled one when
// component is "") on a handle of its own profile, so that each test has a
// view of its own.
func loadPlugin(t *testing.T, name, component string, args any) *Plugin {
	t.Helper()
	var obj runtime.Object
	if args != nil {
		raw, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		obj = &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}
	}
	plugin, err := FactoryWithComponent(name, component)(context.Background(), obj, newFakeHandle(t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	return plugin.(*Plugin)
}

func trainInfo(pg *schedulingv1beta1.PodGroup, pods ...*v1.Pod) *framework.PodGroupInfo {
	return &framework.PodGroupInfo{Namespace: pg.Namespace, Name: pg.Name, Type: fwk.PodGroupKeyType, PodGroup: pg, UnscheduledPods: pods}
}

// trainMember is a pending member of PodGroup ns/train for the profile
// (a view holds only its own profile's pending pods).
func trainMember(profile, name string) *v1.Pod {
	return st.MakePod().Namespace(ns).Name(name).UID("uid-" + name).SchedulerName(profile).PodGroupName("train").Obj()
}

// TestGeneratePlacementsOfTheTopologyComponent runs the bundled
// WaschedTopologyPlacement through GeneratePlacements: one placement per
// rack among the parent's nodes, named by the component and made of the
// parent's own NodeInfos; a group without a topology constraint (Skip),
// or an empty parent, keeps the parent.
func TestGeneratePlacementsOfTheTopologyComponent(t *testing.T) {
	topology := group("train").MinCount(2).TopologyKey(rack).Obj()
	plain := group("train").MinCount(2).Obj()
	type placement struct {
		Name  string
		Nodes []string
	}
	for _, tc := range []struct {
		name  string
		group *schedulingv1beta1.PodGroup
		// bound are pods on the nodes (by spec.nodeName).
		bound []*v1.Pod
		// parent picks the parent's nodes by index; nil is every node.
		parent []int
		// before, if set, generates over the whole cluster first, so the
		// view holds more nodes than the parent.
		before bool
		// want nil: the parent is kept.
		want []placement
	}{
		{
			name:  "one placement per rack, unlabelled nodes in none",
			group: topology,
			want:  []placement{{"example.com/rack=a", []string{"n1", "n3"}}, {"example.com/rack=b", []string{"n2"}}, {"example.com/rack=c", []string{"n5"}}},
		},
		{
			name:   "a parent of some nodes, the view holding more, yields only the racks among them",
			group:  topology,
			parent: []int{1, 2, 3},
			before: true,
			want:   []placement{{"example.com/rack=a", []string{"n3"}}, {"example.com/rack=b", []string{"n2"}}},
		},
		{
			name:   "a parent of unlabelled nodes only yields no placement",
			group:  topology,
			parent: []int{3},
			before: true,
			want:   []placement{},
		},
		{
			name:  "a member already bound pins its rack",
			group: topology,
			bound: []*v1.Pod{running("train-2", "n2", 0, 0).PodGroupName("train").Obj()},
			want:  []placement{{"example.com/rack=b", []string{"n2"}}},
		},
		{
			name:  "a group without a topology constraint keeps the parent",
			group: plain,
		},
		{
			name:   "an empty parent is kept",
			group:  topology,
			parent: []int{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := loadPlugin(t, "WaschedTopologyPlacement", "", nil)
			pg := trainInfo(tc.group, trainMember(t.Name(), "train-0"), trainMember(t.Name(), "train-1"))
			ctx := context.Background()
			all := nodeInfos(placementCluster(), tc.bound...)
			parent := &fwk.Placement{Nodes: all}
			if tc.before {
				if _, status := p.GeneratePlacements(ctx, nil, pg, parent); !status.IsSuccess() {
					t.Fatal(status)
				}
			}
			if tc.parent != nil {
				parent = &fwk.Placement{Name: "zone=z1", Nodes: []fwk.NodeInfo{}}
				for _, i := range tc.parent {
					parent.Nodes = append(parent.Nodes, all[i])
				}
			}
			result, status := p.GeneratePlacements(ctx, nil, pg, parent)
			if !status.IsSuccess() {
				t.Fatalf("GeneratePlacements: %v", status)
			}
			if tc.want == nil {
				if len(result.Placements) != 1 || result.Placements[0] != parent {
					t.Fatalf("got %d placements, want the parent itself", len(result.Placements))
				}
				return
			}
			own := map[fwk.NodeInfo]bool{}
			for _, info := range parent.Nodes {
				own[info] = true
			}
			got := []placement{}
			for _, pl := range result.Placements {
				names := []string{}
				for _, info := range pl.Nodes {
					if !own[info] {
						t.Errorf("placement %s holds a NodeInfo %s that is not the parent's own", pl.Name, info.Node().Name)
					}
					names = append(names, info.Node().Name)
				}
				got = append(got, placement{pl.Name, names})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("placements %v, want %v", got, tc.want)
			}
		})
	}
}

// TestScorePlacementAsksWithTheAssignmentsAssumed checks ScorePlacement:
// a component without placement-score (the topology component) scores 0
// without being asked; one with it (the Hostile fixture, which scores a
// placement by the pods on its nodes) scores the placement's nodes with
// the assigned pods assumed for that call only, unassigned members left
// out.
func TestScorePlacementAsksWithTheAssignmentsAssumed(t *testing.T) {
	nodes := makeNodes("n1", "n2", "n3")
	old := []*v1.Pod{running("old-0", "n1", 0, 0).Obj(), running("old-1", "n2", 0, 0).Obj(), running("old-2", "n3", 0, 0).Obj()}
	counting := map[string]any{"component": hostileComponent(t), "args": map[string]string{"point": "placement-score", "misbehave": "count"}}
	type assignment = [2]string
	for _, tc := range []struct {
		name      string
		plugin    string
		args      any
		placement []int // node indices; nil: no placement
		unnamed   bool
		assign    []assignment
		want      int64
	}{
		{name: "a component without placement-score scores 0", plugin: "WaschedTopologyPlacement",
			placement: []int{0, 1}, assign: []assignment{{"train-0", "n1"}}, want: 0},
		{name: "no placement scores 0", plugin: "Hostile", args: counting, want: 0},
		{name: "the assigned pods are assumed on their nodes, the unassigned left out", plugin: "Hostile", args: counting,
			placement: []int{0, 1}, assign: []assignment{{"train-0", "n1"}, {"train-1", "n2"}, {"train-2", ""}}, want: 4},
		{name: "members assigned to one node each count", plugin: "Hostile", args: counting,
			placement: []int{0, 1}, assign: []assignment{{"train-0", "n2"}, {"train-1", "n2"}, {"train-2", "n2"}}, want: 5},
		{name: "the unnamed placement is scored over its nodes", plugin: "Hostile", args: counting,
			placement: []int{0, 1, 2}, unnamed: true, assign: []assignment{{"train-0", "n3"}}, want: 4},
		{name: "a placement with no member placed is scored by its own nodes", plugin: "Hostile", args: counting,
			placement: []int{0, 1}, assign: []assignment{{"train-0", ""}}, want: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := loadPlugin(t, tc.plugin, "", tc.args)
			members := map[string]*v1.Pod{}
			var pending []*v1.Pod
			for _, name := range []string{"train-0", "train-1", "train-2", "train-3"} {
				members[name] = trainMember(t.Name(), name)
				pending = append(pending, members[name])
			}
			pg := trainInfo(group("train").MinCount(4).Obj(), pending...)
			all := nodeInfos(nodes, old...)
			assigned := func(placement *fwk.Placement, assign []assignment) *fwk.PodGroupAssignments {
				result := &fwk.PodGroupAssignments{Placement: placement}
				for _, a := range assign {
					pi, err := framework.NewPodInfo(members[a[0]])
					if err != nil {
						t.Fatal(err)
					}
					result.ProposedAssignments = append(result.ProposedAssignments, proposed{info: pi, node: a[1]})
				}
				return result
			}
			var placement *fwk.Placement
			var assignments *fwk.PodGroupAssignments
			if tc.placement != nil {
				placement = &fwk.Placement{Name: "left"}
				if tc.unnamed {
					placement.Name = ""
				}
				for _, i := range tc.placement {
					placement.Nodes = append(placement.Nodes, all[i])
				}
				assignments = assigned(placement, tc.assign)
			}
			score, status := p.ScorePlacement(context.Background(), nil, pg, assignments)
			if !status.IsSuccess() || score != tc.want {
				t.Fatalf("ScorePlacement = %d, %v; want %d", score, status, tc.want)
			}
			if placement == nil || tc.want == 0 {
				return
			}
			// The assumption lasted that call only: another member
			// assumed on the first node counts once, the earlier not at all.
			next := assigned(placement, []assignment{{"train-3", placement.Nodes[0].Node().Name}})
			score, status = p.ScorePlacement(context.Background(), nil, pg, next)
			if want := int64(len(tc.placement)) + 1; !status.IsSuccess() || score != want {
				t.Errorf("scored again with one other member: %d, %v; want %d", score, status, want)
			}
		})
	}
}
