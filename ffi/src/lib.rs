//! wasched's runtime behind a C ABI, for kube-scheduler's out-of-tree
//! plugin (the Go package `kube/wasm` links this crate's static library
//! over cgo).
//!
//! Three kinds of handle, each made and freed here:
//!
//! - a [`WaschedRuntime`]: the wasmtime engine (one per process is enough),
//!   with the components compiled so far and the on-disk compile cache;
//! - a [`WaschedPlugin`]: one component with its bounds, failure policy and
//!   args (the `args` of its `pluginConfig` entry), and a pool of instances
//!   so that goroutines never share a store;
//! - a [`WaschedView`]: the cluster as kube-scheduler holds it, kept
//!   current by change (objects upserted and deleted as the informers see
//!   them, a node's pods set again when its `NodeInfo` generation moves).
//!
//! [`wasched_call`] asks one plugin at one extension point over one view;
//! requests and responses are JSON naming objects (see [`calls`]). Every
//! call is bounded and contained as in wasched's own host: a component that
//! traps, loops or exhausts its memory answers an `Error` status naming it
//! (or `Skip` under `failurePolicy: Ignore`), and the caller goes on. A
//! panic inside this library is caught at the boundary and becomes an
//! error. Memory handed across is owned by one side only ([`buffer`]); the
//! live handles and bytes are counted so tests can prove a teardown frees
//! everything.
//!
//! Thread safety: every function may be called from any thread. A view is
//! locked for the duration of a change, and by a call only while it takes
//! its copy of the view's snapshot: the plugin runs on the copy, so calls
//! run in parallel (a plugin's instances are pooled, up to
//! the plugin's `poolSize`, [`pool::DEFAULT_POOL_SIZE`] unless configured, at once) and a change never waits for a plugin.
//! A runtime is shared.
//!
//! Usage, in the order a caller goes (error handling elided):
//!
//! ```
//! use wasched_ffi::*;
//! let mut error = WaschedBuffer::EMPTY;
//! let runtime = wasched_runtime_new(&mut error);
//! let spec = br#"{"name": "WaschedGangScheduling"}"#;
//! let plugin = unsafe { wasched_plugin_load(runtime, spec.as_ptr(), spec.len(), &mut error) };
//! let view = unsafe { wasched_view_new(std::ptr::null(), 0, &mut error) };
//! // ... wasched_view_upsert / wasched_view_set_node, then wasched_call ...
//! unsafe {
//!     wasched_view_free(view);
//!     wasched_plugin_free(plugin);
//!     wasched_runtime_free(runtime);
//! }
//! assert_eq!(wasched_live_objects(), 0);
//! ```

pub mod breaker;
pub mod buffer;
pub mod calls;
pub mod objects;
pub mod pool;
pub mod protocol;
pub mod view;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use anyhow::{Result, anyhow};

pub use buffer::{WaschedBuffer, wasched_buffer_free, wasched_live_bytes, wasched_live_objects};
use buffer::{drop_handle, handle, input};

/// The wasmtime engine and compiled components (opaque to C).
pub struct WaschedRuntime {
    runtime: Arc<wasched::Runtime>,
}

/// One loaded plugin component and its instance pool (opaque to C).
pub struct WaschedPlugin {
    runtime: Arc<wasched::Runtime>,
    plugin: pool::Plugin,
}

/// A cluster view kept current by change (opaque to C).
pub struct WaschedView {
    view: Mutex<view::View>,
}

/// Runs `body`, turning an error or a panic into `error` (when not null)
/// and `fallback`.
fn guarded<T>(error: *mut WaschedBuffer, fallback: T, body: impl FnOnce() -> Result<T>) -> T {
    let outcome = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|panic| {
        let text = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Err(anyhow!("internal error in wasched: {text}"))
    });
    match outcome {
        Ok(value) => value,
        Err(e) => {
            set_error(error, format!("{e:#}"));
            fallback
        }
    }
}

/// Writes `text` to `error` (nothing when it is null).
fn set_error(error: *mut WaschedBuffer, text: String) {
    if !error.is_null() {
        // SAFETY: the caller passes a writable WaschedBuffer (or null).
        unsafe { *error = WaschedBuffer::new(text.into_bytes()) };
    }
}

/// UTF-8 text handed in.
///
/// # Safety
/// As [`input`].
unsafe fn text<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a str> {
    // SAFETY: by the caller's promise.
    let bytes = unsafe { input(ptr, len) };
    std::str::from_utf8(bytes).map_err(|_| anyhow!("{what} is not UTF-8"))
}

