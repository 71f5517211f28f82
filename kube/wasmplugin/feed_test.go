package wasmplugin

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"example.invalid/wasched/kube/wasm"
)

// TestTheFeedKeepsTheNewestVersionAndNoDeletedObject checks the view's
// intake from its two sources (the informers and kube-scheduler's own
// copies): an older copy does not replace a newer one, and an object the
// informer deleted is not brought back by a copy kube-scheduler still
// holds.
func TestTheFeedKeepsTheNewestVersionAndNoDeletedObject(t *testing.T) {
	view, err := wasm.NewView("default-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	defer view.Close()
	f := newFeed(view)
	pod := func(rv string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-p", ResourceVersion: rv},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}
	}
	f.upsert("Pod", pod("7"))
	f.ensurePod(pod("5"))
	if got := f.sent["uid-p"]; got != "7" {
		t.Errorf("after an older copy the view holds version %q, want 7", got)
	}
	f.ensurePod(pod("8"))
	if got := f.sent["uid-p"]; got != "8" {
		t.Errorf("after a newer copy the view holds version %q, want 8", got)
	}
	f.delete("Pod", pod("8"))
	f.ensurePod(pod("8"))
	if _, ok := f.sent["uid-p"]; ok {
		t.Error("a deleted pod came back from kube-scheduler's copy")
	}
	for _, tc := range []struct {
		a, b string
		want bool
	}{{"10", "9", true}, {"9", "10", false}, {"9", "9", false}, {"", "9", true}, {"x", "y", true}, {"x", "x", false}} {
		if got := newer(tc.a, tc.b); got != tc.want {
			t.Errorf("newer(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

// TestANodeIsSentAgainWithOnlyWhatChanged checks what the feed sends of a
// node whose NodeInfo changed: the Node object only when its version
// moved, each pod listed last time unchanged by key, the rest whole (a
// pod without a resourceVersion always whole), a pod the node dropped
// and lists again unchanged by key too; and that a view which no longer
// lists what the feed sent it last gets the node whole at once.
func TestANodeIsSentAgainWithOnlyWhatChanged(t *testing.T) {
	view, err := wasm.NewView("default-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	defer view.Close()
	f := newFeed(view)
	node := func(rv string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-n1", ResourceVersion: rv},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse("10")}}}
	}
	pod := func(name, rv string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), ResourceVersion: rv},
			Spec: v1.PodSpec{NodeName: "n1", Containers: []v1.Container{{Name: "c"}}}}
	}
	info := func(n *v1.Node, pods ...*v1.Pod) fwk.NodeInfo {
		i := framework.NewNodeInfo(pods...)
		i.SetNode(n)
		return i
	}
	sync := func(i fwk.NodeInfo, placed int) {
		t.Helper()
		if err := f.syncNodes([]fwk.NodeInfo{i}, false); err != nil {
			t.Fatal(err)
		}
		counts, err := view.Counts()
		if err != nil {
			t.Fatal(err)
		}
		if counts.Placed != placed {
			t.Errorf("the view places %d pod(s), want %d", counts.Placed, placed)
		}
	}
	sync(info(node("1"), pod("a", "1")), 1)

	state, _ := f.nodeState(node("1"), info(node("1"), pod("a", "1"), pod("b", "1"), pod("c", "")).GetPods(), f.listed["n1"])
	if state.Node != nil {
		t.Error("the Node object was sent again at the same version")
	}
	if want := []string{"ns/a"}; !reflect.DeepEqual(state.Kept, want) {
		t.Errorf("kept %v, want %v", state.Kept, want)
	}
	if len(state.Pods) != 2 {
		t.Errorf("sent %d pod(s) whole, want b and c", len(state.Pods))
	}
	state, _ = f.nodeState(node("2"), info(node("2"), pod("a", "2")).GetPods(), f.listed["n1"])
	if state.Node == nil || len(state.Kept) != 0 || len(state.Pods) != 1 {
		t.Errorf("after both changed: node sent %v, kept %v, %d whole; want the node, none kept, a whole",
			state.Node != nil, state.Kept, len(state.Pods))
	}

	sync(info(node("1"), pod("a", "1"), pod("b", "1")), 2)
	sync(info(node("1"), pod("b", "1")), 1)
	// Behind the feed's back the view's n1 lists nothing: the next change
	// names b as kept, the view refuses it, and the node goes whole.
	if err := view.SetNode("n1", wasm.NodeState{}); err != nil {
		t.Fatal(err)
	}
	sync(info(node("1"), pod("b", "1"), pod("d", "1")), 2)
	if f.listed["n1"] == nil {
		t.Fatal("after the node went whole the feed holds no record of it")
	}

	// A pod the model refuses (its PriorityClass is unknown) is listed
	// all the same: the record stands, and the pod goes by key next time.
	stray := pod("stray", "1")
	stray.Spec.PriorityClassName = "missing"
	sync(info(node("1"), pod("b", "1"), pod("d", "1"), stray), 2)
	if f.listed["n1"] == nil || f.listed["n1"].pods["ns/stray"] == "" {
		t.Fatal("a pod the model refused cost the node its record")
	}
	state, _ = f.nodeState(node("1"), info(node("1"), pod("b", "1"), pod("d", "1"), stray).GetPods(), f.listed["n1"])
	if want := []string{"ns/b", "ns/d", "ns/stray"}; !reflect.DeepEqual(state.Kept, want) {
		t.Errorf("kept %v, want %v", state.Kept, want)
	}

	// A pod a dry run takes off its node and puts back goes by key: the
	// view kept it as read when the node dropped it (the informer has it).
	f.ensurePod(pod("b", "1"))
	sync(info(node("1"), pod("d", "1"), stray), 1)
	if _, ok := f.left["ns/b"]; !ok {
		t.Fatal("the feed has no record of the pod the node dropped")
	}
	state, _ = f.nodeState(node("1"), info(node("1"), pod("b", "1"), pod("d", "1"), stray).GetPods(), f.listed["n1"])
	if want := []string{"ns/b", "ns/d", "ns/stray"}; !reflect.DeepEqual(state.Kept, want) {
		t.Errorf("with b put back: kept %v, want %v", state.Kept, want)
	}
	if err := view.SetNode("n1", state); err != nil {
		t.Fatalf("the view does not hold the pod the node dropped: %v", err)
	}
	sync(info(node("1"), pod("b", "1"), pod("d", "1"), stray), 2)
	if _, ok := f.left["ns/b"]; ok {
		t.Error("the pod listed again is still recorded as dropped")
	}
	// Put back at another version, or after its deletion, it goes whole.
	sync(info(node("1"), pod("d", "1"), stray), 1)
	state, _ = f.nodeState(node("1"), info(node("1"), pod("b", "2"), pod("d", "1")).GetPods(), f.listed["n1"])
	if want := []string{"ns/d"}; !reflect.DeepEqual(state.Kept, want) {
		t.Errorf("with b put back changed: kept %v, want %v", state.Kept, want)
	}
	f.delete("Pod", pod("b", "1"))
	if _, ok := f.left["ns/b"]; ok {
		t.Error("a deleted pod is still recorded as dropped")
	}

	// A pod deleted while its node still lists it is not recorded when
	// the node drops it; nor does the view keep it.
	f.ensurePod(pod("e", "1"))
	sync(info(node("1"), pod("d", "1"), pod("e", "1"), stray), 2)
	f.delete("Pod", pod("e", "1"))
	sync(info(node("1"), pod("d", "1"), stray), 1)
	if _, ok := f.left["ns/e"]; ok {
		t.Error("a pod deleted before its node dropped it is recorded as dropped")
	}
	if err := view.SetNode("n1", wasm.NodeState{Kept: []string{"ns/d", "ns/e", "ns/stray"}}); err == nil {
		t.Error("the view kept a deleted pod its node dropped")
	}

	// A pod one node dropped does not come back by key on another.
	f.ensurePod(pod("f", "1"))
	sync(info(node("1"), pod("d", "1"), pod("f", "1"), stray), 2)
	sync(info(node("1"), pod("d", "1"), stray), 1)
	other := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2", UID: "uid-n2", ResourceVersion: "1"}}
	if err := view.SetNode("n2", wasm.NodeState{Node: other, Kept: []string{"ns/f"}}); err == nil {
		t.Error("a pod n1 dropped came back on n2 by key")
	}
}
