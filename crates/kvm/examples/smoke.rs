use eventpath_kvm::vmm::{self, layout::*, vcpu::VcpuThread, KickVia, Vm, VmSpec};
use eventpath_kvm::guest::ctl::CtlView;
use eventpath_kvm::ctl_off;
use std::sync::{Arc, atomic::AtomicBool};
fn main() {
    let kvm = vmm::open_kvm().unwrap();
    let mem;
    let mut vm = Vm::new(&kvm, VmSpec { name: "vm0".into(), vcpus: 2, queues: 1, kick: KickVia::Pio, halt_poll_ns: None, extra_msis: 1 }).unwrap();
    mem = vm.mem.clone();
    let c0 = CtlView::new(&mem, 0);
    c0.set(ctl_off!(role), ROLE_SPIN);
    let c1 = CtlView::new(&mem, 1);
    c1.set(ctl_off!(role), ROLE_IRQ_SINK);
    c1.set(ctl_off!(halt_idle), 1);
    vm.set_route(1, 1).unwrap();
    let go = Arc::new(AtomicBool::new(false));
    let ts: Vec<_> = vm.take_vcpus().into_iter().enumerate().map(|(i, v)| VcpuThread::spawn(format!("v{i}"), v, None, go.clone()).unwrap()).collect();
    go.store(true, std::sync::atomic::Ordering::SeqCst);
    std::thread::sleep(std::time::Duration::from_millis(100));
    for k in 0..5 {
        vm.irq_fds[1].write(1).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(10));
        println!("irq {k}: count1={} seen={} halts={}", vm.mem.load_u64(irq_counter(1)).unwrap(), c1.get(ctl_off!(irq_seen)), c1.get(ctl_off!(halts)));
    }
    println!("hb0={} started0={} hb1={}", c0.get(ctl_off!(heartbeat)), c0.get(ctl_off!(started)), c1.get(ctl_off!(heartbeat)));
    for t in ts { let r = t.stop(); println!("{:?} exits={:?} halt_exits={:?}", r.error, r.stats_after.get("exits").unwrap_or(&0) - r.stats_before.get("exits").unwrap_or(&0), r.stats_after.get("halt_exits")); }
}
