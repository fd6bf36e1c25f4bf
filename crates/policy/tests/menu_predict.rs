//! menu's prediction takes the 64-bit division where its sums fit (issue 52's speed work):
//! the same answer as the 128-bit arithmetic of `get_typical_interval` it replaced, on idle
//! periods from nanoseconds to beyond 2^32 s.

use eventpath_policy::idle::Menu;

/// The prediction as it was computed before: every sum and deviation in 128 bits.
fn reference(all: &[u64]) -> u64 {
    let mut thresh = u64::MAX;
    loop {
        let (mut n, mut sum, mut max) = (0u64, 0u128, 0u64);
        for &x in all.iter().filter(|&&x| x <= thresh) {
            n += 1;
            sum += x as u128;
            max = max.max(x);
        }
        let avg = (sum / n as u128) as u64;
        let var = all.iter().filter(|&&x| x <= thresh).map(|&x| (x as i128 - avg as i128).pow(2) as u128).sum::<u128>()
            / n as u128;
        let stddev = (var as f64).sqrt() as u64;
        if (avg > 6 * stddev && n * 4 >= all.len() as u64 * 3) || stddev <= 20_000 {
            return avg;
        }
        if n * 4 <= all.len() as u64 * 3 || max == 0 {
            return (all.iter().map(|&x| x as u128).sum::<u128>() / all.len() as u128) as u64;
        }
        thresh = max - 1;
    }
}

#[test]
fn prediction_equals_the_128_bit_arithmetic() {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for case in 0..200_000 {
        let mut m = Menu::default();
        let mut seen = Vec::new();
        // Periods of up to 2^(10..62) ns: each magnitude, and mixes of them.
        let bits = 10 + (case % 52) as u32;
        for _ in 0..1 + case % 12 {
            let x = next() >> (64 - bits);
            m.record(x);
            seen.push(x);
            let window = &seen[seen.len().saturating_sub(8)..];
            assert_eq!(m.predict(), reference(window), "{window:?}");
        }
    }
}
