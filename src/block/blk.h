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

#define BLK_MAX_REQUEST_COUNT	32		/* per plug, one queue */
#define BLK_PLUG_FLUSH_SIZE	(128u * 1024)	/* a request this big flushes */
#define BLK_MQ_MAX_DEPTH	4096

typedef int blk_status_t;	/* 0 or a negative errno */
#define BLK_STS_OK		0
#define BLK_STS_RESOURCE	(-EAGAIN)

struct ucmd_request;
struct ucmd_hw_queue;
struct ucmd_tag_set;

enum rq_end_io_ret { RQ_END_IO_NONE, RQ_END_IO_FREE };
typedef enum rq_end_io_ret (rq_end_io_fn)(struct ucmd_request *rq, blk_status_t err);

enum blk_eh_timer_return { BLK_EH_DONE, BLK_EH_RESET_TIMER };

struct blk_mq_queue_data {
	struct ucmd_request *rq;
	bool last;		/* no more requests follow: ring the doorbell */
};

struct ucmd_mq_ops {
	blk_status_t (*queue_rq)(struct ucmd_hw_queue *hctx, const struct blk_mq_queue_data *bd);
	void (*commit_rqs)(struct ucmd_hw_queue *hctx);
	/* Queue a whole list; requests it could not take stay on *rqlist. */
	void (*queue_rqs)(struct ucmd_request **rqlist);
	/* IOPOLL: reap completions on hctx; returns how many. */
	int (*poll)(struct ucmd_hw_queue *hctx);
	enum blk_eh_timer_return (*timeout)(struct ucmd_request *rq);
	int (*init_hctx)(struct ucmd_hw_queue *hctx, void *driver_data, unsigned idx);
};

/* cmd_flags */
#define REQ_OP_DRV_IN		(1u << 0)	/* data from the device */
#define REQ_OP_DRV_OUT		(1u << 1)	/* data to the device */
#define REQ_POLLED		(1u << 2)
#define REQ_NOWAIT		(1u << 3)
/* blk_mq_alloc_request flags */
#define BLK_MQ_REQ_NOWAIT	(1u << 0)

struct ucmd_request {
	struct ucmd_request_queue *q;
	struct ucmd_hw_queue *hctx;
	int tag;
	unsigned cmd_flags;
	uint32_t data_len;
	/* Data, already checked: segments of user memory */
	const struct iovec *segs;
	unsigned nr_segs;
	void *meta;
	uint32_t meta_len;
	uint32_t timeout_ms;		/* 0: none */
	uint64_t deadline_ns;
	atomic_int state;		/* MQ_RQ_IDLE / IN_FLIGHT / COMPLETE */
	rq_end_io_fn *end_io;
	void *end_io_data;
	struct ucmd_request *rq_next;	/* plug and queue_rqs lists */
	/* the driver's per-request data (tag_set.cmd_size bytes) follows */
	_Alignas(16) unsigned char pdu[];
};

enum { MQ_RQ_IDLE, MQ_RQ_IN_FLIGHT, MQ_RQ_COMPLETE };

struct ucmd_hw_queue {
	struct ucmd_tag_set *set;
	unsigned queue_num;
	void *driver_data;
	unsigned depth;
	unsigned nr_words;
	_Atomic uint64_t *bitmap;	/* tag allocator: 1 = in use */
	_Atomic uint32_t tag_wait;	/* futex word for blocking allocation */
	atomic_int nr_tag_waiters;
	struct ucmd_request **rqs;	/* preallocated, indexed by tag */
	atomic_ulong nr_dispatched;	/* statistics */
	atomic_ulong nr_batches;
};

struct ucmd_tag_set {
	const struct ucmd_mq_ops *ops;
	unsigned nr_hw_queues;
	unsigned queue_depth;
	unsigned cmd_size;
	void *driver_data;
	struct ucmd_hw_queue *hctxs;
	/* timeout scanning */
	pthread_t timeout_thread;
	atomic_bool timeout_started, timeout_stop;
	pthread_mutex_t timeout_lock;
};

struct ucmd_request_queue {
	struct ucmd_tag_set *set;
	void *queuedata;
};

struct ucmd_blk_plug {
	struct ucmd_request *mq_list;	/* in submission order */
	struct ucmd_request **mq_tail;
	unsigned short rq_count;
	bool multiple_queues;
	struct ucmd_request_queue *q;	/* the queue of the first request */
	unsigned flushes;		/* statistics: early flushes */
};

static inline void *blk_mq_rq_to_pdu(struct ucmd_request *rq)
{
	return rq->pdu;
}

int  blk_mq_alloc_tag_set(struct ucmd_tag_set *set);
void blk_mq_free_tag_set(struct ucmd_tag_set *set);
void blk_mq_init_queue(struct ucmd_request_queue *q, struct ucmd_tag_set *set, void *queuedata);

/*
 * A request on the submitter's hardware queue. BLK_MQ_REQ_NOWAIT: -EAGAIN
 * when no tag is free; otherwise wait for one. Returns NULL and sets *err.
 */
struct ucmd_request *blk_mq_alloc_request(struct ucmd_request_queue *q, unsigned cmd_flags,
					  unsigned flags, int *err);
struct ucmd_request *blk_mq_alloc_request_hctx(struct ucmd_request_queue *q, unsigned cmd_flags,
					       unsigned flags, unsigned hctx_idx, int *err);
void blk_mq_free_request(struct ucmd_request *rq);
struct ucmd_request *blk_mq_tag_to_rq(struct ucmd_hw_queue *hctx, unsigned tag);

/*
 * Send rq to the driver. Inside a plug (blk_start_plug on this thread)
 * it joins the plug's batch; otherwise it goes through ->queue_rq at once.
 */
void blk_execute_rq_nowait(struct ucmd_request *rq, bool at_head);
/* Driver: the request is done; calls rq->end_io, frees it if asked. */
void blk_mq_end_request(struct ucmd_request *rq, blk_status_t err);
/* For the timeout scanner: claim completion; false if already completed. */
bool blk_mq_complete_request_claim(struct ucmd_request *rq);

void blk_start_plug(struct ucmd_blk_plug *plug);
void blk_finish_plug(struct ucmd_blk_plug *plug);
void blk_mq_flush_plug_list(struct ucmd_blk_plug *plug);
/* The plug this thread is collecting into, if any. */
struct ucmd_blk_plug *blk_current_plug(void);

/* Hardware queue of the calling thread ("its CPU"). */
unsigned blk_mq_map_queue_idx(const struct ucmd_tag_set *set);

#endif
