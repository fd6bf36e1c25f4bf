//! Scenario files embed policy configs: defaults fill missing keys, unknown keys are errors.
#![cfg(feature = "serde")]

use eventpath_policy::delivery::features::ApicFeatures;
use eventpath_policy::elvis::ElvisConfig;
use eventpath_policy::es2::{JointConfig, OptimisticConfig, PerceptiveConfig};
use eventpath_policy::halt_poll::HaltPollConfig;
use eventpath_policy::moderation::{AirConfig, CgrConfig, DimConfig, FirConfig, ModerationConfig};
use eventpath_policy::pmd::{PmdConfig, PmdIdle};
use eventpath_policy::routing::RouterConfig;
use eventpath_policy::vhost::VhostConfig;

#[test]
fn empty_objects_give_defaults() {
    assert_eq!(serde_json::from_str::<VhostConfig>("{}").unwrap(), VhostConfig::default());
    assert_eq!(serde_json::from_str::<PerceptiveConfig>("{}").unwrap(), PerceptiveConfig::default());
    assert_eq!(serde_json::from_str::<OptimisticConfig>("{}").unwrap(), OptimisticConfig::default());
    assert_eq!(serde_json::from_str::<JointConfig>("{}").unwrap(), JointConfig::default());
    assert_eq!(serde_json::from_str::<ElvisConfig>("{}").unwrap(), ElvisConfig::default());
    assert_eq!(serde_json::from_str::<HaltPollConfig>("{}").unwrap(), HaltPollConfig::default());
    assert_eq!(serde_json::from_str::<FirConfig>("{}").unwrap(), FirConfig::default());
    assert_eq!(serde_json::from_str::<CgrConfig>("{}").unwrap(), CgrConfig::default());
    assert_eq!(serde_json::from_str::<AirConfig>("{}").unwrap(), AirConfig::default());
    assert_eq!(serde_json::from_str::<DimConfig>("{}").unwrap(), DimConfig::default());
    assert_eq!(serde_json::from_str::<PmdConfig>("{}").unwrap(), PmdConfig::default());
    assert_eq!(serde_json::from_str::<ApicFeatures>("{}").unwrap(), ApicFeatures::default());
    let p: PmdConfig = serde_json::from_str(r#"{"idle": "sleep"}"#).unwrap();
    assert_eq!((p.idle, p.max_sleep_us), (PmdIdle::Sleep, 250));
}

#[test]
fn partial_objects_override_only_given_keys() {
    let p: PerceptiveConfig = serde_json::from_str(r#"{"quota": 16}"#).unwrap();
    assert_eq!(p.quota, 16);
    let v: VhostConfig = serde_json::from_str(r#"{"busyloop_timeout_us": 50}"#).unwrap();
    assert_eq!((v.busyloop_timeout_us, v.pkt_weight), (50, 256));
}

#[test]
fn unknown_keys_are_rejected_with_their_name() {
    let e = serde_json::from_str::<PerceptiveConfig>(r#"{"quotta": 4}"#).unwrap_err();
    assert!(e.to_string().contains("quotta"), "{e}");
    let e = serde_json::from_str::<ModerationConfig>(r#"{"kind": "fir", "itr": 8000, "x": 1}"#).unwrap_err();
    assert!(e.to_string().contains('x'), "{e}");
}

#[test]
fn tagged_moderation_and_router_round_trip() {
    let m: ModerationConfig = serde_json::from_str(r#"{"kind": "cgr", "timeslice_ns": 50000000}"#).unwrap();
    let ModerationConfig::Cgr(c) = &m else { panic!("{m:?}") };
    assert_eq!(c.timeslice_ns, 50_000_000);
    let back: ModerationConfig = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
    assert_eq!(back, m);
    let m: ModerationConfig = serde_json::from_str(r#"{"kind": "dim", "profiles": "rx_cqe"}"#).unwrap();
    assert_eq!(m, ModerationConfig::Dim(DimConfig { profiles: "rx_cqe".into(), start_ix: 1 }));
    let e = serde_json::from_str::<ModerationConfig>(r#"{"kind": "dim", "itr": 7}"#).unwrap_err();
    assert!(e.to_string().contains("unknown field `itr`"), "{e}");
    // docs/kvm.md's spelling, which is also the one written back; the old one is still read.
    let r: RouterConfig = serde_json::from_str(r#""h_balance""#).unwrap();
    assert_eq!(r, RouterConfig::HBalance);
    assert_eq!(serde_json::to_string(&r).unwrap(), r#""h_balance""#);
    let r: RouterConfig = serde_json::from_str(r#""hbalance""#).unwrap();
    assert_eq!(r, RouterConfig::HBalance);
}

#[test]
fn every_moderation_kind_names_a_variant() {
    for kind in ModerationConfig::KINDS {
        let m: ModerationConfig = serde_json::from_str(&format!(r#"{{"kind": "{kind}"}}"#)).unwrap();
        assert_eq!(serde_json::to_value(&m).unwrap()["kind"], kind);
    }
}
