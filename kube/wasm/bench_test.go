package wasm

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkCallsInParallel prices calls of one component over one view
// from many goroutines, as kube-scheduler makes them (the queue's
// PreEnqueue beside the scheduling cycle, Filter on parallel workers in a
// preemption's dry run): the bundled WaschedGpuBinPacking filtering a
// 1-GPU pod over all 1,000 nodes of a view, from one goroutine (serial)
// and from GOMAXPROCS goroutines (parallel, each in its own instance of
// the pool), with the informers quiet and with a node's pods set again
// all the while. A call holds the view's lock only to take its snapshot,
// so parallel calls scale with the cores, and an update waits for no
// call.
//
//	make -C kube ffi && cd kube && go test -run XXX -bench CallsInParallel -benchtime 2s ./wasm/
func BenchmarkCallsInParallel(b *testing.B) {
	r, v := setup(b, 1000)
	defer r.Close()
	defer v.Close()
	if err := v.Upsert("Pod", pod("trainer", "", 1)); err != nil {
		b.Fatal(err)
	}
	p := mustLoad(b, r, PluginSpec{Name: "WaschedGpuBinPacking"})
	defer p.Close()
	req := Request{Point: "filter", Pod: "team/trainer"}
	ask := func(b *testing.B) {
		var resp Response
		if err := p.Call(v, req, &resp); err != nil {
			b.Error(err)
		}
		if resp.Status.Code != Success {
			b.Errorf("want Success, got %+v", resp)
		}
	}
	for _, updates := range []bool{false, true} {
		informers := "quiet"
		if updates {
			informers = "updating"
		}
		b.Run(fmt.Sprintf("serial/informers-%s", informers), func(b *testing.B) {
			defer updating(b, v, updates)()
			for i := 0; i < b.N; i++ {
				ask(b)
			}
		})
		b.Run(fmt.Sprintf("parallel/informers-%s", informers), func(b *testing.B) {
			defer updating(b, v, updates)()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					ask(b)
				}
			})
		})
	}
}

// updating sets node n1's pods again and again until the returned stop is
// called (nothing when on is false); stop reports how many updates were
// made per call of the benchmark.
func updating(b *testing.B, v *View, on bool) (stop func()) {
	if !on {
		return func() {}
	}
	var made atomic.Int64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		bound := pod("resident", "", 0)
		bound["spec"].(map[string]any)["nodeName"] = "n1"
		states := []NodeState{{Pods: []any{bound}}, {Pods: []any{}}}
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if err := v.SetNode("n1", states[i%2]); err != nil {
				b.Error(err)
				return
			}
			made.Add(1)
		}
	}()
	return func() {
		close(done)
		<-stopped
		b.ReportMetric(float64(made.Load())/float64(b.N), "updates/op")
	}
}
