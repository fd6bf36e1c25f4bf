//! The timeline streamed to its output as it is recorded, in the Chrome trace-event JSON format
//! (Perfetto, chrome://tracing): memory stays constant whatever `--limit` is (issue 26: a trace
//! that buffered every event in a `Vec` aborted the process when a large limit met a long
//! window).
//!
//! Layout: `{"traceEvents":[` metadata (per process its name and sort index, then per track —
//! a thread of its process — its name and sort index), one event per recorded span (`X`; a
//! mark is a span of no length, which flows can bind to, unlike an instant), then
//! `],"displayTimeUnit":"ns","otherData":{"dropped_events":N,"limit":L}}`.
//! Process ids count from 1 and thread ids (one per track, unique across processes, as
//! Perfetto names threads by tid) from 1, in registration order. A span may carry a flow
//! arrow (`bind_id` with `flow_in`/`flow_out`: Perfetto's v2 flow events, bound to the slice
//! itself). Past `limit` events the rest are counted, not written. The first write error stops
//! the writing; [`TraceWriter::finish`] returns it.

use crate::engine::Time;
use crate::metrics::Name;
use crate::model::trace::TraceCounts;
use serde_json::json;
use std::io::{self, Write};

/// A span's place in a flow (an arrow between slices): `flow_in` ends the arrow from the
/// flow's previous slice here, `flow_out` starts one from here to its next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowPart {
    /// The flow's id (unique in the trace).
    pub id: u64,
    /// An arrow arrives here.
    pub flow_in: bool,
    /// An arrow leaves from here.
    pub flow_out: bool,
}

/// A bounded timeline written as it is recorded.
pub struct TraceWriter {
    out: Box<dyn Write + Send>,
    processes: Vec<String>,
    /// Per track: its name and its process id.
    tracks: Vec<(String, u32)>,
    names: Vec<String>,
    limit: u64,
    counts: TraceCounts,
    /// Whether the header and the metadata events are out (at the first event or at the end).
    started: bool,
    error: Option<io::Error>,
}

impl TraceWriter {
    /// A trace that writes at most `limit` events to `out` (buffer it).
    pub fn new(out: Box<dyn Write + Send>, limit: usize) -> Self {
        let counts = TraceCounts { written: 0, dropped: 0 };
        Self { out, processes: Vec::new(), tracks: Vec::new(), names: Vec::new(), limit: limit as u64, counts, started: false, error: None }
    }

    /// Register a process (a group of tracks) before the first event; returns its pid.
    pub fn process(&mut self, name: impl Into<String>) -> u32 {
        debug_assert!(!self.started, "processes are registered before the first event");
        self.processes.push(name.into());
        self.processes.len() as u32
    }

