/* SPDX-License-Identifier: MIT */
/*
 * Tag sets, tags and requests. Each hardware queue has a bitmap allocator
 * (lock-free, any thread) and its requests preallocated, one per tag, as
 * blk-mq does, so that allocating a request is finding a zero bit.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "block/blk.h"
#include "lib/futex.h"

int blk_mq_alloc_tag_set(struct blk_mq_tag_set *set)
{
	if (!set->ops || !set->nr_hw_queues || !set->queue_depth ||
	    set->queue_depth > BLK_MQ_MAX_DEPTH)
		return -EINVAL;
	set->hctxs = calloc(set->nr_hw_queues, sizeof(*set->hctxs));
	if (!set->hctxs)
		return -ENOMEM;
	blk_timeout_init(set);
	size_t rq_size = (sizeof(struct request) + set->cmd_size + 15) & ~(size_t)15;
	for (unsigned i = 0; i < set->nr_hw_queues; i++) {
		struct blk_mq_hw_ctx *h = &set->hctxs[i];
		h->set = set;
		h->queue_num = i;
		h->depth = set->queue_depth;
		h->nr_words = (h->depth + 63) / 64;
		h->bitmap = calloc(h->nr_words, sizeof(*h->bitmap));
		h->rqs = calloc(h->depth, sizeof(*h->rqs));
		if (!h->bitmap || !h->rqs)
			goto fail;
		/* Bits past the depth are permanently "in use". */
		if (h->depth % 64)
			atomic_store(&h->bitmap[h->nr_words - 1], ~0ull << (h->depth % 64));
		for (unsigned t = 0; t < h->depth; t++) {
			h->rqs[t] = aligned_alloc(16, rq_size);
			if (!h->rqs[t])
				goto fail;
			memset(h->rqs[t], 0, rq_size);
			h->rqs[t]->tag = (int)t;
			h->rqs[t]->hctx = h;
		}
		if (set->ops->init_hctx && set->ops->init_hctx(h, set->driver_data, i) < 0)
			goto fail;
	}
	return 0;
fail:
	blk_mq_free_tag_set(set);
	return -ENOMEM;
}

void blk_mq_free_tag_set(struct blk_mq_tag_set *set)
{
	if (!set->hctxs)
		return;
	blk_timeout_exit(set);
	for (unsigned i = 0; i < set->nr_hw_queues; i++) {
		struct blk_mq_hw_ctx *h = &set->hctxs[i];
		for (unsigned t = 0; h->rqs && t < h->depth; t++)
			free(h->rqs[t]);
		free(h->rqs);
		free((void *)h->bitmap);
	}
	free(set->hctxs);
	set->hctxs = NULL;
}

void blk_mq_init_queue(struct request_queue *q, struct blk_mq_tag_set *set, void *queuedata)
{
	q->set = set;
	q->queuedata = queuedata;
}

static int tag_get(struct blk_mq_hw_ctx *h)
{
	for (unsigned w = 0; w < h->nr_words; w++) {
		uint64_t v = atomic_load_explicit(&h->bitmap[w], memory_order_relaxed);
		while (v != ~0ull) {
			unsigned bit = (unsigned)__builtin_ctzll(~v);
			if (atomic_compare_exchange_weak_explicit(&h->bitmap[w], &v, v | (1ull << bit),
								  memory_order_acquire,
								  memory_order_relaxed))
				return (int)(w * 64 + bit);
		}
	}
	return -1;
}

static void tag_put(struct blk_mq_hw_ctx *h, unsigned tag)
{
	atomic_fetch_and_explicit(&h->bitmap[tag / 64], ~(1ull << (tag % 64)),
				  memory_order_release);
	if (atomic_load_explicit(&h->nr_tag_waiters, memory_order_acquire)) {
		atomic_fetch_add(&h->tag_wait, 1);
		futex_wake(&h->tag_wait, 1);
	}
}

/* A thread keeps its hardware queue, as a task keeps (mostly) to its CPU. */
unsigned blk_mq_map_queue_idx(const struct blk_mq_tag_set *set)
{
	static atomic_uint next_cpu;
	static __thread int my_cpu = -1;

	if (my_cpu < 0)
		my_cpu = (int)(atomic_fetch_add(&next_cpu, 1) & INT_MAX);
	return (unsigned)my_cpu % set->nr_hw_queues;
}

struct request *blk_mq_alloc_request_hctx(struct request_queue *q, unsigned cmd_flags,
					  unsigned flags, unsigned hctx_idx, int *err)
{
	struct blk_mq_hw_ctx *h;
	int tag;

	if (hctx_idx >= q->set->nr_hw_queues) {
		*err = -EINVAL;
		return NULL;
	}
	h = &q->set->hctxs[hctx_idx];
	while ((tag = tag_get(h)) < 0) {
		if (flags & BLK_MQ_REQ_NOWAIT) {
			*err = -EAGAIN;
			return NULL;
		}
		uint32_t seq = atomic_load(&h->tag_wait);
		atomic_fetch_add(&h->nr_tag_waiters, 1);
		if ((tag = tag_get(h)) >= 0) {
			atomic_fetch_sub(&h->nr_tag_waiters, 1);
			break;
		}
		futex_wait(&h->tag_wait, seq, 10);
		atomic_fetch_sub(&h->nr_tag_waiters, 1);
	}
	struct request *rq = h->rqs[tag];
	rq->q = q;
	rq->cmd_flags = cmd_flags;
	rq->data_len = 0;
	rq->segs = NULL;
	rq->nr_segs = 0;
	rq->meta = NULL;
	rq->meta_len = 0;
	rq->timeout_ms = 0;
	atomic_store_explicit(&rq->deadline_ns, 0, memory_order_relaxed);
	rq->end_io = NULL;
	rq->end_io_data = NULL;
	rq->rq_next = NULL;
	atomic_store_explicit(&rq->state, MQ_RQ_IDLE, memory_order_relaxed);
	return rq;
}

struct request *blk_mq_alloc_request(struct request_queue *q, unsigned cmd_flags,
				     unsigned flags, int *err)
{
	return blk_mq_alloc_request_hctx(q, cmd_flags, flags, blk_mq_map_queue_idx(q->set), err);
}

void blk_mq_free_request(struct request *rq)
{
	atomic_store_explicit(&rq->state, MQ_RQ_IDLE, memory_order_relaxed);
	tag_put(rq->hctx, (unsigned)rq->tag);
}

struct request *blk_mq_tag_to_rq(struct blk_mq_hw_ctx *hctx, unsigned tag)
{
	return tag < hctx->depth ? hctx->rqs[tag] : NULL;
}
