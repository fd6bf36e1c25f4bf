//! Workloads as scenario data. A workload is parameters plus a small behaviour in
//! `model::workload`; adding one touches this enum and its behaviour, never the engine.

use super::limits::{check_rate, MAX_RATE_PPS, MIN_RATE_PPS};
use serde::{de::Error as _, Deserialize, Deserializer, Serialize};

/// What a VM runs, chosen by `kind`. Written in a scenario as a table with a `kind` key and the
/// kind's parameters (see [`by_kind`]).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Workload {
    /// netperf UDP_STREAM from the guest: send datagrams of `message_bytes`.
    UdpStream {
        /// Payload bytes per datagram (1..=65507).
        message_bytes: u32,
        /// Open-loop send rate in datagrams/s; absent: as fast as the vCPU can.
        rate_pps: Option<f64>,
    },
    /// netperf UDP_STREAM to the guest: the remote client sends datagrams of `message_bytes` at
    /// `rate_pps` (open loop), or as fast as its core sends them (netperf's default); the guest
    /// application receives them. Also written `kind = "packet_gen"` (DID §5.1's PacketGen:
    /// fixed-rate UDP into a receiver in the VM).
    #[serde(alias = "packet_gen")]
    UdpReceive {
        /// Payload bytes per datagram (1..=65507).
        message_bytes: u32,
        /// Client send rate in datagrams/s (> 0); absent: unpaced, bounded by the client's
        /// core (`client.send_call_ns`, `tx_byte_ns`, `tx_skb_ns`) and its send buffer.
        #[serde(default)]
        rate_pps: Option<f64>,
    },
    /// netperf UDP_RR (or ping with `interval_us`): the client sends a `request_bytes` request,
    /// the guest application answers with `response_bytes`; closed loop with one transaction in
    /// flight, or open loop at a fixed interval.
    UdpRr {
        /// Request payload bytes (1..=65507).
        request_bytes: u32,
        /// Response payload bytes (1..=65507).
        response_bytes: u32,
        /// Send a request every `interval_us` µs (ping); absent: next request when the reply
        /// arrives (netperf UDP_RR).
        interval_us: Option<f64>,
    },
    /// ping from the remote machine to the guest: ICMP echo requests of `bytes` payload, answered
    /// by the guest kernel itself (`icmp_rcv` → `icmp_echo` → `icmp_reply`) in the NET_RX
    /// softirq on the vCPU that took the interrupt — no application thread wakes.
    Ping {
        /// ICMP payload bytes (`ping -s`, default 56: a 64-byte ICMP message; 1..=65507).
        #[serde(default = "default_ping_bytes")]
        bytes: u32,
        /// µs between echo requests (`ping -i`; ping's default is 1 s); absent: the next request
        /// when the reply arrives (`ping -A` on an idle path).
        interval_us: Option<f64>,
    },
    /// A fixed-rate ping from the guest (sockperf under-load, `ping -i`): every `interval_us`
    /// the application sends a `message_bytes` datagram to an echo server on the client
    /// machine and reads the echoes; latency is the round trip the guest sees.
    UdpPing {
        /// Payload bytes per datagram (1..=65507).
        message_bytes: u32,
        /// µs between sends (open loop).
        interval_us: f64,
    },
    /// cyclictest (DID §5.4): a highest-priority thread woken by the guest's LAPIC timer every
    /// `interval_us`; its latency is from the timer's expiry to the thread running.
    Cyclictest {
        /// µs between wake-ups (> 0; DID runs 1000).
        interval_us: f64,
    },
    /// The KVM testbed's guest (`model::request_stream`): requests of 64 bytes published straight
    /// into the TX virtqueue by a spinning loop on vCPU 0, open loop at `rate` or closed loop with
    /// `window` outstanding; completions reaped by polling the used ring or on interrupts.
    RequestStream {
        /// Requests/s (open loop; 1..=1e8).
        rate: Option<f64>,
        /// Requests outstanding (closed loop; 1..=4096).
        window: Option<u32>,
        /// How the guest sees completions: "poll" (default) or "irq".
        #[serde(default, deserialize_with = "super::de::variant")]
        consume: Consume,
    },
    /// The KVM testbed's interrupt generator (`model::irq_source`): an MSI open loop, each gap
    /// uniform in [0.5, 1.5] × `interval_us`, aimed at vCPU `vcpu` and routed by the VM's
    /// `interrupt_routing`; latency from the raise to the handler, also by what was running.
    IrqSource {
        /// Mean µs between interrupts.
        interval_us: f64,
        /// The vCPU it is aimed at (default 0).
        #[serde(default)]
        vcpu: u32,
    },
    /// netperf TCP_STREAM from the guest: `write()`s of `message_bytes`, by `streams` netperf
    /// threads each with a TCP connection of its own.
    TcpStream {
        /// Bytes per `write()` (1..=1048576).
        message_bytes: u32,
        /// Send window (min of cwnd, rwnd and socket buffer) in bytes, per connection; default
        /// 4 MiB, enough for a 40 GbE link at datacenter RTTs, so the stream is CPU or link
        /// bound.
        #[serde(default = "default_window")]
        window_bytes: u32,
        /// netperf threads (1..=64; default 1): thread `s` runs on vCPU `s % vcpus`, threads
        /// on one vCPU share it under the guest's CFS (ES2 §6.3.1 runs 4 on 4 vCPUs).
        #[serde(default = "one")]
        streams: u32,
    },
    /// netperf TCP_STREAM to the guest: the remote client `write()`s `send_bytes` at a time
    /// (netperf `-m`) and sends full segments, in TSO skbs where its NIC has TSO, as fast as its
    /// core, its congestion window and the guest's receive window allow; the guest application
    /// `recv()`s `message_bytes` at a time.
    TcpReceive {
        /// Bytes per `recv()` (1..=1048576).
        message_bytes: u32,
        /// Bytes per client `write()` (netperf `-m`, 1..=1048576); default 16,384, the client
        /// socket's initial send buffer, which netperf uses when `-m` is not given.
        #[serde(default = "netperf_send_bytes")]
        send_bytes: u32,
        /// A fixed guest receive window in bytes (`SO_RCVBUF`, as `netperf -S` sets it: the
        /// kernel's autotuning off). Absent (the default): the buffer starts at the profile
        /// kernel's `tcp_rmem[1]` and autotunes (`model/workload/rcvbuf.rs`).
        #[serde(default)]
        window_bytes: Option<u32>,
    },
    /// netperf TCP_RR: the client sends a `request_bytes` request on each of `concurrency`
    /// persistent connections, the guest application answers with `response_bytes`; closed loop.
    TcpRr {
        /// Request payload bytes (1..=14480: ten segments, the initial window).
        request_bytes: u32,
        /// Response payload bytes (1..=1048576).
        response_bytes: u32,
        /// Transactions in flight (connections), 1..=1024; netperf TCP_RR uses 1.
        #[serde(default = "one")]
        concurrency: u32,
    },
    /// memcached in the guest with a memaslap-like closed-loop client on the remote machine,
    /// or, with `rate_rps`, a rate-paced client (mutilate `-q`-like) for QoS searches.
    Memcached {
        /// Outstanding requests (one per connection), 1..=1024 (memaslap `--concurrency`).
        concurrency: u32,
        /// Fraction of gets, 0..=1 (memaslap `--cfg_cmd` get proportion; default 0.9).
        #[serde(default = "default_get_ratio")]
        get_ratio: f64,
        /// Value bytes, 1..=14000 (memaslap default 1024; a set's request fits the initial window).
        #[serde(default = "default_value")]
        value_bytes: u32,
        /// Key bytes, 1..=250 (memcached's limit; memaslap default 64).
        #[serde(default = "default_key")]
        key_bytes: u32,
        /// Offered requests per second. Absent: closed loop (each connection sends its next
        /// request when the response is in). Present: each connection's requests are due at
        /// Poisson times of rate `rate_rps / concurrency`; one whose connection is still busy
        /// waits for it, and latency counts from when it was due (DID §5.7's QoS search).
        #[serde(default)]
        rate_rps: Option<f64>,
        /// Worker threads (memcached `-t`, default 4), 1..=64. The listener hands accepted
        /// connections to them round robin, so connection `c` is served by thread
        /// `c % threads`, homed on vCPU `thread % vcpus`; a request completed on another vCPU
        /// wakes its thread there with a reschedule IPI.
        #[serde(default = "default_memcached_threads")]
        threads: u32,
    },
    /// A web server (Apache or nginx) in the guest serving one static file to an ab-like
    /// closed-loop client.
    ///
    /// Server workers are guest threads; worker `w` (0-based) is homed on the VM's vCPU
    /// `w % vcpus` and serves one request at a time. When a request completes on a vCPU other
    /// than its worker's home and that worker sleeps, the guest wakes it with a reschedule
    /// IPI: the sender pays an ICR-write exit (`exit.ipi_ns`, counted as `ipi`), and the target
    /// takes the vector like a device interrupt (emulated: delivery exit or wake-up, EOI exit;
    /// posted: no exit), its handler costing `guest.timer_irq_ns`.
    Http {
        /// Outstanding requests (ab `-c`), 1..=1024.
        concurrency: u32,
        /// Size of the served file in bytes, 1..=1048576.
        file_bytes: u32,
        /// Which server: `apache` (default) or `nginx`; they differ in per-request CPU.
        #[serde(default, deserialize_with = "super::de::variant")]
        server: HttpServer,
        /// Reuse connections (ab `-k`); default false, ab's default: a TCP connection per
        /// request, set up and closed around it.
        #[serde(default)]
        keepalive: bool,
        /// Server workers, 1..=64. Absent: one worker per vCPU, each serving the requests whose
        /// interrupt its own vCPU took (no IPIs; the behaviour before workers existed).
        workers: Option<u32>,
        /// Each worker listens on its own port and the client spreads its connections over
        /// them: connection `c` is served by worker `c % workers`. Default false: the workers
        /// share one listening socket; a complete request wakes an idle worker, preferring one
        /// homed on the vCPU that took the interrupt, else the lowest-numbered idle one; with
        /// none idle it waits in the socket for the next worker to finish.
        #[serde(default)]
        worker_ports: bool,
    },
    /// A webbench-like web client (`model::workload::tcp_rr`, `tcp_rr/timeout.rs`): `clients`
    /// closed loops, each an HTTP/1.0 GET of one page on a connection of its own (webbench 1.5
    /// and Ziff-Davis WebBench send HTTP/1.0 without keep-alive), no think time. A request not
    /// complete `timeout_ms` after its client sent the SYN is abandoned and its client counted
    /// failed; a failed client stops. The server is the `http` one with a worker per vCPU.
    Webbench {
        /// Concurrent clients, 1..=[`MAX_WEBBENCH_CLIENTS`] (CGR/AIR §5.3 runs 100, 1,000, 2,000).
        clients: u32,
        /// The page's bytes, 1..=1048576; default 45, a stock Apache 2.2 `index.html` ("It
        /// works!"): webbench requests the one URL it is given, and the paper names none.
        #[serde(default = "default_page_bytes")]
        file_bytes: u32,
        /// A request's time-out in ms, 1..=600000; default 1000 (declared, see
        /// [`default_timeout_ms`]).
        #[serde(default = "default_timeout_ms")]
        timeout_ms: u32,
        /// Which server: `apache` (default) or `nginx`.
        #[serde(default, deserialize_with = "super::de::variant")]
        server: HttpServer,
        /// Server workers (Apache processes), 1..=256, sharing one listening socket: a complete
        /// request wakes an idle worker, preferring one homed on the vCPU that took the
        /// interrupt (`http`'s shared socket). Absent: one worker per vCPU, each serving the
        /// requests whose interrupt its own vCPU took (as `http` without `workers`).
        workers: Option<u32>,
    },
    /// An httperf-like open-loop web client (`model::workload::tcp_rr`, `tcp_rr/httperf.rs`;
    /// hBalance §6.1.3): a new connection every 1/`rate_rps` s (httperf `--rate`, fixed
    /// inter-arrival times), each one HTTP/1.0 GET of `file_bytes` (`--num-calls=1`), closed
    /// by the server. A reply not complete `timeout_ms` after its SYN is an error (httperf's
    /// `client-timo`); a connection that finds every socket in use is one too (`fd-unavail`).
    /// The server is the `http` one.
    Httperf {
        /// New connections per second, in [1, 1e6].
        rate_rps: f64,
        /// Size of the served file, 1..=1048576 bytes.
        file_bytes: u32,
        /// httperf's `--timeout` in ms, 1..=600000; default 1000 (declared, see
        /// [`default_timeout_ms`]).
        #[serde(default = "default_timeout_ms")]
        timeout_ms: u32,
        /// Which server: `apache` (default) or `nginx`.
        #[serde(default, deserialize_with = "super::de::variant")]
        server: HttpServer,
        /// Server workers sharing one listening socket, 1..=256. Absent: one per vCPU, each
        /// serving its own vCPU's interrupts (as `http`).
        workers: Option<u32>,
    },
    /// A SPECweb2009-Banking-like session mix (`model::workload::tcp_rr`; hBalance §6.2):
    /// `sessions` closed-loop users on persistent HTTPS connections, each sending a request,
    /// reading the whole response, then thinking for an exponentially distributed time of
    /// mean `think_ms` (a seeded stream of its own). Two operation classes stand for the
    /// benchmark's 16: `heavy_pct` % of requests are heavy dynamic pages (account summaries,
    /// bill payment, transfers: PHP plus back-end queries), the rest light ones (login
    /// checks, static images); each class's server CPU (TLS folded in) and response size are
    /// keys. The server is Apache's worker pool on a shared socket.
    Specweb {
        /// Simultaneous user sessions, 1..=4096 (hBalance runs 200 and 400).
        sessions: u32,
        /// Mean think time in ms, in [0, 600000] (0: no think time); default 10000 (declared,
        /// see [`default_think_ms`]).
        #[serde(default = "default_think_ms")]
        think_ms: f64,
        /// Heavy requests, % of all, in [0, 100]; default 40 (see [`default_heavy_pct`]).
        #[serde(default = "default_heavy_pct")]
        heavy_pct: f64,
        /// Server CPU of a light request, µs (TLS record work included), in (0, 1e6]; absent:
        /// the profile's `app.specweb_light_ns` (a cost, with its source and range).
        light_cpu_us: Option<f64>,
        /// Server CPU of a heavy request, µs (PHP, back-end round trips' processing and TLS),
        /// in (0, 1e6]; absent: the profile's `app.specweb_heavy_ns`.
        heavy_cpu_us: Option<f64>,
        /// Response body of a light request, 1..=1048576 bytes; default 4096.
        #[serde(default = "default_light_bytes")]
        light_bytes: u32,
        /// Response body of a heavy request, 1..=1048576 bytes; default 16384.
        #[serde(default = "default_heavy_bytes")]
        heavy_bytes: u32,
        /// Apache worker processes sharing the listening socket, 1..=256; default 2 per vCPU.
        workers: Option<u32>,
    },
    /// fio in the guest on the VM's virtio-blk disk over a host RAM disk (`model::workload::fio`;
    /// DID §5.6): `numjobs` threads, each keeping `iodepth` O_DIRECT requests of `block_bytes`
    /// in flight, so that every request crosses to the device. The disk has a request queue per
    /// vCPU the jobs use (min(`numjobs`, vCPUs)); job `j` runs on vCPU `j % queues`.
    Fio {
        /// What the requests are (fio `rw`): "randread" (default), "randwrite", "randrw",
        /// "read", "write" or "rw". On a RAM disk reads and writes cost the same and offsets do
        /// not matter: it sets what each request is counted as.
        #[serde(default, deserialize_with = "super::de::variant")]
        rw: FioRw,
        /// Bytes per request (fio `bs`), a multiple of 512 in 512..=1048576; default 4096.
        #[serde(default = "default_block_bytes")]
        block_bytes: u32,
        /// Requests each job keeps in flight (fio `iodepth`), 1..=256; default 1, a synchronous
        /// job (submit, sleep until the completion, complete).
        #[serde(default = "one")]
        iodepth: u32,
        /// Jobs (fio `numjobs`: threads), 1..=64; default 1.
        #[serde(default = "one")]
        numjobs: u32,
        /// Reads, % of the requests of a mixed job (fio `rwmixread`, `rw` = "randrw" or "rw"
        /// only), in [0, 100]; absent: 50, fio's default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rwmixread: Option<f64>,
        /// Each request is bracketed by a timer armed before it and cleared after it: two LAPIC
        /// timer writes per request, each an exit unless the VM's delivery passes them through
        /// (DID §5.6: fio "sets up a timer before submitting an I/O request to protect itself
        /// from unresponsive disks and clears the timer after each request is completed").
        /// Default true, as DID observed fio.
        #[serde(default = "yes")]
        request_timer: bool,
    },
    /// filebench-like random I/O (ELVIS §4.5: "four write threads and four read threads, each
    /// of which performed 4KB random I/O on the paravirtual device", O_DIRECT) on the VM's
    /// virtio-blk disk over a host RAM disk: each thread one synchronous request at a time.
    /// Threads are spread as fio's jobs are (readers first).
    Filebench {
        /// Reading threads, 0..=64; default 4.
        #[serde(default = "four")]
        readers: u32,
        /// Writing threads, 0..=64; default 4 (at least one thread in all).
        #[serde(default = "four")]
        writers: u32,
        /// Bytes per request, a multiple of 512 in 512..=1048576; default 4096.
        #[serde(default = "default_block_bytes")]
        block_bytes: u32,
    },
    /// A CPU-bound guest job (NPB FT-like, CGR/AIR §5.6): one thread on vCPU 0 that needs
    /// `work_ms` of guest CPU at the vCPU's full speed; its metric is its completion time.
    CpuJob {
        /// CPU work in ms, > 0 and at most 1e7 (the job alone on an idle vCPU would take this).
        work_ms: f64,
    },
    /// kvm-unit-tests' IPI round trip (`model::ipi_pingpong`, issue 32): vCPU 0 sends a
    /// call-function IPI to vCPU `to_vcpu` and spins until its handler ran; no network.
    IpiPingpong {
        /// The target vCPU (default 1; not 0).
        #[serde(default = "one")]
        to_vcpu: u32,
        /// µs between round trips; absent: back to back.
        interval_us: Option<f64>,
        /// How many vCPUs, from `to_vcpu` on, the one call-function IPI goes to
        /// (`smp_call_function_many` → `apic->send_IPI_mask`); absent: 1, `to_vcpu` alone
        /// (`smp_call_function_single`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        targets: Option<u32>,
    },
}

