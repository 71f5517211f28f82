package engine

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// jobPod is a pod of Job default/job named name.
func jobPod(job, name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name,
		Labels: map[string]string{batchv1.JobNameLabel: job}}}
}

// nodeInfos are nodes named by the keys, holding the pods given.
func nodeInfos(pods map[string][]*v1.Pod, names ...string) []fwk.NodeInfo {
	var out []fwk.NodeInfo
	for _, name := range names {
		info := framework.NewNodeInfo(pods[name]...)
		info.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
		out = append(out, info)
	}
	return out
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
		pods   map[string][]*v1.Pod
		job    string
		chosen string
	}{
		{"nothing placed: b, listed twice", nil, "default/train", "b"},
		{"one on b: a and b tie, b listed first", map[string][]*v1.Pod{"b": {jobPod("train", "t-1")}}, "default/train", "b"},
		{"two on b: a", map[string][]*v1.Pod{"b": {jobPod("train", "t-1"), jobPod("train", "t-2")}}, "default/train", "a"},
		{"another Job's pods do not count", map[string][]*v1.Pod{"b": {jobPod("other", "o-1"), jobPod("other", "o-2")}}, "default/train", "b"},
		{"all made on the tied nodes: c is not tied", map[string][]*v1.Pod{
			"a": {jobPod("train", "t-1")}, "b": {jobPod("train", "t-2"), jobPod("train", "t-3")}}, "default/train", ""},
		{"a Job not listed", nil, "default/other", ""},
		{"no Job", nil, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := prefer.jobNode(c.job, tie, nodeInfos(c.pods, "a", "b", "c")); got != c.chosen {
				t.Errorf("chose %q, want %q", got, c.chosen)
			}
		})
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
