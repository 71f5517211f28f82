package wasmplugin

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// The shared table gives kube-scheduler the events a component registers.
func TestEventsTableGivesTheRegisteredEvents(t *testing.T) {
	type event struct {
		resource fwk.EventResource
		action   fwk.ActionType
		hinted   bool
	}
	flatten := func(events []fwk.ClusterEventWithHint) []event {
		var out []event
		for _, e := range events {
			out = append(out, event{e.Event.Resource, e.Event.ActionType, e.QueueingHintFn != nil})
		}
		return out
	}
	wantNode := []event{{fwk.Pod, fwk.All, false}, {fwk.Node, fwk.All, false}, {fwk.PodGroup, fwk.All, false}}
	wantGate := []event{{fwk.UnscheduledPod, fwk.Add, true}, {fwk.AssignedPod, fwk.Add, true}, {fwk.PodGroup, fwk.Add | fwk.Update, true}}
	if got := flatten(componentEvents.nodeLevel); !equalEvents(got, wantNode) {
		t.Errorf("nodeLevel = %v, want %v", got, wantNode)
	}
	if got := flatten(componentEvents.gateOnly); !equalEvents(got, wantGate) {
		t.Errorf("gateOnly = %v, want %v", got, wantGate)
	}
	if got := strings.Join(componentEvents.nodeLevelPoints, ","); got != "filter,score,placement-generate,placement-score" {
		t.Errorf("nodeLevelPoints = %s", got)
	}
}

func equalEvents[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A row the table cannot map is named.
func TestEventsTableNamesWhatItCannotMap(t *testing.T) {
	for _, c := range []struct{ table, want string }{
		{`{"nodeLevel": [{"resource": "Pod", "actions": ["Bump"]}]}`, `nodeLevel: row 0: unknown action "Bump"`},
		{`{"gateOnly": [{"resource": "Pod", "actions": ["Add"], "hint": "never"}]}`, `gateOnly: row 0: unknown hint "never"`},
		{`{"nodeLevel": [{"actions": ["Add"]}]}`, `nodeLevel: row 0: a resource and an action are required`},
		{`{"nodeLevel": [{"resource": "Lease", "actions": ["Add"]}]}`, `nodeLevel: row 0: unknown resource "Lease"`},
	} {
		if _, err := readEvents([]byte(c.table)); err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.table, err, c.want)
		}
	}
}

// The gate-only hints queue a held pod for its own group's pods and
// PodGroup only; a pod of no group is never queued by them.
func TestGateOnlyHintsQueueForTheOwnGroupOnly(t *testing.T) {
	member := func(name, group string) *v1.Pod {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name}}
		if group != "" {
			pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
		}
		return pod
	}
	logger := klog.Background()
	held := member("a-0", "a")
	cases := []struct {
		name string
		hint fwk.QueueingHintFn
		pod  *v1.Pod
		obj  any
		want fwk.QueueingHint
	}{
		{"same group's pod", sameGroupPod, held, member("a-1", "a"), fwk.Queue},
		{"other group's pod", sameGroupPod, held, member("b-0", "b"), fwk.QueueSkip},
		{"lone pod held", sameGroupPod, member("solo", ""), member("x", ""), fwk.QueueSkip},
		{"own PodGroup", ownPodGroup, held, &metav1.ObjectMeta{Namespace: "ml", Name: "a"}, fwk.Queue},
		{"other PodGroup", ownPodGroup, held, &metav1.ObjectMeta{Namespace: "ml", Name: "b"}, fwk.QueueSkip},
	}
	for _, c := range cases {
		if got, err := c.hint(logger, c.pod, nil, c.obj); err != nil || got != c.want {
			t.Errorf("%s: %v (%v), want %v", c.name, got, err, c.want)
		}
	}
}
