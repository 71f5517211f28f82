// Package wasm runs wasched plugin components (WebAssembly components built
// against the wasched:scheduler contract) from Go, through the wasched-ffi
// static library (the Rust crate ffi/ of this repository, linked over cgo:
// build it first with `cargo build -p wasched-ffi`).
//
// It imports nothing from Kubernetes: kube-scheduler's plugin (package
// kube/plugin) maps the framework onto it. Three kinds of handle:
//
//   - a Runtime: the wasmtime engine and the components compiled so far;
//   - a Plugin: one component with its bounds, failure policy and args,
//     and a pool of instances so that goroutines never share a store;
//   - a View: the cluster as the caller holds it, kept current by change.
//
// Plugin.Call asks one plugin at one extension point over one view, with
// objects named (see Request and Response). A component that traps, loops
// or exhausts its memory answers an Error status naming it (Skip under
// failurePolicy Ignore); the caller goes on. Calls run in parallel: each
// runs its component on its own copy of the view's snapshot, so calls of
// one component run at once (up to the pool's size) and a View update
// never waits for a call in flight.
//
// Memory is owned by one side only: what Go hands in is copied by the
// library during the call, and what the library hands out is copied into
// Go memory and freed before the call returns. LiveObjects and LiveBytes
// count what the library holds for Go, so tests can prove a teardown frees
// everything. Every method is safe for concurrent use; Close waits for the
// calls in flight and makes later calls fail.
package wasm

