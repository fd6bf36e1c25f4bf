//! The timeline streamed to its output as it is recorded, in the Chrome trace-event JSON format
//! (Perfetto, chrome://tracing) that [`crate::metrics::Trace::to_json`] writes, byte for byte:
//! memory stays constant whatever `--limit` is (issue 26: a trace that buffered every event in
//! a `Vec` aborted the process when a large limit met a long window).
//!
//! Layout: `{"traceEvents":[` metadata (process name, then per track its name and sort index),
//! one event per recorded span or instant, `],"displayTimeUnit":"ns","otherData":{"dropped_events":N,"limit":L}}`.
//! Past `limit` events the rest are counted, not written. The first write error stops the
//! writing; [`TraceWriter::finish`] returns it.

use crate::engine::Time;
use crate::metrics::Name;
use crate::run::TraceCounts;
use serde_json::json;
use std::io::{self, Write};

/// A bounded timeline written as it is recorded.
pub struct TraceWriter {
    out: Box<dyn Write + Send>,
    title: String,
    tracks: Vec<String>,
    names: Vec<String>,
    limit: u64,
    counts: TraceCounts,
    /// Whether the header and the metadata events are out (at the first event or at the end).
    started: bool,
    error: Option<io::Error>,
}

impl TraceWriter {
    /// A trace titled `title` that writes at most `limit` events to `out` (buffer it).
    pub fn new(out: Box<dyn Write + Send>, title: &str, limit: usize) -> Self {
        let counts = TraceCounts { written: 0, dropped: 0 };
        Self { out, title: title.to_string(), tracks: Vec::new(), names: Vec::new(), limit: limit as u64, counts, started: false, error: None }
    }

    /// Register a track (a row in the viewer) before the first event; returns its id.
    pub fn track(&mut self, name: impl Into<String>) -> u32 {
        debug_assert!(!self.started, "tracks are registered before the first event");
        self.tracks.push(name.into());
        self.tracks.len() as u32 - 1
    }

    /// Intern a dynamic name once (at set-up), for use in later spans.
    pub fn intern(&mut self, name: impl Into<String>) -> Name {
        self.names.push(name.into());
        Name::Interned(self.names.len() as u32 - 1)
    }

    /// Whether a write failed (the rest of the run records nothing).
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    fn name(&self, n: Name) -> &str {
        match n {
            Name::Static(s) => s,
            Name::Interned(i) => &self.names[i as usize],
        }
    }

    fn write(&mut self, f: impl FnOnce(&mut dyn Write) -> io::Result<()>) {
        if self.error.is_none() {
            if let Err(e) = f(&mut self.out) {
                self.error = Some(e);
            }
        }
    }

    fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        let mut meta = vec![json!({"ph": "M", "name": "process_name", "pid": 1, "args": {"name": self.title}})];
        for (i, t) in self.tracks.iter().enumerate() {
            meta.push(json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": i, "args": {"name": t}}));
            meta.push(json!({"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": i, "args": {"sort_index": i}}));
        }
        self.write(|w| {
            w.write_all(b"{\"traceEvents\":[")?;
            for (i, m) in meta.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                serde_json::to_writer(&mut *w, m)?;
            }
            Ok(())
        });
    }

    fn event(&mut self, ev: serde_json::Value) {
        self.write(|w| {
            w.write_all(b",")?;
            serde_json::to_writer(w, &ev).map_err(io::Error::from)
        });
    }

    fn admit(&mut self) -> bool {
        if self.counts.written < self.limit {
            self.start();
            self.counts.written += 1;
            true
        } else {
            self.counts.dropped += 1;
            false
        }
    }

    /// Record a span of `dur` ns starting at `start` on `track`.
    pub fn span(&mut self, track: u32, name: impl Into<Name>, start: Time, dur: Time) {
        if self.admit() {
            let ev = json!({"ph": "X", "name": self.name(name.into()), "pid": 1, "tid": track, "ts": us(start), "dur": us(dur)});
            self.event(ev);
        }
    }

    /// Record a point event.
    pub fn instant(&mut self, track: u32, name: impl Into<Name>, at: Time) {
        if self.admit() {
            let ev = json!({"ph": "i", "s": "t", "name": self.name(name.into()), "pid": 1, "tid": track, "ts": us(at)});
            self.event(ev);
        }
    }

    /// Close the JSON document and flush; the counts, or the first write error.
    pub fn finish(mut self) -> io::Result<TraceCounts> {
        self.start();
        let other = json!({"dropped_events": self.counts.dropped, "limit": self.limit});
        self.write(|w| {
            w.write_all(b"],\"displayTimeUnit\":\"ns\",\"otherData\":")?;
            serde_json::to_writer(&mut *w, &other)?;
            w.write_all(b"}")?;
            w.flush()
        });
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.counts),
        }
    }
}

/// Timestamps in µs, as the format requires.
fn us(t: Time) -> f64 {
    t as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Trace;
    use std::sync::{Arc, Mutex};

    /// A `Write` whose bytes the test reads back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().write(b)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The same calls on the in-memory `Trace` and on the writer give the same bytes.
    #[test]
    fn writes_what_the_in_memory_trace_wrote() {
        for limit in [1, 3, 100] {
            let buf = Shared::default();
            let (mut t, mut w) = (Trace::new(limit), TraceWriter::new(Box::new(buf.clone()), "demo \"x\"", limit));
            let (a, b) = (t.track("vCPU 0"), w.track("vCPU 0"));
            assert_eq!((a, t.track("pCPU 1")), (b, w.track("pCPU 1")));
            let (n, m) = (t.intern("vhost-vm0"), w.intern("vhost-vm0"));
            t.span(a, "exit: io_instruction", 1_000, 2_500);
            w.span(b, "exit: io_instruction", 1_000, 2_500);
            t.instant(a, "kick", 1_001);
            w.instant(b, "kick", 1_001);
            t.span(1, n, 3_000, 10);
            w.span(1, m, 3_000, 10);
            assert_eq!(w.finish().unwrap(), TraceCounts { written: 3.min(limit as u64), dropped: 3 - 3.min(limit as u64) });
            assert_eq!(String::from_utf8(buf.0.lock().unwrap().clone()).unwrap(), t.to_json("demo \"x\""));
        }
    }

    #[test]
    fn an_empty_trace_is_a_valid_document() {
        let buf = Shared::default();
        let mut w = TraceWriter::new(Box::new(buf.clone()), "t", 10);
        w.track("a");
        w.finish().unwrap();
        let j: serde_json::Value = serde_json::from_slice(&buf.0.lock().unwrap()).unwrap();
        assert_eq!(j["traceEvents"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn the_first_write_error_is_kept_and_returned() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::other("No space left on device"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut w = TraceWriter::new(Box::new(Full), "t", 10);
        w.instant(0, "x", 1);
        assert!(w.failed());
        assert!(w.finish().unwrap_err().to_string().contains("No space left"));
    }
}
