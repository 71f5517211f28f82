package wasm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hostilePath is the Hostile fixture component (testdata/plugins/hostile,
// built by the host's build script into the Cargo target directory).
func hostilePath(t *testing.T) string {
	t.Helper()
	target := os.Getenv("CARGO_TARGET_DIR")
	if target == "" {
		target = filepath.Join("..", "..", "target")
	}
	path := filepath.Join(target, "wasm-plugins", "wasm32-wasip2", "plugin", "hostile.wasm")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the hostile fixture is built by `cargo build -p wasched`: %v", err)
	}
	return path
}

// Objects as Go's encoding/json writes the API types (no apiVersion/kind).
func node(name string, gpus int) map[string]any {
	rack := "r1"
	if name >= "n2" {
		rack = "r2"
	}
	return map[string]any{
		"metadata": map[string]any{"name": name, "uid": "uid-" + name,
			"labels": map[string]any{"kubernetes.io/hostname": name, "rack": rack}},
		"spec": map[string]any{},
		"status": map[string]any{"allocatable": map[string]any{
			"cpu": "8", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": fmt.Sprint(gpus)}},
	}
}

func pod(name, group string, gpus int) map[string]any {
	spec := map[string]any{"containers": []any{map[string]any{
		"name": "main", "image": "busybox",
		"resources": map[string]any{
			"requests": map[string]any{"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": fmt.Sprint(gpus)},
			"limits":   map[string]any{"nvidia.com/gpu": fmt.Sprint(gpus)}}}}}
	if group != "" {
		spec["schedulingGroup"] = map[string]any{"podGroupName": group}
	}
	return map[string]any{
		"metadata": map[string]any{"name": name, "namespace": "team", "uid": "uid-" + name,
			"creationTimestamp": "2026-11-20T10:00:00Z"},
		"spec": spec,
	}
}

func gang(name string, min int) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"name": name, "namespace": "team", "uid": "uid-" + name,
			"creationTimestamp": "2026-11-20T10:00:00Z"},
		"spec": map[string]any{"schedulingPolicy": map[string]any{"gang": map[string]any{"minCount": min}}},
	}
}

// setup starts a runtime and a view with nodes n1..n<nodes>.
func setup(t testing.TB, nodes int) (*Runtime, *View) {
	t.Helper()
	r, err := NewRuntime()
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewView("")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= nodes; i++ {
		if err := v.Upsert("Node", node(fmt.Sprintf("n%d", i), 4)); err != nil {
			t.Fatal(err)
		}
	}
	return r, v
}

