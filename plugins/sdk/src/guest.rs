//! The wasm32 half of the SDK: bindings, allocator, `cabi_realloc`, panics.

use alloc::format;
use core::alloc::Layout;

#[cfg(any(
    all(
        feature = "extension-host",
        any(
            feature = "gang-admission",
            feature = "topology-placement",
            feature = "workload-preemption",
            feature = "node-plugin"
        )
    ),
    all(
        feature = "gang-admission",
        any(
            feature = "topology-placement",
            feature = "workload-preemption",
            feature = "node-plugin"
        )
    ),
    all(
        feature = "topology-placement",
        any(feature = "workload-preemption", feature = "node-plugin")
    ),
    all(feature = "workload-preemption", feature = "node-plugin"),
))]
compile_error!(
    "enable exactly one world feature of wasched-sdk per plugin crate (their export macros share names); \
     build plugin crates one per cargo invocation, and use `extension-host` for a plugin that needs several"
);

/// Bindings for the imports every plugin shares: `types`, `cluster`, `log`.
#[allow(missing_docs, clippy::all)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "imports",
        path: "../../wit",
        generate_all,
    });
}

pub use bindings::wasched::scheduler::{cluster, log, types};

/// Generates the bindings of one plugin world, sharing the import types of
/// [`bindings`], with a public `export!` macro.
macro_rules! plugin_world {
    ($feature:literal, $module:ident, $world:literal, $path:literal) => {
        #[cfg(feature = $feature)]
        #[doc = concat!("Bindings of the `", $world, "` world: implement its `exports` traits and call `export!`.")]
        #[allow(missing_docs, clippy::all)]
        pub mod $module {
            wit_bindgen::generate!({
                world: $world,
                path: "../../wit",
                with: {
                    "wasched:scheduler/types@0.1.0": crate::bindings::wasched::scheduler::types,
                    "wasched:scheduler/cluster@0.1.0": crate::bindings::wasched::scheduler::cluster,
                    "wasched:scheduler/log@0.1.0": crate::bindings::wasched::scheduler::log,
                },
                pub_export_macro: true,
                default_bindings_module: $path,
            });
        }
    };
}

plugin_world!(
    "gang-admission",
    gang_admission,
    "gang-admission",
    "wasched_sdk::gang_admission"
);
plugin_world!(
    "topology-placement",
    topology_placement,
    "topology-placement",
    "wasched_sdk::topology_placement"
);
plugin_world!(
    "workload-preemption",
    workload_preemption,
    "workload-preemption",
    "wasched_sdk::workload_preemption"
);
plugin_world!(
    "node-plugin",
    node_plugin,
    "node-plugin",
    "wasched_sdk::node_plugin"
);
plugin_world!(
    "extension-host",
    extension_host,
    "extension-host",
    "wasched_sdk::extension_host"
);

impl From<crate::Code> for types::Code {
    fn from(code: crate::Code) -> Self {
        match code {
            crate::Code::Success => Self::Success,
            crate::Code::Error => Self::Error,
            crate::Code::Unschedulable => Self::Unschedulable,
            crate::Code::UnschedulableAndUnresolvable => Self::UnschedulableAndUnresolvable,
            crate::Code::Wait => Self::Wait,
            crate::Code::Skip => Self::Skip,
        }
    }
}

impl From<crate::Status> for types::Status {
    fn from(status: crate::Status) -> Self {
        Self {
            code: status.code.into(),
            reason: status.reason,
        }
    }
}

#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

/// The canonical ABI's allocation hook. wit-bindgen provides it only for
/// std targets, so `no_std` components on `wasm32-wasip2` export it here.
///
/// # Safety
/// Called by the component model with a layout it obtained from this
/// function (or zero-sized for a fresh allocation).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cabi_realloc(
    old_ptr: *mut u8,
    old_len: usize,
    align: usize,
    new_len: usize,
) -> *mut u8 {
    let ptr = if old_len == 0 {
        if new_len == 0 {
            return align as *mut u8;
        }
        // SAFETY: the canonical ABI passes a valid, power-of-two alignment.
        unsafe { alloc::alloc::alloc(Layout::from_size_align_unchecked(new_len, align)) }
    } else {
        // SAFETY: `old_ptr` was returned by this function with this layout.
        unsafe {
            alloc::alloc::realloc(
                old_ptr,
                Layout::from_size_align_unchecked(old_len, align),
                new_len,
            )
        }
    };
    if ptr.is_null() {
        core::arch::wasm32::unreachable();
    }
    ptr
}

/// `memcmp` for `no_std` guests: without libc, slice comparisons would
/// otherwise import it from `env`, which the host does not provide.
/// Volatile reads keep the compiler from turning the loop back into a call
/// to itself.
///
/// # Safety
/// `a` and `b` must be valid for reads of `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    for i in 0..n {
        // SAFETY: the caller guarantees `n` readable bytes behind both.
        let (x, y) = unsafe { (a.add(i).read_volatile(), b.add(i).read_volatile()) };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
    }
    0
}

/// `bcmp` (equality-only `memcmp`), for the same reason.
///
/// # Safety
/// `a` and `b` must be valid for reads of `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { memcmp(a, b, n) }
}

/// A panic logs its message at `error` level, then traps; the host reports
/// the trap with the plugin's name and discards the instance.
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    let message = match info.location() {
        Some(at) => format!("panic: {} at {}:{}", info.message(), at.file(), at.line()),
        None => format!("panic: {}", info.message()),
    };
    log::log(log::Level::Error, &message);
    core::arch::wasm32::unreachable()
}
