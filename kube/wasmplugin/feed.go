package wasmplugin

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"

	"example.invalid/wasched/kube/wasm"
)

// feed keeps one profile's wasm.View current, by change: the informers'
// Nodes, Pods, PodGroups, Workloads, CompositePodGroups, PriorityClasses
// and PodDisruptionBudgets as they change, and each node with its pods as
// the scheduler's snapshot holds it, sent again when its fingerprint moved
// (from then on the snapshot, not the informer, says which pods a node
// holds).
//
// The fingerprint is the NodeInfo's generation plus its pods (count and
// UIDs): kube-scheduler keeps a node's generation when it assumes or
// forgets a pod in the snapshot during a PodGroup cycle
// (backend/cache/snapshot.go), so the generation alone would miss the
// group's earlier members on a node.
type feed struct {
	view *wasm.View

	mu     sync.Mutex
	nodes  map[string]uint64    // node name → fingerprint last sent
	listed map[string]*nodeSent // node name → what its last SetNode sent
	// left is each pod a node's SetNode dropped that no SetNode has
	// listed since and that was not deleted (the view keeps them as
	// read), by key: a victim a dry run took off its node goes back to
	// that node by key.
	left  map[string]dropped
	known map[string]bool // the nodes the view holds (from either source)

	sentMu sync.Mutex
	sent   map[types.UID]string    // object → resourceVersion last sent
	gone   map[types.UID]time.Time // objects deleted, and when
}

// nodeSent is what the view holds of one node by the feed's last
// SetNode: the Node object's version and each pod's, so that the next
// SetNode sends only what changed.
type nodeSent struct {
	node string
	pods map[string]string // pod key → version
}

// dropped is a pod's version when a node's SetNode dropped it, and the
// node.
type dropped struct{ version, node string }

// version identifies an object's content as the API server gave it (UID
// and resourceVersion) plus where kube-scheduler holds it (an assumed
// pod's copy names its node); "" for an object without a
// resourceVersion, which is never taken as unchanged.
func version(o metav1.Object, node string) string {
	if o.GetResourceVersion() == "" {
		return ""
	}
	return string(o.GetUID()) + "/" + o.GetResourceVersion() + "/" + node
}

// goneFor is how long a deleted object is remembered, so that a copy
// kube-scheduler still holds does not bring it back into the view.
const goneFor = 10 * time.Minute

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

// newFeed is a feed of view that has sent nothing yet.
func newFeed(view *wasm.View) *feed {
	return &feed{view: view, nodes: map[string]uint64{}, listed: map[string]*nodeSent{}, left: map[string]dropped{}, known: map[string]bool{},
		sent: map[types.UID]string{}, gone: map[types.UID]time.Time{}}
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
	f := newFeed(view)
	informers := h.SharedInformerFactory()
	watch := func(kind string, informer cache.SharedIndexInformer) error {
		_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { f.upsert(kind, obj) },
			UpdateFunc: func(_, obj any) { f.upsert(kind, obj) },
			DeleteFunc: func(obj any) { f.delete(kind, obj) },
		})
		return err
	}
	if err := watch("Node", informers.Core().V1().Nodes().Informer()); err != nil {
		return nil, err
	}
	if err := watch("Pod", informers.Core().V1().Pods().Informer()); err != nil {
		return nil, err
	}
	if err := watch("PriorityClass", informers.Scheduling().V1().PriorityClasses().Informer()); err != nil {
		return nil, err
	}
	if err := watch("PodDisruptionBudget", informers.Policy().V1().PodDisruptionBudgets().Informer()); err != nil {
		return nil, err
	}
	if gates.GenericWorkload {
		if err := watch("PodGroup", informers.Scheduling().V1beta1().PodGroups().Informer()); err != nil {
			return nil, err
		}
		if err := watch("Workload", informers.Scheduling().V1beta1().Workloads().Informer()); err != nil {
			return nil, err
		}
	}
	if gates.CompositePodGroup {
		if err := watch("CompositePodGroup", informers.Scheduling().V1alpha3().CompositePodGroups().Informer()); err != nil {
			return nil, err
		}
	}
	feeds[h.ProfileName()] = f
	return f, nil
}

// upsert sends an informer's object.
func (f *feed) upsert(kind string, obj any) {
	o, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	if kind == "Node" {
		f.mu.Lock()
		f.known[o.GetName()] = true
		f.mu.Unlock()
	}
	f.ensure(kind, o)
}

