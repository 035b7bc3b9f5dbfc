/* SPDX-License-Identifier: MIT */
/*
 * Bouncing a request whose user memory is another process's (a ucmdd
 * client's remote mm): the device reaches only this process's memory, so
 * such data goes through a buffer of ours, as swiotlb bounces for a device
 * that cannot reach the pages. Filled when the request is issued (the
 * device reads it now, so a Write linked behind a Read into the same
 * buffer sends what that Read brought) and copied back when the request
 * completes, before its CQE, so the next request of a chain finds it there.
 *
 * Ranges the owner shared with us (user_mm_ops.map_local) are handed to the
 * device as they are: no copy. An mm of this process never gets here.
 *
 * Each bounced range keeps the user's offset within its page and has the
 * rest of its pages: the driver judges alignment as the user's buffer has
 * it, and the controller, which writes up to the end of each page its PRPs
 * name, stays inside. Of a read's bounce, what the device will not write
 * is zeroed (read_xfer: all of it when we cannot tell), so it reaches the
 * user as zeros, never as the daemon's memory; only the user's own length
 * is copied back, and only after success.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

#define BOUNCE_PAGE 4096u

/* The pages [uaddr, uaddr + n) touches, in bytes; an empty range still has its page. */
static size_t page_span(uint64_t uaddr, size_t n)
{
	return ((uaddr & (BOUNCE_PAGE - 1)) + (n ? n : 1) + BOUNCE_PAGE - 1) &
	       ~(size_t)(BOUNCE_PAGE - 1);
}

/* The next range's place in b->buf: its first page at *off, its page offset kept. */
static void *bounce_place(struct nvme_bounce *b, size_t *off, uint64_t uaddr, size_t n)
{
	void *p = b->buf + *off + (uaddr & (BOUNCE_PAGE - 1));

	*off += page_span(uaddr, n);
	return p;
}

static void bounce_release(struct nvme_bounce *b)
{
	if (b->charged)
		b->charged->ops->bounce_uncharge(b->charged, b->len);
	free(b->buf);
	b->buf = NULL;
}

static bool in_buf(const struct nvme_bounce *b, const void *p)
{
	const unsigned char *c = p;

	return b->len && c >= b->buf && c < b->buf + b->len;
}

static void *local_range(const struct user_mm *mm, uint64_t uaddr, size_t n)
{
	return mm->ops->map_local && n ? mm->ops->map_local(mm, uaddr, n) : NULL;
}

/*
 * A read on an I/O queue may bounce in memory its owner shares with us and
 * copies out itself (user_mm_ops.share_alloc): its data is only ever the
 * owner's, never parsed by the driver. Admin data (Identify and the like)
 * is read by the host too, and a client must not change it under us.
 */
static bool may_share(struct request *rq, const struct user_mm *mm, bool write, unsigned nr)
{
	const struct nvme_request *req = nvme_req(rq);

	return !write && mm && mm->ops->share_alloc && nr <= 64 && req->nvmeq &&
	       req->nvmeq->qid;
}

/*
 * How many bytes from the start of a read's data the device writes when it
 * succeeds, as far as we know it: all of a block read (its data is the
 * transfer), nlb logical blocks of an NVMe Read on a namespace without
 * metadata or protection; 0 when we cannot tell. A read's
 * data goes to the user only after success (nvme_rq_bounce_out), so a
 * bounce needs zeros only past this: the rest the device overwrites.
 */
static size_t read_xfer(struct request *rq)
{
	const struct ucmd_nvme_sqe *c = &nvme_req(rq)->cmd;
	const struct nvme_ns *ns = rq->q->queuedata;

	if (!nvme_req(rq)->nvmeq || !nvme_req(rq)->nvmeq->qid || !ns)
		return 0;
	if (c->opcode != nvme_cmd_read || (c->flags & 3) || c->nsid != ns->nsid || ns->ms ||
	    ns->pi_type || ns->ext)
		return 0;
	return (size_t)((c->cdw12 & 0xffffu) + 1u) << ns->lba_shift;
}

/*
 * Zero what the device will not write of a read's bounce for the user's
 * [at, at + n) of the data (p holds it): bytes past xfer.
 */
