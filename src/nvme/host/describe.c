/* SPDX-License-Identifier: MIT */
/*
 * NVMe commands in generic terms for security modules. Table driven: an
 * opcode the tables do not know stays UCMD_VERB_UNKNOWN; nothing is guessed.
 */
#include <endian.h>
#include <string.h>

#include "host.h"
#include "security/desc.h"

enum {
	D_RANGE = 1u << 0,	/* SLBA in CDW10/11, 0-based NLB in CDW12[15:0] */
	D_DESTRUCTIVE = 1u << 1,
	D_KNOWN = 1u << 2,
};

struct nvme_op_desc {
	uint8_t verb;
	uint8_t flags;
};

static const struct nvme_op_desc nvm_ops[256] = {
	[nvme_cmd_flush]        = { UCMD_VERB_FLUSH, D_KNOWN },
	[nvme_cmd_write]        = { UCMD_VERB_WRITE, D_KNOWN | D_RANGE | D_DESTRUCTIVE },
	[nvme_cmd_read]         = { UCMD_VERB_READ, D_KNOWN | D_RANGE },
	[nvme_cmd_write_uncor]  = { UCMD_VERB_WRITE_UNCOR, D_KNOWN | D_RANGE | D_DESTRUCTIVE },
	[nvme_cmd_compare]      = { UCMD_VERB_COMPARE, D_KNOWN | D_RANGE },
	[nvme_cmd_write_zeroes] = { UCMD_VERB_WRITE_ZEROES, D_KNOWN | D_RANGE | D_DESTRUCTIVE },
	/* DSM: trim only with the Deallocate attribute, handled below */
	[nvme_cmd_verify]       = { UCMD_VERB_VERIFY, D_KNOWN | D_RANGE },
	/* Copy: the source ranges are in the data buffer (describe_range_list) */
	[nvme_cmd_copy]         = { UCMD_VERB_COPY, D_KNOWN | D_DESTRUCTIVE },
	/*
	 * Zoned Namespace Command Set. Zone Append writes wherever the zone's
	 * write pointer is, and Zone Management Send may reset (deallocate)
	 * one zone or all: both are writes whose blocks the command does not
	 * name (range unknown, below). A report reads no logical block.
	 */
	[nvme_zns_cmd_append]    = { UCMD_VERB_WRITE, D_KNOWN | D_DESTRUCTIVE },
	[nvme_zns_cmd_mgmt_send] = { UCMD_VERB_WRITE, D_KNOWN | D_DESTRUCTIVE },
	[nvme_zns_cmd_mgmt_recv] = { UCMD_VERB_READ, D_KNOWN },
	/*
	 * Flexible Data Placement: Reclaim Unit Handle Status reads no block;
	 * Reclaim Unit Handle Update moves a handle to a new reclaim unit,
	 * which changes where later writes go, not any block's data.
	 */
	[nvme_cmd_io_mgmt_recv]  = { UCMD_VERB_READ, D_KNOWN },
	[nvme_cmd_io_mgmt_send]  = { UCMD_VERB_WRITE, D_KNOWN },
};

static const struct nvme_op_desc admin_ops[256] = {
	[nvme_admin_delete_sq]      = { UCMD_VERB_QUEUE_MANAGE, D_KNOWN },
	[nvme_admin_create_sq]      = { UCMD_VERB_QUEUE_MANAGE, D_KNOWN },
	[nvme_admin_get_log_page]   = { UCMD_VERB_GET_LOG, D_KNOWN },
	[nvme_admin_delete_cq]      = { UCMD_VERB_QUEUE_MANAGE, D_KNOWN },
	[nvme_admin_create_cq]      = { UCMD_VERB_QUEUE_MANAGE, D_KNOWN },
	[nvme_admin_identify]       = { UCMD_VERB_IDENTIFY, D_KNOWN },
	[nvme_admin_abort_cmd]      = { UCMD_VERB_ABORT, D_KNOWN },
	[nvme_admin_set_features]   = { UCMD_VERB_SET_FEATURE, D_KNOWN },
	[nvme_admin_get_features]   = { UCMD_VERB_GET_FEATURE, D_KNOWN },
	[nvme_admin_async_event]    = { UCMD_VERB_ASYNC_EVENT, D_KNOWN },
	/* ns-mgmt: destructive only for Delete, handled below */
	[nvme_admin_ns_mgmt]        = { UCMD_VERB_NS_MANAGE, D_KNOWN },
	[nvme_admin_fw_commit]      = { UCMD_VERB_FIRMWARE, D_KNOWN },
	[nvme_admin_fw_download]    = { UCMD_VERB_FIRMWARE, D_KNOWN },
	[nvme_admin_ns_attach]      = { UCMD_VERB_NS_ATTACH, D_KNOWN },
	[nvme_admin_format_nvm]     = { UCMD_VERB_FORMAT, D_KNOWN | D_DESTRUCTIVE },
	[nvme_admin_sanitize_nvm]   = { UCMD_VERB_SANITIZE, D_KNOWN | D_DESTRUCTIVE },
	/*
	 * Get LBA Status: which logical blocks may be unrecoverable, the same
	 * report as the LBA Status Information log (0Eh), read from the
	 * controller; no block's data is read or changed.
	 */
	[nvme_admin_get_lba_status] = { UCMD_VERB_GET_LOG, D_KNOWN },
};