func (f *feed) delete(kind string, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if o, ok := obj.(metav1.Object); ok {
		f.forget(o)
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	switch kind {
	case "Node":
		// Under the lock, so that no SetNode of the node comes between
		// the records and the view.
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.known, key)
		delete(f.nodes, key)
		delete(f.listed, key)
	case "Pod":
		// The record only: forget marked the pod gone, so no SetNode
		// records it again, and the view drops its own on Delete.
		f.mu.Lock()
		delete(f.left, key)
		f.mu.Unlock()
	}
	f.deleteKey(kind, key)
}

func (f *feed) deleteKey(kind, key string) {
	if err := f.view.Delete(kind, key); err != nil {
		klog.ErrorS(err, "wasched view delete", "kind", kind, "key", key)
	}
}

// ensure puts an object in the view as kube-scheduler holds it (the
// feed's own informer handler may not have delivered it yet). The view
// keeps the newest version either source gave: a copy no newer than the
// one sent is not sent again, and a deleted object does not come back.
func (f *feed) ensure(kind string, o metav1.Object) {
	f.sentMu.Lock()
	defer f.sentMu.Unlock()
	if _, deleted := f.gone[o.GetUID()]; deleted {
		return
	}
	if rv, ok := f.sent[o.GetUID()]; ok && !newer(o.GetResourceVersion(), rv) {
		return
	}
	if err := f.view.Upsert(kind, o); err != nil {
		// The object is left out (as if absent) and said once per change.
		klog.ErrorS(err, "wasched view refused an object", "kind", kind, "object", klog.KObj(o))
	}
	f.sent[o.GetUID()] = o.GetResourceVersion()
}

// newer says whether resourceVersion a is newer than b: as numbers when
// both are (the API server's are etcd revisions), else whenever they
// differ (an empty one always counts as new).
func newer(a, b string) bool {
	if a == "" || b == "" {
		return true
	}
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	if errA != nil || errB != nil {
		return a != b
	}
	return x > y
}

// ensurePod is ensure for a pod.
func (f *feed) ensurePod(pod *v1.Pod) { f.ensure("Pod", pod) }

// forget drops an object from the objects sent and remembers it gone
// for goneFor.
func (f *feed) forget(o metav1.Object) {
	f.sentMu.Lock()
	defer f.sentMu.Unlock()
	delete(f.sent, o.GetUID())
	now := time.Now()
	f.gone[o.GetUID()] = now
	for uid, at := range f.gone {
		if now.Sub(at) > goneFor {
			delete(f.gone, uid)
		}
	}
}

// ensureGroup puts a PodGroup and its pending members in the view as
// kube-scheduler's PodGroupManager holds them, so that a verdict about the
// group does not depend on which informer handler ran first.
func (f *feed) ensureGroup(h fwk.Handle, namespace, name string) {
	manager := h.PodGroupManager()
	if manager == nil {
		return
	}
	if group, err := manager.PodGroups().Get(namespace, name); err == nil && group != nil {
		f.ensure("PodGroup", group)
	}
	if state, err := manager.PodGroupStates().Get(namespace, name); err == nil && state != nil {
		for _, pod := range state.UnscheduledPods() {
			f.ensurePod(pod)
		}
	}
}

// syncNodes sends every node whose fingerprint moved and deletes nodes
// the snapshot no longer has; with all, nodes missing from infos leave.
func (f *feed) syncNodes(infos []fwk.NodeInfo, all bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var seen map[string]bool
	if all {
		seen = make(map[string]bool, len(infos))
	}
	for _, info := range infos {
		node := info.Node()
		if node == nil {
			continue
		}
		if all {
			seen[node.Name] = true
		}
		fp := fingerprint(info)
		if last, ok := f.nodes[node.Name]; ok && last == fp {
			continue
		}
		last := f.listed[node.Name]
		state, sent := f.nodeState(node, info.GetPods(), last)
		err := f.view.SetNode(node.Name, state)
		var refused *wasm.RefusedError
		if err != nil && !errors.As(err, &refused) && len(state.Kept) > 0 {
			// The view may not list what the feed sent it last time:
			// the node goes whole.
			state, sent = f.nodeState(node, info.GetPods(), nil)
			err = f.view.SetNode(node.Name, state)
		}
		switch {
		case err == nil:
			f.listSent(node.Name, last, sent)
			f.listed[node.Name] = sent
		case errors.As(err, &refused):
			// The view lists what was sent; its model left some out.
			klog.ErrorS(err, "wasched view refused part of a node", "node", node.Name)
			f.listSent(node.Name, last, sent)
			f.listed[node.Name] = sent
		default:
			klog.ErrorS(err, "wasched view refused part of a node", "node", node.Name)
			// What the view lists is uncertain: the node and its pods go
			// whole next time.
			for _, pods := range []*nodeSent{last, sent} {
				if pods != nil {
					for key := range pods.pods {
						delete(f.left, key)
					}
				}
			}
			delete(f.listed, node.Name)
		}
		f.nodes[node.Name] = fp
		f.known[node.Name] = true
	}
	if all {
		for name := range f.nodes {
			if !seen[name] {
				if err := f.view.Delete("Node", name); err != nil {
					return fmt.Errorf("node %s: %w", name, err)
				}
				delete(f.nodes, name)
				delete(f.listed, name)
				delete(f.known, name)
			}
		}
	}
	return nil
}

