//! Timeline recording in the Chrome trace-event JSON format, which Perfetto (ui.perfetto.dev)
//! and chrome://tracing open. Tracks are threads of one process: one per vCPU, per I/O thread,
//! per pCPU, as the model names them. Recording is bounded: past `limit` events the rest are
//! counted, not stored, so a long run cannot exhaust memory.

use crate::engine::Time;
use serde::Serialize;

/// An event's name: a static string, or one interned once with [`Trace::intern`] (so that
/// recording never allocates).
#[derive(Debug, Clone, Copy)]
pub enum Name {
    /// A literal.
    Static(&'static str),
    /// Index into the trace's interned names.
    Interned(u32),
}

impl From<&'static str> for Name {
    fn from(s: &'static str) -> Name {
        Name::Static(s)
    }
}

/// One recorded event.
#[derive(Debug, Clone, Copy)]
enum Rec {
    /// A span on a track: [start, start + dur).
    Span { track: u32, name: Name, start: Time, dur: Time },
    /// A point event on a track.
    Instant { track: u32, name: Name, at: Time },
}

/// A bounded timeline.
#[derive(Debug, Clone)]
pub struct Trace {
    tracks: Vec<String>,
    names: Vec<String>,
    recs: Vec<Rec>,
    limit: usize,
    /// Events not stored because the limit was reached.
    pub dropped: u64,
}

#[derive(Serialize)]
struct Json<'a> {
    #[serde(rename = "traceEvents")]
    trace_events: Vec<serde_json::Value>,
    #[serde(rename = "displayTimeUnit")]
    display_time_unit: &'a str,
    #[serde(rename = "otherData")]
    other_data: serde_json::Value,
}

impl Trace {
    /// An empty trace that stores at most `limit` events.
    pub fn new(limit: usize) -> Self {
        Trace { tracks: Vec::new(), names: Vec::new(), recs: Vec::with_capacity(limit.min(1 << 16)), limit, dropped: 0 }
    }

    /// Register a track (a row in the viewer); returns its id.
    pub fn track(&mut self, name: impl Into<String>) -> u32 {
        self.tracks.push(name.into());
        self.tracks.len() as u32 - 1
    }

    /// Intern a dynamic name once (at set-up), for use in later spans.
    pub fn intern(&mut self, name: impl Into<String>) -> Name {
        self.names.push(name.into());
        Name::Interned(self.names.len() as u32 - 1)
    }

    fn name(&self, n: Name) -> &str {
        match n {
            Name::Static(s) => s,
            Name::Interned(i) => &self.names[i as usize],
        }
    }

    fn push(&mut self, r: Rec) {
        if self.recs.len() < self.limit {
            self.recs.push(r);
        } else {
            self.dropped += 1;
        }
    }

    /// Record a span of `dur` ns starting at `start` on `track`.
    #[inline]
    pub fn span(&mut self, track: u32, name: impl Into<Name>, start: Time, dur: Time) {
        self.push(Rec::Span { track, name: name.into(), start, dur });
    }

    /// Record a point event.
    #[inline]
    pub fn instant(&mut self, track: u32, name: impl Into<Name>, at: Time) {
        self.push(Rec::Instant { track, name: name.into(), at });
    }

    /// Events stored.
    pub fn len(&self) -> usize {
        self.recs.len()
    }

    /// True if nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// The trace as Chrome trace-event JSON (timestamps in µs, as the format requires).
    pub fn to_json(&self, title: &str) -> String {
        let us = |t: Time| t as f64 / 1000.0;
        let mut ev: Vec<serde_json::Value> = Vec::with_capacity(self.recs.len() + self.tracks.len() + 1);
        ev.push(serde_json::json!({"ph": "M", "name": "process_name", "pid": 1, "args": {"name": title}}));
        for (i, t) in self.tracks.iter().enumerate() {
            ev.push(serde_json::json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": i, "args": {"name": t}}));
            ev.push(serde_json::json!({"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": i, "args": {"sort_index": i}}));
        }
        for r in &self.recs {
            ev.push(match *r {
                Rec::Span { track, name, start, dur } => {
                    serde_json::json!({"ph": "X", "name": self.name(name), "pid": 1, "tid": track, "ts": us(start), "dur": us(dur)})
                }
                Rec::Instant { track, name, at } => {
                    serde_json::json!({"ph": "i", "s": "t", "name": self.name(name), "pid": 1, "tid": track, "ts": us(at)})
                }
            });
        }
        let j = Json {
            trace_events: ev,
            display_time_unit: "ns",
            other_data: serde_json::json!({"dropped_events": self.dropped, "limit": self.limit}),
        };
        serde_json::to_string(&j).expect("trace serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_named_tracks_spans_and_instants() {
        let mut t = Trace::new(10);
        let v = t.track("vCPU 0");
        t.span(v, "exit:io_instruction", 1_000, 2_000);
        t.instant(v, "kick", 1_000);
        let n = t.intern(String::from("vhost-vm0"));
        t.span(v, n, 3_000, 10);
        let j: serde_json::Value = serde_json::from_str(&t.to_json("demo")).unwrap();
        let ev = j["traceEvents"].as_array().unwrap();
        assert!(ev.iter().any(|e| e["ph"] == "M" && e["args"]["name"] == "vCPU 0"));
        let span = ev.iter().find(|e| e["ph"] == "X").unwrap();
        assert_eq!(span["ts"], 1.0);
        assert_eq!(span["dur"], 2.0);
        assert!(ev.iter().any(|e| e["ph"] == "i" && e["name"] == "kick"));
        assert!(ev.iter().any(|e| e["ph"] == "X" && e["name"] == "vhost-vm0"));
    }

    #[test]
    fn stops_storing_at_the_limit_and_counts_the_rest() {
        let mut t = Trace::new(2);
        for i in 0..5 {
            t.instant(0, "x", i);
        }
        assert_eq!(t.len(), 2);
        assert_eq!(t.dropped, 3);
    }
}