/// The most sessions a `specweb` workload may have (per VM): ten times hBalance's 400.
pub const MAX_SPECWEB_SESSIONS: u32 = 4096;

/// The most clients a `webbench` workload may have (per VM): above the paper's 2,000 with room,
/// and small enough that per-client state (a few dozen bytes each) stays cheap.
pub const MAX_WEBBENCH_CLIENTS: u32 = 8192;

/// A web server in the guest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HttpServer {
    /// Apache httpd (`app.http_request_ns`).
    #[default]
    Apache,
    /// nginx (`app.nginx_request_ns`).
    Nginx,
}

/// How the testbed guest consumes completions (`request_stream`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Consume {
    /// Its loop polls the used ring (the device never interrupts).
    #[default]
    Poll,
    /// On the device's interrupts (used_event re-armed after each reap).
    Irq,
}

/// What a fio job's requests are (fio `rw`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FioRw {
    /// Random reads.
    #[default]
    Randread,
    /// Random writes.
    Randwrite,
    /// Random reads and writes, `rwmixread` % reads.
    Randrw,
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Sequential reads and writes, `rwmixread` % reads.
    Rw,
}

impl FioRw {
    /// Its requests' mix: the share that reads (1 or 0 for a pure one).
    pub fn read_share(self, rwmixread: Option<f64>) -> f64 {
        match self {
            FioRw::Randread | FioRw::Read => 1.0,
            FioRw::Randwrite | FioRw::Write => 0.0,
            FioRw::Randrw | FioRw::Rw => rwmixread.unwrap_or(50.0) / 100.0,
        }
    }
}

