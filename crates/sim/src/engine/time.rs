//! Simulated time: integer nanoseconds, and the conversions at the edges.

/// Simulated time in nanoseconds since the start of the run.
pub type Time = u64;

/// Nanoseconds per second, for conversions at the edges (scenario input, reports).
pub const NS_PER_S: u64 = 1_000_000_000;

/// Convert seconds (as written in a scenario) to nanoseconds, rounding to the nearest ns.
pub fn secs_to_ns(s: f64) -> Time {
    (s * NS_PER_S as f64).round() as Time
}

/// Round a non-negative ns value to the nearest integer ns, halves away from zero: exactly
/// `x.round() as Time` (negative and NaN give 0, huge values saturate) without a libm call —
/// x86-64's baseline has no rounding instruction, and the model rounds a cost per packet.
#[inline]
pub fn round_ns(x: f64) -> Time {
    // Every cost and delay: a signed conversion each way is one instruction, where the
    // unsigned ones x86-64 emulates with branches (measured: the 14-VM bench −4 %).
    const EXACT: f64 = 4_503_599_627_370_496.0; // 2^52
    if (0.0..EXACT).contains(&x) {
        // SAFETY: `x` is finite and within i64's range, which is all `to_int_unchecked` needs.
        let t = unsafe { x.to_int_unchecked::<i64>() };
        // Below 2^52 the truncation and the fraction `x - t` are exact.
        return (t + (x - t as f64 >= 0.5) as i64) as Time;
    }
    let t = x as Time; // truncates; saturates; NaN and negatives give 0
    // Below 2^53 the fraction `x - t` is exact; above, `x` is an integer and the fraction 0.
    if x - t as f64 >= 0.5 {
        t.saturating_add(1)
    } else {
        t
    }
}
