//! Issue 26: `eventpath trace --limit 100000000` over a long window grew one `Vec` of events
//! until allocation failed (SIGABRT and a Rust backtrace). The timeline is now written as it is
//! recorded: the heap a traced run needs does not depend on `--limit` nor on how many events
//! the window holds. Measured with a counting allocator (this file is its own test binary, one
//! test, so nothing else allocates meanwhile).

use eventpath_sim::run::{simulate_traced_to, TraceOptions};
use eventpath_sim::scenario::Scenario;
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;
static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` with the caller's arguments; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which `System` shares.
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            PEAK.fetch_max(NOW.fetch_add(l.size(), Relaxed) + l.size(), Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        NOW.fetch_sub(l.size(), Relaxed);
        // SAFETY: `p` was allocated by `alloc` above (i.e. by `System`) with layout `l`.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Counts the bytes written and keeps none.
struct Bytes(std::sync::Arc<AtomicUsize>);
impl Write for Bytes {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.fetch_add(b.len(), Relaxed);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Heap growth (bytes above what was in use before) of a traced run with `limit`, the events
/// written and the bytes of JSON.
fn traced_peak(c: &eventpath_sim::scenario::Checked, limit: usize) -> (usize, u64, usize) {
    let bytes = std::sync::Arc::new(AtomicUsize::new(0));
    let base = NOW.load(Relaxed);
    PEAK.store(base, Relaxed);
    let t = TraceOptions { from_s: 0.0, to_s: 1.0, limit };
    let (_, counts) = simulate_traced_to(c, t, Box::new(Bytes(bytes.clone()))).unwrap();
    let counts = counts.unwrap();
    (PEAK.load(Relaxed) - base, counts.written, bytes.load(Relaxed))
}

#[test]
fn a_huge_limit_does_not_grow_the_heap_with_the_events() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/tcp-send.toml");
    let mut sc = Scenario::from_file(root).unwrap();
    sc.duration_s = 0.25;
    sc.warmup_s = 0.001;
    let c = sc.check("tcp-send").unwrap();
    let (small, small_written, _) = traced_peak(&c, 1_000);
    let (huge, written, json) = traced_peak(&c, 100_000_000);
    assert_eq!(small_written, 1_000);
    // Enough events that keeping them would show: the old Vec took 40 bytes per event, and the
    // JSON built from it ~10 times that.
    assert!(written > 100_000, "{written} events");
    assert!(json > 40 * written as usize, "{json} bytes");
    // The same heap whether 1,000 or all of them are written (slack: the allocator's noise).
    assert!(huge < small + (1 << 20), "heap growth {huge} B with limit 1e8 vs {small} B with 1,000 ({written} events written)");
}
