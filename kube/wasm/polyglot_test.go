package wasm

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// The team-isolation policy in its three languages: the bundled Rust
// component and the Python and JavaScript ones built by hack/polyglot.sh
// from plugins/python and plugins/javascript.
var otherLanguages = []struct{ name, path string }{
	{"TeamGpuIsolationPy", "../../plugins/python/team-gpu-isolation/build/team-gpu-isolation.wasm"},
	{"TeamGpuIsolationJs", "../../plugins/javascript/team-gpu-isolation/build/team-gpu-isolation.wasm"},
}

// teamPod is pod() in namespace team, bound to node unless it is empty.
func teamPod(team, name, node string, gpus int) map[string]any {
	p := pod(name, "", gpus)
	p["metadata"].(map[string]any)["namespace"] = team
	p["metadata"].(map[string]any)["uid"] = "uid-" + team + "-" + name
	if node != "" {
		p["spec"].(map[string]any)["nodeName"] = node
	}
	return p
}

// TestPluginsInOtherLanguagesScoreAsTheRustOneFromThePool loads the
// Python and JavaScript components by file, as kube-scheduler's
// configuration names them (`component` in their pluginConfig args), with
// a pool of two instances, and calls their score from many goroutines at
// once, as kube-scheduler's parallel Score workers do: every answer is the
// Rust component's, and no more instances than the pool's size are made.
func TestPluginsInOtherLanguagesScoreAsTheRustOneFromThePool(t *testing.T) {
	for _, l := range otherLanguages {
		if _, err := os.Stat(l.path); err != nil {
			t.Skipf("%s is built by hack/polyglot.sh (make test runs it first): %v", l.name, err)
		}
	}
	r, v := setup(t, 4)
	defer r.Close()
	defer v.Close()
	for _, p := range []map[string]any{
		teamPod("ml", "pretrain-0", "n1", 2),
		teamPod("vision", "detect-0", "n2", 3),
		teamPod("ml", "pretrain-1", "n3", 1),
		teamPod("vision", "detect-1", "n3", 1),
		teamPod("ml", "finetune", "", 1),
	} {
		if err := v.Upsert("Pod", p); err != nil {
			t.Fatal(err)
		}
	}
	req := Request{Point: "score", Pod: "ml/finetune", Nodes: []string{"n1", "n2", "n3", "n4"}}
	rust := mustLoad(t, r, PluginSpec{Name: "WaschedTeamGpuIsolation"})
	defer rust.Close()
	want := call(t, rust, v, req)
	// Other teams hold 0, 3, 1 and 0 of each node's 4 GPUs.
	if got := fmt.Sprint(want.Scores); got != "[100 25 75 100]" {
		t.Fatalf("the Rust component: %s", got)
	}
	for _, l := range otherLanguages {
		p := mustLoad(t, r, PluginSpec{Name: l.name, Component: l.path, Config: []byte(`{"poolSize": 2}`)})
		var wg sync.WaitGroup
		errs := make(chan error, 32)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 4; i++ {
					var resp Response
					if err := p.Call(v, req, &resp); err != nil {
						errs <- err
						return
					}
					if fmt.Sprint(resp.Scores) != fmt.Sprint(want.Scores) || resp.Status.Code != Success {
						errs <- fmt.Errorf("%s answered %+v, the Rust component %v", l.name, resp, want.Scores)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		alive, idle, err := p.Instances()
		if err != nil || alive > 2 || alive != idle {
			t.Errorf("%s: %d instances alive, %d idle (%v); the pool holds at most 2", l.name, alive, idle, err)
		}
		p.Close()
	}
}
