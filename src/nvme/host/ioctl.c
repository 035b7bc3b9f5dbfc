/* SPDX-License-Identifier: MIT */
/*
 * NVMe passthrough (seeds 005, 006, 007): one routine turns a user command
 * (struct nvme_uring_cmd or struct nvme_passthru_cmd64) into a request with
 * its data mapped; the synchronous ioctl path waits for it, the uring path
 * returns -EIOCBQUEUED and completes in the submitter's task context with
 * the NVMe status in cqe.res and the 64-bit result in big_cqe[0].
 */
#include <errno.h>
#include <string.h>

#include "host.h"
#include "security/hooks.h"

/* What both user structures carry besides the command dwords. */
struct nvme_user_data {
	uint64_t metadata;
	uint64_t addr;
	uint32_t data_len;	/* bytes, or the iovec count for the _VEC variants */
	uint32_t metadata_len;
	uint32_t timeout_ms;
};

/* Lives in io_uring_cmd.pdu: outlives the request. */
struct nvme_uring_cmd_pdu {
	struct nvme_queue *nvmeq;	/* for IOPOLL */
	int32_t status;
	uint64_t result;
};
_Static_assert(sizeof(struct nvme_uring_cmd_pdu) <= sizeof(((struct io_uring_cmd *)0)->pdu),
	       "pdu fits io_uring_cmd.pdu");

static struct nvme_uring_cmd_pdu *nvme_uring_cmd_pdu(struct io_uring_cmd *ioucmd)
{
	return (struct nvme_uring_cmd_pdu *)(void *)ioucmd->pdu;
}

/* Commands whose CDW12 holds NLB, so the metadata length follows from it. */
static bool nvme_cmd_has_nlb(uint8_t opcode)
{
	switch (opcode) {
	case nvme_cmd_read:
	case nvme_cmd_write:
	case nvme_cmd_compare:
	case nvme_cmd_verify:
		return true;
	default:
		return false;
	}
}

static int nvme_check_metadata(struct nvme_ns *ns, const struct ucmd_nvme_sqe *c,
			       const struct nvme_user_data *d, size_t data_bytes)
{
	uint64_t want;

	/* Separate metadata exists only for formats with it, not extended LBAs. */
	if (!ns || !ns->ms || ns->ext)
		return -EINVAL;
	if (ucmd_access_ok(d->metadata, d->metadata_len))
		return -EFAULT;
	if (nvme_cmd_has_nlb(c->opcode))
		want = ((uint64_t)(c->cdw12 & 0xffff) + 1) * ns->ms;
	else
		want = (uint64_t)(data_bytes >> ns->lba_shift) * ns->ms;
	return d->metadata_len == want ? 0 : -EINVAL;
}

static int nvme_import_user_data(struct nvme_host *h, const struct nvme_user_data *d, int rw,
				 bool vec, struct io_uring_cmd *ioucmd, struct ucmd_iov_iter *it)
{
	int ret;

	if (ioucmd && (ioucmd->flags & IORING_URING_CMD_FIXED)) {
		/* Fixed buffers are for flat (non-vectored) I/O only. */
		if (vec)
			return -EINVAL;
		ret = io_uring_cmd_import_fixed(d->addr, d->data_len, rw, it, ioucmd);
	} else if (vec) {
		ret = ucmd_import_iovec(rw, d->addr, d->data_len, it);
	} else {
		ret = ucmd_import_ubuf(rw, d->addr, d->data_len, it);
	}
	if (ret)
		return ret;
	if (h->max_hw_bytes && it->count > h->max_hw_bytes) {
		ucmd_iov_iter_release(it);
		return -EINVAL;
	}
	return 0;
}

/*
 * The shared builder (seed 005's nvme_alloc_user_request + nvme_map_user_request):
 * returns a request ready for blk_execute_rq_nowait, or -errno (-EAGAIN
 * when NOWAIT found no tag).
 */