/// A TCP stream's send window when a scenario gives none (4 MiB).
const DEFAULT_WINDOW: u32 = 4 << 20;

fn default_window() -> u32 {
    DEFAULT_WINDOW
}

fn one() -> u32 {
    1
}

fn four() -> u32 {
    4
}

fn yes() -> bool {
    true
}

/// A block request's bytes when a scenario gives none: 4 KB, DID §5.6's and ELVIS §4.5's.
fn default_block_bytes() -> u32 {
    4096
}

/// netperf's send size without `-m`: the send socket buffer it reads back after creating the
/// socket, Linux's `tcp_wmem[1]` of 16,384 bytes (netperf's nettest_bsd.c sets
/// `send_size = lss_size` when none is given).
pub fn netperf_send_bytes() -> u32 {
    16_384
}

fn default_get_ratio() -> f64 {
    0.9
}

fn default_value() -> u32 {
    1024
}

fn default_key() -> u32 {
    64
}

/// memcached's default number of worker threads (`-t 4`, `settings.num_threads`).
fn default_memcached_threads() -> u32 {
    4
}

/// The page webbench fetches by default: a stock Apache 2.2 `index.html`, 45 bytes (as
/// `sriov-fig11` serves).
fn default_page_bytes() -> u32 {
    45
}