#define NVME_DSM_ATTR_AD	(1u << 2)
#define NVME_NS_MGMT_SEL_DELETE	1u

/*
 * Blocks to bytes; a count too large to shift saturates, so a byte range
 * rule still sees it reach the end instead of wrapping to a small offset.
 */
static uint64_t lba_bytes(uint64_t n, unsigned shift)
{
	return n > (UINT64_MAX >> shift) ? UINT64_MAX : n << shift;
}

/* Data direction is in the opcode's two low bits, in both command sets. */
static enum ucmd_dir nvme_opcode_dir(uint8_t opcode)
{
	static const enum ucmd_dir dirs[4] = { UCMD_DIR_NONE, UCMD_DIR_TO_DEVICE,
					       UCMD_DIR_FROM_DEVICE, UCMD_DIR_BIDIRECTIONAL };

	return dirs[opcode & 3];
}

void nvme_describe_cmd(struct nvme_host *h, const char *device, uint32_t cmd_op, bool admin,
		       const struct ucmd_nvme_sqe *c, struct nvme_ns *ns, struct ucmd_cmd_desc *d)
{
	const struct nvme_op_desc *od = admin ? &admin_ops[c->opcode] : &nvm_ops[c->opcode];

	ucmd_desc_init(d, device, cmd_op, c->opcode);
	d->admin = admin;
	d->nsid = c->nsid;
	d->dir = nvme_opcode_dir(c->opcode);
	if (od->flags & D_KNOWN) {
		d->verb = od->verb;
		d->destructive = (od->flags & D_DESTRUCTIVE) != 0;
	} else if (!admin && c->opcode == nvme_cmd_dsm && (c->cdw11 & NVME_DSM_ATTR_AD)) {
		d->verb = UCMD_VERB_TRIM;
		d->destructive = true;
	} else if ((admin && c->opcode >= 0xc0) || (!admin && c->opcode >= 0x80)) {
		d->verb = UCMD_VERB_VENDOR;
	}
	if (admin && c->opcode == nvme_admin_ns_mgmt && (c->cdw10 & 0xf) == NVME_NS_MGMT_SEL_DELETE)
		d->destructive = true;
	/* The sub-selector policies need: Identify CNS, log page ID, feature ID */
	if (admin && (c->opcode == nvme_admin_identify || c->opcode == nvme_admin_get_log_page ||
		      c->opcode == nvme_admin_get_features || c->opcode == nvme_admin_set_features)) {
		d->has_select = true;
		d->select = c->cdw10 & 0xff;
	}
	if (h) {
		/*
		 * What the controller's effects log says, as nvme_cmd_allowed()
		 * reads it: unsupported or effects beyond changing logical
		 * blocks make a command intrusive; LBCC makes it destructive.
		 */
		uint32_t e = nvme_command_effects(h, admin, c->opcode);
		d->intrusive = !(e & NVME_CMD_EFFECTS_CSUPP) ||
			       (e & ~(uint32_t)(NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC |
						NVME_CMD_EFFECTS_UUID_SEL | (0xfffu << 20)));
		if (e & NVME_CMD_EFFECTS_LBCC)
			d->destructive = true;
	}
	if (!admin && (od->flags & D_RANGE)) {
		d->has_range = true;
		d->slba = (uint64_t)c->cdw10 | (uint64_t)c->cdw11 << 32;
		d->nlb = (uint64_t)(c->cdw12 & 0xffff) + 1;
		if (ns) {
			d->offset = lba_bytes(d->slba, ns->lba_shift);
			d->length = lba_bytes(d->nlb, ns->lba_shift);
		}
	} else if (!admin && (nvme_cmd_has_range_list(c->opcode) || d->verb == UCMD_VERB_UNKNOWN ||
				d->verb == UCMD_VERB_VENDOR || c->opcode == nvme_zns_cmd_append ||
				c->opcode == nvme_zns_cmd_mgmt_send)) {
		/*
		 * Copy and DSM: the list is in the data buffer, which only
		 * nvme_ns_describe() reads (nvme_describe_range_list); an I/O
		 * command the tables do not know may touch any block, and so may
		 * a zone command as far as the host can tell.
		 */
		d->range_unknown = true;
	} else if (admin && d->destructive) {
		/* Format, Sanitize, deleting a namespace: every block of it */
		d->range_unknown = true;
	}
}