// listSent records what node's SetNode dropped (in last, not in sent)
// as left unless it was deleted, and what it listed as no longer left.
// f.mu is held.
func (f *feed) listSent(node string, last, sent *nodeSent) {
	if last != nil {
		f.sentMu.Lock()
		for key, v := range last.pods {
			uid, _, _ := strings.Cut(v, "/") // see version
			if _, deleted := f.gone[types.UID(uid)]; deleted {
				continue
			}
			if _, still := sent.pods[key]; !still && v != "" {
				f.left[key] = dropped{v, node}
			}
		}
		f.sentMu.Unlock()
	}
	for key := range sent.pods {
		delete(f.left, key)
	}
}

// nodeState is what SetNode sends of a node holding pods: the Node object
// when the view does not hold this version of it, each pod unchanged
// since last (the node's last SetNode) or since a SetNode dropped it by
// key, the others whole; and what that leaves the view holding. With
// last nil, everything goes whole. f.mu is held.
func (f *feed) nodeState(node *v1.Node, pods []fwk.PodInfo, last *nodeSent) (wasm.NodeState, *nodeSent) {
	sent := &nodeSent{node: version(node, ""), pods: make(map[string]string, len(pods))}
	state := wasm.NodeState{Pods: make([]any, 0, len(pods))}
	if last == nil || sent.node == "" || last.node != sent.node {
		state.Node = node
	}
	for _, p := range pods {
		pod := p.GetPod()
		key := pod.Namespace + "/" + pod.Name
		v := version(pod, pod.Spec.NodeName)
		sent.pods[key] = v
		if last != nil && v != "" && (last.pods[key] == v || f.left[key] == dropped{v, node.Name}) {
			state.Kept = append(state.Kept, key)
		} else {
			state.Pods = append(state.Pods, pod)
		}
	}
	return state, sent
}

// holdsOnly says whether the view's nodes are exactly names (distinct
// names), so that a request may say "every node" instead; a node the
// informer brought in since the snapshot makes it false.
func (f *feed) holdsOnly(names []string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(names) != len(f.known) {
		return false
	}
	for _, name := range names {
		if !f.known[name] {
			return false
		}
	}
	return true
}

// fingerprint is a NodeInfo's generation and pods (FNV-1a, without
// allocating: it is taken of every node before most calls).
func fingerprint(info fwk.NodeInfo) uint64 {
	pods := info.GetPods()
	var uids uint64
	for _, p := range pods {
		pod := p.GetPod()
		uids ^= fnvString(fnvString(fnvOffset, string(pod.UID)), pod.Spec.NodeName)
	}
	h := uint64(fnvOffset)
	for _, v := range [...]uint64{uint64(info.GetGeneration()), uint64(len(pods)), uids} {
		for i := 0; i < 8; i++ {
			h = (h ^ uint64(byte(v>>(8*i)))) * fnvPrime
		}
	}
	return h
}

// FNV-1a's 64-bit parameters.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvString continues FNV-1a hash h over s.
func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

// ensureUnit puts a pod group cycle's group (or composite) and its
// pending members in the view as kube-scheduler holds them (the feed's
// own informer handlers may not have delivered them yet).
func (f *feed) ensureUnit(pg fwk.PodGroupInfo) {
	if cpg := pg.GetCompositePodGroup(); cpg != nil {
		f.ensure("CompositePodGroup", cpg)
	} else if group := pg.GetPodGroup(); group != nil {
		f.ensure("PodGroup", group)
	}
	for _, pod := range pg.GetUnscheduledPods() {
		f.ensurePod(pod)
	}
}