/// A webbench client's time-out: 1 s. Declared, not sourced: neither the paper nor webbench 1.5
/// (whose failures are socket errors, no timer) states one; 1 s is RFC 6298's initial RTO, the
/// wait after which a SYN lost to a full queue would first be resent — a client that has not
/// been answered by then has met the overload, not noise.
fn default_timeout_ms() -> u32 {
    1000
}

/// SPECweb2009's think time: exponential with this mean. Declared, not sourced: the
/// SPECweb2009 design document (§4.5, "Think Time") was not at hand; 10 s is the prior the
/// issue names, and a human's pause between two banking pages is of that order.
fn default_think_ms() -> f64 {
    10_000.0
}

/// Heavy requests' share: 40 %. Declared: of Banking's 16 operations about half are dynamic
/// pages with back-end queries (account summary, bill pay, transfers, profile, check images)
/// and the rest lighter (login, logout, static images); hBalance states no mix.
fn default_heavy_pct() -> f64 {
    40.0
}

/// A light response body: 4 KiB (a small page or image).
fn default_light_bytes() -> u32 {
    4096
}

/// A heavy response body: 16 KiB (a dynamic account page).
fn default_heavy_bytes() -> u32 {
    16384
}

/// ping's default payload (`ping -s 56`: 64 bytes with the ICMP header).
fn default_ping_bytes() -> u32 {
    56
}