/// Makes a runtime: the engine (fuel, epoch deadlines, stack bound) and
/// the compile cache (`WASCHED_CACHE_DIR`, else the user's cache
/// directory). Null on failure, with `error` set.
#[unsafe(no_mangle)]
pub extern "C" fn wasched_runtime_new(error: *mut WaschedBuffer) -> *mut WaschedRuntime {
    guarded(error, std::ptr::null_mut(), || {
        let runtime = Arc::new(wasched::Runtime::new()?);
        Ok(handle(WaschedRuntime { runtime }))
    })
}

/// The bundled components, as JSON: `[{"name": "WaschedGangScheduling",
/// "crate": "gang-permit", "onByDefault": true}, ...]`, in the order the
/// host loads them: the one list of their names and defaults for
/// kube-scheduler's registry and profile. Free the buffer.
#[unsafe(no_mangle)]
pub extern "C" fn wasched_bundled() -> WaschedBuffer {
    guarded(std::ptr::null_mut(), WaschedBuffer::EMPTY, || {
        let json = serde_json::to_vec(&wasched::runtime::BUNDLED)?;
        Ok(WaschedBuffer::new(json))
    })
}

/// Frees a runtime (plugins loaded from it keep working until freed).
///
/// # Safety
/// `runtime` must come from [`wasched_runtime_new`], freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasched_runtime_free(runtime: *mut WaschedRuntime) {
    // SAFETY: by the caller's promise.
    unsafe { drop_handle(runtime) }
}

/// Loads a plugin. `spec` is JSON: `{"name": "WaschedGangScheduling",
/// "component": "/path/to/plugin.wasm", "config": {...}}` where `name` is
/// what kube-scheduler's configuration calls it (the component must call
/// itself that), `component` is absent for the bundled component of that
/// name, and `config` holds its `pluginConfig` args (`failurePolicy`,
/// `fuel`, `timeout`, `memoryLimit`, `limits`, `args`). A file that is not a
/// component, is built against an unknown contract version or imports
/// anything outside `wasched:scheduler` is refused with one line naming it.
/// Null on failure, with `error` set.
///
/// # Safety
/// `runtime` must be live; `spec` must point to `spec_len` readable bytes;
/// `error` is writable or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasched_plugin_load(
    runtime: *const WaschedRuntime,
    spec: *const u8,
    spec_len: usize,
    error: *mut WaschedBuffer,
) -> *mut WaschedPlugin {
    guarded(error, std::ptr::null_mut(), || {
        // SAFETY: by the caller's promise.
        let runtime = unsafe { runtime.as_ref() }.ok_or_else(|| anyhow!("no runtime"))?;
        // SAFETY: by the caller's promise.
        let spec: pool::Spec = serde_json::from_slice(unsafe { input(spec, spec_len) })
            .map_err(|e| anyhow!("plugin spec: {e}"))?;
        let plugin = pool::Plugin::load(&runtime.runtime, spec)?;
        Ok(handle(WaschedPlugin {
            runtime: runtime.runtime.clone(),
            plugin,
        }))
    })
}

/// What a plugin is, as JSON: `{"name", "source", "contract", "points":
/// ["pre-enqueue", ...], "failurePolicy", "instances": {"alive",
/// "idle"}}`. Free the buffer.
///
/// # Safety
/// `plugin` must be live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasched_plugin_info(plugin: *const WaschedPlugin) -> WaschedBuffer {
    guarded(std::ptr::null_mut(), WaschedBuffer::EMPTY, || {
        // SAFETY: by the caller's promise.
        let plugin = unsafe { plugin.as_ref() }.ok_or_else(|| anyhow!("no plugin"))?;
        Ok(WaschedBuffer::new(
            plugin.plugin.info().to_string().into_bytes(),
        ))
    })
}

/// Frees a plugin and all its instances.
///
/// # Safety
/// `plugin` must come from [`wasched_plugin_load`], freed once, with no
/// call on it in flight.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasched_plugin_free(plugin: *mut WaschedPlugin) {
    // SAFETY: by the caller's promise.
    unsafe { drop_handle(plugin) }
}