static int nvme_build_user_request(struct nvme_host *h, struct nvme_ns *ns,
				   const struct ucmd_nvme_sqe *c, const struct nvme_user_data *d,
				   unsigned rq_flags, unsigned blk_flags, bool vec,
				   struct io_uring_cmd *ioucmd, struct ucmd_request **out)
{
	struct ucmd_request_queue *q = !ns ? &h->admin_q : (rq_flags & REQ_POLLED) ? &ns->pq
										    : &ns->q;
	bool write = c->opcode & 1;
	int rw = write ? UCMD_WRITE : UCMD_READ;
	struct ucmd_iov_iter it = { 0 };
	bool has_data = d->data_len != 0;
	struct ucmd_request *rq;
	int ret;

	if (has_data) {
		ret = nvme_import_user_data(h, d, rw, vec, ioucmd, &it);
		if (ret)
			return ret;
		if (d->metadata && d->metadata_len) {
			ret = nvme_check_metadata(ns, c, d, it.count);
			if (ret) {
				ucmd_iov_iter_release(&it);
				return ret;
			}
		}
	}
	rq = nvme_alloc_request(q, c, rq_flags | (write ? REQ_OP_DRV_OUT : REQ_OP_DRV_IN),
				blk_flags, &ret);
	if (!rq) {
		if (has_data)
			ucmd_iov_iter_release(&it);
		return ret;
	}
	rq->timeout_ms = d->timeout_ms;
	if (has_data) {
		nvme_rq_set_data(rq, &it);
		if (d->metadata && d->metadata_len) {
			rq->meta = (void *)(uintptr_t)d->metadata;
			rq->meta_len = d->metadata_len;
		}
		ret = nvme_map_data(h, rq);
		if (ret) {
			nvme_rq_release(rq);
			blk_mq_free_request(rq);
			return ret;
		}
	}
	*out = rq;
	return 0;
}

static void nvme_fill_cmd(struct ucmd_nvme_sqe *c, uint8_t opcode, uint32_t nsid, uint32_t cdw2,
			  uint32_t cdw3, const uint32_t cdw10_15[6])
{
	memset(c, 0, sizeof(*c));
	c->opcode = opcode;
	c->nsid = nsid;
	c->cdw2 = cdw2;
	c->cdw3 = cdw3;
	c->cdw10 = cdw10_15[0];
	c->cdw11 = cdw10_15[1];
	c->cdw12 = cdw10_15[2];
	c->cdw13 = cdw10_15[3];
	c->cdw14 = cdw10_15[4];
	c->cdw15 = cdw10_15[5];
}

/* ---- io_uring ------------------------------------------------------------ */

static void nvme_uring_task_cb(struct io_uring_cmd *ioucmd, unsigned issue_flags)
{
	struct nvme_uring_cmd_pdu *pdu = nvme_uring_cmd_pdu(ioucmd);

	(void)issue_flags;
	io_uring_cmd_done(ioucmd, pdu->status, pdu->result);
}

/* May run on the controller's thread, a poller or the timeout scanner. */
static enum rq_end_io_ret nvme_uring_cmd_end_io(struct ucmd_request *rq, blk_status_t err)
{
	struct io_uring_cmd *ioucmd = rq->end_io_data;
	struct nvme_uring_cmd_pdu *pdu = nvme_uring_cmd_pdu(ioucmd);
	bool polled = nvme_req(rq)->nvmeq->polled;

	pdu->status = nvme_end_status(rq, err);
	pdu->result = nvme_req(rq)->result;
	nvme_rq_release(rq);
	/* A polled completion is found by the ring's own poller: finish it here. */
	if (polled)
		nvme_uring_task_cb(ioucmd, 0);
	else
		io_uring_cmd_complete_in_task(ioucmd, nvme_uring_task_cb);
	return RQ_END_IO_FREE;
}

