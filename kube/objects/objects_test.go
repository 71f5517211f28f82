package objects

import (
	"strings"
	"testing"
)

func TestParseListsAndArrays(t *testing.T) {
	for _, text := range []string{
		`{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}]}`,
		`[{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}]`,
	} {
		items, err := Parse([]byte(text))
		if err != nil || len(items) != 1 || items[0].GetName() != "a" {
			t.Errorf("Parse(%s) = %v, %v", text, items, err)
		}
	}
	for text, want := range map[string]string{
		`{"items": [{"metadata": {"name": "a"}}]}`: "item 1: apiVersion and kind are required",
		`not json`: "not a JSON List or array of objects",
	} {
		if _, err := Parse([]byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) error = %v, want %q", text, err, want)
		}
	}
}

func TestStagesOrderCreation(t *testing.T) {
	items, err := Parse([]byte(`[
		{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pending", "namespace": "a"}, "spec": {}},
		{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "running", "namespace": "a"}, "spec": {"nodeName": "n"}},
		{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "g", "namespace": "a"}},
		{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}},
		{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, item := range items {
		order = append(order, item.GetKind()+"/"+item.GetName())
	}
	stages := map[string]int{}
	for _, item := range items {
		stages[item.GetKind()+"/"+item.GetName()] = stage(item)
	}
	for _, pair := range [][2]string{
		{"Namespace/a", "Node/n"}, {"Node/n", "PodGroup/g"}, {"PodGroup/g", "Pod/running"}, {"Pod/running", "Pod/pending"},
	} {
		if stages[pair[0]] >= stages[pair[1]] {
			t.Errorf("%s (stage %d) is not created before %s (stage %d)", pair[0], stages[pair[0]], pair[1], stages[pair[1]])
		}
	}
	rest, pending := Pending(items)
	if len(pending) != 1 || pending[0].GetName() != "pending" || len(rest) != 4 {
		t.Errorf("Pending split %v into %d and %d", order, len(rest), len(pending))
	}
}
