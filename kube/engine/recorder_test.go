package engine

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// jobPod is a pod of Job default/job named name.
func jobPod(job, name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name,
		Labels: map[string]string{batchv1.JobNameLabel: job}}}
}

// A Job's pod takes, of the tied nodes, the one where the most of the
// Job's listed bindings are still to be made; the first listed on a tie;
// none when every listed binding on a tied node is made, or the pod is no
// listed Job's.
func TestJobNodeFollowsTheListedBindingsStillToBeMade(t *testing.T) {
	prefer := &Preferences{Jobs: map[string][]string{"default/train": {"b", "a", "b", "c"}}}
	tie := Tie{Choices: []string{"a", "b"}}
	cases := []struct {
		name   string
		made   map[string]int
		job    string
		chosen string
	}{
		{"nothing made: b, listed twice", nil, "default/train", "b"},
		{"one made on b: a and b tie, b listed first", map[string]int{"b": 1}, "default/train", "b"},
		{"two made on b: a", map[string]int{"b": 2}, "default/train", "a"},
		{"all made on the tied nodes: c is not tied", map[string]int{"a": 1, "b": 2}, "default/train", ""},
		{"a Job not listed", nil, "default/other", ""},
		{"no Job", nil, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := prefer.jobNode(c.job, tie, c.made); got != c.chosen {
				t.Errorf("chose %q, want %q", got, c.chosen)
			}
		})
	}
}

// The bindings made count each reserved pod of a Job once, until it is
// unreserved, whether or not it is still on its node; pods of no Job are
// not counted.
func TestBindingsCountReservationsKept(t *testing.T) {
	var b bindings
	pod := func(job, uid string) *v1.Pod {
		p := jobPod(job, uid)
		p.UID = types.UID(uid)
		return p
	}
	b.reserve(pod("train", "1"), "a")
	b.reserve(pod("train", "2"), "a")
	b.reserve(pod("train", "2"), "a") // the same pod again
	b.reserve(pod("train", "3"), "b")
	b.unreserve(pod("train", "3"))
	b.reserve(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "lone", UID: "4"}}, "b")
	if got := b.made("default/train"); len(got) != 1 || got["a"] != 2 {
		t.Errorf("made = %v, want a: 2", got)
	}
	if got := b.made("default/other"); len(got) != 0 {
		t.Errorf("made of another Job = %v", got)
	}
}

func TestJobOfIsTheJobNameLabel(t *testing.T) {
	if got := jobOf(jobPod("train", "train-x7k2q")); got != "default/train" {
		t.Errorf("jobOf = %q", got)
	}
	if got := jobOf(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "lone"}}); got != "" {
		t.Errorf("jobOf of a lone pod = %q", got)
	}
}