/*
#cgo CFLAGS: -I${SRCDIR}/../../ffi/include
#cgo LDFLAGS: -L${SRCDIR}/../../target/debug -lwasched_ffi -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
#include <stdlib.h>
#include "wasched.h"
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// libraryStamp identifies the static library linked (its modification
// time and size). kube/Makefile sets it with -ldflags -X: Go's build cache
// does not track C libraries, so without it a changed library could be
// left out of a cached link.
var libraryStamp string

// ErrClosed is returned by calls on a handle after its Close.
var ErrClosed = errors.New("wasm: handle is closed")

// LiveObjects is how many handles and buffers the library holds for Go.
func LiveObjects() uint64 { return uint64(C.wasched_live_objects()) }

// LiveBytes is how many buffer bytes the library holds for Go.
func LiveBytes() uint64 { return uint64(C.wasched_live_bytes()) }

// BundledPlugin is one component embedded in the library.
type BundledPlugin struct {
	// Name is what the component calls itself (and kube-scheduler's
	// configuration calls it).
	Name string `json:"name"`
	// Crate is its crate under plugins/.
	Crate string `json:"crate"`
	// OnByDefault: the default profile enables it.
	OnByDefault bool `json:"onByDefault"`
}

// Bundled lists the components embedded in the library, in the order the
// library loads them, with whether each runs unless configured otherwise:
// the library's own list (wasched::runtime::BUNDLED), so that Go never
// keeps a copy.
func Bundled() []BundledPlugin {
	var list []BundledPlugin
	if err := json.Unmarshal(take(C.wasched_bundled()), &list); err != nil || len(list) == 0 {
		panic(fmt.Sprintf("wasm: the library's bundled list is unreadable: %v", err))
	}
	return list
}

// bytesIn is b as the C side reads it: pointer and length, valid while b
// is kept alive (the library copies what it keeps).
func bytesIn(b []byte) (*C.uint8_t, C.size_t) {
	if len(b) == 0 {
		return nil, 0
	}
	return (*C.uint8_t)(unsafe.Pointer(&b[0])), C.size_t(len(b))
}

// take copies a buffer the library handed out into Go memory and frees it.
func take(b C.WaschedBuffer) []byte {
	if b.ptr == nil {
		return nil
	}
	out := C.GoBytes(unsafe.Pointer(b.ptr), C.int(b.len))
	C.wasched_buffer_free(b)
	return out
}

// failed turns an error buffer into a Go error.
func failed(b C.WaschedBuffer, fallback string) error {
	text := take(b)
	if len(text) == 0 {
		return errors.New(fallback)
	}
	return errors.New(string(text))
}

// guard serialises Close against calls in flight.
type guard struct {
	mu     sync.RWMutex
	closed bool
}

// enter starts a call; it fails once closed. Pair with leave.
func (g *guard) enter() error {
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

func (g *guard) leave() { g.mu.RUnlock() }

// close marks the handle closed once the calls in flight are done; it
// reports whether this call closed it.
func (g *guard) close() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.closed = true
	return true
}

// Runtime is the wasmtime engine with the components compiled so far (and
// the on-disk compile cache: WASCHED_CACHE_DIR, else the user's cache
// directory). One per process is enough.
type Runtime struct {
	guard
	ptr *C.WaschedRuntime
}

// NewRuntime starts a runtime.
func NewRuntime() (*Runtime, error) {
	var errBuf C.WaschedBuffer
	ptr := C.wasched_runtime_new(&errBuf)
	if ptr == nil {
		return nil, failed(errBuf, "wasm: the runtime did not start")
	}
	return &Runtime{ptr: ptr}, nil
}

// Close frees the runtime; plugins loaded from it keep working until
// their own Close.
func (r *Runtime) Close() {
	if r.close() {
		C.wasched_runtime_free(r.ptr)
	}
}

// PluginSpec says which component to load and how.
type PluginSpec struct {
	// Name is what kube-scheduler's configuration calls the plugin; the
	// component must call itself this.
	Name string `json:"name"`
	// Component is a component file; empty: the bundled component of Name.
	Component string `json:"component,omitempty"`
	// Config holds the plugin's pluginConfig args: failurePolicy, fuel,
	// timeout, memoryLimit, limits, args.
	Config json.RawMessage `json:"config,omitempty"`
}

// PluginInfo is what a loaded plugin is.
type PluginInfo struct {
	Name          string   `json:"name"`
	Source        string   `json:"source"`
	Contract      string   `json:"contract"`
	Points        []string `json:"points"`
	FailurePolicy string   `json:"failurePolicy"`
}

// Implements reports whether the plugin exports the extension point
// (a WIT interface name: "pre-enqueue", "filter", ...).
func (i PluginInfo) Implements(point string) bool {
	for _, p := range i.Points {
		if p == point {
			return true
		}
	}
	return false
}

// Plugin is one loaded component and its pool of instances.
type Plugin struct {
	guard
	ptr  *C.WaschedPlugin
	Info PluginInfo
}

// Load loads a plugin component. A file that is not a component, is built
// against an unknown contract version, or imports anything outside
// wasched:scheduler is refused with one line naming the file; so are bad
// bounds or args.
func (r *Runtime) Load(spec PluginSpec) (*Plugin, error) {
	if err := r.enter(); err != nil {
		return nil, err
	}
	defer r.leave()
	text, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	ptr, n := bytesIn(text)
	var errBuf C.WaschedBuffer
	p := C.wasched_plugin_load(r.ptr, ptr, n, &errBuf)
	runtime.KeepAlive(text)
	if p == nil {
		return nil, failed(errBuf, "wasm: the plugin did not load")
	}
	plugin := &Plugin{ptr: p}
	if err := json.Unmarshal(take(C.wasched_plugin_info(p)), &plugin.Info); err != nil {
		C.wasched_plugin_free(p)
		return nil, fmt.Errorf("wasm: plugin info: %w", err)
	}
	return plugin, nil
}

// Instances is the plugin's pool now: instances alive, and idle among
// them (equal when no call is in flight).
func (p *Plugin) Instances() (alive, idle int, err error) {
	if err := p.enter(); err != nil {
		return 0, 0, err
	}
	defer p.leave()
	var info struct {
		Instances struct {
			Alive int `json:"alive"`
			Idle  int `json:"idle"`
		} `json:"instances"`
	}
	if err := json.Unmarshal(take(C.wasched_plugin_info(p.ptr)), &info); err != nil {
		return 0, 0, fmt.Errorf("wasm: plugin info: %w", err)
	}
	return info.Instances.Alive, info.Instances.Idle, nil
}

// Close frees the plugin and its instances once the calls in flight end.
func (p *Plugin) Close() {
	if p.close() {
		C.wasched_plugin_free(p.ptr)
	}
}

// Call asks the plugin at one extension point over v: request is
// marshalled to JSON, the response unmarshalled into response. An error is
// a request the caller got wrong (an object not in the view, a point the
// plugin does not implement); the plugin's own failures are in the
// response (Status Error or Skip, and Failure).
func (p *Plugin) Call(v *View, request any, response any) error {
	text, err := json.Marshal(request)
	if err != nil {
		return err
	}
	raw, err := p.CallJSON(v, text)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, response)
}

// CallJSON is Call with the request and response as JSON text.
func (p *Plugin) CallJSON(v *View, request []byte) ([]byte, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	if err := v.enter(); err != nil {
		return nil, err
	}
	defer v.leave()
	ptr, n := bytesIn(request)
	var out, errBuf C.WaschedBuffer
	rc := C.wasched_call(p.ptr, v.ptr, ptr, n, &out, &errBuf)
	runtime.KeepAlive(request)
	if rc != 0 {
		take(out)
		return nil, failed(errBuf, "wasm: the call failed")
	}
	return take(out), nil
}

// View is a cluster view kept current by change (see SetNode).
type View struct {
	guard
	ptr *C.WaschedView
}

// NewView makes an empty view; with schedulerName, only pending pods of
// that scheduler are the view's to place.
func NewView(schedulerName string) (*View, error) {
	var options []byte
	if schedulerName != "" {
		options, _ = json.Marshal(map[string]string{"schedulerName": schedulerName})
	}
	ptr, n := bytesIn(options)
	var errBuf C.WaschedBuffer
	v := C.wasched_view_new(ptr, n, &errBuf)
	runtime.KeepAlive(options)
	if v == nil {
		return nil, failed(errBuf, "wasm: the view was not made")
	}
	return &View{ptr: v}, nil
}

// Close frees the view once the calls in flight end.
func (v *View) Close() {
	if v.close() {
		C.wasched_view_free(v.ptr)
	}
}

// Upsert adds or replaces one object of kind (Node, Pod, PodGroup,
// Workload, CompositePodGroup, PriorityClass, PodDisruptionBudget),
// marshalled to JSON. Bound pods are taken from SetNode instead. A
// malformed or refused object is left out, and the error names it.
func (v *View) Upsert(kind string, object any) error {
	text, err := json.Marshal(object)
	if err != nil {
		return err
	}
	return v.UpsertJSON(kind, text)
}

// UpsertJSON is Upsert with the object as JSON text.
func (v *View) UpsertJSON(kind string, object []byte) error {
	k := []byte(kind)
	return v.change("upsert", func(errBuf *C.WaschedBuffer) C.int32_t {
		kp, kn := bytesIn(k)
		op, on := bytesIn(object)
		rc := C.wasched_view_upsert(v.ptr, kp, kn, op, on, errBuf)
		runtime.KeepAlive(k)
		runtime.KeepAlive(object)
		return rc
	})
}

// Delete removes the object kind key (namespace/name, or name).
func (v *View) Delete(kind, key string) error {
	k, name := []byte(kind), []byte(key)
	return v.change("delete", func(errBuf *C.WaschedBuffer) C.int32_t {
		kp, kn := bytesIn(k)
		np, nn := bytesIn(name)
		rc := C.wasched_view_delete(v.ptr, kp, kn, np, nn, errBuf)
		runtime.KeepAlive(k)
		runtime.KeepAlive(name)
		return rc
	})
}

// change runs one change of the view (op makes the C call) while the view
// is open.
func (v *View) change(what string, op func(errBuf *C.WaschedBuffer) C.int32_t) error {
	if err := v.enter(); err != nil {
		return err
	}
	defer v.leave()
	var errBuf C.WaschedBuffer
	if op(&errBuf) != 0 {
		return failed(errBuf, "wasm: "+what+" failed")
	}
	return nil
}

// ViewCounts is what a view holds: nodes, pods, the pods it holds on a node
// (bound ones), and the pods the scheduler assumed (held pending in the
// view, assumed only in the snapshots in-cycle calls take).
type ViewCounts struct {
	Nodes              int `json:"nodes"`
	Pods               int `json:"pods"`
	Placed             int `json:"placed"`
	AssumedByScheduler int `json:"assumedByScheduler"`
}

// Counts is what the view holds now; a call leaves it as it found it.
func (v *View) Counts() (ViewCounts, error) {
	var counts ViewCounts
	if err := v.enter(); err != nil {
		return counts, err
	}
	defer v.leave()
	err := json.Unmarshal(take(C.wasched_view_counts(v.ptr)), &counts)
	return counts, err
}

// InjectPanicForTest makes the next host call of any plugin panic inside
// the library, once (a test hook: the panic must be contained and leave
// nothing behind). Never call it in production.
func InjectPanicForTest() { C.wasched_test_inject_panic() }

// HoldNextHostCallForTest makes the next host call of any plugin stop
// inside the library, in the middle of its component's run, until
// ReleaseHeldForTest (a test hook: a call in flight must hold back neither
// the view's updates nor other calls). Never call it in production.
func HoldNextHostCallForTest() { C.wasched_test_hold_next_host_call() }

// WaitHeldForTest waits up to timeout for a call to be held by
// HoldNextHostCallForTest; whether one is.
func WaitHeldForTest(timeout time.Duration) bool {
	return C.wasched_test_wait_held(C.uint64_t(timeout.Milliseconds())) == 1
}

// ReleaseHeldForTest lets the call HoldNextHostCallForTest held go on.
func ReleaseHeldForTest() { C.wasched_test_release_held() }

// NodeState is what a node holds as the scheduler's NodeInfo says: the
// Node object (nil when only its pods changed) and every pod it lists,
// assumed pods included: whole in Pods, or by key ("namespace/name") in
// Kept when the last SetNode of this node listed it and it has not
// changed since.
type NodeState struct {
	Node any      `json:"node,omitempty"`
	Pods []any    `json:"pods"`
	Kept []string `json:"kept,omitempty"`
}

// RefusedError is what the view's model refused of a node whose listing
// SetNode took whole (a pod naming an unknown PriorityClass, say): sending
// the same again would not change it.
type RefusedError struct{ text string }

func (e *RefusedError) Error() string { return e.text }

// SetNode sets what node name holds; call it when the node's NodeInfo
// changed. Pods listed before and not now leave the node. An error when
// the view's listing of the node is not what was sent (a kept key it did
// not list, a pod it could not read; the rest is applied), so that the
// node goes whole next time; a *RefusedError when the listing is whole
// but the model left objects out.
func (v *View) SetNode(name string, state NodeState) error {
	if state.Pods == nil {
		state.Pods = []any{}
	}
	text, err := json.Marshal(state)
	if err != nil {
		return err
	}
	nb := []byte(name)
	var rc C.int32_t
	err = v.change("set node", func(errBuf *C.WaschedBuffer) C.int32_t {
		np, nn := bytesIn(nb)
		sp, sn := bytesIn(text)
		rc = C.wasched_view_set_node(v.ptr, np, nn, sp, sn, errBuf)
		runtime.KeepAlive(nb)
		runtime.KeepAlive(text)
		return rc
	})
	if err != nil && rc == 2 {
		return &RefusedError{err.Error()}
	}
	return err
}
