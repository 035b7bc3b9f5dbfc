/* SPDX-License-Identifier: MIT */
/*
 * A tiny block layer (blk-mq's shape): a tag set with per-hardware-queue tag
 * allocators and preallocated requests, request queues, and the submitter's
 * plug. Seed 004: passthrough requests join the plug like any other and
 * leave as one batch through ->queue_rqs (one doorbell), instead of one by
 * one through ->queue_rq.
 */
#ifndef UCMD_BLOCK_BLK_H
#define UCMD_BLOCK_BLK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "lib/clock.h"

#define BLK_MAX_REQUEST_COUNT	32		/* per plug, one queue */
#define BLK_PLUG_FLUSH_SIZE	(128u * 1024)	/* a request this big flushes */
#define BLK_MQ_MAX_DEPTH	4096

typedef int blk_status_t;	/* 0 or a negative errno */
#define BLK_STS_OK		0
#define BLK_STS_RESOURCE	(-EAGAIN)

struct request;
struct blk_mq_hw_ctx;
struct blk_mq_tag_set;

enum rq_end_io_ret { RQ_END_IO_NONE, RQ_END_IO_FREE };
typedef enum rq_end_io_ret (rq_end_io_fn)(struct request *rq, blk_status_t err);

enum blk_eh_timer_return { BLK_EH_DONE, BLK_EH_RESET_TIMER };

struct blk_mq_queue_data {
	struct request *rq;
	bool last;		/* no more requests follow: ring the doorbell */
};

struct blk_mq_ops {
	blk_status_t (*queue_rq)(struct blk_mq_hw_ctx *hctx, const struct blk_mq_queue_data *bd);
	void (*commit_rqs)(struct blk_mq_hw_ctx *hctx);
	/* Queue a whole list; requests it could not take stay on *rqlist. */
	void (*queue_rqs)(struct request **rqlist);
	/* IOPOLL: reap completions on hctx; returns how many. */
	int (*poll)(struct blk_mq_hw_ctx *hctx);
	enum blk_eh_timer_return (*timeout)(struct request *rq);
	int (*init_hctx)(struct blk_mq_hw_ctx *hctx, void *driver_data, unsigned idx);
};

/* cmd_flags */
#define REQ_OP_DRV_IN		(1u << 0)	/* data from the device */
#define REQ_OP_DRV_OUT		(1u << 1)	/* data to the device */
#define REQ_POLLED		(1u << 2)
#define REQ_NOWAIT		(1u << 3)
#define REQ_IO_STAT		(1u << 4)	/* counted in the disk's stats (blk-stat.c) */
#define REQ_DRV			(1u << 5)	/* the driver's own (Linux's REQ_DRV) */
/* blk_mq_alloc_request flags */
#define BLK_MQ_REQ_NOWAIT	(1u << 0)

struct request {
	struct request_queue *q;
	struct blk_mq_hw_ctx *hctx;
	int tag;
	unsigned cmd_flags;
	uint32_t data_len;
	/* Data, already checked: segments of user memory */
	const struct iovec *segs;
	unsigned nr_segs;
	void *meta;
	uint32_t meta_len;
	uint32_t timeout_ms;		/* 0: none */
	/*
	 * ktime_get_ns() when it times out, 0: none. Written by the starter
	 * and the timer, read by the timer: C11 _Atomic, as state and every
	 * other shared field of the block layer, so that no access to it can
	 * be a plain (racy) one; relaxed, as state's release/acquire orders it.
	 */
	_Atomic uint64_t deadline_ns;
	uint64_t start_time_ns;		/* REQ_IO_STAT: when it was issued */
	atomic_int state;		/* MQ_RQ_IDLE / IN_FLIGHT / COMPLETE */
	rq_end_io_fn *end_io;
	void *end_io_data;
	struct request *rq_next;	/* plug and queue_rqs lists */
	/* the driver's per-request data (tag_set.cmd_size bytes) follows */
	_Alignas(16) unsigned char pdu[];
};

enum { MQ_RQ_IDLE, MQ_RQ_IN_FLIGHT, MQ_RQ_COMPLETE };

struct blk_mq_hw_ctx {
	struct blk_mq_tag_set *set;
	unsigned queue_num;
	void *driver_data;
	unsigned depth;
	unsigned nr_words;
	_Atomic uint64_t *bitmap;	/* tag allocator: 1 = in use */
	_Atomic uint32_t tag_wait;	/* futex word for blocking allocation */
	atomic_int nr_tag_waiters;
	struct request **rqs;	/* preallocated, indexed by tag */
	atomic_ulong nr_dispatched;	/* statistics */
	atomic_ulong nr_batches;
};