fn range(key: &str, k: &str, v: u32, lo: u32, hi: u32, what: &str) -> Result<(), String> {
    if (lo..=hi).contains(&v) {
        return Ok(());
    }
    Err(format!("key `{key}.{k}`: {v} is not allowed; expected {lo}..={hi} ({what})"))
}

/// An open-loop interval: the same bounds as a rate, 1/s ..= 2e8/s.
fn check_block(key: &str, bytes: u32) -> Result<(), String> {
    if bytes % 512 != 0 || !(512..=1 << 20).contains(&bytes) {
        return Err(format!("key `{key}.block_bytes`: {bytes} is not allowed; expected a multiple of 512 in 512..=1048576 (whole sectors, O_DIRECT)"));
    }
    Ok(())
}

fn check_interval(key: &str, i: f64) -> Result<(), String> {
    let (lo, hi) = (1e6 / MAX_RATE_PPS, 1e6 / MIN_RATE_PPS);
    if !(i.is_finite() && (lo..=hi).contains(&i)) {
        return Err(format!("key `{key}.interval_us`: {} is not allowed; expected µs in {lo}..={hi}", crate::error::num(i)));
    }
    Ok(())
}

/// A TCP stream's write size and window (both directions).
fn check_tcp_stream(key: &str, message_bytes: u32, window_bytes: u32) -> Result<(), String> {
    if !(1..=1 << 20).contains(&message_bytes) {
        return Err(format!("key `{key}.message_bytes`: {message_bytes} is not allowed; expected 1..=1048576"));
    }
    if !(65_536..=1 << 30).contains(&window_bytes) {
        return Err(format!("key `{key}.window_bytes`: {window_bytes} is not allowed; expected 65536..=1073741824 bytes"));
    }
    Ok(())
}