/// Makes an empty view. `options` is JSON or empty: `{"schedulerName":
/// "..."}` makes only that scheduler's pending pods the view's to place.
/// Null on failure, with `error` set.
///
/// # Safety
/// `options` must point to `options_len` readable bytes (or be null with 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasched_view_new(
    options: *const u8,
    options_len: usize,
    error: *mut WaschedBuffer,
) -> *mut WaschedView {
    guarded(error, std::ptr::null_mut(), || {
        #[derive(serde::Deserialize, Default)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct Options {
            scheduler_name: Option<String>,
        }
        // SAFETY: by the caller's promise.
        let bytes = unsafe { input(options, options_len) };
        let options: Options = if bytes.is_empty() {
            Options::default()
        } else {
            serde_json::from_slice(bytes).map_err(|e| anyhow!("view options: {e}"))?
        };
        let view = view::View::new(options.scheduler_name)?;
        Ok(handle(WaschedView {
            view: Mutex::new(view),
        }))
    })
}

/// Frees a view.
///
/// # Safety
/// `view` must come from [`wasched_view_new`], freed once, unused by any
/// call in flight.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasched_view_free(view: *mut WaschedView) {
    // SAFETY: by the caller's promise.
    unsafe { drop_handle(view) }
}

/// The view behind `view`, locked.
///
/// # Safety
/// `view` must be live (or null) for `'a`.
unsafe fn locked<'a>(view: *const WaschedView) -> Result<std::sync::MutexGuard<'a, view::View>> {
    // SAFETY: by the caller's promise.
    let view = unsafe { view.as_ref() }.ok_or_else(|| anyhow!("no view"))?;
    Ok(view.view.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Adds or replaces one object of `kind` (`Node`, `Pod`, `PodGroup`,
/// `Workload`, `CompositePodGroup`, `PriorityClass`,
/// `PodDisruptionBudget`) from its JSON (Go's `encoding/json` of the API
/// type). Pods with `spec.nodeName` are taken from
/// [`wasched_view_set_node`] instead. 0 on success; 1 with `error` set when
/// the object is malformed or refused (it is then left out, as if absent;
/// the message names the kind, the object and the field).
///
/// # Safety
/// `view` must be live; the texts must point to readable bytes of their
/// lengths; `error` is writable or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasched_view_upsert(
    view: *const WaschedView,
    kind: *const u8,
    kind_len: usize,
    json: *const u8,
    json_len: usize,
    error: *mut WaschedBuffer,
) -> i32 {
    guarded(error, 1, || {
        // SAFETY: by the caller's promise.
        let kind = unsafe { text(kind, kind_len, "kind") }?;
        // SAFETY: by the caller's promise.
        let json = unsafe { input(json, json_len) };
        // SAFETY: by the caller's promise.
        unsafe { locked(view) }?.upsert(kind, json)?;
        Ok(0)
    })
}

/// Removes the object `kind` `key` (`namespace/name`, or `name` for
/// cluster-scoped kinds); nothing when the view does not hold it. 0 on
/// success, 1 with `error` set for an unknown kind.
///
/// # Safety
/// As [`wasched_view_upsert`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasched_view_delete(
    view: *const WaschedView,
    kind: *const u8,
    kind_len: usize,
    key: *const u8,
    key_len: usize,
    error: *mut WaschedBuffer,
) -> i32 {
    guarded(error, 1, || {
        // SAFETY: by the caller's promise.
        let kind = unsafe { text(kind, kind_len, "kind") }?;
        // SAFETY: by the caller's promise.
        let key = unsafe { text(key, key_len, "key") }?;
        // SAFETY: by the caller's promise.
        unsafe { locked(view) }?.delete(kind, key)?;
        Ok(0)
    })
}

/// Sets what node `name` holds, as kube-scheduler's `NodeInfo` for it does:
/// JSON `{"node": {...}, "pods": [{...}, ...], "kept": ["ns/name", ...]}`,
/// `node` absent when only its pods changed; every pod it lists (assumed
/// pods included) either whole in `pods` or, when it is listed here
/// unchanged since the last call (or since the last call that dropped it,
/// when no node has listed it since), by key in `kept`. Call it when the
/// node's `NodeInfo` changed. 0 on success; 1 with `error` set when the
/// view's listing of the node is not what was sent (a kept key it did not
/// list, a pod it could not read, malformed JSON; the rest is applied):
/// send the node whole next time; 2 with `error` set when the listing is
/// whole but the view's model refused what `error` names (sending it again
/// would not change that).
///
/// # Safety
/// As [`wasched_view_upsert`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasched_view_set_node(
    view: *const WaschedView,
    name: *const u8,
    name_len: usize,
    state: *const u8,
    state_len: usize,
    error: *mut WaschedBuffer,
) -> i32 {
    guarded(error, 1, || {
        // SAFETY: by the caller's promise.
        let name = unsafe { text(name, name_len, "node name") }?;
        // SAFETY: by the caller's promise.
        let state = unsafe { input(state, state_len) };
        // SAFETY: by the caller's promise.
        let refused = unsafe { locked(view) }?.set_node(name, state)?;
        Ok(match refused {
            None => 0,
            Some(refused) => {
                set_error(error, refused);
                2
            }
        })
    })
}

