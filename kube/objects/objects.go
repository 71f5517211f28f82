// Package objects loads a snapshot's objects into a real API server the way
// its own cluster holds them: created kind by kind in dependency order, the
// status that create drops written back through the status subresource.
//
// The objects arrive already translated for a real cluster (wasched's
// `cluster` module: Namespaces it needs, priority classes for bare
// priorities, Jobs expanded); this package only talks to the server.
package objects

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Object is one object loaded, as the server holds it after create.
type Object struct {
	// Kind, namespace and name of the object.
	Kind, Namespace, Name string
	// UID the server gave it.
	UID string
}

// Ref is "Kind namespace/name", or "Kind name" for cluster-scoped objects.
func (o Object) Ref() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// Loaded is everything Load created, in creation order.
type Loaded struct {
	Objects []Object
}

// ByUID indexes the loaded objects by their UID.
func (l *Loaded) ByUID() map[string]Object {
	index := make(map[string]Object, len(l.Objects))
	for _, o := range l.Objects {
		index[o.UID] = o
	}
	return index
}

// ReadFile reads a JSON List (or a JSON array) of objects.
func ReadFile(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Parse reads a JSON List (`{"kind": "List", "items": [...]}`) or array of
// objects.
func Parse(data []byte) ([]*unstructured.Unstructured, error) {
	var items []map[string]any
	var list struct {
		Items *[]map[string]any `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err == nil && list.Items != nil {
		items = *list.Items
	} else if err := json.Unmarshal(data, &items); err != nil {
		return nil, fmt.Errorf("not a JSON List or array of objects: %w", err)
	}
	objects := make([]*unstructured.Unstructured, len(items))
	for i, item := range items {
		objects[i] = &unstructured.Unstructured{Object: item}
		if objects[i].GetKind() == "" || objects[i].GetAPIVersion() == "" {
			return nil, fmt.Errorf("item %d: apiVersion and kind are required", i+1)
		}
	}
	return objects, nil
}

// stage orders creation: what others refer to first (Namespaces,
// PriorityClasses, Nodes, Workloads before the groups that name them,
// groups before their pods), running pods before pending ones.
func stage(o *unstructured.Unstructured) int {
	switch o.GetKind() {
	case "Namespace":
		return 0
	case "PriorityClass":
		return 1
	case "Node":
		return 2
	case "Workload":
		return 3
	case "CompositePodGroup":
		return 4
	case "PodGroup":
		return 5
	case "PodDisruptionBudget":
		return 6
	case "Pod":
		if name, _, _ := unstructured.NestedString(o.Object, "spec", "nodeName"); name != "" {
			return 7
		}
		return 8
	default:
		return 9
	}
}

// Pending splits items into the pods waiting to be scheduled (no
// spec.nodeName), in their order, and everything else.
func Pending(items []*unstructured.Unstructured) (rest, pending []*unstructured.Unstructured) {
	for _, item := range items {
		if stage(item) == 8 {
			pending = append(pending, item)
		} else {
			rest = append(rest, item)
		}
	}
	return rest, pending
}

// Loader creates objects through one client.
type Loader struct {
	client  dynamic.Interface
	mapper  meta.RESTMapper
	workers int
}

// NewLoader connects to the server of config.
func NewLoader(config *rest.Config) (*Loader, error) {
	client, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	return &Loader{client: client, mapper: mapper, workers: 16}, nil
}

// Load creates every object, stage by stage (objects of one stage in
// parallel), and writes back the status each carried. The first object the
// server refuses stops the load; the error names it and quotes the server.
func (l *Loader) Load(ctx context.Context, items []*unstructured.Unstructured) (*Loaded, error) {
	return l.load(ctx, items, false)
}

// LoadInOrder creates the objects one at a time, in the order given: a
// scheduler that watches sees them arrive in that order.
func (l *Loader) LoadInOrder(ctx context.Context, items []*unstructured.Unstructured) (*Loaded, error) {
	return l.load(ctx, items, true)
}

func (l *Loader) load(ctx context.Context, items []*unstructured.Unstructured, inOrder bool) (*Loaded, error) {
	if inOrder {
		loaded := &Loaded{Objects: make([]Object, len(items))}
		for i, item := range items {
			object, err := l.create(ctx, item)
			if err != nil {
				return nil, err
			}
			loaded.Objects[i] = object
		}
		return loaded, nil
	}
	ordered := make([]*unstructured.Unstructured, len(items))
	copy(ordered, items)
	sort.SliceStable(ordered, func(i, j int) bool { return stage(ordered[i]) < stage(ordered[j]) })
	loaded := &Loaded{Objects: make([]Object, len(ordered))}
	for start := 0; start < len(ordered); {
		end := start
		for end < len(ordered) && stage(ordered[end]) == stage(ordered[start]) {
			end++
		}
		if err := l.loadStage(ctx, ordered[start:end], loaded.Objects[start:end]); err != nil {
			return nil, err
		}
		start = end
	}
	return loaded, nil
}

// sequential are the kinds created one at a time in namespace/name order:
// the server stamps creationTimestamp in seconds, and kube-scheduler
// orders the children of a CompositePodGroup by it, then by name; created
// in name order, the two orders agree.
var sequential = map[string]bool{"PodGroup": true, "CompositePodGroup": true}

func (l *Loader) loadStage(ctx context.Context, items []*unstructured.Unstructured, into []Object) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := l.workers
	if sequential[items[0].GetKind()] {
		workers = 1
		order := make([]int, len(items))
		for i := range order {
			order[i] = i
		}
		key := func(i int) string { return items[i].GetNamespace() + "/" + items[i].GetName() }
		sort.SliceStable(order, func(a, b int) bool { return key(order[a]) < key(order[b]) })
		sorted := make([]*unstructured.Unstructured, len(items))
		for i, j := range order {
			sorted[i] = items[j]
		}
		copy(items, sorted)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range min(workers, len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				object, err := l.create(ctx, items[i])
				if err != nil {
					once.Do(func() { first = err; cancel() })
					continue
				}
				into[i] = object
			}
		}()
	}
	for i := range items {
		select {
		case next <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(next)
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return first
}

// create creates one object and writes its status back if it had one that
// the server dropped.
func (l *Loader) create(ctx context.Context, item *unstructured.Unstructured) (Object, error) {
	object := Object{Kind: item.GetKind(), Namespace: item.GetNamespace(), Name: item.GetName()}
	gvk := schema.FromAPIVersionAndKind(item.GetAPIVersion(), item.GetKind())
	mapping, err := l.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return object, fmt.Errorf("%s: the API server does not serve %s: %w", object.Ref(), item.GetAPIVersion(), err)
	}
	var resource dynamic.ResourceInterface = l.client.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		resource = l.client.Resource(mapping.Resource).Namespace(item.GetNamespace())
	} else {
		object.Namespace = ""
	}
	status, hasStatus, _ := unstructured.NestedMap(item.Object, "status")
	var created *unstructured.Unstructured
	err = retryWhileAdmissionCatchesUp(ctx, func() (err error) {
		created, err = resource.Create(ctx, item, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return object, refused(object, "create", err)
	}
	object.UID = string(created.GetUID())
	if hasStatus && len(status) > 0 && object.Kind != "Node" && object.Kind != "Namespace" {
		if err := unstructured.SetNestedMap(created.Object, status, "status"); err != nil {
			return object, fmt.Errorf("%s: status: %w", object.Ref(), err)
		}
		if _, err := resource.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return object, refused(object, "write the status of", err)
		}
	}
	return object, nil
}

// retryWhileAdmissionCatchesUp retries create while the server refuses it
// for a PriorityClass its admission plugin does not know yet: the Priority
// plugin looks classes up in an informer cache, which learns of a class
// created a moment ago only after that moment (kubectl apply of a class and
// its users in one go meets the same race). Any other answer is final.
func retryWhileAdmissionCatchesUp(ctx context.Context, create func() error) error {
	var err error
	for attempt := 0; attempt < 100; attempt++ {
		err = create()
		if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "no PriorityClass with name") {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return err
}

// refused quotes the server's own message.
func refused(object Object, what string, err error) error {
	if status, ok := err.(apierrors.APIStatus); ok {
		return fmt.Errorf("%s: the API server refused to %s it: %s", object.Ref(), what, status.Status().Message)
	}
	return fmt.Errorf("%s: cannot %s it: %w", object.Ref(), what, err)
}
