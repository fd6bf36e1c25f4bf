//! No application (`[vm.workload]` absent): the VM's vCPUs idle, or run the guest CPU burn.

use crate::model::workload::app::{App, DevView, Measure, Step};
use crate::model::workload::ctx::Ctx;

/// No application.
#[derive(Debug)]
pub struct IdleApp;

impl App for IdleApp {
    fn next(g: &mut impl Ctx<Self>, v: u32) {
        g.idle(v, None)
    }
    fn step_done(_g: &mut impl Ctx<Self>, _v: u32, _s: Step) {
        unreachable!("an idle VM has no steps")
    }
    fn step_name(_s: Step) -> &'static str {
        "idle"
    }
    fn sent_life(&self) -> u64 {
        0
    }
    fn reset_metrics(&mut self) {}
    fn describe(&self) -> String {
        "idle".into()
    }
    fn measure<'a>(&'a self, _d: DevView<'a>) -> Measure<'a> {
        Measure::default()
    }
}
