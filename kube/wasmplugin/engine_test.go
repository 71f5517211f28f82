package wasmplugin

import (
	"strings"
	"testing"
)

// TestTheGeneratedProfileEnablesEveryExportInPlaceOfTheInTreeStages checks
// the profile `--engine kube-scheduler-wasm` runs with the bundled
// components: each enabled component at every point it exports, the
// in-tree workload stages it replaces disabled there.
func TestTheGeneratedProfileEnablesEveryExportInPlaceOfTheInTreeStages(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	profile := c.Plugins()
	for _, want := range []string{
		"    preEnqueue:\n      enabled: [{name: WaschedGangScheduling}]\n      disabled: [{name: GangScheduling}]\n",
		"    permit:\n      enabled: [{name: WaschedGangScheduling}]\n      disabled: [{name: GangScheduling}]\n",
		"    placementGenerate:\n      enabled: [{name: WaschedTopologyPlacement}]\n      disabled: [{name: TopologyPlacementGenerator}]\n",
		"    podGroupPostFilter:\n      enabled: [{name: WaschedWorkloadPreemption}]\n      disabled: [{name: DefaultPreemption}]\n",
	} {
		if !strings.Contains(profile, want) {
			t.Errorf("the profile lacks\n%s\nin\n%s", want, profile)
		}
	}
	// Off by default: bin-packing, the taint check and team isolation.
	if strings.Contains(profile, "WaschedGpuBinPacking") || strings.Contains(profile, "WaschedTaintToleration") || strings.Contains(profile, "WaschedTeamGpuIsolation") {
		t.Errorf("an off-by-default component is enabled:\n%s", profile)
	}
}