/// Asks `plugin` at one extension point over `view`: `request` and the
/// response written to `response` are JSON (see the crate's `calls`
/// module). 0 when the plugin was asked (its failures are in the response:
/// status `Error` naming it, or `Skip` under `failurePolicy: Ignore`, with
/// `failure`); 1 with `error` set when the request itself is wrong (an
/// object not in the view, a point the plugin does not implement).
///
/// # Safety
/// `plugin` and `view` must be live; `request` must point to `request_len`
/// readable bytes; `response` and `error` are writable (or null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasched_call(
    plugin: *const WaschedPlugin,
    view: *const WaschedView,
    request: *const u8,
    request_len: usize,
    response: *mut WaschedBuffer,
    error: *mut WaschedBuffer,
) -> i32 {
    guarded(error, 1, || {
        // SAFETY: by the caller's promise.
        let plugin = unsafe { plugin.as_ref() }.ok_or_else(|| anyhow!("no plugin"))?;
        // SAFETY: by the caller's promise.
        let request = unsafe { input(request, request_len) };
        // SAFETY: by the caller's promise.
        let view = unsafe { view.as_ref() }.ok_or_else(|| anyhow!("no view"))?;
        let answer = calls::call(&plugin.runtime, &plugin.plugin, &view.view, request)?;
        if !response.is_null() {
            // SAFETY: the caller passes a writable WaschedBuffer.
            unsafe { *response = WaschedBuffer::new(serde_json::to_vec(&answer)?) };
        }
        Ok(0)
    })
}

/// What `view` holds, as JSON: `{"nodes", "pods", "placed",
/// "assumedByScheduler"}` (`placed`: pods the view holds on a node, bound
/// ones; the pods kube-scheduler assumed are counted in
/// `assumedByScheduler` and assumed only in the snapshots in-cycle calls
/// take). For tests and diagnostics: a call leaves these as it found them.
/// Free the buffer.
///
/// # Safety
/// `view` must be live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasched_view_counts(view: *const WaschedView) -> WaschedBuffer {
    guarded(std::ptr::null_mut(), WaschedBuffer::EMPTY, || {
        // SAFETY: by the caller's promise.
        let counts = unsafe { locked(view) }?.counts();
        Ok(WaschedBuffer::new(counts.to_string().into_bytes()))
    })
}

/// Test hook: the next host call any plugin makes panics inside this
/// library, once, as a latent bug would. Tests use it to prove that a panic
/// in the middle of a call is contained and leaves nothing behind (the
/// instance slot, the lent snapshot). Never call it in production.
#[unsafe(no_mangle)]
pub extern "C" fn wasched_test_inject_panic() {
    wasched::runtime::inject_panic();
}

/// Test hook: the next host call any plugin makes stops inside this
/// library, in the middle of its component's run, until
/// [`wasched_test_release_held`]. Tests use it to prove that a call in
/// flight holds nothing back: the view's updates and other calls go on.
/// Never call it in production.
#[unsafe(no_mangle)]
pub extern "C" fn wasched_test_hold_next_host_call() {
    wasched::runtime::hold_next_host_call();
}

/// Test hook: waits up to `timeout_ms` milliseconds for a call to be held
/// by [`wasched_test_hold_next_host_call`]; 1 when one is, else 0.
#[unsafe(no_mangle)]
pub extern "C" fn wasched_test_wait_held(timeout_ms: u64) -> i32 {
    let timeout = std::time::Duration::from_millis(timeout_ms);
    i32::from(wasched::runtime::wait_until_held(timeout))
}

/// Test hook: lets the call [`wasched_test_hold_next_host_call`] held go
/// on, and disarms a fault no call has met yet (tests call it on every
/// exit, so that a failed test holds no later call).
#[unsafe(no_mangle)]
pub extern "C" fn wasched_test_release_held() {
    wasched::runtime::release_held_call();
}