    /// Register a track (a row in the viewer: a thread of process `pid`) before the first
    /// event; returns its id.
    pub fn track(&mut self, pid: u32, name: impl Into<String>) -> u32 {
        debug_assert!(!self.started, "tracks are registered before the first event");
        debug_assert!(1 <= pid && pid as usize <= self.processes.len(), "a registered process");
        self.tracks.push((name.into(), pid));
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

    /// (pid, tid) of a track.
    fn ids(&self, track: u32) -> (u32, u32) {
        (self.tracks[track as usize].1, track + 1)
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
        let mut meta = Vec::new();
        for (i, p) in self.processes.iter().enumerate() {
            let pid = i + 1;
            meta.push(json!({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": p}}));
            meta.push(json!({"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": i}}));
        }
        for (i, (t, pid)) in self.tracks.iter().enumerate() {
            let tid = i + 1;
            meta.push(json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": t}}));
            meta.push(json!({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": i}}));
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
        let first = self.processes.is_empty() && self.tracks.is_empty() && self.counts.written == 1;
        self.write(|w| {
            if !first {
                w.write_all(b",")?;
            }
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

    /// Record a span of `dur` ns (none: a mark) starting at `start` on `track`, taking part in
    /// a flow if `flow`; returns whether it was written (not past the limit).
    pub fn span_flow(&mut self, track: u32, name: impl Into<Name>, start: Time, dur: Time, flow: Option<FlowPart>) -> bool {
        if !self.admit() {
            return false;
        }
        let (pid, tid) = self.ids(track);
        let mut ev = json!({"ph": "X", "name": self.name(name.into()), "pid": pid, "tid": tid, "ts": us(start), "dur": us(dur)});
        if let Some(f) = flow {
            ev["bind_id"] = json!(f.id);
            if f.flow_in {
                ev["flow_in"] = json!(true);
            }
            if f.flow_out {
                ev["flow_out"] = json!(true);
            }
        }
        self.event(ev);
        true
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

    fn parsed(buf: &Shared) -> serde_json::Value {
        serde_json::from_slice(&buf.0.lock().unwrap()).unwrap()
    }

    /// Processes and their tracks are named and ordered by metadata; spans and marks land
    /// on their track's (pid, tid); a flow's parts are on its spans; the limit counts the rest.
    #[test]
    fn writes_processes_tracks_spans_flows_and_counts() {
        for limit in [1, 3, 100] {
            let buf = Shared::default();
            let mut w = TraceWriter::new(Box::new(buf.clone()), limit);
            let (vm, host) = (w.process("vm a"), w.process("host \"x\""));
            let (v, c) = (w.track(vm, "vCPU 0"), w.track(host, "pCPU 1"));
            let n = w.intern("vhost-vm0");
            let f = |flow_in, flow_out| Some(FlowPart { id: 7, flow_in, flow_out });
            w.span_flow(v, "exit: io_instruction", 1_000, 2_500, f(false, true));
            w.span_flow(v, "kick", 1_001, 0, None);
            w.span_flow(c, n, 3_000, 10, f(true, false));
            let written = 3.min(limit as u64);
            assert_eq!(w.finish().unwrap(), TraceCounts { written, dropped: 3 - written });
            let j = parsed(&buf);
            let ev = j["traceEvents"].as_array().unwrap();
            let meta: Vec<_> = ev.iter().filter(|e| e["ph"] == "M").collect();
            assert_eq!(meta.len(), 8);
            assert!(meta.iter().any(|e| e["name"] == "process_name" && e["pid"] == 2 && e["args"]["name"] == "host \"x\""));
            assert!(meta.iter().any(|e| e["name"] == "thread_name" && e["pid"] == 2 && e["tid"] == 2 && e["args"]["name"] == "pCPU 1"));
            let rec: Vec<_> = ev.iter().filter(|e| e["ph"] != "M").collect();
            assert_eq!(rec.len() as u64, written);
            assert_eq!((rec[0]["pid"].as_u64(), rec[0]["tid"].as_u64(), rec[0]["ts"].as_f64(), rec[0]["dur"].as_f64()), (Some(1), Some(1), Some(1.0), Some(2.5)));
            assert_eq!((rec[0]["bind_id"].as_u64(), rec[0]["flow_out"].as_bool(), rec[0].get("flow_in")), (Some(7), Some(true), None));
            if limit >= 3 {
                assert_eq!((rec[1]["ph"].as_str(), rec[1]["dur"].as_f64(), rec[1].get("bind_id")), (Some("X"), Some(0.0), None));
                assert_eq!((rec[2]["name"].as_str(), rec[2]["flow_in"].as_bool(), rec[2]["pid"].as_u64()), (Some("vhost-vm0"), Some(true), Some(2)));
            }
        }
    }

    #[test]
    fn an_empty_trace_is_a_valid_document() {
        let buf = Shared::default();
        let mut w = TraceWriter::new(Box::new(buf.clone()), 10);
        let p = w.process("p");
        w.track(p, "a");
        w.finish().unwrap();
        assert_eq!(parsed(&buf)["traceEvents"].as_array().unwrap().len(), 4);
        let buf = Shared::default();
        let w = TraceWriter::new(Box::new(buf.clone()), 10);
        w.finish().unwrap();
        assert_eq!(parsed(&buf)["traceEvents"].as_array().unwrap().len(), 0);
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
        let mut w = TraceWriter::new(Box::new(Full), 10);
        let p = w.process("p");
        let t = w.track(p, "a");
        w.span_flow(t, "x", 1, 0, None);
        assert!(w.failed());
        assert!(w.finish().unwrap_err().to_string().contains("No space left"));
    }
}
