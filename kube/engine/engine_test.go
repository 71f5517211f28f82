package engine

import (
	"reflect"
	"strings"
	"testing"

	"example.invalid/wasched/kube/controlplane"
)

func TestTopClassAndTieFor(t *testing.T) {
	scores := []struct {
		name  string
		score int64
	}{{"c", 5}, {"a", 7}, {"b", 7}, {"d", 1}}
	tie := topClass(scores, func(s struct {
		name  string
		score int64
	}) int64 {
		return s.score
	}, func(s struct {
		name  string
		score int64
	}) string {
		return s.name
	})
	if want := (Tie{Score: 7, Choices: []string{"a", "b"}}); !reflect.DeepEqual(tie, want) {
		t.Errorf("topClass = %v, want %v", tie, want)
	}
	older := Tie{Score: 3, Choices: []string{"c"}}
	if got := tieFor([]Tie{older, tie}, "b"); !reflect.DeepEqual(got, tie) {
		t.Errorf("tieFor(b) = %v, want the latest scoring holding b", got)
	}
	if got := tieFor([]Tie{older, tie}, "c"); !reflect.DeepEqual(got, older) {
		t.Errorf("tieFor(c) = %v, want the scoring where c was best", got)
	}
	if got := tieFor(nil, "z"); !reflect.DeepEqual(got, Tie{Choices: []string{"z"}}) {
		t.Errorf("tieFor without scorings = %v, want the choice alone", got)
	}
}

func TestLoadConfig(t *testing.T) {
	if err := controlplane.SetFeatureGates(); err != nil {
		t.Fatal(err)
	}
	config, err := LoadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if config.PercentageOfNodesToScore == nil || *config.PercentageOfNodesToScore != 100 {
		t.Errorf("percentageOfNodesToScore = %v, want 100", config.PercentageOfNodesToScore)
	}
	if len(config.Profiles) != 1 || config.Profiles[0].SchedulerName != "default-scheduler" {
		t.Fatalf("profiles = %v", config.Profiles)
	}
	plugins := config.Profiles[0].Plugins
	has := func(set []string, name string) bool {
		for _, s := range set {
			if s == name {
				return true
			}
		}
		return false
	}
	var enabled []string
	for _, p := range plugins.MultiPoint.Enabled {
		enabled = append(enabled, p.Name)
	}
	for _, name := range []string{"GangScheduling", "TopologyPlacementGenerator", "PodGroupPodsCount", "DefaultPreemption", "NodeResourcesBalancedAllocation"} {
		if !has(enabled, name) {
			t.Errorf("the default profile with the workload gates lacks %s: %v", name, enabled)
		}
	}
	if _, err := LoadConfig([]byte("kind: Pod\napiVersion: v1\n")); err == nil || !strings.Contains(err.Error(), "not a KubeSchedulerConfiguration") {
		t.Errorf("a Pod as configuration: %v", err)
	}
	bad := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 101\n"
	if _, err := LoadConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "invalid KubeSchedulerConfiguration") {
		t.Errorf("percentageOfNodesToScore 101: %v", err)
	}
}