static void zero_unwritten(void *p, size_t at, size_t n, size_t xfer)
{
	size_t skip = xfer > at ? xfer - at : 0;

	if (skip < n)
		memset((unsigned char *)p + skip, 0, n - skip);
}

/* Shared segments of dev[] (bits of mask) back to their area. */
static void share_put_all(const struct user_mm *mm, void *area, const struct iovec *dev,
			  uint64_t mask)
{
	for (unsigned i = 0; mask; i++, mask >>= 1)
		if (mask & 1)
			mm->ops->share_put(area, dev[i].iov_base);
}

/*
 * The request's segments become the device's (dev, nr of them; small: the
 * caller's on-stack array, copied into the request's own): this process's
 * memory from now on, so nothing bounces them again.
 */
static void data_to_device(struct request *rq, struct iovec *dev, const struct iovec *small,
			   unsigned nr)
{
	struct nvme_request *req = nvme_req(rq);

	if (dev == small) {
		memcpy(req->data.fast, small, nr * sizeof(*dev));
		req->data.iov = req->data.fast;
		req->data.alloc = NULL;
	} else {
		req->data.iov = dev;
		req->data.alloc = dev;
	}
	req->data.mm = NULL;
	rq->segs = req->data.iov;
}

int nvme_rq_bounce(struct request *rq, const struct user_mm *meta_mm, bool write)
{
	struct nvme_request *req = nvme_req(rq);
	const struct user_mm *mm = req->has_data ? req->data.mm : NULL;
	const struct user_mm *owner;
	struct iovec small[UCMD_FAST_IOV], *dev = small;
	void *meta_local = NULL, *share = NULL;
	struct nvme_bounce *b;
	size_t need = 0, off = 0, at = 0;
	unsigned nr = mm ? req->data.nr_segs : 0;
	uint64_t shared = 0;
	bool sharing = may_share(rq, mm, write, nr);
	size_t xfer = write ? 0 : read_xfer(rq);

	if (user_mm_is_self(meta_mm) || !rq->meta_len)
		meta_mm = NULL;
	if (!mm && !meta_mm)
		return 0;
	if (nr > UCMD_FAST_IOV) {
		dev = malloc(nr * sizeof(*dev));
		if (!dev)
			return -ENOMEM;
	}
	/*
	 * What the owner shared is looked up once: a region it drops meanwhile
	 * must not change how much of the bounce is needed.
	 */
	for (unsigned i = 0; i < nr; i++) {
		uint64_t ua = (uint64_t)(uintptr_t)req->data.iov[i].iov_base;
		size_t l = req->data.iov[i].iov_len;

		dev[i] = (struct iovec){ local_range(mm, ua, l), l };
		if (!dev[i].iov_base && sharing && l) {
			void *area = NULL;

			dev[i].iov_base = mm->ops->share_alloc(mm, ua, l, &area);
			/* one request, one ring, one area; anything else bounces here */
			if (dev[i].iov_base && share && area != share) {
				mm->ops->share_put(area, dev[i].iov_base);
				dev[i].iov_base = NULL;
			} else if (dev[i].iov_base) {
				share = area;
				shared |= 1ull << i;
				zero_unwritten(dev[i].iov_base, at, l, xfer);
			}
		}
		if (!dev[i].iov_base)
			need += page_span(ua, l);
		at += l;
	}
	if (meta_mm) {
		meta_local = local_range(meta_mm, (uint64_t)(uintptr_t)rq->meta, rq->meta_len);
		if (!meta_local)
			need += page_span((uint64_t)(uintptr_t)rq->meta, rq->meta_len);
	}
	/*
	 * Wholly in memory the owner shares with us (ucmd_buf_alloc's): the
	 * device reaches it as it is, and nothing is held for the request,
	 * so a read needs nothing at its completion either.
	 */
	if (!need && !shared) {
		if (mm) {
			iov_iter_release(&req->data);
			data_to_device(rq, dev, small, nr);
		}
		if (meta_mm)
			rq->meta = meta_local;
		return 0;
	}
	owner = mm ? mm : meta_mm;
	/* the owner's limit on what it makes us hold (ucmdd: per client) */
	if (owner->ops->bounce_charge && owner->ops->bounce_charge(owner, need)) {
		if (shared)
			share_put_all(mm, share, dev, shared);
		if (dev != small)
			free(dev);
		return -ENOMEM;
	}
	/* the request's own slot: an I/O into the owner's shared area allocates nothing */
	b = &req->bounce_slot;
	b->buf = need ? aligned_alloc(BOUNCE_PAGE, need) : NULL;
	if (need && !b->buf) {
		if (owner->ops->bounce_uncharge)
			owner->ops->bounce_uncharge(owner, need);
		if (shared)
			share_put_all(mm, share, dev, shared);
		if (dev != small)
			free(dev);
		return -ENOMEM;
	}
	b->charged = owner->ops->bounce_charge ? owner : NULL;
	b->share = share;
	b->shared = shared;
	b->len = need;
	b->write = write;
	b->meta_mm = meta_mm;
	b->meta_uaddr = (uint64_t)(uintptr_t)rq->meta;
	b->meta_len = rq->meta_len;
	b->user.mm = NULL;
	b->user.nr_segs = 0;
	b->user.alloc = NULL;
	at = 0;
	for (unsigned i = 0; i < nr; i++) {
		uint64_t ua = (uint64_t)(uintptr_t)req->data.iov[i].iov_base;
		size_t l = dev[i].iov_len;

		at += l;
		if (dev[i].iov_base)
			continue;	/* the owner's: shared with us, or its bounce area */
		dev[i].iov_base = bounce_place(b, &off, ua, l);
		if (write && user_mm_copy_from(mm, dev[i].iov_base, ua, l))
			goto fault;
		if (!write)
			zero_unwritten(dev[i].iov_base, at - l, l, xfer);
	}
	if (meta_mm && !meta_local) {
		meta_local = bounce_place(b, &off, b->meta_uaddr, b->meta_len);
		if (write && user_mm_copy_from(meta_mm, meta_local, b->meta_uaddr, b->meta_len))
			goto fault;
		if (!write)
			memset(meta_local, 0, b->meta_len);
	}
	if (mm) {
		/* the user's segments move to b; the request gets the device's */
		b->user = req->data;
		if (req->data.iov == req->data.fast)
			b->user.iov = b->user.fast;
		data_to_device(rq, dev, small, nr);
	}
	if (meta_mm)
		rq->meta = meta_local;
	req->bounce = b;
	return 0;
fault:
	if (dev != small)
		free(dev);
	bounce_release(b);
	return -EFAULT;
}

