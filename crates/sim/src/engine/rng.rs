//! Seeded random streams, one per component.
//!
//! A component's stream seed is derived from the scenario seed and the component's *name*
//! (e.g. `"vm:web0/udp_stream"`), never from its position, so adding a VM does not change the
//! draws of any other VM (ns-3's `AssignStreams` solves the same problem).

/// SplitMix64 step: the standard seeder for xoshiro generators.
fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a over the component name: stable across platforms and Rust versions.
fn fnv1a(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// The seed of component `name`'s stream under scenario seed `seed`.
pub fn stream_seed(seed: u64, name: &str) -> u64 {
    let mut x = seed ^ fnv1a(name).rotate_left(17);
    splitmix64(&mut x)
}

/// xoshiro256++: small, fast, and good enough for simulation input.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// The stream of component `name` under scenario seed `seed`.
    pub fn for_component(seed: u64, name: &str) -> Self {
        Self::from_seed(stream_seed(seed, name))
    }

    /// A stream from a raw 64-bit seed.
    pub fn from_seed(seed: u64) -> Self {
        let mut x = seed;
        let s = [splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x)];
        Self { s }
    }

    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let r = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        r
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Exponentially distributed with the given mean (for Poisson arrivals), in ns.
    #[inline]
    pub fn exp_ns(&mut self, mean_ns: f64) -> u64 {
        let u = 1.0 - self.uniform(); // (0, 1]
        super::time::round_ns(-u.ln() * mean_ns)
    }

    /// True with probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.uniform() < p
    }

    /// Uniform integer in [0, n). `n` must be > 0.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}
