//! The probe's trial statistics and its outlier rule (docs/kvm.md, "The probe").
//!
//! Each exported parameter is measured once per trial. Its exported value is the **median** of
//! the trials that gave one. The trials must **agree**: the largest trial may be at most
//! [`MAX_SPREAD`] times the smallest. Up to [`set_aside_allowed`]`(n)` = ⌊n/5⌋ trials (one of the
//! default five, none of `--quick`'s three) may be set aside first, each either a trial that gave
//! no value or the trial farthest from the median (by ratio); a single trial taken while
//! something else held the CPU does not then cost the parameter, but two of five do, and so does
//! a spread with no single culprit. A parameter whose trials still span more than 3x is
//! **refused**: it is not written into profile.toml.
//!
//! Why a ratio and not a MAD test: these are latencies and costs, positive and right-skewed, and
//! the failures seen are factors (an MSI injection p50 of 45 µs in one run and ~3 ms in another,
//! when the vCPU thread was descheduled), not a few standard deviations; with three to five
//! trials a MAD is zero or one trial's distance, a ratio is stated in the unit a reader checks.
use serde::Serialize;

/// Largest max/min ratio of the (kept) trials of an exported parameter.
pub const MAX_SPREAD: f64 = 3.0;

/// Trials that may be set aside (missing, or farthest from the median) out of `n`: ⌊n/5⌋.
pub fn set_aside_allowed(n: usize) -> usize {
    n / 5
}

/// The rule in one sentence, written into probe.json.
pub const RULE: &str = "value = median of the trials; refused (not written into profile.toml) when the trials span more than 3x (max/min > 3) after setting aside at most floor(n/5) trials (none of 3, one of 5): trials with no value first, then those farthest from the median by ratio";

/// A parameter's trials, summarised.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TrialStats {
    /// Each trial's value in trial order (`null`: that trial gave none).
    pub trials: Vec<Option<f64>>,
    /// Median of the trials that gave a value.
    pub median: f64,
    /// Smallest trial.
    pub min: f64,
    /// Largest trial.
    pub max: f64,
    /// `max / min` over every trial that gave a value.
    pub spread: f64,
    /// Indices of the trials set aside before the agreement test (with no value, or farthest
    /// from the median).
    pub set_aside: Vec<usize>,
    /// `max / min` of the trials kept.
    pub kept_spread: f64,
}

/// The verdict on one parameter's trials.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// Statistics (`None`: no trial gave a value).
    pub stats: Option<TrialStats>,
    /// Why the parameter is refused (`None`: it is exported).
    pub refused: Option<String>,
}

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// A value of this unit for a reason string (`ns` values shown in µs or ms).
pub fn show(v: f64, unit: &str) -> String {
    if unit != "ns" {
        return format!("{v:.3}");
    }
    if v >= 1e6 {
        format!("{:.3} ms", v / 1e6)
    } else {
        format!("{:.3} µs", v / 1e3)
    }
}

/// Applies the rule to `trials` (values in `unit`; `None`, non-finite or ≤ 0: no value).
pub fn judge(trials: &[Option<f64>], unit: &str) -> Judged {
    let n = trials.len();
    let trials: Vec<Option<f64>> = trials.iter().map(|t| t.filter(|x| x.is_finite() && *x > 0.0)).collect();
    let valid: Vec<(usize, f64)> = trials.iter().enumerate().filter_map(|(i, t)| t.map(|x| (i, x))).collect();
    if valid.is_empty() {
        return Judged { stats: None, refused: Some(format!("none of {n} trials gave a value")) };
    }
    let mut sorted: Vec<f64> = valid.iter().map(|v| v.1).collect();
    sorted.sort_by(f64::total_cmp);
    let (med, min, max) = (median(&sorted), sorted[0], sorted[sorted.len() - 1]);
    let budget = set_aside_allowed(n);
    let mut set_aside: Vec<usize> = trials.iter().enumerate().filter(|(_, t)| t.is_none()).map(|(i, _)| i).collect();
    let mut kept = valid.clone();
    let spread_of = |k: &[(usize, f64)]| {
        let (lo, hi) = k.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v.1), hi.max(v.1)));
        hi / lo
    };
    // Farthest from the median by ratio first, while the kept trials disagree and budget is left.
    while spread_of(&kept) > MAX_SPREAD && set_aside.len() < budget && kept.len() > 1 {
        let far = (0..kept.len()).max_by(|&a, &b| (kept[a].1 / med).ln().abs().total_cmp(&(kept[b].1 / med).ln().abs())).unwrap();
        set_aside.push(kept.remove(far).0);
    }
    set_aside.sort_unstable();
    let kept_spread = spread_of(&kept);
    let stats = TrialStats { trials: trials.clone(), median: med, min, max, spread: max / min, set_aside: set_aside.clone(), kept_spread };
    let missing = n - valid.len();
    let refused = if missing > budget {
        Some(format!("{missing} of {n} trials gave no value (at most {budget} may be set aside)"))
    } else if kept_spread > MAX_SPREAD {
        let (lo, hi) = kept.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v.1), hi.max(v.1)));
        Some(format!(
            "trials disagree: {} .. {} (max/min {:.1} > {MAX_SPREAD}) after setting aside {} of {n} (at most {budget}); median would be {}",
            show(lo, unit),
            show(hi, unit),
            kept_spread,
            set_aside.len(),
            show(med, unit)
        ))
    } else {
        None
    };
    Judged { stats: Some(stats), refused }
}