/*
 * Copy's destination and sources, DSM's every range, from the request's own
 * copy of the list (the controller executes that copy too). Anything that
 * cannot be read or decoded leaves the range unknown: judged conservatively.
 */
static void nvme_describe_range_list(const struct io_uring_cmd *cmd, struct nvme_ns *ns,
				     const struct ucmd_nvme_sqe *c, struct ucmd_cmd_desc *d)
{
	const struct nvme_uring_cmd *u = io_uring_sqe_cmd(cmd->sqe);
	struct nvme_range_list *l;
	uint64_t total = 0;

	d->range_unknown = true;
	/* Copy entry formats 0h and 1h (slba and nlb at the same offsets); others are refused */
	unsigned fmt = (c->cdw12 >> 8) & 0xf;
	size_t esz = fmt == 1 ? sizeof(struct nvme_copy_range_f1) : sizeof(struct nvme_copy_range);

	if (c->opcode == nvme_cmd_copy && fmt > 1)
		return;
	l = nvme_range_list_get(ns->host, cmd, u, cmd->cmd_op == NVME_URING_CMD_IO_VEC);
	if (!l || l->err || l->no_data)
		return;
	for (unsigned i = 0; i < l->nr; i++) {
		struct ucmd_desc_range *r = &l->desc[i];

		if (c->opcode == nvme_cmd_dsm) {
			const struct nvme_dsm_range *e = (const void *)(l->list + i * sizeof(*e));

			r->slba = le64toh(e->slba);
			r->nlb = le32toh(e->nlb);
		} else {
			const struct nvme_copy_range *e = (const void *)(l->list + i * esz);

			r->slba = le64toh(e->slba);
			r->nlb = (uint64_t)le16toh(e->nlb) + 1;
			total += r->nlb;
		}
		r->offset = lba_bytes(r->slba, ns->lba_shift);
		r->length = lba_bytes(r->nlb, ns->lba_shift);
	}
	d->has_range = true;
	if (c->opcode == nvme_cmd_dsm) {
		/* the first range where every range command has it, the rest after */
		d->slba = l->desc[0].slba;
		d->nlb = l->desc[0].nlb;
		d->ranges = l->desc + 1;
		d->nr_ranges = l->nr - 1;
	} else {
		/* the destination is what Copy writes; the sources are read */
		d->slba = (uint64_t)c->cdw10 | (uint64_t)c->cdw11 << 32;
		d->nlb = total;
		d->ranges = l->desc;
		d->nr_ranges = l->nr;
	}
	d->offset = lba_bytes(d->slba, ns->lba_shift);
	d->length = lba_bytes(d->nlb, ns->lba_shift);
	d->range_unknown = false;
}

/* Decode the 72-byte command, but only where the ring really has 128-byte SQEs. */
static bool nvme_desc_get_cmd(const struct io_uring_cmd *cmd, struct ucmd_nvme_sqe *c)
{
	const struct nvme_uring_cmd *u = io_uring_sqe_cmd(cmd->sqe);

	if (!(io_uring_cmd_ring_flags(cmd) & IORING_SETUP_SQE128))
		return false;
	memset(c, 0, sizeof(*c));
	c->opcode = u->opcode;
	c->nsid = u->nsid;
	c->cdw10 = u->cdw10;
	c->cdw11 = u->cdw11;
	c->cdw12 = u->cdw12;
	c->cdw13 = u->cdw13;
	c->cdw14 = u->cdw14;
	c->cdw15 = u->cdw15;
	return true;
}

int nvme_ns_describe(const struct io_uring_cmd *cmd, struct ucmd_cmd_desc *d)
{
	struct nvme_ns *ns = cmd->file->private_data;
	struct ucmd_nvme_sqe c;

	if ((cmd->cmd_op != NVME_URING_CMD_IO && cmd->cmd_op != NVME_URING_CMD_IO_VEC) ||
	    !nvme_desc_get_cmd(cmd, &c)) {
		ucmd_desc_init(d, ns->ng_name, cmd->cmd_op, 0);
		return 0;
	}
	nvme_describe_cmd(ns->host, ns->ng_name, cmd->cmd_op, false, &c, ns, d);
	if (nvme_cmd_has_range_list(c.opcode))
		nvme_describe_range_list(cmd, ns, &c, d);
	return 0;
}

