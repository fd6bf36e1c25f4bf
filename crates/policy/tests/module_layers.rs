//! The routing interface is a leaf: routers use it, it uses no router, and no router reaches back
//! into `routing` (which selects them) for anything but the interface.

const TYPES: &str = include_str!("../src/routing/types.rs");
const ROUTERS: [(&str, &str); 2] =
    [("hbalance.rs", include_str!("../src/hbalance.rs")), ("es2/redirect.rs", include_str!("../src/es2/redirect.rs"))];

#[test]
fn routing_types_use_nothing_of_the_crate() {
    assert!(!TYPES.contains("crate::"), "routing/types.rs must not depend on other modules");
}

#[test]
fn routers_use_only_the_routing_interface() {
    for (file, text) in ROUTERS {
        for (i, line) in text.lines().enumerate() {
            if let Some(at) = line.find("crate::routing") {
                assert!(line[at..].starts_with("crate::routing::types::"), "{file}:{}: {line}", i + 1);
            }
        }
    }
}
