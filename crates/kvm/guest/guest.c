/* The eventpath guest: a bare-metal driver/application loop that runs at CPL3 on every vCPU.
 * It produces requests into a split virtqueue (event-index notification suppression), kicks only
 * when the device asks for it, consumes completions by polling or after interrupts (NAPI-like
 * suppression while busy), may halt when idle, and advances a heartbeat counter each iteration.
 * Parameters and counters live in the vCPU's control block (ctl.h). */
#include "ctl.h"

static inline u64 rdtsc(void) {
    u32 lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((u64)hi << 32) | lo;
}
#define barrier() __asm__ volatile("" ::: "memory")
#define mfence() __asm__ volatile("mfence" ::: "memory")
#define RD(x) (*(volatile __typeof__(x) *)&(x))
#define WR(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

/* virtio: include/uapi/linux/virtio_ring.h vring_need_event() */
static inline int vring_need_event(u16 event_idx, u16 new_idx, u16 old) {
    return (u16)(new_idx - event_idx - 1) < (u16)(new_idx - old);
}

static inline u64 hist_bucket(u64 v) {
    if (v < 64) return v;
    u64 e = 63 - __builtin_clzl(v);
    u64 idx = 64 + (e - 6) * 32 + ((v >> (e - 5)) & 31);
    return idx < HIST_BUCKETS ? idx : HIST_BUCKETS - 1;
}

struct queue {
    struct vring_desc *desc;
    u16 *avail_flags, *avail_idx, *avail_ring, *used_event;
    u16 *used_flags, *used_idx, *avail_event;
    u32 *used_ring; /* pairs (id, len) */
    u8 *bufs;
    u16 qsize, next_avail, last_used;
    u16 free_top;
    u16 free[MAX_QSIZE];
    u64 port, mmio;
};

static void q_init(struct queue *q, u64 index, u64 qsize) {
    u8 *base = (u8 *)(QUEUES_ADDR + index * QUEUE_STRIDE);
    q->desc = (struct vring_desc *)(base + DESC_OFF);
    q->avail_flags = (u16 *)(base + AVAIL_OFF);
    q->avail_idx = q->avail_flags + 1;
    q->avail_ring = q->avail_flags + 2;
    q->used_event = q->avail_ring + qsize;
    q->used_flags = (u16 *)(base + USED_OFF);
    q->used_idx = q->used_flags + 1;
    q->used_ring = (u32 *)(q->used_flags + 2);
    q->avail_event = (u16 *)(q->used_ring + 2 * qsize);
    q->bufs = (u8 *)(BUFFERS_ADDR + index * BUFFER_STRIDE);
    q->qsize = (u16)qsize;
    q->next_avail = 0;
    q->last_used = 0;
    q->free_top = 0;
    for (u64 i = 0; i < qsize; i++) q->free[q->free_top++] = (u16)(qsize - 1 - i);
    q->port = PIO_KICK_PORT + index;
    q->mmio = MMIO_KICK_ADDR + 4 * index;
    WR(*q->used_event, (u16)0x8000);
}

static void kick(struct vcpu_ctl *c, struct queue *q) {
    u64 t0 = rdtsc();
    WR(c->last_kick_tsc, t0); /* the backend measures kick -> handler from it (shared TSC) */
    if (c->kick == KICK_PIO) {
        __asm__ volatile("outw %w0, %w1" ::"a"((u16)0), "d"((u16)q->port) : "memory");
    } else if (c->kick == KICK_MMIO) {
        *(volatile u32 *)q->mmio = 0;
    }
    c->kicks++;
    c->kick_cycles += rdtsc() - t0;
}

/* Publish `n` new avail entries (already written from old_idx on) and kick if asked to. */
static void publish(struct vcpu_ctl *c, struct queue *q, u16 old_idx) {
    barrier(); /* x86: stores are not reordered with stores */
    WR(*q->avail_idx, q->next_avail);
    mfence(); /* the store of avail->idx before the load of avail_event */
    if (c->kick == KICK_NONE) return;
    if (vring_need_event(RD(*q->avail_event), q->next_avail, old_idx)) kick(c, q);
    else c->kicks_suppressed++;
}

