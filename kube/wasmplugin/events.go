package wasmplugin

import (
	_ "embed"
	"encoding/json"
	"fmt"

	fwk "k8s.io/kube-scheduler/framework"
)

// eventsTable is the one description of the cluster events a component
// registers, shared with wasched replay's queue.
//
//go:embed events.json
var eventsTable []byte

// registration is one row of events.json.
type registration struct {
	Resource string   `json:"resource"`
	Actions  []string `json:"actions"`
	Hint     string   `json:"hint,omitempty"`
}

// registrations is events.json.
type registrations struct {
	NodeLevelPoints []string       `json:"nodeLevelPoints"`
	NodeLevel       []registration `json:"nodeLevel"`
	GateOnly        []registration `json:"gateOnly"`
}

// actionTypes are the action names events.json may use.
var actionTypes = map[string]fwk.ActionType{
	"Add":    fwk.Add,
	"Update": fwk.Update,
	"Delete": fwk.Delete,
	"All":    fwk.All,
}

// knownResources are the resources events.json may name (the replay's
// reader knows the same).
var knownResources = map[fwk.EventResource]bool{
	fwk.Pod: true, fwk.AssignedPod: true, fwk.UnscheduledPod: true, fwk.TargetPod: true,
	fwk.Node: true, fwk.PodGroup: true,
}

// queueingHints are the hint names events.json may use.
var queueingHints = map[string]fwk.QueueingHintFn{
	"sameGroupPod": sameGroupPod,
	"ownPodGroup":  ownPodGroup,
}

// componentEvents is events.json read once: the events of a component
// with node-level points and of one that only gates groups.
var componentEvents = mustReadEvents(eventsTable)

// eventSets are the two lists EventsToRegister chooses from.
type eventSets struct {
	nodeLevelPoints []string
	nodeLevel       []fwk.ClusterEventWithHint
	gateOnly        []fwk.ClusterEventWithHint
}

// mustReadEvents reads the table; a malformed table is a build defect.
func mustReadEvents(data []byte) eventSets {
	sets, err := readEvents(data)
	if err != nil {
		panic(fmt.Sprintf("kube/wasmplugin/events.json: %v", err))
	}
	return sets
}

// readEvents reads the table, naming what it cannot map.
func readEvents(data []byte) (eventSets, error) {
	var table registrations
	if err := json.Unmarshal(data, &table); err != nil {
		return eventSets{}, err
	}
	nodeLevel, err := toEvents(table.NodeLevel)
	if err != nil {
		return eventSets{}, fmt.Errorf("nodeLevel: %w", err)
	}
	gateOnly, err := toEvents(table.GateOnly)
	if err != nil {
		return eventSets{}, fmt.Errorf("gateOnly: %w", err)
	}
	return eventSets{nodeLevelPoints: table.NodeLevelPoints, nodeLevel: nodeLevel, gateOnly: gateOnly}, nil
}

// toEvents maps rows to kube-scheduler's events with their hints.
func toEvents(rows []registration) ([]fwk.ClusterEventWithHint, error) {
	events := make([]fwk.ClusterEventWithHint, 0, len(rows))
	for i, row := range rows {
		var action fwk.ActionType
		for _, name := range row.Actions {
			a, ok := actionTypes[name]
			if !ok {
				return nil, fmt.Errorf("row %d: unknown action %q", i, name)
			}
			action |= a
		}
		if row.Resource == "" || action == fwk.None {
			return nil, fmt.Errorf("row %d: a resource and an action are required", i)
		}
		if !knownResources[fwk.EventResource(row.Resource)] {
			return nil, fmt.Errorf("row %d: unknown resource %q", i, row.Resource)
		}
		event := fwk.ClusterEventWithHint{Event: fwk.ClusterEvent{Resource: fwk.EventResource(row.Resource), ActionType: action}}
		if row.Hint != "" {
			hint, ok := queueingHints[row.Hint]
			if !ok {
				return nil, fmt.Errorf("row %d: unknown hint %q", i, row.Hint)
			}
			event.QueueingHintFn = hint
		}
		events = append(events, event)
	}
	return events, nil
}