func mustLoad(t testing.TB, r *Runtime, spec PluginSpec) *Plugin {
	t.Helper()
	p, err := r.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func call(t *testing.T, p *Plugin, v *View, req Request) Response {
	t.Helper()
	var resp Response
	if err := p.Call(v, req, &resp); err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestGangHeldUntilMembersArriveThenPermitted(t *testing.T) {
	before := LiveObjects()
	r, v := setup(t, 2)
	p := mustLoad(t, r, PluginSpec{Name: "WaschedGangScheduling"})
	if !p.Info.Implements("pre-enqueue") || !p.Info.Implements("permit") || p.Info.Implements("filter") {
		t.Fatalf("points: %v", p.Info.Points)
	}
	if err := v.Upsert("PodGroup", gang("trainer", 2)); err != nil {
		t.Fatal(err)
	}
	unit := &Unit{PodGroup: "team/trainer"}
	tests := []struct {
		name string
		add  string
		req  Request
		want string
	}{
		{"one member of two", "trainer-0", Request{Point: "pre-enqueue", Unit: unit}, UnschedulableAndUnresolvable},
		{"both members", "trainer-1", Request{Point: "pre-enqueue", Unit: unit}, Success},
		{"one placed, one to go", "", Request{Point: "permit", Unit: unit, Progress: &Progress{1, 1}}, Wait},
		{"both placed", "", Request{Point: "permit", Unit: unit, Progress: &Progress{2, 0}}, Success},
		{"minCount cannot be satisfied", "", Request{Point: "permit", Unit: unit, Progress: &Progress{0, 1}}, Unschedulable},
	}
	for _, tc := range tests {
		if tc.add != "" {
			if err := v.Upsert("Pod", pod(tc.add, "trainer", 0)); err != nil {
				t.Fatal(err)
			}
		}
		if got := call(t, p, v, tc.req); got.Status.Code != tc.want {
			t.Errorf("%s: got %+v, want %s", tc.name, got.Status, tc.want)
		}
	}
	p.Close()
	v.Close()
	r.Close()
	if err := p.Call(v, Request{Point: "pre-enqueue", Unit: unit}, &Response{}); !errors.Is(err, ErrClosed) {
		t.Errorf("a call after Close: %v", err)
	}
	p.Close() // twice is harmless
	if after := LiveObjects(); after != before {
		t.Errorf("live objects after teardown: %d, before: %d", after, before)
	}
}

func TestAssumedPodsOnANodeChangeItsScore(t *testing.T) {
	r, v := setup(t, 3)
	defer r.Close()
	defer v.Close()
	p := mustLoad(t, r, PluginSpec{Name: "WaschedGpuBinPacking"})
	defer p.Close()
	if err := v.Upsert("Pod", pod("solo", "", 2)); err != nil {
		t.Fatal(err)
	}
	score := func() []int64 {
		resp := call(t, p, v, Request{Point: "score", Pod: "team/solo", Nodes: []string{"n1", "n2", "n3"}})
		if resp.Status.Code != Success {
			t.Fatalf("score: %+v", resp)
		}
		return resp.Scores
	}
	even := score()
	assumed := pod("busy", "", 2)
	assumed["spec"].(map[string]any)["nodeName"] = "n2"
	if err := v.SetNode("n2", NodeState{Pods: []any{assumed}}); err != nil {
		t.Fatal(err)
	}
	packed := score()
	if !(packed[1] > packed[0] && packed[0] == packed[2]) {
		t.Errorf("with a pod assumed on n2: %v (before: %v)", packed, even)
	}
	if err := v.SetNode("n2", NodeState{}); err != nil {
		t.Fatal(err)
	}
	if got := score(); fmt.Sprint(got) != fmt.Sprint(even) {
		t.Errorf("after the pod left n2: %v, want %v", got, even)
	}
}

func TestBadInputIsOneLineNamingIt(t *testing.T) {
	r, v := setup(t, 1)
	defer r.Close()
	defer v.Close()
	dir := t.TempDir()
	notWasm := filepath.Join(dir, "plugin.wasm")
	if err := os.WriteFile(notWasm, []byte("not a component"), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := pod("broken", "", 0)
	broken["spec"].(map[string]any)["containers"] = 7
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"not a component", loadErr(r, PluginSpec{Name: "X", Component: notWasm}), notWasm + ":"},
		{"no such bundled plugin", loadErr(r, PluginSpec{Name: "Nope"}), "no bundled component is called Nope"},
		{"bad config", loadErr(r, PluginSpec{Name: "WaschedGangScheduling", Config: []byte(`{"fuel": "lots"}`)}), "pluginConfig[WaschedGangScheduling].args.fuel"},
		{"malformed pod", v.Upsert("Pod", broken), "Pod team/broken: field spec.containers"},
		{"unknown kind", v.Upsert("Secret", map[string]any{}), `unknown kind "Secret"`},
	}
	for _, tc := range tests {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) || strings.Contains(tc.err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line containing %q", tc.name, tc.err, tc.want)
		}
	}
}

func loadErr(r *Runtime, spec PluginSpec) error {
	p, err := r.Load(spec)
	if err == nil {
		p.Close()
		return errors.New("loaded")
	}
	return err
}

