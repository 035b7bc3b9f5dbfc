/* SPDX-License-Identifier: MIT */
/*
 * NVMe passthrough (seeds 005, 006, 007): one routine turns a user command
 * (struct nvme_uring_cmd or struct nvme_passthru_cmd64) into a request with
 * its data mapped; the synchronous ioctl path waits for it, the uring path
 * returns -EIOCBQUEUED and completes in the submitter's task context with
 * the NVMe status in cqe.res and the 64-bit result in big_cqe[0].
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "host.h"
#include "uaccess/uaccess.h"

/*
 * Both user structures start with the same 72 bytes (struct nvme_passthru_cmd64
 * only adds the result after them), so the builder reads either through
 * struct nvme_uring_cmd.
 */
#define NVME_SAME_FIELD(f) \
	_Static_assert(offsetof(struct nvme_passthru_cmd64, f) == \
		       offsetof(struct nvme_uring_cmd, f), #f " at the same offset")
NVME_SAME_FIELD(opcode);
NVME_SAME_FIELD(flags);
NVME_SAME_FIELD(nsid);
NVME_SAME_FIELD(cdw2);
NVME_SAME_FIELD(cdw3);
NVME_SAME_FIELD(metadata);
NVME_SAME_FIELD(addr);
NVME_SAME_FIELD(metadata_len);
NVME_SAME_FIELD(data_len);
NVME_SAME_FIELD(cdw10);
NVME_SAME_FIELD(cdw15);
NVME_SAME_FIELD(timeout_ms);
_Static_assert(sizeof(struct nvme_uring_cmd) <= sizeof(struct nvme_passthru_cmd64),
	       "the 72 common bytes");
/* cdw10..cdw15 sit where the SQE has them: one 24-byte copy. */
_Static_assert(offsetof(struct nvme_uring_cmd, cdw10) == offsetof(struct ucmd_nvme_sqe, cdw10),
	       "cdw10 at the SQE's offset");
_Static_assert(offsetof(struct nvme_uring_cmd, cdw15) == offsetof(struct ucmd_nvme_sqe, cdw15),
	       "cdw15 at the SQE's offset");

/* Lives in io_uring_cmd.pdu: outlives the request. */
/* Lives in io_uring_cmd.pdu: outlives the request. */
struct nvme_uring_cmd_pdu {
	struct nvme_queue *nvmeq;	/* for IOPOLL */
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

static int nvme_check_metadata(struct nvme_ns *ns, const struct nvme_uring_cmd *u,
			       size_t data_bytes, const struct user_mm *mm)
{
	uint64_t want;

	/* Separate metadata exists only for formats with it, not extended LBAs. */
	if (!ns || !ns->ms || ns->ext)
		return -EINVAL;
	if (access_ok(u->metadata, u->metadata_len))
		return -EFAULT;
	if (nvme_cmd_has_nlb(u->opcode))
		want = ((uint64_t)(u->cdw12 & 0xffff) + 1) * ns->ms;
	else
		want = (uint64_t)(data_bytes >> ns->lba_shift) * ns->ms;
	if (u->metadata_len != want)
		return -EINVAL;
	/* Pinned as the data is, and bounced instead (see nvme_import_user_data). */
	if (!user_mm_is_self(mm))
		return 0;
	return user_mm_fault_in(mm, u->metadata, u->metadata_len, !(u->opcode & 1));
}

/*
 * The request's command, written in place from the user's (whose flags were
 * checked to be 0): no PSDT, no fused operation, the DPTR and MPTR left to
 * nvme_map_data, and the command id nvme_alloc_request_nocmd() stamped.
 */
static void nvme_fill_cmd(struct ucmd_nvme_sqe *c, const struct nvme_uring_cmd *u)
{
	c->opcode = u->opcode;
	c->flags = 0;
	c->nsid = u->nsid;
	c->cdw2 = u->cdw2;
	c->cdw3 = u->cdw3;
	c->mptr = 0;
	c->dptr.prp1 = 0;
	c->dptr.prp2 = 0;
	memcpy(&c->cdw10, &u->cdw10, 6 * sizeof(uint32_t));
}

/*
 * The shared builder (seed 005's nvme_alloc_user_request + nvme_map_user_request):
 * returns a request ready for blk_execute_rq_nowait, or -errno (-EAGAIN
 * when NOWAIT found no tag). u is the caller's own copy of the command
 * (the uring path's SQE snapshot, the ioctl path's stack copy), so reading
 * it more than once sees the same values. Inlined into its two callers:
 * the uring path is the hot one, and a call here cost it ~20 instructions.
 */
static inline __attribute__((always_inline)) int nvme_build_user_request(struct nvme_host *h, struct nvme_ns *ns,
				   const struct nvme_uring_cmd *u, unsigned rq_flags,
				   unsigned blk_flags, bool vec, struct io_uring_cmd *ioucmd,
				   struct request **out)
{
	struct request_queue *q = !ns ? &h->admin_q : (rq_flags & REQ_POLLED) ? &ns->pq
										    : &ns->q;
	bool write = u->opcode & 1;
	int rw = write ? UCMD_WRITE : UCMD_READ;
	/* Written by the import below before any use: no need to clear it. */
	struct iov_iter it;
	bool has_data = u->data_len != 0;
	bool has_meta = has_data && u->metadata && u->metadata_len;
	/* the metadata's address space: a registered data buffer says nothing of it */
	const struct user_mm *meta_mm = ioucmd ? io_uring_cmd_mm(ioucmd) : current_task()->mm;
	struct request *rq;
	int ret;

	if (has_data) {
		size_t user_count;

		/* a uring_cmd's range list: the copy describe() judged, never the user's */
		if (__builtin_expect(ns && ioucmd && nvme_cmd_has_range_list(u->opcode), 0)) {
			ret = nvme_range_list_import(h, ioucmd, u, vec, &it, &user_count);
		} else {
			ret = nvme_import_user_data(h, u, rw, vec, ioucmd, &it);
			/* it is written only when the import succeeds */
			user_count = ret ? 0 : it.count;
		}
		if (ret)
			return ret;
		if (has_meta) {
			ret = nvme_check_metadata(ns, u, user_count, meta_mm);
			if (ret) {
				iov_iter_release(&it);
				return ret;
			}
		}
	}
	rq = nvme_alloc_request_nocmd(q, rq_flags | (write ? REQ_OP_DRV_OUT : REQ_OP_DRV_IN),
				      blk_flags, &ret);
	if (!rq) {
		if (has_data)
			iov_iter_release(&it);
		/* never 0 here: the callers use *out whenever 0 comes back */
		return ret < 0 ? ret : -ENOMEM;
	}
	nvme_fill_cmd(&nvme_req(rq)->cmd, u);
	rq->timeout_ms = u->timeout_ms;
	/*
	 * A passthrough command's transfer length is its own fields', which
	 * whoever wrote it chose: another process (ucmdd's clients, exec's
	 * programs), a remote host (ucmdd's NVMe/TCP target submits its
	 * peers' commands from its own buffers) or this one. The controller
	 * touches its buffers alone, whichever.
	 */
	nvme_req(rq)->dma_window = true;
	if (has_data) {
		nvme_rq_set_data(rq, &it);
		/*
		 * Lengths the controller can check (see sgl_only); an I/O
		 * queue's only: over PCIe an admin command's data is PRPs.
		 */
		nvme_req(rq)->sgl_only = ns && !user_mm_is_self(meta_mm);
		if (has_meta) {
			rq->meta = (void *)(uintptr_t)u->metadata;
			rq->meta_len = u->metadata_len;
		}
		ret = 0;
		if (__builtin_expect(nvme_rq_needs_bounce(rq, meta_mm), 0))
			ret = nvme_rq_bounce(rq, meta_mm, write);
		if (!ret)
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

/* ---- io_uring ------------------------------------------------------------ */

/*
 * May run on the controller's thread, a poller or the block layer's timer.
 * io_uring_cmd_done() hands the completion to the ring's owner itself (as
 * task work from any other thread, or while the command is still being
 * issued), so there is no task-work hop of our own to take first.
 */
static enum rq_end_io_ret nvme_uring_cmd_end_io(struct request *rq, blk_status_t err)
{
	struct io_uring_cmd *ioucmd = rq->end_io_data;
	/* a read's data reaches a remote user before the CQE, and so before a linked request */
	int status = nvme_rq_bounce_out(rq, nvme_end_status(rq, err));
	uint64_t result = nvme_req(rq)->result;

	nvme_rq_release(rq);
	io_uring_cmd_done(ioucmd, status, result);
	return RQ_END_IO_FREE;
}

/* Inlined into the two ->uring_cmd entry points, one call fewer per command. */
static inline __attribute__((always_inline)) int
nvme_uring_cmd_io(struct nvme_host *h, struct nvme_ns *ns, struct io_uring_cmd *ioucmd,
		  unsigned issue_flags, bool vec)
{
	/* The request's own SQE snapshot, not the shared ring. */
	const struct nvme_uring_cmd *cmd = io_uring_sqe_cmd(ioucmd->sqe);
	struct nvme_uring_cmd_pdu *pdu = nvme_uring_cmd_pdu(ioucmd);
	/* set whenever the builder returns 0; GCC cannot see that through it */
	struct request *rq = NULL;
	unsigned rq_flags = 0, blk_flags = 0;
	int ret;

	if (cmd->flags)
		return -EINVAL;
	/*
	 * Who may send it was decided before the call, by the engine's policy
	 * module (Linux's nvme_cmd_allowed() rules are its default policy).
	 */
	if (ns && cmd->nsid != ns->nsid)
		return -EINVAL;
	if (issue_flags & IO_URING_F_NONBLOCK) {
		rq_flags |= REQ_NOWAIT;
		blk_flags |= BLK_MQ_REQ_NOWAIT;
	}
	if (issue_flags & IO_URING_F_IOPOLL)
		rq_flags |= REQ_POLLED;
	ret = nvme_build_user_request(h, ns, cmd, rq_flags, blk_flags, vec, ioucmd, &rq);
	if (ret)
		return ret;
	pdu->nvmeq = nvme_req(rq)->nvmeq;
	rq->end_io = nvme_uring_cmd_end_io;
	rq->end_io_data = ioucmd;
	/* the queue's own transport: a multipath head's request runs on a path's */
	if (pdu->nvmeq && pdu->nvmeq->host->ops->wait_src && !(issue_flags & IO_URING_F_IOPOLL))
		pdu->nvmeq->host->ops->wait_src(pdu->nvmeq, ioucmd, rq);
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

int nvme_ns_uring_cmd(struct nvme_ns *ns, struct io_uring_cmd *ioucmd, unsigned issue_flags)
{
	int ret = nvme_uring_cmd_checks(issue_flags);
	bool vec;

	if (ret)
		return ret;
	switch (ioucmd->cmd_op) {
	case NVME_URING_CMD_IO:
		vec = false;
		break;
	case NVME_URING_CMD_IO_VEC:
		vec = true;
		break;
	default:
		return -ENOTTY;
	}
	return nvme_uring_cmd_io(ns->host, ns, ioucmd, issue_flags, vec);
}

static int nvme_ns_chr_uring_cmd(struct io_uring_cmd *ioucmd, unsigned issue_flags)
{
	return nvme_ns_uring_cmd(ioucmd->file->private_data, ioucmd, issue_flags);
}

int nvme_ns_uring_cmd_iopoll(struct io_uring_cmd *ioucmd)
{
	struct nvme_queue *q = nvme_uring_cmd_pdu(ioucmd)->nvmeq;

	return q ? nvme_poll_queue(q) : 0;
}

static int nvme_ns_chr_uring_cmd_iopoll(struct io_uring_cmd *ioucmd)
{
	return nvme_ns_uring_cmd_iopoll(ioucmd);
}

static int nvme_dev_uring_cmd(struct io_uring_cmd *ioucmd, unsigned issue_flags)
{
	struct nvme_host *h = ioucmd->file->private_data;
	bool vec;
	int ret;

	/* Admin commands are never polled. */
	if (issue_flags & IO_URING_F_IOPOLL)
		return -EOPNOTSUPP;
	ret = nvme_uring_cmd_checks(issue_flags);
	if (ret)
		return ret;
	switch (ioucmd->cmd_op) {
	case NVME_URING_CMD_ADMIN:
		vec = false;
		break;
	case NVME_URING_CMD_ADMIN_VEC:
		vec = true;
		break;
	default:
		return -ENOTTY;
	}
	return nvme_uring_cmd_io(h, NULL, ioucmd, issue_flags, vec);
}

/* ---- synchronous ioctls ---------------------------------------------------- */

/*
 * karg is the engine's copy of the user's command (vfs_ioctl), which the
 * security chain judged: executed as it is, never read again from arg.
 */
static long nvme_user_cmd(struct nvme_host *h, struct nvme_ns *ns, void *arg,
			  const void *karg, bool vec, bool res32)
{
	/* the builder reads the common part */
	union {
		struct nvme_passthru_cmd64 p;
		struct nvme_uring_cmd u;
	} cmd;
	struct request *rq = NULL;	/* as above */
	uint64_t result = 0;
	size_t res_off = res32 ? offsetof(struct nvme_passthru_cmd, result) :
				 offsetof(struct nvme_passthru_cmd64, result);
	int ret;

	if (!karg)
		return -EFAULT;
	memset(&cmd, 0, sizeof(cmd));
	/* struct nvme_passthru_cmd ends with its 32-bit result where the others have rsvd2 */
	memcpy(&cmd.p, karg, res32 ? offsetof(struct nvme_passthru_cmd, result) : sizeof(cmd.p));
	if (cmd.p.flags)
		return -EINVAL;
	if (ns && cmd.p.nsid != ns->nsid)
		return -EINVAL;
	ret = nvme_build_user_request(h, ns, &cmd.u, 0, 0, vec, NULL, &rq);
	if (ret)
		return ret;
	ret = nvme_execute_rq(rq, &result);
	if (!ns && ret >= 0)
		nvme_passthru_end(h, cmd.p.opcode);
	/* Linux's put_user(): the command ran, but the caller hears -EFAULT. */
	if (ret >= 0 && user_mm_copy_to(current_task()->mm, (uint64_t)(uintptr_t)arg + res_off,
					&result, res32 ? sizeof(uint32_t) : sizeof(result)))
		return -EFAULT;
	return ret;
}

static long nvme_user_cmd64(struct nvme_host *h, struct nvme_ns *ns, void *arg,
			    const void *karg, bool vec)
{
	return nvme_user_cmd(h, ns, arg, karg, vec, false);
}

/*
 * The namespace NVME_IOCTL_IO_CMD on a controller's device runs on (Linux's
 * nvme_dev_user_cmd): the controller's only one, -ENOTTY with none, -EINVAL
 * with several. The controller's own namespace, also when it is a path of a
 * multipath head (no device of its own): the command goes to that
 * controller, never through the head's path selection.
 */
int nvme_dev_user_ns(struct nvme_host *h, struct nvme_ns **nsp)
{
	struct nvme_ns *ns = NULL;
	unsigned count = 0;

	pthread_mutex_lock(&h->scan_lock);
	for (unsigned i = 0; i < h->nr_ns; i++)
		if (!h->ns[i]->gone) {
			ns = h->ns[i];
			count++;
		}
	pthread_mutex_unlock(&h->scan_lock);
	if (!count)
		return -ENOTTY;
	if (count > 1)
		return -EINVAL;
	*nsp = ns;	/* namespaces are freed only with their host */
	return 0;
}

long nvme_ns_ioctl(struct ucmd_file *f, unsigned long cmd, void *arg, const void *karg)
{
	return nvme_ns_ioctl_ns(f->private_data, cmd, arg, karg);
}

long nvme_ns_ioctl_ns(struct nvme_ns *ns, unsigned long cmd, void *arg, const void *karg)
{
	switch (cmd) {
	case NVME_IOCTL_ID:
		return ns->nsid;
	case NVME_IOCTL_ADMIN64_CMD:
		/* Controller ioctls work on a namespace's device too, as in Linux. */
		return nvme_user_cmd64(ns->host, NULL, arg, karg, false);
	case NVME_IOCTL_IO64_CMD:
		return nvme_user_cmd64(ns->host, ns, arg, karg, false);
	case NVME_IOCTL_IO64_CMD_VEC:
		return nvme_user_cmd64(ns->host, ns, arg, karg, true);
	default:
		return -ENOTTY;
	}
}

static long nvme_dev_ioctl(struct ucmd_file *f, unsigned long cmd, void *arg, const void *karg)
{
	struct nvme_host *h = f->private_data;

	switch (cmd) {
	case NVME_IOCTL_ADMIN64_CMD:
		return nvme_user_cmd64(h, NULL, arg, karg, false);
	case NVME_IOCTL_IO_CMD: {
		struct nvme_ns *ns;
		int ret = nvme_dev_user_ns(h, &ns);

		if (ret)
			return ret;
		return nvme_user_cmd(h, ns, arg, karg, false, true);
	}
	case NVME_IOCTL_RESET:
		/* on the controller's device only, as in Linux */
		return nvme_reset_ctrl(h);
	default:
		return -ENOTTY;
	}
}

const struct ucmd_file_ops nvme_ns_chr_fops = {
	.name = "nvme-generic",
	.uring_cmd = nvme_ns_chr_uring_cmd,
	.uring_cmd_iopoll = nvme_ns_chr_uring_cmd_iopoll,
	.ioctl = nvme_ns_ioctl,
	.describe = nvme_ns_describe,
	.describe_ioctl = nvme_ns_describe_ioctl,
};

/* resource0 as a host maps it: the transport's register reads (PCIe: BAR0; fabrics: Property Get) */
static int nvme_dev_regs_read(struct ucmd_file *f, uint32_t off, void *buf, size_t len)
{
	uint8_t *out = buf;
	int ret = 0;

	for (size_t i = 0; !ret && i < len; i += 4) {
		uint32_t v = 0;

		ret = nvme_reg_read32(f->private_data, off + (uint32_t)i, &v);
		v = htole32(v);
		memcpy(out + i, &v, 4);
	}
	return ret;
}

const struct ucmd_file_ops nvme_dev_fops = {
	.name = "nvme-ctrl",
	.uring_cmd = nvme_dev_uring_cmd,
	.ioctl = nvme_dev_ioctl,
	.regs_read = nvme_dev_regs_read,
	.describe = nvme_dev_describe,
	.describe_ioctl = nvme_dev_describe_ioctl,
};
