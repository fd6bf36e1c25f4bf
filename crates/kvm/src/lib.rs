//! KVM testbed (see DESIGN §5). Work in progress.
