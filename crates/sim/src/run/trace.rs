//! `eventpath trace`: a run that also records a timeline (Chrome trace-event JSON, opens in
//! Perfetto). The timeline is written as it is recorded, so memory does not grow with
//! `--limit`; [`simulate_traced_to_file`] writes a file that is complete or absent.

use super::{simulate_inner, RunOutput};
pub use crate::model::trace::TraceCounts;
use crate::engine::Time;
use crate::error::{num, InputError, InputResult};
use crate::scenario::Checked;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// What to record for `eventpath trace`: simulated seconds [from, to] (warm-up included, so
/// 0 is the start of the run) and the most events to keep.
#[derive(Debug, Clone, Copy)]
pub struct TraceOptions {
    /// Start of the recorded window (s).
    pub from_s: f64,
    /// End of the recorded window (s).
    pub to_s: f64,
    /// Most events kept; the rest are counted in the trace's `otherData.dropped_events`.
    pub limit: usize,
}

/// Simulated time between two looks at whether the trace can still be written.
const CHUNK_NS: Time = 10_000_000;

fn check(c: &Checked, t: &TraceOptions) -> InputResult<()> {
    // The window must overlap the run: a --from past its end (or one that saturated the
    // nanosecond clock) gave an empty trace and exit 0.
    let end_s = c.scenario.warmup_s + c.scenario.duration_s;
    if !(t.from_s.is_finite() && t.to_s.is_finite() && 0.0 <= t.from_s && t.from_s < t.to_s && t.from_s < end_s) {
        return Err(InputError::Option(format!(
            "--from {} --to {}: not allowed; expected 0 ≤ from < to and from < {} (simulated seconds from the start, warm-up included; the run ends at {})",
            num(t.from_s),
            num(t.to_s),
            num(end_s),
            num(end_s)
        )));
    }
    if t.limit == 0 {
        return Err(InputError::Option("--limit 0: not allowed; expected at least 1 event".into()));
    }
    Ok(())
}

/// Simulate a checked scenario while writing its timeline to `out` (buffer it); returns the
/// run and what the trace holds, or the first write error.
pub fn simulate_traced_to(c: &Checked, t: TraceOptions, out: Box<dyn Write + Send>) -> InputResult<(RunOutput, std::io::Result<TraceCounts>)> {
    check(c, &t)?;
    let (run, _, trace, _) = simulate_inner(c, Some((t, out)), super::External::none(), CHUNK_NS, &mut |_, _| true);
    Ok((run, trace.expect("tracing was enabled")))
}

/// Simulate a checked scenario while writing its timeline to the file `path`: written beside it
/// and renamed into place when complete, so a failed write (a full disk) leaves no partial file
/// and is one line naming `--out`. A `path` that is not a regular file (a pipe, /dev/stdout) is
/// written directly.
pub fn simulate_traced_to_file(c: &Checked, t: TraceOptions, path: &Path) -> InputResult<(RunOutput, TraceCounts)> {
    check(c, &t)?;
    let cannot = |e: std::io::Error| InputError::Option(format!("--out {}: cannot write the trace ({e})", path.display()));
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        let file = std::fs::OpenOptions::new().write(true).open(path).map_err(cannot)?;
        let (run, written) = simulate_traced_to(c, t, Box::new(std::io::BufWriter::with_capacity(1 << 20, file)))?;
        return Ok((run, written.map_err(cannot)?));
    }
    let name = path.file_name().ok_or_else(|| cannot(std::io::Error::other("not a file name")))?;
    let partial = path.with_file_name(format!(".{}.partial", name.to_string_lossy()));
    let file = std::fs::File::create(&partial).map_err(cannot)?;
    let (run, written) = simulate_traced_to(c, t, Box::new(std::io::BufWriter::with_capacity(1 << 20, file)))?;
    match written.and_then(|n| std::fs::rename(&partial, path).map(|_| n)) {
        Ok(n) => Ok((run, n)),
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(cannot(e))
        }
    }
}

/// A `Write` into memory that the caller reads back once the run has dropped its handle.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().map_err(|_| std::io::Error::other("poisoned"))?.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Simulate a checked scenario while recording a timeline; returns the run and the trace as
/// Chrome trace-event JSON text (held in memory: for small traces and tests; the CLI writes
/// the file with [`simulate_traced_to_file`]).
pub fn simulate_traced(c: &Checked, t: TraceOptions) -> InputResult<(RunOutput, String)> {
    let buf = Shared::default();
    let (run, written) = simulate_traced_to(c, t, Box::new(buf.clone()))?;
    written.expect("writing to memory does not fail");
    let bytes = std::mem::take(&mut *buf.0.lock().expect("not poisoned"));
    Ok((run, String::from_utf8(bytes).expect("serde_json writes UTF-8")))
}
