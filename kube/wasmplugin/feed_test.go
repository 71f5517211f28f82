package wasmplugin

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
	f := &feed{view: view, nodes: map[string]uint64{}, known: map[string]bool{},
		sent: map[types.UID]string{}, gone: map[types.UID]time.Time{}}
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