static int nvme_uring_cmd_io(struct nvme_host *h, struct nvme_ns *ns, struct io_uring_cmd *ioucmd,
			     unsigned issue_flags, bool vec)
{
	const struct nvme_uring_cmd *cmd = io_uring_sqe_cmd(ioucmd->sqe);
	struct nvme_uring_cmd_pdu *pdu = nvme_uring_cmd_pdu(ioucmd);
	const uint32_t cdws[6] = { cmd->cdw10, cmd->cdw11, cmd->cdw12,
				   cmd->cdw13, cmd->cdw14, cmd->cdw15 };
	struct nvme_user_data d;
	struct ucmd_nvme_sqe c;
	struct ucmd_request *rq;
	unsigned rq_flags = 0, blk_flags = 0;
	int ret;

	if (cmd->flags)
		return -EINVAL;
	if (ns && cmd->nsid != ns->nsid)
		return -EINVAL;
	nvme_fill_cmd(&c, cmd->opcode, cmd->nsid, cmd->cdw2, cmd->cdw3, cdws);
	/*
	 * Linux's nvme_cmd_allowed(), unless a security module already
	 * decided with its own rules (the policy module ships these same
	 * rules as its default, and lets an administrator change them).
	 */
	if (!ucmd_security_decides_permission(h->engine) &&
	    !nvme_cmd_allowed(h, ns, &c, ioucmd->file->f_mode & FMODE_WRITE,
			      io_uring_cmd_cred(ioucmd)))
		return -EACCES;
	d.metadata = cmd->metadata;
	d.addr = cmd->addr;
	d.data_len = cmd->data_len;
	d.metadata_len = cmd->metadata_len;
	d.timeout_ms = cmd->timeout_ms;
	if (issue_flags & IO_URING_F_NONBLOCK) {
		rq_flags |= REQ_NOWAIT;
		blk_flags |= BLK_MQ_REQ_NOWAIT;
	}
	if (issue_flags & IO_URING_F_IOPOLL)
		rq_flags |= REQ_POLLED;
	ret = nvme_build_user_request(h, ns, &c, &d, rq_flags, blk_flags, vec, ioucmd, &rq);
	if (ret)
		return ret;
	pdu->nvmeq = nvme_req(rq)->nvmeq;
	rq->end_io = nvme_uring_cmd_end_io;
	rq->end_io_data = ioucmd;
	blk_execute_rq_nowait(rq, false);
	return -EIOCBQUEUED;
}

/* Big SQEs carry the 72-byte command, big CQEs the 64-bit result. */
static int nvme_uring_cmd_checks(unsigned issue_flags)
{
	if ((issue_flags & (IO_URING_F_SQE128 | IO_URING_F_CQE32)) !=
	    (IO_URING_F_SQE128 | IO_URING_F_CQE32))
		return -EOPNOTSUPP;
	return 0;
}

static int nvme_ns_chr_uring_cmd(struct io_uring_cmd *ioucmd, unsigned issue_flags)
{
	struct nvme_ns *ns = ioucmd->file->private_data;
	int ret = nvme_uring_cmd_checks(issue_flags);

	if (ret)
		return ret;
	switch (ioucmd->cmd_op) {
	case NVME_URING_CMD_IO:
		return nvme_uring_cmd_io(ns->host, ns, ioucmd, issue_flags, false);
	case NVME_URING_CMD_IO_VEC:
		return nvme_uring_cmd_io(ns->host, ns, ioucmd, issue_flags, true);
	default:
		return -ENOTTY;
	}
}

static int nvme_ns_chr_uring_cmd_iopoll(struct io_uring_cmd *ioucmd)
{
	struct nvme_queue *q = nvme_uring_cmd_pdu(ioucmd)->nvmeq;

	return q ? nvme_poll_queue(q) : 0;
}