static int submit_one(struct vcpu_ctl *c, struct queue *q, u64 seq) {
    if (q->free_top == 0) return 0;
    u16 id = q->free[--q->free_top];
    u64 *buf = (u64 *)(q->bufs + (u64)id * BUFFER_SIZE);
    buf[0] = rdtsc();
    buf[1] = seq;
    struct vring_desc *d = &q->desc[id];
    d->addr = (u64)buf;
    d->len = BUFFER_SIZE;
    d->flags = VRING_DESC_F_WRITE;
    d->next = 0;
    q->avail_ring[q->next_avail % q->qsize] = id;
    q->next_avail++;
    c->submitted++;
    return 1;
}

static void record(struct vcpu_ctl *c, u64 lat) {
    c->lat_count++;
    c->lat_sum += lat;
    if (lat > c->lat_max) c->lat_max = lat;
    c->hist[hist_bucket(lat)]++;
}

/* Consume every completion in the used ring; returns how many. */
static u64 reap(struct vcpu_ctl *c, struct queue *q) {
    u64 n = 0;
    c->reap_rounds++;
    for (;;) {
        u16 used = RD(*q->used_idx);
        if (used == q->last_used) break;
        barrier();
        while (q->last_used != used) {
            u32 slot = q->last_used % q->qsize;
            u32 id = RD(q->used_ring[2 * slot]);
            if (id < q->qsize) {
                u64 *buf = (u64 *)(q->bufs + (u64)id * BUFFER_SIZE);
                u64 now = rdtsc();
                record(c, now - buf[0]);
                q->free[q->free_top++] = (u16)id;
                if (c->work_tsc) while (rdtsc() - now < c->work_tsc) {}
            }
            q->last_used++;
            n++;
        }
    }
    c->completed += n;
    return n;
}

static u64 irq_total(u64 nvcpus) {
    u64 s = 0;
    for (u64 i = 0; i < nvcpus; i++) s += RD(*(u64 *)(STACKS_ADDR + i * STACK_STRIDE + IST_TOP));
    return s;
}

static void halt(u64 *irq_count, u64 seen, struct vcpu_ctl *c) {
    c->halts++;
    /* HLT at CPL3 raises #GP; the CPL0 handler halts unless *irq_count moved past `seen`. */
    __asm__ volatile("hlt" ::"D"(irq_count), "a"(seen) : "memory");
}

/* Adversary: a garbage request of kind k (see src/virtq/error.rs for the kinds). */
static void adversary_one(struct vcpu_ctl *c, struct queue *q, u64 k) {
    u16 old = q->next_avail;
    u16 id = 0;
    struct vring_desc *d = &q->desc[id];
    switch (k) {
    case 0: /* head index out of range */
        q->avail_ring[q->next_avail % q->qsize] = (u16)(q->qsize + 7);
        q->next_avail++;
        break;
    case 1: /* buffer address outside guest memory */
        d->addr = 0xfffffffff000UL; d->len = 64; d->flags = VRING_DESC_F_WRITE; d->next = 0;
        q->avail_ring[q->next_avail++ % q->qsize] = id;
        break;
    case 2: /* huge length */
        d->addr = BUFFERS_ADDR; d->len = 0xffffffffU; d->flags = VRING_DESC_F_WRITE; d->next = 0;
        q->avail_ring[q->next_avail++ % q->qsize] = id;
        break;
    case 3: /* loop in the descriptor chain */
        d->addr = BUFFERS_ADDR; d->len = 64; d->flags = VRING_DESC_F_NEXT; d->next = 1;
        q->desc[1].addr = BUFFERS_ADDR; q->desc[1].len = 64; q->desc[1].flags = VRING_DESC_F_NEXT;
        q->desc[1].next = 0;
        q->avail_ring[q->next_avail++ % q->qsize] = id;
        break;
    case 4: /* next index out of range */
        d->addr = BUFFERS_ADDR; d->len = 64; d->flags = VRING_DESC_F_NEXT; d->next = 0xfff0;
        q->avail_ring[q->next_avail++ % q->qsize] = id;
        break;
    case 5: /* avail index jumps by more than the ring size */
        q->next_avail += (u16)(q->qsize + 3);
        break;
    default:
        return;
    }
    c->adv_sent[k]++;
    publish(c, q, old);
}

