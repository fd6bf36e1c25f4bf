//! `[host.io]` on the testbed: the simulator's own checks (`IoHandling::check`, unchanged) plus
//! what only a real host adds — its vCPU pins are `vm[i].pin`, a vhost thread is pinned with
//! `backend.pin` — and the one key the testbed lays out another way (`combining_level`).
use super::*;
use eventpath_policy::vhost::VhostConfig;

impl Scenario {
    /// `[host.io]` against the mode, this host's CPUs and the VMs' pins: one line per refusal.
    pub(super) fn validate_io(&self) -> Result<()> {
        let io = &self.host.io;
        let cores = io.cores.as_deref().unwrap_or(&[]);
        // Said here first, in the testbed's words (the simulator's name its own keys).
        if io.handling == Handling::Vhost && io.cores.is_some() {
            return Err(Error::Input(
                "key `host.io.cores`: only for handling = \"es2\", \"elvis\" or \"pmd\"; the testbed pins vhost threads with backend.pin".into(),
            ));
        }
        for (i, c) in cores.iter().enumerate() {
            if let Some(vm) = self.vm.iter().position(|v| v.pin.contains(&(*c as usize))) {
                return Err(Error::Input(format!(
                    "key `host.io.cores[{i}]`: CPU {c} is an I/O core, but vm[{vm}].pin pins a vCPU to it; an I/O core runs only back-end threads"
                )));
            }
        }
        let pins: Vec<Vec<u32>> = self.vm.iter().map(|v| v.pin.iter().map(|&c| c as u32).collect()).collect();
        let pins: Vec<(usize, &[u32])> = pins.iter().enumerate().map(|(i, p)| (i, p.as_slice())).collect();
        // CPU ids, not a count: under a taskset or a cpuset the allowed ids need not start at 0.
        for (i, &c) in cores.iter().enumerate() {
            super::check::cpu(&format!("host.io.cores[{i}]"), c as usize)?;
        }
        io.check(u32::MAX, &pins).map_err(Error::Input)?;
        if io.combining_level.is_some() {
            // The only [host.io] key the testbed does not read: it groups devices by backend.threads.
            return Err(Error::Input(
                "key `host.io.combining_level`: the testbed does not read it; its joint threads are set by backend.threads (\"shared\": one for every device, \"per_queue\": one per device); remove it".into(),
            ));
        }
        Ok(())
    }

    /// Host CPUs of the back-end threads, assigned round robin: `host.io.cores` (es2, elvis,
    /// pmd), or `backend.pin` (vhost). Empty: not pinned.
    pub fn backend_cpus(&self) -> Vec<usize> {
        match &self.host.io.cores {
            Some(cores) => cores.iter().map(|&c| c as usize).collect(),
            None => self.backend.pin.clone(),
        }
    }

    /// The vhost handler loop's configuration (`handling = "vhost"`; an optimistic ES2 queue in
    /// notification mode runs vhost's defaults, as in the simulator).
    pub fn vhost_config(&self) -> VhostConfig {
        VhostConfig { busyloop_timeout_us: self.backend.busyloop_us, ..Default::default() }
    }
}