struct blk_mq_tag_set {
	const struct blk_mq_ops *ops;
	unsigned nr_hw_queues;
	unsigned queue_depth;
	unsigned cmd_size;
	void *driver_data;
	/* a request started without a timeout gets this one (Linux's set->timeout); 0: none */
	uint32_t timeout_ms;
	struct blk_mq_hw_ctx *hctxs;
	/* The request timer (blk-timeout.c), armed for the earliest deadline. */
	pthread_t timer_thread;
	atomic_bool timer_started, timer_stop;
	pthread_mutex_t timer_lock;		/* starting the thread */
	_Atomic uint64_t timer_expires;		/* armed deadline, 0: disarmed */
	_Atomic uint32_t timer_seq;		/* futex word: re-armed earlier, or stop */
	atomic_ulong nr_timer_runs;		/* statistics: times the timer fired */
	atomic_ulong nr_timer_wakeups;		/* statistics: times its thread woke */
};

/* A block device's counters: reads [0] and writes [1]. See blk-stat.c. */
struct blk_disk_stats {
	_Atomic uint64_t ios[2], sectors[2], nsecs[2];
	_Atomic uint64_t io_ticks_ms, stamp_ms;
};

struct request_queue {
	struct blk_mq_tag_set *set;
	void *queuedata;
	struct blk_disk_stats *stats;	/* the disk's; NULL: none */
};

struct blk_plug {
	struct request *mq_list;	/* in submission order */
	struct request **mq_tail;
	unsigned short rq_count;
	bool multiple_queues;
	struct request_queue *q;	/* the queue of the first request */
	unsigned flushes;		/* statistics: early flushes */
	uint64_t cur_ktime;		/* blk_time_get_ns() of this plug, 0: unread */
};

static inline void *blk_mq_rq_to_pdu(struct request *rq)
{
	return rq->pdu;
}

int  blk_mq_alloc_tag_set(struct blk_mq_tag_set *set);
void blk_mq_free_tag_set(struct blk_mq_tag_set *set);
void blk_mq_init_queue(struct request_queue *q, struct blk_mq_tag_set *set, void *queuedata);

/*
 * A request on the submitter's hardware queue. BLK_MQ_REQ_NOWAIT: -EAGAIN
 * when no tag is free; otherwise wait for one. Returns NULL and sets *err.
 */
struct request *blk_mq_alloc_request(struct request_queue *q, unsigned cmd_flags,
				     unsigned flags, int *err);
struct request *blk_mq_alloc_request_hctx(struct request_queue *q, unsigned cmd_flags,
					  unsigned flags, unsigned hctx_idx, int *err);
void blk_mq_free_request(struct request *rq);

/* Disk statistics (blk-stat.c) */
struct ucmd_disk_stat;
uint64_t blk_time_get_ns(void);
void __blk_account_io_start(struct request *rq);
void __blk_account_io_done(struct request *rq);
/* Inline: a passthrough request pays one flag test for them. */
static inline void blk_account_io_start(struct request *rq)
{
	if (rq->cmd_flags & REQ_IO_STAT)
		__blk_account_io_start(rq);
}

static inline void blk_account_io_done(struct request *rq)
{
	if (rq->cmd_flags & REQ_IO_STAT)
		__blk_account_io_done(rq);
}

/* Around one pass of completions: they share one clock reading. */
struct blk_compl_time {
	unsigned depth;		/* open completion batches on this thread */
	uint64_t now;		/* 0: not read yet in this batch */
};
extern __thread struct blk_compl_time blk_compl_time;

static inline void blk_complete_batch_begin(void)
{
	blk_compl_time.depth++;
}

static inline void blk_complete_batch_end(void)
{
	if (!--blk_compl_time.depth)
		blk_compl_time.now = 0;
}

/*
 * Driver: the request is done; counts it, calls rq->end_io, frees it if
 * asked. Inline: it is on every completion, and out of line it costs a call.
 */
static inline void blk_mq_end_request(struct request *rq, blk_status_t err)
{
	rq_end_io_fn *fn = rq->end_io;

	blk_account_io_done(rq);
	if (!fn || fn(rq, err) == RQ_END_IO_FREE)
		blk_mq_free_request(rq);
}

void blk_disk_stats_read(struct blk_disk_stats *s, struct ucmd_disk_stat *out);
struct request *blk_mq_tag_to_rq(struct blk_mq_hw_ctx *hctx, unsigned tag);

/*
 * Send rq to the driver. Inside a plug (blk_start_plug on this thread)
 * it joins the plug's batch; otherwise it goes through ->queue_rq at once.
 */
void blk_execute_rq_nowait(struct request *rq, bool at_head);
/* Claim completion (driver or timeout handler); false if already completed. */
bool blk_mq_complete_request_claim(struct request *rq);

/* Timeouts (blk-timeout.c) */
void blk_timeout_init(struct blk_mq_tag_set *set);
void blk_timeout_exit(struct blk_mq_tag_set *set);
/* rq, already in flight, times out at deadline: arm the timer if earlier. */
void blk_add_timer(struct request *rq, uint64_t deadline);

void blk_start_plug(struct blk_plug *plug);
void blk_finish_plug(struct blk_plug *plug);
void blk_mq_flush_plug_list(struct blk_plug *plug);
/* The plug this thread is collecting into, if any. */
struct blk_plug *blk_current_plug(void);

/* Hardware queue of the calling thread ("its CPU"). */
unsigned blk_mq_map_queue_idx(const struct blk_mq_tag_set *set);

#endif