impl Workload {
    /// Its `kind` as a scenario writes it (`tcp_receive`).
    pub fn kind_name(&self) -> String {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(m)) => m.keys().next().cloned().unwrap_or_default(),
            Ok(serde_json::Value::String(s)) => s,
            _ => String::new(),
        }
    }

    /// A TCP request/response server in the guest (`model::tcp_rr`).
    pub fn is_tcp_server(&self) -> bool {
        matches!(
            self,
            Workload::TcpRr { .. } | Workload::Memcached { .. } | Workload::Http { .. } | Workload::Webbench { .. } | Workload::Httperf { .. } | Workload::Specweb { .. }
        )
    }

    /// It sends or receives through the VM's NIC (all but cyclictest and the interrupt source).
    pub fn uses_network(&self) -> bool {
        !matches!(self, Workload::Cyclictest { .. } | Workload::IrqSource { .. } | Workload::CpuJob { .. } | Workload::IpiPingpong { .. })
            && !self.is_block()
    }

    /// It does block I/O on the VM's virtio-blk disk (fio, filebench): the VM's device is the
    /// disk, not a NIC.
    pub fn is_block(&self) -> bool {
        matches!(self, Workload::Fio { .. } | Workload::Filebench { .. })
    }

    /// A block workload's bytes per request (None for the others).
    pub fn block_bytes(&self) -> Option<u32> {
        match *self {
            Workload::Fio { block_bytes, .. } | Workload::Filebench { block_bytes, .. } => Some(block_bytes),
            _ => None,
        }
    }

    /// A block workload's jobs, each's share of reads (fio's in order; filebench's readers,
    /// then its writers); empty for the others.
    pub fn block_jobs(&self) -> Vec<f64> {
        match *self {
            Workload::Fio { rw, numjobs, rwmixread, .. } => vec![rw.read_share(rwmixread); numjobs as usize],
            Workload::Filebench { readers, writers, .. } => {
                std::iter::repeat_n(1.0, readers as usize).chain(std::iter::repeat_n(0.0, writers as usize)).collect()
            }
            _ => Vec::new(),
        }
    }

    /// Its frames carry TCP (else UDP) headers on the wire.
    pub fn is_tcp(&self) -> bool {
        self.is_tcp_server() || matches!(self, Workload::TcpStream { .. } | Workload::TcpReceive { .. })
    }

    /// Its fixed send rate (per second) if it is open loop; None for closed-loop or unpaced ones.
    pub fn open_loop_rate(&self) -> Option<f64> {
        match *self {
            Workload::UdpStream { rate_pps, .. } => rate_pps,
            Workload::UdpReceive { rate_pps, .. } => rate_pps,
            Workload::UdpRr { interval_us, .. } => interval_us.map(|i| 1e6 / i),
            Workload::UdpPing { interval_us, .. } => Some(1e6 / interval_us),
            Workload::Ping { interval_us, .. } => interval_us.map(|i| 1e6 / i),
            Workload::Cyclictest { interval_us } => Some(1e6 / interval_us),
            Workload::RequestStream { rate, .. } => rate,
            Workload::IrqSource { interval_us, .. } => Some(1e6 / interval_us),
            Workload::Memcached { rate_rps, .. } => rate_rps,
            Workload::Httperf { rate_rps, .. } => Some(rate_rps),
            // The sessions' requests together, when each thinks between two.
            Workload::Specweb { sessions, think_ms, .. } if think_ms > 0.0 => Some(f64::from(sessions) * 1000.0 / think_ms),
            _ => None,
        }
    }

    /// Check value ranges; `key` is the workload's key path for messages.
    pub fn check(&self, key: &str) -> Result<(), String> {
        match self {
            Workload::UdpStream { message_bytes, rate_pps } => {
                if !(1..=65507).contains(message_bytes) {
                    return Err(format!(
                        "key `{key}.message_bytes`: {message_bytes} is not allowed; expected 1..=65507 (UDP payload)"
                    ));
                }
                rate_pps.map_or(Ok(()), |r| check_rate(&format!("{key}.rate_pps"), r, "datagrams/s"))
            }
            Workload::UdpReceive { message_bytes, rate_pps } => {
                if !(1..=65507).contains(message_bytes) {
                    return Err(format!(
                        "key `{key}.message_bytes`: {message_bytes} is not allowed; expected 1..=65507 (UDP payload)"
                    ));
                }
                rate_pps.map_or(Ok(()), |r| check_rate(&format!("{key}.rate_pps"), r, "datagrams/s"))
            }
            Workload::UdpRr { request_bytes, response_bytes, interval_us } => {
                for (k, b) in [("request_bytes", request_bytes), ("response_bytes", response_bytes)] {
                    if !(1..=65507).contains(b) {
                        return Err(format!("key `{key}.{k}`: {b} is not allowed; expected 1..=65507 (UDP payload)"));
                    }
                }
                interval_us.map_or(Ok(()), |i| check_interval(key, i))
            }
            Workload::UdpPing { message_bytes, interval_us } => {
                range(key, "message_bytes", *message_bytes, 1, 65507, "UDP payload")?;
                check_interval(key, *interval_us)
            }
            Workload::Ping { bytes, interval_us } => {
                range(key, "bytes", *bytes, 1, 65507, "ICMP payload")?;
                interval_us.map_or(Ok(()), |i| check_interval(key, i))
            }
            Workload::Cyclictest { interval_us } => check_interval(key, *interval_us),
            Workload::IrqSource { interval_us, .. } => check_interval(key, *interval_us),
            Workload::RequestStream { rate, window, .. } => match (rate, window) {
                (Some(r), None) => check_rate(&format!("{key}.rate"), *r, "requests/s"),
                (None, Some(w)) => range(key, "window", *w, 1, 4096, "requests outstanding"),
                _ => Err(format!("key `{key}`: give exactly one of `rate` (open loop, requests/s) and `window` (closed loop)")),
            },
            Workload::TcpStream { message_bytes, window_bytes, streams } => {
                range(key, "streams", *streams, 1, 64, "netperf threads")?;
                check_tcp_stream(key, *message_bytes, *window_bytes)
            }
            Workload::TcpReceive { message_bytes, send_bytes, window_bytes } => {
                range(key, "send_bytes", *send_bytes, 1, 1 << 20, "bytes per client write()")?;
                check_tcp_stream(key, *message_bytes, window_bytes.unwrap_or(DEFAULT_WINDOW))
            }
            Workload::TcpRr { request_bytes, response_bytes, concurrency } => {
                range(key, "request_bytes", *request_bytes, 1, 14_480, "bytes, ten segments: the initial window")?;
                range(key, "response_bytes", *response_bytes, 1, 1 << 20, "bytes")?;
                range(key, "concurrency", *concurrency, 1, 1024, "transactions in flight")
            }
            Workload::Memcached { concurrency, get_ratio, value_bytes, key_bytes, rate_rps, threads } => {
                range(key, "concurrency", *concurrency, 1, 1024, "requests in flight")?;
                range(key, "threads", *threads, 1, 64, "memcached worker threads")?;
                if let Some(r) = rate_rps {
                    check_rate(&format!("{key}.rate_rps"), *r, "requests/s")?;
                }
                if !(get_ratio.is_finite() && (0.0..=1.0).contains(get_ratio)) {
                    return Err(format!("key `{key}.get_ratio`: {get_ratio} is not allowed; expected 0..=1 (fraction of gets)"));
                }
                range(key, "value_bytes", *value_bytes, 1, 14_000, "bytes")?;
                range(key, "key_bytes", *key_bytes, 1, 250, "bytes, memcached KEY_MAX_LENGTH")
            }
            Workload::Http { concurrency, file_bytes, workers, .. } => {
                range(key, "concurrency", *concurrency, 1, 1024, "requests in flight")?;
                range(key, "file_bytes", *file_bytes, 1, 1 << 20, "bytes")?;
                workers.map_or(Ok(()), |w| range(key, "workers", w, 1, 64, "server threads"))
            }
            Workload::Webbench { clients, file_bytes, timeout_ms, workers, .. } => {
                range(key, "clients", *clients, 1, MAX_WEBBENCH_CLIENTS, "concurrent clients")?;
                workers.map_or(Ok(()), |w| range(key, "workers", w, 1, 256, "server processes"))?;
                range(key, "file_bytes", *file_bytes, 1, 1 << 20, "bytes")?;
                range(key, "timeout_ms", *timeout_ms, 1, 600_000, "ms")
            }
            Workload::IpiPingpong { interval_us, .. } => interval_us.map_or(Ok(()), |i| check_interval(key, i)),
            Workload::Httperf { rate_rps, file_bytes, timeout_ms, workers, .. } => {
                if !(rate_rps.is_finite() && (1.0..=1e6).contains(rate_rps)) {
                    return Err(format!("key `{key}.rate_rps`: {} is not allowed; expected new connections per second in [1, 1e6]", crate::error::num(*rate_rps)));
                }
                range(key, "file_bytes", *file_bytes, 1, 1 << 20, "bytes")?;
                range(key, "timeout_ms", *timeout_ms, 1, 600_000, "ms")?;
                workers.map_or(Ok(()), |w| range(key, "workers", w, 1, 256, "server processes"))
            }
            Workload::Specweb { sessions, think_ms, heavy_pct, light_cpu_us, heavy_cpu_us, light_bytes, heavy_bytes, workers } => {
                range(key, "sessions", *sessions, 1, MAX_SPECWEB_SESSIONS, "simultaneous sessions")?;
                let real = |k: &str, v: f64, ok: bool, what: &str| {
                    if v.is_finite() && ok {
                        Ok(())
                    } else {
                        Err(format!("key `{key}.{k}`: {} is not allowed; expected {what}", crate::error::num(v)))
                    }
                };
                real("think_ms", *think_ms, (0.0..=600_000.0).contains(think_ms), "ms in [0, 600000]")?;
                real("heavy_pct", *heavy_pct, (0.0..=100.0).contains(heavy_pct), "a percentage in [0, 100]")?;
                for (k, v) in [("light_cpu_us", light_cpu_us), ("heavy_cpu_us", heavy_cpu_us)] {
                    v.map_or(Ok(()), |v| real(k, v, v > 0.0 && v <= 1e6, "µs in (0, 1e6]"))?;
                }
                range(key, "light_bytes", *light_bytes, 1, 1 << 20, "bytes")?;
                range(key, "heavy_bytes", *heavy_bytes, 1, 1 << 20, "bytes")?;
                workers.map_or(Ok(()), |w| range(key, "workers", w, 1, 256, "server processes"))
            }
            Workload::Fio { rw, block_bytes, iodepth, numjobs, rwmixread, .. } => {
                check_block(key, *block_bytes)?;
                range(key, "iodepth", *iodepth, 1, 256, "requests in flight per job")?;
                range(key, "numjobs", *numjobs, 1, 64, "jobs")?;
                match (rwmixread, rw) {
                    (Some(m), FioRw::Randrw | FioRw::Rw) if !(m.is_finite() && (0.0..=100.0).contains(m)) => Err(format!(
                        "key `{key}.rwmixread`: {} is not allowed; expected a percentage in [0, 100]",
                        crate::error::num(*m)
                    )),
                    (Some(_), FioRw::Randread | FioRw::Randwrite | FioRw::Read | FioRw::Write) => Err(format!(
                        "key `{key}.rwmixread`: a mix of reads applies to rw = \"randrw\" or \"rw\"; remove it or set rw to one of them"
                    )),
                    _ => Ok(()),
                }
            }
            Workload::Filebench { readers, writers, block_bytes } => {
                check_block(key, *block_bytes)?;
                range(key, "readers", *readers, 0, 64, "threads")?;
                range(key, "writers", *writers, 0, 64, "threads")?;
                if readers + writers == 0 {
                    return Err(format!("key `{key}`: readers = 0 and writers = 0 leave no thread; give one of them 1 or more"));
                }
                Ok(())
            }
            Workload::CpuJob { work_ms } => {
                if !(work_ms.is_finite() && *work_ms > 0.0 && *work_ms <= 1e7) {
                    return Err(format!(
                        "key `{key}.work_ms`: {} is not allowed; expected ms of CPU work in (0, 1e7]",
                        crate::error::num(*work_ms)
                    ));
                }
                Ok(())
            }
        }
    }
}

