/* SPDX-License-Identifier: MIT */
/*
 * The block device nvmeXnY: READ/WRITE family requests become NVMe Read and
 * Write commands on the same request path as passthrough. Offsets and
 * lengths must be multiples of the logical block size (O_DIRECT rules).
 */
#include <errno.h>
#include <linux/fs.h>
#include <string.h>

#include "host.h"

#define NVME_RW_FUA	(1u << 30)
#define NVME_MAX_NLB	0x10000u

_Static_assert(sizeof(struct nvme_bdev_pdu) <= sizeof(((struct ucmd_kiocb_rw *)0)->pdu),
	       "pdu fits ucmd_kiocb_rw.pdu");

static enum rq_end_io_ret nvme_bdev_end_io(struct request *rq, blk_status_t err)
{
	struct ucmd_kiocb_rw *kiocb = rq->end_io_data;
	struct nvme_bdev_pdu *pdu = (struct nvme_bdev_pdu *)(void *)kiocb->pdu;
	int st = nvme_rq_bounce_out(rq, nvme_end_status(rq, err));

	nvme_rq_release(rq);
	/* A block device reports device errors as -EIO, cancellation as -EINTR. */
	kiocb->ki_complete(kiocb, st == 0 ? (long)pdu->count : st > 0 ? -EIO : st);
	return RQ_END_IO_FREE;
}

long nvme_bdev_rw_ns(struct nvme_ns *ns, struct ucmd_kiocb_rw *kiocb, unsigned issue_flags,
		     bool write, rq_end_io_fn *end_io)
{
	struct nvme_bdev_pdu *pdu = (struct nvme_bdev_pdu *)(void *)kiocb->pdu;
	uint64_t lbs = 1ull << ns->lba_shift, nlb;
	struct ucmd_nvme_sqe c = { .opcode = write ? nvme_cmd_write : nvme_cmd_read };
	struct iov_iter it = { 0 };
	/* the disk counts its own I/O; passthrough on ngXnY is not counted */
	unsigned rq_flags = (write ? REQ_OP_DRV_OUT : REQ_OP_DRV_IN) | REQ_IO_STAT, blk_flags = 0;
	struct request *rq;
	int ret;

	if ((kiocb->pos & (lbs - 1)) || (kiocb->iter.count & (lbs - 1)))
		return -EINVAL;
	if (!kiocb->iter.count)
		return 0;
	/* Extended LBAs interleave metadata: the byte view has no meaning. */
	if (ns->ext)
		return -EINVAL;
	nlb = kiocb->iter.count >> ns->lba_shift;
	if (nlb > NVME_MAX_NLB)
		return -EINVAL;
	/* Pinned before the device sees it, as passthrough's (ioctl.c). */
	if (!kiocb->iter.mm) {
		/* another process's memory is checked by its bounce (bounce.c) */
		ret = fault_in_iov_iter(&kiocb->iter, write ? UCMD_WRITE : UCMD_READ);
		if (ret)
			return ret;
	}
	c.nsid = ns->nsid;
	c.cdw10 = (uint32_t)(kiocb->pos >> ns->lba_shift);
	c.cdw11 = (uint32_t)((kiocb->pos >> ns->lba_shift) >> 32);
	c.cdw12 = (uint32_t)(nlb - 1);
	if (write && (kiocb->rwf & (RWF_DSYNC | RWF_SYNC)))
		c.cdw12 |= NVME_RW_FUA;
	/*
	 * Linux's nvme_setup_rw without an integrity payload (the disk has no
	 * metadata buffers here): metadata that is the protection tuple alone
	 * is the controller's to insert and strip (PRACT), checked on the way:
	 * the guard, and for types 1 and 2 the reference tag, the LBA's low
	 * 32 bits (48 with the 64b guard, bits 47:32 in CDW3).
	 */
	if (ns->ms && ns->pi_type && ns->ms == ns->pi_size) {
		uint64_t slba = (uint64_t)kiocb->pos >> ns->lba_shift;
		uint32_t control = NVME_IO_PRINFO_PRACT | NVME_IO_PRINFO_PRCHK_GUARD;

		if (ns->pi_type != NVME_NS_DPS_PI_TYPE3) {
			control |= NVME_IO_PRINFO_PRCHK_REF;
			c.cdw14 = (uint32_t)slba;
			if (ns->pi_size == 16)
				c.cdw3 = (uint32_t)(slba >> 32) & 0xffff;
		}
		c.cdw12 |= control << 16;
	}
	if (issue_flags & IO_URING_F_NONBLOCK) {
		rq_flags |= REQ_NOWAIT;
		blk_flags |= BLK_MQ_REQ_NOWAIT;
	}
	if (issue_flags & IO_URING_F_IOPOLL)
		rq_flags |= REQ_POLLED;
	/* a head's request (it alone brings its own end_io) fails over */
	if (end_io)
		rq_flags |= REQ_NVME_MPATH;
	rq = nvme_alloc_request((rq_flags & REQ_POLLED) ? &ns->pq : &ns->q, &c, rq_flags,
				blk_flags, &ret);
	if (!rq)
		return ret;
	/* The engine's iterator outlives the request: borrow its segments. */
	it.mm = kiocb->iter.mm;
	it.iov = kiocb->iter.iov;
	it.nr_segs = kiocb->iter.nr_segs;
	it.count = kiocb->iter.count;
	nvme_rq_set_data(rq, &it);
	ret = 0;
	if (__builtin_expect(it.mm != NULL, 0)) {
		/*
		 * Another process's memory: lengths the controller checks
		 * (sgl_only), should its view of the format have moved
		 * from ours (a Format since our last look).
		 */
		nvme_req(rq)->sgl_only = true;
		nvme_req(rq)->dma_window = true;
		ret = nvme_rq_bounce(rq, NULL, write);
	}
	if (!ret)
		ret = nvme_map_data(ns->host, rq);
	if (ret) {
		nvme_rq_release(rq);
		blk_mq_free_request(rq);
		return ret;
	}
	pdu->nvmeq = nvme_req(rq)->nvmeq;
	pdu->count = kiocb->iter.count;
	rq->end_io = end_io ? end_io : nvme_bdev_end_io;
	rq->end_io_data = kiocb;
	blk_execute_rq_nowait(rq, false);
	return -EIOCBQUEUED;
}

