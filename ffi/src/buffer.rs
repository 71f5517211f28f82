//! Memory that crosses the boundary, and the count of what is alive.
//!
//! Ownership is one-sided: everything this library hands out (handles and
//! [`WaschedBuffer`]s) is allocated and freed by it, through the matching
//! `*_free` function; what the caller hands in (pointer + length) is only
//! read during the call and copied when kept. [`wasched_live_objects`] and
//! [`wasched_live_bytes`] count what is handed out and not yet freed, so a
//! test can assert that a teardown left nothing behind.

use std::sync::atomic::{AtomicU64, Ordering};

static LIVE_OBJECTS: AtomicU64 = AtomicU64::new(0);
static LIVE_BYTES: AtomicU64 = AtomicU64::new(0);

/// Bytes owned by this library, handed to the caller: free with
/// [`wasched_buffer_free`]. An empty buffer has a null `ptr`.
#[repr(C)]
#[derive(Debug)]
pub struct WaschedBuffer {
    /// The first byte, or null when `len` is 0.
    pub ptr: *mut u8,
    /// How many bytes.
    pub len: usize,
}

impl WaschedBuffer {
    /// An empty buffer (nothing to free).
    pub const EMPTY: WaschedBuffer = WaschedBuffer {
        ptr: std::ptr::null_mut(),
        len: 0,
    };

    /// Hands `bytes` out, counted as live until freed.
    pub fn new(bytes: Vec<u8>) -> WaschedBuffer {
        if bytes.is_empty() {
            return Self::EMPTY;
        }
        let len = bytes.len();
        let ptr = Box::into_raw(bytes.into_boxed_slice()) as *mut u8;
        counted(1, len as i64);
        WaschedBuffer { ptr, len }
    }

    /// The bytes (for Rust callers and tests).
    ///
    /// # Safety
    /// `self` must come from [`WaschedBuffer::new`] and not be freed.
    pub unsafe fn as_slice(&self) -> &[u8] {
        if self.ptr.is_null() {
            return &[];
        }
        // SAFETY: by the caller's promise, `ptr` and `len` describe a live
        // boxed slice this library made.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// Counts `objects` handles and `bytes` buffer bytes more (or, negated, fewer).
pub(crate) fn counted(objects: i64, bytes: i64) {
    add(&LIVE_OBJECTS, objects);
    add(&LIVE_BYTES, bytes);
}

fn add(counter: &AtomicU64, by: i64) {
    if by >= 0 {
        counter.fetch_add(by as u64, Ordering::Relaxed);
    } else {
        counter.fetch_sub(by.unsigned_abs(), Ordering::Relaxed);
    }
}

/// Frees a buffer this library handed out; an empty buffer is a no-op.
///
/// # Safety
/// `buffer` must come from this library and not have been freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wasched_buffer_free(buffer: WaschedBuffer) {
    if buffer.ptr.is_null() {
        return;
    }
    // SAFETY: the caller hands back a buffer made by `WaschedBuffer::new`,
    // once: it is the boxed slice of exactly `len` bytes it was made from.
    drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(buffer.ptr, buffer.len)) });
    counted(-1, -(buffer.len as i64));
}

/// Handles and buffers handed out and not yet freed.
#[unsafe(no_mangle)]
pub extern "C" fn wasched_live_objects() -> u64 {
    LIVE_OBJECTS.load(Ordering::Relaxed)
}

/// Bytes in buffers handed out and not yet freed.
#[unsafe(no_mangle)]
pub extern "C" fn wasched_live_bytes() -> u64 {
    LIVE_BYTES.load(Ordering::Relaxed)
}

/// Moves `value` to the heap as a handle for the caller, counted as live.
pub(crate) fn handle<T>(value: T) -> *mut T {
    counted(1, 0);
    Box::into_raw(Box::new(value))
}

/// Takes back and drops a handle made by [`handle`]; null is a no-op.
///
/// # Safety
/// `ptr` must come from [`handle`] with the same `T`, not freed before.
pub(crate) unsafe fn drop_handle<T>(ptr: *mut T) {
    if ptr.is_null() {
        return;
    }
    // SAFETY: by the caller's promise.
    drop(unsafe { Box::from_raw(ptr) });
    counted(-1, 0);
}

/// The bytes a caller handed in for the duration of a call.
///
/// # Safety
/// `ptr` must point to `len` readable bytes (or be null with `len` 0).
pub(crate) unsafe fn input<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if ptr.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: by the caller's promise.
    unsafe { std::slice::from_raw_parts(ptr, len) }
}