void guest_main(u64 cpu) {
    struct vcpu_ctl *c = (struct vcpu_ctl *)(VCPU_CTL_ADDR + cpu * VCPU_CTL_STRIDE);
    struct global_ctl *g = (struct global_ctl *)GLOBAL_CTL_ADDR;
    u64 *irq_count = (u64 *)(STACKS_ADDR + cpu * STACK_STRIDE + IST_TOP);
    struct queue q;
    u64 role = c->role, nvcpus = g->nvcpus;
    if (role != ROLE_SPIN && role != ROLE_IRQ_SINK) {
        q_init(&q, c->queue, c->qsize);
        if (c->consume == CONSUME_IRQ) WR(*q.used_event, 0); /* interrupt at the first completion */
    }
    u64 seq = 0, my_irqs = RD(*irq_count), all_irqs = irq_total(nvcpus);
    u64 next_due = rdtsc(), adv_k = 0;
    u64 outstanding = 0;
    WR(c->started, 1);
    for (;;) {
        WR(c->heartbeat, c->heartbeat + 1);
        u64 mine = RD(*irq_count);
        if (mine != my_irqs) {
            WR(c->irq_seen_tsc, rdtsc());
            my_irqs = mine;
            WR(c->irq_seen, c->irq_seen + 1);
        }
        switch (role) {
        case ROLE_SPIN:
            continue;
        case ROLE_IRQ_SINK:
            if (c->halt_idle) halt(irq_count, my_irqs, c);
            continue;
        case ROLE_KICK_LOOP:
            kick(c, &q);
            continue;
        case ROLE_EXIT_LOOP: { /* a notification that exits to userspace (no ioeventfd) */
            u64 t0 = rdtsc();
            if (c->kick == KICK_MMIO) *(volatile u32 *)MMIO_EXIT_ADDR = 0;
            else __asm__ volatile("outb %b0, %w1" ::"a"((u8)0), "d"((u16)PIO_EXIT_PORT) : "memory");
            c->kicks++;
            c->kick_cycles += rdtsc() - t0;
            continue;
        }
        case ROLE_ADVERSARY: {
            u64 now = rdtsc();
            if (now < next_due) continue;
            next_due = now + c->period_tsc;
            while (!(c->adv_mask & (1UL << adv_k))) adv_k = (adv_k + 1) % ADV_KINDS;
            adversary_one(c, &q, adv_k);
            adv_k = (adv_k + 1) % ADV_KINDS;
            continue;
        }
        default:
            break;
        }
        /* produce */
        u16 old = q.next_avail;
        u64 now = rdtsc(), kick_cycles0 = c->kick_cycles, reaped = 0;
        if (role == ROLE_STREAM) {
            u64 n = 0;
            while (now >= next_due && n < 64) {
                if (!submit_one(c, &q, seq++)) c->dropped++;
                next_due += RD(c->period_tsc); /* the host may change it (load steps) */
                n++;
            }
            if (now >= next_due) next_due = now + RD(c->period_tsc); /* fell far behind: skip */
        } else if (role == ROLE_CLOSED) {
            while (outstanding < c->window && submit_one(c, &q, seq++)) outstanding++;
        } else if (role == ROLE_BURST) {
            if (now >= next_due) {
                for (u64 i = 0; i < c->burst; i++) submit_one(c, &q, seq++);
                next_due = now + c->gap_tsc;
            }
        }
        if (q.next_avail != old) publish(c, &q, old);
        /* consume */
        if (c->consume == CONSUME_POLL) {
            u64 n = reap(c, &q);
            reaped = n;
            outstanding -= n < outstanding ? n : outstanding;
            WR(*q.used_event, (u16)(q.last_used + 0x8000)); /* no interrupts, please */
        } else {
            u64 all = irq_total(nvcpus);
            if (all != all_irqs) {
                all_irqs = all;
                /* NAPI: interrupts off while we poll (Linux virtqueue_disable_cb_split writes
                 * last_used + 0x8000 with event idx), back on when the ring is empty. */
                WR(*q.used_event, (u16)(q.last_used + 0x8000));
                u64 n;
                do {
                    n = reap(c, &q);
                    reaped += n;
                    outstanding -= n < outstanding ? n : outstanding;
                    WR(*q.used_event, q.last_used);
                    mfence();
                } while (RD(*q.used_idx) != q.last_used);
            } else if (c->halt_idle && role == ROLE_CLOSED && outstanding >= c->window) {
                if (q.next_avail != old) c->work_cycles += rdtsc() - now - (c->kick_cycles - kick_cycles0);
                halt(irq_count, my_irqs, c);
                continue; /* the halt is not work */
            }
        }
        /* the guest's own cost of its requests (the simulator's guest.request_ns) */
        if (reaped || q.next_avail != old) c->work_cycles += rdtsc() - now - (c->kick_cycles - kick_cycles0);
    }
}