static long nvme_bdev_read_iter(struct ucmd_kiocb_rw *kiocb, unsigned issue_flags)
{
	return nvme_bdev_rw_ns(kiocb->file->private_data, kiocb, issue_flags, false, NULL);
}

static long nvme_bdev_write_iter(struct ucmd_kiocb_rw *kiocb, unsigned issue_flags)
{
	return nvme_bdev_rw_ns(kiocb->file->private_data, kiocb, issue_flags, true, NULL);
}

int nvme_bdev_iopoll(struct ucmd_kiocb_rw *kiocb)
{
	struct nvme_bdev_pdu *pdu = (struct nvme_bdev_pdu *)(void *)kiocb->pdu;

	return pdu->nvmeq ? nvme_poll_queue(pdu->nvmeq) : 0;
}

/*
 * blkdev_fsync(): the namespace's volatile write cache goes to media, an
 * NVMe Flush, waited for (IORING_OP_FSYNC runs it from a worker). datasync
 * changes nothing on a block device. Device errors are -EIO.
 */
static int nvme_bdev_fsync(struct ucmd_file *f, int datasync)
{
	return nvme_bdev_flush_ns(f->private_data, datasync);
}

int nvme_bdev_flush_ns(struct nvme_ns *ns, int datasync)
{
	struct ucmd_nvme_sqe c = { .opcode = nvme_cmd_flush, .nsid = ns->nsid };
	struct request *rq;
	int ret;

	(void)datasync;
	rq = nvme_alloc_request(&ns->q, &c, REQ_OP_DRV_OUT, 0, &ret);
	if (!rq)
		return ret;
	ret = nvme_execute_rq(rq, NULL);
	return ret > 0 ? -EIO : ret;
}

static int nvme_bdev_disk_stat(void *priv, struct ucmd_disk_stat *out)
{
	struct nvme_ns *ns = priv;

	blk_disk_stats_read(&ns->stats, out);
	return 0;
}

const struct ucmd_file_ops nvme_bdev_fops = {
	.name = "nvme-block",
	.read_iter = nvme_bdev_read_iter,
	.write_iter = nvme_bdev_write_iter,
	.iopoll = nvme_bdev_iopoll,
	.fsync = nvme_bdev_fsync,
	.describe_rw = nvme_bdev_describe_rw,
	.disk_stat = nvme_bdev_disk_stat,
	/* the NVMe ioctls of the namespace work on its block device too, as in Linux */
	.ioctl = nvme_ns_ioctl,
	.describe_ioctl = nvme_ns_describe_ioctl,
};