int nvme_rq_bounce_out(struct request *rq, int status)
{
	struct nvme_request *req = nvme_req(rq);
	struct nvme_bounce *b = req->bounce;
	int err = 0;

	if (!b || b->write || status)
		return status;
	for (unsigned i = 0; i < b->user.nr_segs && !err; i++) {
		const struct iovec *d = &req->data.iov[i];
		uint64_t ua = (uint64_t)(uintptr_t)b->user.iov[i].iov_base;

		if (in_buf(b, d->iov_base)) {
			err = user_mm_copy_to(b->user.mm, ua, d->iov_base, d->iov_len);
		} else if (i < 64 && (b->shared & (1ull << i))) {
			const struct user_mm_ops *ops = b->user.mm->ops;

			/* the owner copies it out before it sees our CQE; no room: as above */
			b->shared &= ~(1ull << i);
			if (ops->share_post(b->share, d->iov_base, ua, d->iov_len)) {
				err = user_mm_copy_to(b->user.mm, ua, d->iov_base, d->iov_len);
				ops->share_put(b->share, d->iov_base);
			}
		}
	}
	if (!err && b->meta_mm && in_buf(b, rq->meta))
		err = user_mm_copy_to(b->meta_mm, b->meta_uaddr, rq->meta, b->meta_len);
	/* the device's data could not reach the user's buffer: Linux's -EFAULT */
	return err ? -EFAULT : 0;
}

void nvme_rq_bounce_free(struct request *rq)
{
	struct nvme_request *req = nvme_req(rq);
	struct nvme_bounce *b = req->bounce;

	if (!b)
		return;
	req->bounce = NULL;
	/* a failed or cancelled read: its shared bounce was never handed over */
	if (b->shared)
		share_put_all(b->user.mm, b->share, req->data.iov, b->shared);
	iov_iter_release(&b->user);
	bounce_release(b);
}