/// Deserialize a `[vm.workload]` table `{kind = "...", <parameters>}`.
///
/// serde's internally tagged enums buffer the table and lose the field name in type errors
/// ("invalid type: string, expected u32" without saying which key); re-shaping the table as
/// `{<kind> = {<parameters>}}` and deserializing the externally tagged enum keeps it, so every
/// message names the bad key.
pub fn by_kind<'de, D: Deserializer<'de>>(d: D) -> Result<Workload, D::Error> {
    let mut table: toml::Table = super::de::table(d)?;
    let kind = match table.remove("kind") {
        Some(toml::Value::String(k)) => k,
        Some(other) => return Err(D::Error::custom(format!("`kind` = {other}: expected a string naming the workload"))),
        None => return Err(D::Error::custom("missing key `kind` (the workload's type, e.g. kind = \"tcp_stream\")")),
    };
    let mut tagged = toml::Table::new();
    tagged.insert(kind.clone(), toml::Value::Table(table));
    serde_path_to_error::deserialize(toml::Value::Table(tagged)).map_err(|e| {
        let key = e.path().to_string();
        let field = key.split_once('.').map(|(_, f)| f).filter(|f| !f.is_empty() && *f != "?");
        // The bare message: toml's Display adds "\nin `field`", which the key already says.
        let inner = crate::error::one_line(e.inner().message());
        match field {
            Some(f) => D::Error::custom(format!("`{f}` (kind \"{kind}\"): {inner}")),
            None => D::Error::custom(format!("kind \"{kind}\": {inner}")),
        }
    })
}

/// [`by_kind`] for an optional `[vm.workload]` table (absent: the VM runs no application).
pub fn by_kind_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Workload>, D::Error> {
    by_kind(d).map(Some)
}

/// A `[vm.workload]` table as a scenario writes it: `kind` and the kind's parameters (the
/// inverse of [`by_kind`]); an unset optional parameter is null.
pub fn ser_by_kind_opt<S: serde::Serializer>(w: &Option<Workload>, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::Error;
    let Some(w) = w else { return s.serialize_none() };
    let tagged = serde_json::to_value(w).map_err(S::Error::custom)?;
    let serde_json::Value::Object(tagged) = tagged else { return Err(S::Error::custom("a workload serializes as a table")) };
    let mut table = serde_json::Map::new();
    for (kind, params) in tagged {
        table.insert("kind".into(), serde_json::Value::String(kind));
        if let serde_json::Value::Object(p) = params {
            table.extend(p);
        }
    }
    table.serialize(s)
}
