package wasmplugin

import (
	"context"
	"fmt"

	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"example.invalid/wasched/kube/wasm"
)

// unitOf names a pod group cycle's group as the contract's unit.
func unitOf(pg fwk.PodGroupInfo) *wasm.Unit {
	key := pg.GetNamespace() + "/" + pg.GetName()
	if pg.GetCompositePodGroup() != nil {
		return &wasm.Unit{CompositePodGroup: key}
	}
	return &wasm.Unit{PodGroup: key}
}

// GeneratePlacements asks placement-generate for candidate placements
// within the parent placement. They come back by node name and are handed
// to kube-scheduler as the parent's own NodeInfos (it requires the
// snapshot's pointers); a Skip keeps the parent, as a profile without a
// generator does.
func (p *Plugin) GeneratePlacements(_ context.Context, _ fwk.PodGroupCycleState, pg fwk.PodGroupInfo, parent *fwk.Placement) (*fwk.GeneratePlacementsResult, *fwk.Status) {
	keep := &fwk.GeneratePlacementsResult{Placements: []*fwk.Placement{parent}}
	if !p.comp.Info.Implements("placement-generate") || len(parent.Nodes) == 0 {
		return keep, nil
	}
	if err := p.feed.syncNodes(parent.Nodes, false); err != nil {
		return nil, fwk.AsStatus(err).WithPlugin(p.name)
	}
	p.feed.ensureUnit(pg)
	byName := make(map[string]fwk.NodeInfo, len(parent.Nodes))
	names := make([]string, 0, len(parent.Nodes))
	for _, info := range parent.Nodes {
		if node := info.Node(); node != nil {
			byName[node.Name] = info
			names = append(names, node.Name)
		}
	}
	name := placementName(parent)
	request := &wasm.Placement{Name: name, Nodes: names}
	if p.feed.holdsOnly(names) {
		request.Nodes = nil // every node of the view: not resolved name by name
	}
	resp, st := p.ask(wasm.Request{Point: "placement-generate", Unit: unitOf(pg), Parent: request})
	if st != nil {
		return nil, st
	}
	switch resp.Status.Code {
	case wasm.Skip:
		return keep, nil
	case wasm.Success:
	default:
		return nil, p.status(resp.Status)
	}
	result := &fwk.GeneratePlacementsResult{}
	for _, placement := range resp.Placements {
		nodes := make([]fwk.NodeInfo, 0, len(placement.Nodes))
		for _, n := range placement.Nodes {
			info, ok := byName[n]
			if !ok {
				return nil, fwk.NewStatus(fwk.Error, fmt.Sprintf("%s: placement %s names node %s outside its parent", p.name, placement.Name, n)).WithPlugin(p.name)
			}
			nodes = append(nodes, info)
		}
		result.Placements = append(result.Placements, &fwk.Placement{Name: placement.Name, Nodes: nodes})
	}
	klog.V(4).InfoS("wasched placements", "plugin", p.name, "unit", pg.GetKey(), "parent", names, "placements", resp.Placements)
	return result, nil
}

// ScorePlacement asks placement-score about a feasible placement, with
// the pods kube-scheduler assigned in it (the library assumes them for
// the call: kube-scheduler has reverted them by the time it scores, the
// contract scores with them in place). The score, 0–100 (checked by the
// library), is kube-scheduler's; it weighs and adds the plugins' scores.
// Skip (failurePolicy Ignore) scores 0.
func (p *Plugin) ScorePlacement(_ context.Context, _ fwk.PlacementCycleState, pg fwk.PodGroupInfo, placement *fwk.PodGroupAssignments) (int64, *fwk.Status) {
	if !p.comp.Info.Implements("placement-score") || placement == nil || placement.Placement == nil {
		return 0, nil
	}
	if err := p.feed.syncNodes(placement.Nodes, false); err != nil {
		return 0, fwk.AsStatus(err).WithPlugin(p.name)
	}
	p.feed.ensureUnit(pg)
	names := make([]string, 0, len(placement.Nodes))
	for _, info := range placement.Nodes {
		if node := info.Node(); node != nil {
			names = append(names, node.Name)
		}
	}
	assignments := make([][2]string, 0, len(placement.ProposedAssignments))
	for _, a := range placement.ProposedAssignments {
		if a.GetNodeName() != "" {
			p.feed.ensurePod(a.GetPod())
			assignments = append(assignments, [2]string{podKey(a.GetPod()), a.GetNodeName()})
		}
	}
	resp, st := p.ask(wasm.Request{Point: "placement-score", Unit: unitOf(pg),
		Placement: &wasm.Placement{Name: placementName(placement.Placement), Nodes: names}, Assignments: assignments})
	if st != nil {
		return 0, st
	}
	switch resp.Status.Code {
	case wasm.Success:
		if resp.Score == nil {
			return 0, fwk.NewStatus(fwk.Error, fmt.Sprintf("%s: placement-score answered no score", p.name)).WithPlugin(p.name)
		}
		return *resp.Score, nil
	case wasm.Skip:
		return 0, nil
	}
	return 0, p.status(resp.Status)
}

// PlacementScoreExtensions: none; a component's placement scores are on
// kube-scheduler's 0–100 scale already.
func (p *Plugin) PlacementScoreExtensions() fwk.PlacementScoreExtensions { return nil }

// placementName is a placement's name for the component: kube-scheduler
// leaves the whole cluster's unnamed.
func placementName(p *fwk.Placement) string {
	if p.Name == "" {
		return "cluster"
	}
	return p.Name
}