int nvme_dev_describe(const struct io_uring_cmd *cmd, struct ucmd_cmd_desc *d)
{
	struct nvme_host *h = cmd->file->private_data;
	struct ucmd_nvme_sqe c;

	if ((cmd->cmd_op != NVME_URING_CMD_ADMIN && cmd->cmd_op != NVME_URING_CMD_ADMIN_VEC) ||
	    !nvme_desc_get_cmd(cmd, &c)) {
		ucmd_desc_init(d, h->name, cmd->cmd_op, 0);
		d->admin = true;
		return 0;
	}
	nvme_describe_cmd(h, h->name, cmd->cmd_op, true, &c, NULL, d);
	return 0;
}

/* The command an NVME_IOCTL_*64_CMD carries, as nvme_desc_get_cmd decodes a uring_cmd. */
static void nvme_desc_get_ioctl_cmd(const struct nvme_passthru_cmd64 *p, struct ucmd_nvme_sqe *c)
{
	memset(c, 0, sizeof(*c));
	c->opcode = p->opcode;
	c->nsid = p->nsid;
	c->cdw10 = p->cdw10;
	c->cdw11 = p->cdw11;
	c->cdw12 = p->cdw12;
	c->cdw13 = p->cdw13;
	c->cdw14 = p->cdw14;
	c->cdw15 = p->cdw15;
}

/*
 * A Copy or DSM range list sent by ioctl stays unknown (judged as touching
 * any block): only the uring path keeps the one copy of the list that it
 * describes and executes.
 */
int nvme_ns_describe_ioctl(const struct ucmd_file *f, unsigned long cmd, const void *karg,
			   struct ucmd_cmd_desc *d)
{
	struct nvme_ns *ns = f->private_data;
	struct ucmd_nvme_sqe c;

	switch (cmd) {
	case NVME_IOCTL_ADMIN64_CMD:
	case NVME_IOCTL_IO64_CMD:
	case NVME_IOCTL_IO64_CMD_VEC:
		if (karg)
			break;
		/* without its command the driver refuses it */
		__attribute__((fallthrough));
	default:
		return 1;	/* NVME_IOCTL_ID, or nothing the driver knows */
	}
	nvme_desc_get_ioctl_cmd(karg, &c);
	if (cmd == NVME_IOCTL_ADMIN64_CMD)
		nvme_describe_cmd(ns->host, ns->ng_name, (uint32_t)cmd, true, &c, NULL, d);
	else
		nvme_describe_cmd(ns->host, ns->ng_name, (uint32_t)cmd, false, &c, ns, d);
	return 0;
}

int nvme_dev_describe_ioctl(const struct ucmd_file *f, unsigned long cmd, const void *karg,
			    struct ucmd_cmd_desc *d)
{
	struct nvme_host *h = f->private_data;
	struct ucmd_nvme_sqe c;

	if (cmd == NVME_IOCTL_RESET) {
		/* no command of its own, but intrusive: Linux wants CAP_SYS_ADMIN */
		ucmd_desc_init(d, h->name, (uint32_t)cmd, 0);
		d->admin = true;
		d->intrusive = true;
		return 0;
	}
	if (cmd == NVME_IOCTL_IO_CMD && karg) {
		struct nvme_ns *ns;

		/* without a namespace the driver refuses it */
		if (nvme_dev_user_ns(h, &ns))
			return 1;
		/* the fields it shares with struct nvme_passthru_cmd64 */
		nvme_desc_get_ioctl_cmd(karg, &c);
		/*
		 * Judged as a command on the namespace's device, as the same
		 * command sent there is; a multipath path's namespace has none,
		 * so there the controller's device that was opened.
		 */
		nvme_describe_cmd(h, h->ns_hidden ? h->name : ns->ng_name, (uint32_t)cmd, false, &c,
				  ns, d);
		return 0;
	}
	if (cmd != NVME_IOCTL_ADMIN64_CMD || !karg)
		return 1;
	nvme_desc_get_ioctl_cmd(karg, &c);
	nvme_describe_cmd(h, h->name, (uint32_t)cmd, true, &c, NULL, d);
	return 0;
}

int nvme_bdev_describe_rw(const struct ucmd_kiocb_rw *kiocb, struct ucmd_cmd_desc *d)
{
	struct nvme_ns *ns = kiocb->file->private_data;
	bool write = kiocb->rw == UCMD_WRITE;

	ucmd_desc_init(d, ns->blk_name, 0, write ? nvme_cmd_write : nvme_cmd_read);
	d->verb = write ? UCMD_VERB_WRITE : UCMD_VERB_READ;
	d->dir = write ? UCMD_DIR_TO_DEVICE : UCMD_DIR_FROM_DEVICE;
	d->nsid = ns->nsid;
	d->has_range = true;
	d->offset = kiocb->pos;
	d->length = kiocb->iter.count;
	d->slba = kiocb->pos >> ns->lba_shift;
	d->nlb = kiocb->iter.count >> ns->lba_shift;
	d->destructive = write;
	return 0;
}