// TestConcurrentCallsAndChanges runs Filter and Score from many goroutines
// at once (as kube-scheduler's parallel workers do) while others change
// the view; under -race this proves no Go-side sharing, and the answers
// stay those of a quiet view.
func TestConcurrentCallsAndChanges(t *testing.T) {
	r, v := setup(t, 8)
	defer r.Close()
	defer v.Close()
	p := mustLoad(t, r, PluginSpec{Name: "WaschedGpuBinPacking", Config: []byte(`{"args": {"reserveForRequesters": true}}`)})
	defer p.Close()
	if err := v.Upsert("Pod", pod("cpu-only", "", 0)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var calls atomic.Int64
	errs := make(chan error, 64)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				var resp Response
				if err := p.Call(v, Request{Point: "filter", Pod: "team/cpu-only"}, &resp); err != nil {
					errs <- err
					return
				}
				rejected := 0
				for _, g := range resp.Rejections {
					rejected += len(g.Nodes)
				}
				if resp.Status.Code != Unschedulable || rejected != 8 {
					errs <- fmt.Errorf("worker %d: %+v", w, resp)
					return
				}
				calls.Add(1)
			}
		}(w)
	}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				name := fmt.Sprintf("churn-%d-%d", w, i)
				if err := v.Upsert("Pod", pod(name, "", 1)); err != nil {
					errs <- err
					return
				}
				if err := v.Delete("Pod", "team/"+name); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if calls.Load() != 16*20 {
		t.Errorf("calls answered: %d", calls.Load())
	}
}

