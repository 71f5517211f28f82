package wasmplugin

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"

	"example.invalid/wasched/kube/wasm"
)

// benchCluster is n GPU nodes, node i running a pod that uses i%5 of its
// 8 GPUs, and a pending pod asking one GPU.
func benchCluster(n int) ([]*v1.Node, [][]*v1.Pod, *v1.Pod) {
	gpu := v1.ResourceName("nvidia.com/gpu")
	podAsking := func(name, node string, gpus int64) *v1.Pod {
		q := *resource.NewQuantity(gpus, resource.DecimalSI)
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench", UID: types.UID("uid-" + name)},
			Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), gpu: q},
				Limits:   v1.ResourceList{gpu: q}}}}},
		}
	}
	nodes := make([]*v1.Node, n)
	pods := make([][]*v1.Pod, n)
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		allocatable := v1.ResourceList{v1.ResourceCPU: resource.MustParse("64"), v1.ResourceMemory: resource.MustParse("512Gi"),
			v1.ResourcePods: resource.MustParse("110"), gpu: resource.MustParse("8")}
		nodes[i] = &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
			Status: v1.NodeStatus{Allocatable: allocatable, Capacity: allocatable}}
		if used := int64(i % 5); used > 0 {
			pods[i] = []*v1.Pod{podAsking("run-"+name, name, used)}
		}
	}
	return nodes, pods, podAsking("pending", "", 1)
}

// BenchmarkScoreGPUBinPacking prices one pod's scoring of 5,000 nodes:
// the in-tree NodeResourcesFit with MostAllocated over nvidia.com/gpu
// (PreScore, then Score per node, as kube-scheduler calls it) against the
// bundled WaschedGpuBinPacking component through cgo (one call for every
// node, the scores decoded in Go), on the same cluster and pod.
func BenchmarkScoreGPUBinPacking(b *testing.B) {
	nodes, pods, pending := benchCluster(5000)
	ctx := context.Background()
	b.Run("in-tree/NodeResourcesFit", func(b *testing.B) {
		args := &config.NodeResourcesFitArgs{ScoringStrategy: &config.ScoringStrategy{
			Type:      config.MostAllocated,
			Resources: []config.ResourceSpec{{Name: "nvidia.com/gpu", Weight: 1}},
		}}
		plugin, err := noderesources.NewFit(ctx, args, nil, feature.Features{})
		if err != nil {
			b.Fatal(err)
		}
		fit := plugin.(*noderesources.Fit)
		infos := make([]fwk.NodeInfo, len(nodes))
		for i, node := range nodes {
			info := framework.NewNodeInfo(pods[i]...)
			info.SetNode(node)
			infos[i] = info
		}
		b.ResetTimer()
		for b.Loop() {
			state := framework.NewCycleState()
			if st := fit.PreScore(ctx, state, pending, infos); !st.IsSuccess() {
				b.Fatal(st)
			}
			for _, info := range infos {
				if _, st := fit.Score(ctx, state, pending, info); !st.IsSuccess() {
					b.Fatal(st)
				}
			}
		}
	})
	b.Run("component/WaschedGpuBinPacking", func(b *testing.B) {
		rt, err := sharedRuntime()
		if err != nil {
			b.Fatal(err)
		}
		p, err := rt.Load(wasm.PluginSpec{Name: "WaschedGpuBinPacking"})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		view, err := wasm.NewView("")
		if err != nil {
			b.Fatal(err)
		}
		defer view.Close()
		for i, node := range nodes {
			state := wasm.NodeState{Node: node}
			for _, pod := range pods[i] {
				state.Pods = append(state.Pods, pod)
			}
			if err := view.SetNode(node.Name, state); err != nil {
				b.Fatal(err)
			}
		}
		if err := view.Upsert("Pod", pending); err != nil {
			b.Fatal(err)
		}
		request := wasm.Request{Point: "score", Pod: "bench/pending"}
		b.ResetTimer()
		for b.Loop() {
			var resp wasm.Response
			if err := p.Call(view, request, &resp); err != nil {
				b.Fatal(err)
			}
			if resp.Status.Code != wasm.Success || len(resp.Scores) != len(nodes) {
				b.Fatalf("%+v", resp.Status)
			}
		}
	})
}
