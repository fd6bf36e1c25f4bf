//! A scenario key's documentation (`eventpath keys`): its type, unit, default and meaning.
//! Defined below the scenario so that each part of the configuration lists its own keys beside
//! its types (`io.rs`: `[host.io]`, a back end's keys with its variant); `scenario::keys`
//! joins the lists in the order a scenario file is written.

/// One scenario key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Key {
    /// Dotted path (`vm.net.queue_size`).
    pub key: &'static str,
    /// For a key of one workload (`vm.workload.*`) or moderation scheme
    /// (`vm.net.moderation.*`): that `kind`; else empty.
    pub kind: &'static str,
    /// Value type: `string`, `integer`, `float`, `bool`, `array of integers`, `table`, ...
    #[serde(rename = "type")]
    pub ty: &'static str,
    /// Unit ("" where it has none).
    pub unit: &'static str,
    /// Default: a value, `required`, or what its absence means (`absent: ...`).
    pub default: &'static str,
    /// What it sets, the values allowed, and where it applies.
    pub meaning: &'static str,
    /// A value the parser accepts (a TOML literal), used by the tests.
    #[serde(skip)]
    pub example: &'static str,
}

/// A key's row (in the order of [`Key`]'s fields).
pub(crate) const fn k(key: &'static str, kind: &'static str, ty: &'static str, unit: &'static str, default: &'static str, meaning: &'static str, example: &'static str) -> Key {
    Key { key, kind, ty, unit, default, meaning, example }
}

/// The value types.
pub(crate) const S: &str = "string";
pub(crate) const I: &str = "integer";
pub(crate) const F: &str = "float";
pub(crate) const B: &str = "bool";
pub(crate) const PCPUS: &str = "array of integers";

/// `N` keys: the lists `parts`, in order (`N` their total length; checked at compile time).
pub(crate) const fn joined<const N: usize>(parts: &[&[Key]]) -> [Key; N] {
    let mut out = [k("", "", "", "", "", "", ""); N];
    let (mut n, mut p) = (0, 0);
    while p < parts.len() {
        let mut i = 0;
        while i < parts[p].len() {
            out[n] = parts[p][i];
            n += 1;
            i += 1;
        }
        p += 1;
    }
    assert!(n == N, "N is the lists' total length");
    out
}