static int nvme_dev_uring_cmd(struct io_uring_cmd *ioucmd, unsigned issue_flags)
{
	struct nvme_host *h = ioucmd->file->private_data;
	int ret;

	/* Admin commands are never polled. */
	if (issue_flags & IO_URING_F_IOPOLL)
		return -EOPNOTSUPP;
	ret = nvme_uring_cmd_checks(issue_flags);
	if (ret)
		return ret;
	switch (ioucmd->cmd_op) {
	case NVME_URING_CMD_ADMIN:
		return nvme_uring_cmd_io(h, NULL, ioucmd, issue_flags, false);
	case NVME_URING_CMD_ADMIN_VEC:
		return nvme_uring_cmd_io(h, NULL, ioucmd, issue_flags, true);
	default:
		return -ENOTTY;
	}
}

/* ---- synchronous ioctls ---------------------------------------------------- */

static long nvme_user_cmd64(struct nvme_host *h, struct nvme_ns *ns, struct ucmd_file *f,
			    void *arg, bool vec)
{
	struct nvme_passthru_cmd64 *ucmd = arg, cmd;
	struct nvme_user_data d;
	struct ucmd_nvme_sqe c;
	struct ucmd_request *rq;
	uint64_t result = 0;
	int ret;

	if (ucmd_access_ok((uint64_t)(uintptr_t)arg, sizeof(cmd)))
		return -EFAULT;
	memcpy(&cmd, ucmd, sizeof(cmd));
	if (cmd.flags)
		return -EINVAL;
	if (ns && cmd.nsid != ns->nsid)
		return -EINVAL;
	const uint32_t cdws[6] = { cmd.cdw10, cmd.cdw11, cmd.cdw12,
				   cmd.cdw13, cmd.cdw14, cmd.cdw15 };
	nvme_fill_cmd(&c, cmd.opcode, cmd.nsid, cmd.cdw2, cmd.cdw3, cdws);
	if (!nvme_cmd_allowed(h, ns, &c, f->f_mode & FMODE_WRITE, &f->cred))
		return -EACCES;
	d.metadata = cmd.metadata;
	d.addr = cmd.addr;
	d.data_len = cmd.data_len;
	d.metadata_len = cmd.metadata_len;
	d.timeout_ms = cmd.timeout_ms;
	ret = nvme_build_user_request(h, ns, &c, &d, 0, 0, vec, NULL, &rq);
	if (ret)
		return ret;
	ret = nvme_execute_rq(rq, &result);
	if (ret >= 0)
		ucmd->result = result;
	return ret;
}

static long nvme_ns_chr_ioctl(struct ucmd_file *f, unsigned long cmd, void *arg)
{
	struct nvme_ns *ns = f->private_data;

	switch (cmd) {
	case NVME_IOCTL_ID:
		return ns->nsid;
	case NVME_IOCTL_ADMIN64_CMD:
		/* Controller ioctls work on a namespace's device too, as in Linux. */
		return nvme_user_cmd64(ns->host, NULL, f, arg, false);
	case NVME_IOCTL_IO64_CMD:
		return nvme_user_cmd64(ns->host, ns, f, arg, false);
	case NVME_IOCTL_IO64_CMD_VEC:
		return nvme_user_cmd64(ns->host, ns, f, arg, true);
	default:
		return -ENOTTY;
	}
}

static long nvme_dev_ioctl(struct ucmd_file *f, unsigned long cmd, void *arg)
{
	struct nvme_host *h = f->private_data;

	switch (cmd) {
	case NVME_IOCTL_ADMIN64_CMD:
		return nvme_user_cmd64(h, NULL, f, arg, false);
	default:
		return -ENOTTY;
	}
}

const struct ucmd_file_ops nvme_ns_chr_fops = {
	.name = "nvme-generic",
	.uring_cmd = nvme_ns_chr_uring_cmd,
	.uring_cmd_iopoll = nvme_ns_chr_uring_cmd_iopoll,
	.ioctl = nvme_ns_chr_ioctl,
	.describe = nvme_ns_describe,
};

const struct ucmd_file_ops nvme_dev_fops = {
	.name = "nvme-ctrl",
	.uring_cmd = nvme_dev_uring_cmd,
	.ioctl = nvme_dev_ioctl,
	.describe = nvme_dev_describe,
};