// TestTrapsUnderLoadCoexistWithGoSignals traps components (wasmtime turns
// `unreachable` into a signal it handles) on many goroutines at once while
// other goroutines take Go's own signal-based panics (nil dereferences
// that Go turns into recoverable panics through its SIGSEGV handler) and
// the garbage collector runs: every trap is reported as the plugin's
// error, every Go panic is recovered, and the good pod keeps its answers.
func TestTrapsUnderLoadCoexistWithGoSignals(t *testing.T) {
	r, v := setup(t, 4)
	defer r.Close()
	defer v.Close()
	for _, g := range []string{"bad", "good"} {
		if err := v.Upsert("PodGroup", gang(g, 1)); err != nil {
			t.Fatal(err)
		}
		if err := v.Upsert("Pod", pod(g+"-0", g, 0)); err != nil {
			t.Fatal(err)
		}
	}
	hostile := hostilePath(t)
	plugins := map[string]*Plugin{}
	for _, misbehave := range []string{"panic", "recurse"} {
		plugins[misbehave] = mustLoad(t, r, PluginSpec{Name: "Hostile", Component: hostile,
			// The breaker stays closed, so that every call traps.
			Config: []byte(fmt.Sprintf(`{"circuitBreaker": {"failures": 0}, "args": {"point": "filter", "misbehave": %q}}`, misbehave))})
		defer plugins[misbehave].Close()
	}
	const workers, rounds = 8, 25
	var wg sync.WaitGroup
	var traps, answers, recovered atomic.Int64
	errs := make(chan error, 2*workers)
	for w := 0; w < workers; w++ {
		misbehave := []string{"panic", "recurse"}[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := plugins[misbehave]
			for i := 0; i < rounds; i++ {
				var bad, good Response
				if err := p.Call(v, Request{Point: "filter", Pod: "team/bad-0"}, &bad); err != nil {
					errs <- err
					return
				}
				if bad.Status.Code != Error || bad.Failure == nil || bad.Failure.Plugin != "Hostile" {
					errs <- fmt.Errorf("%s: %+v", misbehave, bad)
					return
				}
				traps.Add(1)
				if err := p.Call(v, Request{Point: "filter", Pod: "team/good-0"}, &good); err != nil {
					errs <- err
					return
				}
				if good.Status.Code != Success {
					errs <- fmt.Errorf("%s, good pod: %+v", misbehave, good)
					return
				}
				answers.Add(1)
			}
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds*4; i++ {
				func() {
					defer func() {
						if recover() != nil {
							recovered.Add(1)
						}
					}()
					var p *struct{ x int }
					p.x++ // SIGSEGV, turned by Go into a panic
				}()
				if i%10 == 0 {
					_ = make([]byte, 1<<20)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if traps.Load() != workers*rounds || answers.Load() != workers*rounds {
		t.Errorf("traps reported %d, good answers %d, want %d each", traps.Load(), answers.Load(), workers*rounds)
	}
	if recovered.Load() != workers*rounds*4 {
		t.Errorf("Go panics recovered: %d, want %d", recovered.Load(), workers*rounds*4)
	}
}

// TestTheBundledListComesFromTheLibrary: every component the library
// lists loads under its name and calls itself that, and the defaults are
// the library's (GPU bin-packing and taint toleration off).
func TestTheBundledListComesFromTheLibrary(t *testing.T) {
	r, _ := setup(t, 0)
	var off []string
	for _, b := range Bundled() {
		p := mustLoad(t, r, PluginSpec{Name: b.Name})
		if p.Info.Name != b.Name {
			t.Errorf("%s (crate %s) calls itself %s", b.Name, b.Crate, p.Info.Name)
		}
		p.Close()
		if !b.OnByDefault {
			off = append(off, b.Name)
		}
	}
	if got, want := strings.Join(off, ","), "WaschedGpuBinPacking,WaschedTaintToleration,WaschedTeamGpuIsolation"; got != want {
		t.Errorf("off by default: %s, want %s", got, want)
	}
}

// ringCounter is a view of nodes n1 and n2 and gang team/ring of two
// pending pods, with the Hostile fixture loaded to answer placement-score
// with the number of pods on the placement's nodes; config adds fields to
// its pluginConfig args.
func ringCounter(t *testing.T, config string) (*Runtime, *View, *Plugin) {
	t.Helper()
	r, v := setup(t, 2)
	if err := v.Upsert("PodGroup", gang("ring", 2)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := v.Upsert("Pod", pod(fmt.Sprintf("ring-%d", i), "ring", 0)); err != nil {
			t.Fatal(err)
		}
	}
	p := mustLoad(t, r, PluginSpec{Name: "Hostile", Component: hostilePath(t),
		Config: []byte(`{` + config + `, "args": {"point": "placement-score", "misbehave": "count"}}`)})
	return r, v, p
}

// TestAPanicInsideACallLeavesNothingBehind injects a panic inside the
// library in the middle of a call (the pool's instance taken, the call's
// assignments assumed in its snapshot, the snapshot lent to the component),
// more times than the pool has instances, then makes 1,000 calls from 50
// goroutines: every call answers and sees only its own assignments, no
// pod stays assumed, no pool slot leaks, and the live-object counters
// return to where they were once everything is closed.
func TestAPanicInsideACallLeavesNothingBehind(t *testing.T) {
	before := LiveObjects()
	r, v, p := ringCounter(t, `"circuitBreaker": {"failures": 0}`)
	req := Request{Point: "placement-score", Unit: &Unit{PodGroup: "team/ring"},
		Placement: &Placement{Name: "all"}, Assignments: [][2]string{{"team/ring-0", "n1"}, {"team/ring-1", "n2"}}}
	counts, err := v.Counts()
	if err != nil || counts.Placed != 0 || counts.Pods != 2 {
		t.Fatalf("view before: %+v, %v", counts, err)
	}
	for i := 0; i <= 16; i++ {
		InjectPanicForTest()
		var resp Response
		err := p.Call(v, req, &resp)
		if err == nil || !strings.Contains(err.Error(), "injected fault") {
			t.Fatalf("panic %d: want an error naming the injected fault, got %v (%+v)", i, err, resp)
		}
		if after, err := v.Counts(); err != nil || after != counts {
			t.Fatalf("panic %d: view after: %+v (before %+v), %v", i, after, counts, err)
		}
		if alive, idle, err := p.Instances(); err != nil || alive != idle {
			t.Fatalf("panic %d: instances alive %d, idle %d: %v", i, alive, idle, err)
		}
	}
	var wg sync.WaitGroup
	var answered atomic.Int64
	errs := make(chan error, 50)
	for w := 0; w < 50; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				var resp Response
				if err := p.Call(v, req, &resp); err != nil {
					errs <- err
					return
				}
				if resp.Status.Code != Success || resp.Score == nil || *resp.Score != 2 {
					errs <- fmt.Errorf("want score 2 (the two assigned pods), got %+v", resp)
					return
				}
				answered.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if answered.Load() != 1000 {
		t.Fatalf("answered %d calls", answered.Load())
	}
	if after, err := v.Counts(); err != nil || after != counts {
		t.Fatalf("view after the calls: %+v (before %+v), %v", after, counts, err)
	}
	if alive, idle, err := p.Instances(); err != nil || alive != idle {
		t.Fatalf("instances alive %d, idle %d: %v", alive, idle, err)
	}
	p.Close()
	v.Close()
	r.Close()
	if LiveObjects() != before || LiveBytes() != 0 {
		t.Fatalf("live objects %d (before %d), bytes %d", LiveObjects(), before, LiveBytes())
	}
}

// A call in flight holds back neither the informers' updates of the view
// nor other calls of the same component: each call works on its own copy
// of the view's snapshot, outside the view's lock.
func TestACallInFlightHoldsBackNeitherUpdatesNorOtherCalls(t *testing.T) {
	before := LiveObjects()
	r, v, p := ringCounter(t, `"timeout": "60s"`)
	score := func(assignments [][2]string) Request {
		return Request{Point: "placement-score", Unit: &Unit{PodGroup: "team/ring"},
			Placement: &Placement{Name: "all"}, Assignments: assignments}
	}

	// Call A stops inside its component's run, its two pods assumed;
	// however the test ends, no later call stays held.
	t.Cleanup(ReleaseHeldForTest)
	HoldNextHostCallForTest()
	type answer struct {
		resp Response
		err  error
	}
	held := make(chan answer, 1)
	go func() {
		var resp Response
		err := p.Call(v, score([][2]string{{"team/ring-0", "n1"}, {"team/ring-1", "n2"}}), &resp)
		held <- answer{resp, err}
	}()
	if !WaitHeldForTest(time.Minute) {
		t.Fatal("call A never reached a host call")
	}

	// Meanwhile the informers add a pod bound to n1 and a node, and call B
	// answers on the view as it is now.
	type during struct {
		b           Response
		counts      ViewCounts
		alive, idle int
		err         error
	}
	done := make(chan during, 1)
	go func() {
		var d during
		bound := pod("other", "", 0)
		bound["spec"].(map[string]any)["nodeName"] = "n1"
		bound["status"] = map[string]any{"phase": "Running"}
		if d.err = v.Upsert("Pod", bound); d.err == nil {
			d.err = v.Upsert("Node", node("n3", 4))
		}
		if d.err == nil {
			d.err = p.Call(v, score(nil), &d.b)
		}
		if d.err == nil {
			d.counts, d.err = v.Counts()
		}
		if d.err == nil {
			d.alive, d.idle, d.err = p.Instances()
		}
		done <- d
	}()
	var d during
	select {
	case d = <-done:
		ReleaseHeldForTest()
	case <-time.After(2 * time.Minute):
		ReleaseHeldForTest()
		t.Fatal("an update or another call waited for the call in flight")
	}
	if d.err != nil {
		t.Fatal(d.err)
	}
	if d.b.Status.Code != Success || d.b.Score == nil || *d.b.Score != 1 {
		t.Fatalf("call B: want score 1 (the pod added, none of A's), got %+v", d.b)
	}
	if d.counts.Nodes != 3 || d.alive != 2 || d.idle != 1 {
		t.Fatalf("during A: view %+v, instances alive %d idle %d (want 3 nodes, 2 alive, 1 idle)", d.counts, d.alive, d.idle)
	}
	a := <-held
	if a.err != nil {
		t.Fatal(a.err)
	}
	if a.resp.Status.Code != Success || a.resp.Score == nil || *a.resp.Score != 2 {
		t.Fatalf("call A: want score 2 (its own two pods, as the view was when it started), got %+v", a.resp)
	}
	if after, err := v.Counts(); err != nil || after.Placed != 1 {
		t.Fatalf("view after: %+v, %v (want only the bound pod placed)", after, err)
	}
	p.Close()
	v.Close()
	r.Close()
	if LiveObjects() != before || LiveBytes() != 0 {
		t.Fatalf("live objects %d (before %d), bytes %d", LiveObjects(), before, LiveBytes())
	}
}
