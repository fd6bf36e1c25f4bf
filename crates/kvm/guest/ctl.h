/* Control blocks in shared memory: the host writes the parameters before the vCPUs start, the
 * guest writes the counters. Every field is a u64 so that the Rust mirror (src/guest/ctl.rs)
 * has the same offsets without padding rules. */
#ifndef EVENTPATH_CTL_H
#define EVENTPATH_CTL_H
#include "layout.h"
typedef unsigned long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

struct vcpu_ctl {
    /* parameters (host) */
    u64 role, queue, qsize, kick, consume, halt_idle;
    u64 period_tsc, window, burst, gap_tsc, work_tsc, adv_mask;
    u64 param_reserved[4];
    /* live state and counters (guest) */
    u64 heartbeat;       /* +1 per loop iteration at CPL3 */
    u64 submitted;       /* requests made available */
    u64 completed;       /* completions consumed */
    u64 dropped;         /* stream: no free descriptor at the due time */
    u64 kicks;           /* notifications written (PIO or MMIO) */
    u64 kicks_suppressed;/* submissions where vring_need_event said no */
    u64 halts;           /* HLT executed (through the #GP path) */
    u64 irq_seen;        /* interrupt-count changes the CPL3 loop noticed */
    u64 irq_seen_tsc;    /* TSC when it last noticed one */
    u64 kick_cycles;     /* TSC cycles spent in kick instructions */
    u64 reap_rounds;     /* used-ring scans */
    u64 started;         /* 1 once the loop runs */
    u64 last_kick_tsc;   /* TSC just before the last kick instruction */
    u64 work_cycles;     /* TSC cycles of loop turns that submitted or reaped, kicks excluded */
    u64 state_reserved[2];
    u64 adv_sent[ADV_KINDS]; /* adversary: garbage requests made, by kind */
    u64 lat_count, lat_sum, lat_max, lat_reserved;
    u64 hist[HIST_BUCKETS];  /* request latency in TSC cycles, log-linear buckets */
};

struct global_ctl {
    u64 magic;
    volatile u64 stop;
    volatile u64 inject_tsc;
    u64 nvcpus;
};

struct vring_desc { u64 addr; u32 len; u16 flags; u16 next; };
#define VRING_DESC_F_NEXT  1
#define VRING_DESC_F_WRITE 2
#define VRING_DESC_F_INDIRECT 4
#define VRING_AVAIL_F_NO_INTERRUPT 1
#define VRING_USED_F_NO_NOTIFY 1
#define DESC_OFF  0x0000
#define AVAIL_OFF 0x4000
#define USED_OFF  0x5000
#endif
