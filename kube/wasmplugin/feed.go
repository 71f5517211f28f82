package wasmplugin

import (
	"fmt"
	"hash/fnv"
	"sync"

	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"

	"example.invalid/wasched/kube/wasm"
)

// feed keeps one profile's wasm.View current, by change: the informers'
// PodGroups, Workloads, CompositePodGroups, PriorityClasses,
// PodDisruptionBudgets and pending pods as they change, and each node as
// the scheduler's snapshot holds it, sent again when its fingerprint moved.
//
// The fingerprint is the NodeInfo's generation plus its pods (count and
// UIDs): kube-scheduler keeps a node's generation when it assumes or
// forgets a pod in the snapshot during a PodGroup cycle
// (backend/cache/snapshot.go), so the generation alone would miss the
// group's earlier members on a node.
type feed struct {
	view *wasm.View

	mu    sync.Mutex
	nodes map[string]uint64 // node name → fingerprint last sent
}

// Gates says which workload kinds the API server serves (kube-scheduler
// registers their informers only under these gates; so does the feed).
type Gates struct {
	GenericWorkload   bool
	CompositePodGroup bool
}

// currentGates reads the gates as kube-scheduler's flags set them (the
// factories run after flag parsing).
func currentGates() Gates {
	return Gates{
		GenericWorkload:   utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload),
		CompositePodGroup: utilfeature.DefaultFeatureGate.Enabled(features.CompositePodGroup),
	}
}

var (
	feedsMu sync.Mutex
	feeds   = map[string]*feed{}
)

// feedFor is the feed of h's profile, made (and its informer handlers
// registered) by the first plugin of the profile.
func feedFor(h fwk.Handle, gates Gates) (*feed, error) {
	feedsMu.Lock()
	defer feedsMu.Unlock()
	if f, ok := feeds[h.ProfileName()]; ok {
		return f, nil
	}
	view, err := wasm.NewView(h.ProfileName())
	if err != nil {
		return nil, err
	}
	f := &feed{view: view, nodes: map[string]uint64{}}
	informers := h.SharedInformerFactory()
	watch := func(kind string, informer cache.SharedIndexInformer, keep func(any) bool) error {
		_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { f.upsert(kind, obj, keep) },
			UpdateFunc: func(_, obj any) { f.upsert(kind, obj, keep) },
			DeleteFunc: func(obj any) { f.delete(kind, obj) },
		})
		return err
	}
	pending := func(obj any) bool {
		pod, ok := obj.(*v1.Pod)
		return ok && pod.Spec.NodeName == ""
	}
	all := func(any) bool { return true }
	if err := watch("Pod", informers.Core().V1().Pods().Informer(), pending); err != nil {
		return nil, err
	}
	if err := watch("PriorityClass", informers.Scheduling().V1().PriorityClasses().Informer(), all); err != nil {
		return nil, err
	}
	if err := watch("PodDisruptionBudget", informers.Policy().V1().PodDisruptionBudgets().Informer(), all); err != nil {
		return nil, err
	}
	if gates.GenericWorkload {
		if err := watch("PodGroup", informers.Scheduling().V1beta1().PodGroups().Informer(), all); err != nil {
			return nil, err
		}
		if err := watch("Workload", informers.Scheduling().V1beta1().Workloads().Informer(), all); err != nil {
			return nil, err
		}
	}
	if gates.CompositePodGroup {
		if err := watch("CompositePodGroup", informers.Scheduling().V1alpha3().CompositePodGroups().Informer(), all); err != nil {
			return nil, err
		}
	}
	feeds[h.ProfileName()] = f
	return f, nil
}

// upsert sends an informer's object; a pod bound since is dropped from
// the pending pods (its node's NodeInfo brings it back).
func (f *feed) upsert(kind string, obj any, keep func(any) bool) {
	if !keep(obj) {
		if pod, ok := obj.(*v1.Pod); ok {
			f.deleteKey("Pod", pod.Namespace+"/"+pod.Name)
		}
		return
	}
	if err := f.view.Upsert(kind, obj); err != nil {
		// The object is left out (as if absent) and said once per change.
		klog.ErrorS(err, "wasched view refused an object", "kind", kind)
	}
}

func (f *feed) delete(kind string, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	f.deleteKey(kind, key)
}

func (f *feed) deleteKey(kind, key string) {
	if err := f.view.Delete(kind, key); err != nil {
		klog.ErrorS(err, "wasched view delete", "kind", kind, "key", key)
	}
}

// ensurePod puts the pod being scheduled in the view as the framework
// hands it (the informer may not have delivered it yet).
func (f *feed) ensurePod(pod *v1.Pod) {
	if pod.Spec.NodeName == "" {
		if err := f.view.Upsert("Pod", pod); err != nil {
			klog.ErrorS(err, "wasched view refused the pod being scheduled", "pod", klog.KObj(pod))
		}
	}
}

// syncNodes sends every node whose fingerprint moved and deletes nodes
// the snapshot no longer has; with all, nodes missing from infos leave.
func (f *feed) syncNodes(infos []fwk.NodeInfo, all bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := make(map[string]bool, len(infos))
	for _, info := range infos {
		node := info.Node()
		if node == nil {
			continue
		}
		seen[node.Name] = true
		fp := fingerprint(info)
		if last, ok := f.nodes[node.Name]; ok && last == fp {
			continue
		}
		pods := make([]any, 0, len(info.GetPods()))
		for _, p := range info.GetPods() {
			pods = append(pods, p.GetPod())
		}
		if err := f.view.SetNode(node.Name, wasm.NodeState{Node: node, Pods: pods}); err != nil {
			klog.ErrorS(err, "wasched view refused part of a node", "node", node.Name)
		}
		f.nodes[node.Name] = fp
	}
	if all {
		for name := range f.nodes {
			if !seen[name] {
				if err := f.view.Delete("Node", name); err != nil {
					return fmt.Errorf("node %s: %w", name, err)
				}
				delete(f.nodes, name)
			}
		}
	}
	return nil
}

// fingerprint is a NodeInfo's generation and pods.
func fingerprint(info fwk.NodeInfo) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	put := func(v uint64) {
		for i := range buf {
			buf[i] = byte(v >> (8 * i))
		}
		h.Write(buf[:])
	}
	put(uint64(info.GetGeneration()))
	pods := info.GetPods()
	put(uint64(len(pods)))
	var uids uint64
	for _, p := range pods {
		ph := fnv.New64a()
		pod := p.GetPod()
		ph.Write([]byte(pod.UID))
		ph.Write([]byte(pod.Spec.NodeName))
		uids ^= ph.Sum64()
	}
	put(uids)
	return h.Sum64()
}
