/* SPDX-License-Identifier: MIT */
/*
 * The NVM command set: Read, Write, Compare, Verify, Flush, Write Zeroes,
 * Write Uncorrectable, Dataset Management and Copy, on top of the namespace
 * store layout (data area, then metadata area; see ns.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fdp.h"
#include "zns.h"

#define CDW12_FUA	((uint32_t)NVME_IO_FUA << 16)
#define CDW12_DEAC	((uint32_t)NVME_IO_DEAC << 16)
#define CDW12_PRINFO(x)	(((x) >> 26) & 0xfu)
#define COPY_CHUNK	(1u << 20)

#define ST_INVALID_NS	(UCMD_GEN(NVME_SC_INVALID_NS) | UCMD_DNR)
#define ST_LBA_RANGE	(UCMD_GEN(NVME_SC_LBA_RANGE) | UCMD_DNR)
#define ST_READ_ERROR	(UCMD_MEDIA(NVME_SC_READ_ERROR) | UCMD_DNR)
#define ST_INVALID	(UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR)
#define ST_INTERNAL	UCMD_GEN(NVME_SC_INTERNAL)

struct rw {
	struct ctrl_ns *ns;
	uint64_t slba, nlb;
};

static uint16_t rw_decode(struct ucmd_ctrl *c, struct ctrl_req *req, struct rw *rw, bool blocks)
{
	rw->ns = ctrl_ns_active(c, req->cmd.nsid);
	if (!rw->ns)
		return ST_INVALID_NS;
	rw->slba = (uint64_t)req->cmd.cdw11 << 32 | req->cmd.cdw10;
	rw->nlb = (req->cmd.cdw12 & 0xffff) + 1ull;
	if (!blocks)
		return 0;
	/* PRINFO: on a namespace with protection only (pi_io.c, pi_cmd.c) */
	if (CDW12_PRINFO(req->cmd.cdw12) && !rw->ns->dps)
		return ST_INVALID;
	if (rw->slba + rw->nlb < rw->slba || rw->slba + rw->nlb > rw->ns->nsze)
		return ST_LBA_RANGE;
	return 0;
}

static uint16_t read_error(struct ucmd_ctrl *c)
{
	c->smart.media_errors++;
	return ST_READ_ERROR;
}

uint16_t ctrl_nvm_read_check(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t slba,
			      uint64_t nlb)
{
	return ctrl_ranges_overlap(&ns->uncor, slba, nlb) ? read_error(c) : 0;
}

void ctrl_nvm_read_done(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t nlb)
{
	c->smart.host_reads++;
	c->smart.units_read_512 += nlb * ctrl_ns_ds(ns) / 512;
}

/* The blocks are stored: their Write Uncorrectable marks go, write pointers move */
uint16_t ctrl_nvm_written(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t slba, uint64_t nlb,
			   bool fua)
{
	int r = ctrl_ranges_remove(&ns->uncor, slba, nlb);

	if (r < 0)
		return ST_INTERNAL;
	if (r)
		ctrl_persist_range(c, ns, false, slba, nlb);
	if (ns->zoned)
		ctrl_zns_write_commit(c, ns, slba, nlb, fua);
	c->smart.host_writes++;
	c->smart.units_written_512 += nlb * ctrl_ns_ds(ns) / 512;
	return 0;
}

/*
 * Map host buffers of a block transfer and split them into the store's two
 * areas: dv (data) and mv (metadata). Extended LBAs interleave both in the
 * data buffer; otherwise metadata comes from MPTR.
 */
static uint16_t map_blocks(struct ucmd_ctrl *c, struct ctrl_req *req, const struct rw *rw,
			   struct ctrl_iovs *host, struct ctrl_iovs *dv, struct ctrl_iovs *mv)
{
	uint32_t ds = ctrl_ns_ds(rw->ns);
	uint16_t ms = ctrl_ns_ms(rw->ns), st;
	bool ext = rw->ns->extended;

	st = ctrl_map_data(c, req, rw->nlb * (ds + (ext ? ms : 0)), host);
	if (st)
		return st;
	if (!ext) {
		*dv = *host;
		ctrl_iovs_init(host);
		return ms ? ctrl_map_meta(c, req, rw->nlb * ms, mv) : 0;
	}
	struct ctrl_iov_cursor cur = { .v = host };

	for (uint64_t i = 0; i < rw->nlb; i++)
		if (ctrl_iov_take(&cur, ds, dv) || ctrl_iov_take(&cur, ms, mv))
			return ST_INTERNAL;
	return 0;
}

static void free3(struct ctrl_iovs *a, struct ctrl_iovs *b, struct ctrl_iovs *d)
{
	ctrl_iovs_free(a);
	ctrl_iovs_free(b);
	ctrl_iovs_free(d);
}

static int blocks_xfer(struct rw *rw, struct ctrl_iovs *dv, struct ctrl_iovs *mv, bool write,
		       bool fua)
{
	int ret = ctrl_store_xfer(rw->ns->st, dv, ctrl_ns_data_off(rw->ns, rw->slba), write, fua);

	if (!ret && mv->cnt)
		ret = ctrl_store_xfer(rw->ns->st, mv, ctrl_ns_meta_off(rw->ns, rw->slba), write, fua);
	return ret;
}

void ctrl_nvm_prefetch(struct ucmd_ctrl *c, const struct ucmd_nvme_sqe *sqe)
{
	struct ctrl_ns *ns;
	uint64_t slba;

	/* a write's only use for it: the FDP media model's map entry */
	if ((sqe->opcode != nvme_cmd_read && (sqe->opcode != nvme_cmd_write || !c->fdp)) ||
	    !(ns = ctrl_ns_active(c, sqe->nsid)))
		return;
	slba = (uint64_t)sqe->cdw11 << 32 | sqe->cdw10;
	if (sqe->opcode == nvme_cmd_write) {
		if (ns->fdpm && slba < ns->nsze)
			fdp_media_prefetch(ns->fdpm, slba);
		return;
	}
	if (ns->st->ops->prefetch && slba < ns->nsze)
		ns->st->ops->prefetch(ns->st, ctrl_ns_data_off(ns, slba), ctrl_ns_ds(ns));
}

/*
 * A transfer without metadata that PRP1 and PRP2 describe (one or two
 * pages: a block read or write, as a rule) maps onto the stack and goes to
 * the store in one call. The same checks in the same order as rw_mapped;
 * no iovec array is taken, filled and given back.
 */
static uint16_t rw_short(struct ucmd_ctrl *c, struct ctrl_req *req, const struct rw *rw,
			 bool write, bool fua)
{
	uint64_t off = ctrl_ns_data_off(rw->ns, rw->slba);
	struct store *sto = rw->ns->st;
	struct iovec iov[2];
	uint16_t st;
	int cnt, ret;

	st = ctrl_map_prp_short(c, req, rw->nlb << rw->ns->lba_shift, iov, &cnt);
	if (st)
		return st;
	if (!write && (st = ctrl_nvm_read_check(c, rw->ns, rw->slba, rw->nlb)))
		return st;
	if (write && !ctrl_ranges_remove_fits(&rw->ns->uncor, rw->slba, rw->nlb))
		return UCMD_ST_RANGES_FULL;
	ret = write ? sto->ops->writev(sto, iov, cnt, off, fua) : sto->ops->readv(sto, iov, cnt, off);
	return ret < 0 ? ctrl_store_status(ret) : 0;
}

/* Any other transfer: host buffers mapped into iovec arrays, data and metadata apart */
static uint16_t rw_mapped(struct ucmd_ctrl *c, struct ctrl_req *req, struct rw *rw, bool write,
			  bool fua)
{
	struct ctrl_iovs host, dv, mv;
	uint16_t st;

	ctrl_iovs_init_spare(c, &host);
	ctrl_iovs_init(&dv);
	ctrl_iovs_init(&mv);
	st = map_blocks(c, req, rw, &host, &dv, &mv);
	if (!st && !write)
		st = ctrl_nvm_read_check(c, rw->ns, rw->slba, rw->nlb);
	/* A write that would split a mark of a full table fails before it writes. */
	if (!st && write && !ctrl_ranges_remove_fits(&rw->ns->uncor, rw->slba, rw->nlb))
		st = UCMD_ST_RANGES_FULL;
	if (!st)
		st = ctrl_store_status(blocks_xfer(rw, &dv, &mv, write, fua));
	/* the array moved to dv unless LBAs are extended: each one gives it back */
	ctrl_iovs_free_spare(c, &host);
	ctrl_iovs_free_spare(c, &dv);
	ctrl_iovs_free(&mv);
	return st;
}

uint16_t ctrl_nvm_rw(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	bool write = req->cmd.opcode == nvme_cmd_write;
	bool fua = (req->cmd.cdw12 & CDW12_FUA) || !c->cur.vwc;
	uint32_t stream = 0;
	struct rw rw;
	uint16_t st;

	if ((st = rw_decode(c, req, &rw, true)))
		return st;
	if (rw.ns->zoned && (st = write ? ctrl_zns_write_check(rw.ns, rw.slba, rw.nlb)
					: ctrl_zns_read_check(rw.ns, rw.slba, rw.nlb)))
		return st;
	/* a placement the controller cannot honour fails before any data moves */
	if (write && (st = ctrl_fdp_write_check(c, rw.ns, req->cmd.cdw12, req->cmd.cdw13,
						  &stream)))
		return st;
	if (rw.ns->dps) {	/* never zoned: Format refuses PI there */
		st = ctrl_pi_rw(c, req, rw.ns, rw.slba, rw.nlb);
		if (!st && write && rw.ns->fdpm)
			ctrl_fdp_write_commit(c, rw.ns, stream, rw.slba, rw.nlb);
		return st;
	}
	/* no metadata anywhere (nor extended LBAs): the data alone, maybe short */
	if (!rw.ns->ms && ctrl_prp_short(req, rw.nlb << rw.ns->lba_shift))
		st = rw_short(c, req, &rw, write, fua);
	else
		st = rw_mapped(c, req, &rw, write, fua);
	if (st)
		return st;
	if (write) {
		st = ctrl_nvm_written(c, rw.ns, rw.slba, rw.nlb, fua);
		if (!st && rw.ns->fdpm)
			ctrl_fdp_write_commit(c, rw.ns, stream, rw.slba, rw.nlb);
		return st;
	}
	ctrl_nvm_read_done(c, rw.ns, rw.nlb);
	return 0;
}

static uint16_t compare_iovs(struct store *st, const struct ctrl_iovs *v, uint64_t off)
{
	char *hb = malloc(v->len ? v->len : 1), *sb = malloc(v->len ? v->len : 1);
	uint16_t ret = 0;

	if (!hb || !sb)
		ret = ST_INTERNAL;
	else if ((ret = ctrl_iovs_copy_in(v, hb, v->len)))
		;	/* host memory out of reach: Data Transfer Error */
	else if (store_read(st, sb, v->len, off))
		ret = ST_INTERNAL;
	else if (memcmp(hb, sb, v->len))
		ret = UCMD_MEDIA(NVME_SC_COMPARE_FAILED) | UCMD_DNR;
	free(hb);
	free(sb);
	return ret;
}

uint16_t ctrl_nvm_compare(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	struct ctrl_iovs host, dv, mv;
	struct rw rw;
	uint16_t st;

	if ((st = rw_decode(c, req, &rw, true)))
		return st;
	if (rw.ns->zoned && (st = ctrl_zns_read_check(rw.ns, rw.slba, rw.nlb)))
		return st;
	if (rw.ns->dps)
		return ctrl_pi_rw(c, req, rw.ns, rw.slba, rw.nlb);
	ctrl_iovs_init(&host);
	ctrl_iovs_init(&dv);
	ctrl_iovs_init(&mv);
	st = map_blocks(c, req, &rw, &host, &dv, &mv);
	if (!st)
		st = ctrl_nvm_read_check(c, rw.ns, rw.slba, rw.nlb);
	if (!st)
		st = compare_iovs(rw.ns->st, &dv, ctrl_ns_data_off(rw.ns, rw.slba));
	if (!st && mv.cnt)
		st = compare_iovs(rw.ns->st, &mv, ctrl_ns_meta_off(rw.ns, rw.slba));
	free3(&host, &dv, &mv);
	if (!st)
		c->smart.host_reads++;
	return st;
}

uint16_t ctrl_nvm_verify(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	struct rw rw;
	uint16_t st;

	if ((st = rw_decode(c, req, &rw, true)))
		return st;
	if (rw.ns->zoned && (st = ctrl_zns_read_check(rw.ns, rw.slba, rw.nlb)))
		return st;
	/* The media is what the store holds; only marked blocks fail, and bad tuples. */
	if ((st = ctrl_nvm_read_check(c, rw.ns, rw.slba, rw.nlb)) ||
	    (rw.ns->dps && (st = ctrl_pi_verify(req, rw.ns, rw.slba, rw.nlb))))
		return st;
	c->smart.host_reads++;
	return 0;
}

uint16_t ctrl_nvm_flush(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint32_t nsid = req->cmd.nsid;

	uint16_t st;

	if (nsid == 0xffffffffu) {
		for (uint32_t i = 1; i <= UCMD_MAX_NS; i++) {
			struct ctrl_ns *ns = ctrl_ns_active(c, i);

			if (ns && ((st = ctrl_store_status(ns->st->ops->flush(ns->st))) ||
				   (st = ctrl_store_status(ctrl_zns_flush(ns)))))
				return st;
		}
		return 0;
	}
	struct ctrl_ns *ns = ctrl_ns_active(c, nsid);

	if (!ns)
		return ST_INVALID_NS;
	st = ctrl_store_status(ns->st->ops->flush(ns->st));
	/* the write pointers are as durable as the data they cover */
	return st ? st : ctrl_store_status(ctrl_zns_flush(ns));
}

uint16_t ctrl_nvm_write_zeroes(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint32_t stream;
	struct rw rw;
	uint16_t st;

	if ((st = rw_decode(c, req, &rw, true)))
		return st;
	/* zeroes take no media: the placement is checked, then the old copy goes */
	if ((st = ctrl_fdp_write_check(c, rw.ns, req->cmd.cdw12, req->cmd.cdw13, &stream)))
		return st;
	/* a write on a zoned namespace: at the write pointer */
	if (rw.ns->zoned && (st = ctrl_zns_write_check(rw.ns, rw.slba, rw.nlb)))
		return st;
	if (rw.ns->dps && (st = ctrl_pi_cmd_valid(rw.ns, &req->cmd, rw.slba)))
		return st;
	if (!ctrl_ranges_remove_fits(&rw.ns->uncor, rw.slba, rw.nlb))
		return UCMD_ST_RANGES_FULL;
	st = ctrl_store_status(ctrl_ns_discard(c, rw.ns, rw.slba, rw.nlb,
						 req->cmd.cdw12 & CDW12_DEAC));
	/* zeroed metadata, or with PRACT the tuples of zeroed data */
	if (!st && rw.ns->dps)
		st = ctrl_pi_generate_range(req, rw.ns, rw.slba, rw.nlb);
	if (!st && rw.ns->zoned)
		ctrl_zns_write_commit(c, rw.ns, rw.slba, rw.nlb, false);
	if (!st && ((req->cmd.cdw12 & CDW12_FUA) || !c->cur.vwc))
		st = ctrl_store_status(rw.ns->st->ops->flush(rw.ns->st));
	if (!st && ((req->cmd.cdw12 & CDW12_FUA) || !c->cur.vwc))
		st = ctrl_store_status(ctrl_zns_flush(rw.ns));
	if (st)
		return st;
	if (!(req->cmd.cdw12 & CDW12_DEAC))
		ctrl_fdp_zeroes_commit(c, rw.ns, rw.nlb);
	c->smart.host_writes++;
	return 0;
}

uint16_t ctrl_nvm_write_uncor(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	struct rw rw;
	uint16_t st;

	if ((st = rw_decode(c, req, &rw, false)))
		return st;
	if (req->cmd.cdw12 & ~0xffffu)	/* no control bits defined */
		return ST_INVALID;
	if (rw.slba + rw.nlb < rw.slba || rw.slba + rw.nlb > rw.ns->nsze)
		return ST_LBA_RANGE;
	if (rw.ns->zoned && (st = ctrl_zns_write_check(rw.ns, rw.slba, rw.nlb)))
		return st;
	switch (ctrl_ranges_add(&rw.ns->uncor, rw.slba, rw.nlb)) {
	case 0:
		if (rw.ns->zoned)
			ctrl_zns_write_commit(c, rw.ns, rw.slba, rw.nlb, false);
		break;
	case -ENOSPC:
		return UCMD_ST_RANGES_FULL;
	default:
		return ST_INTERNAL;
	}
	/* The marking is media state: it must survive a power cycle. */
	ctrl_persist_range(c, rw.ns, true, rw.slba, rw.nlb);
	c->smart.host_writes++;
	return 0;
}

uint16_t ctrl_nvm_dsm(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	struct ctrl_ns *ns = ctrl_ns_active(c, req->cmd.nsid);
	unsigned nr = (req->cmd.cdw10 & 0xff) + 1;
	struct nvme_dsm_range r[256];
	uint16_t st;

	if (!ns)
		return ST_INVALID_NS;
	st = ctrl_data_from_host(c, req, r, nr * sizeof(r[0]));
	if (st)
		return st;
	if (!(req->cmd.cdw11 & NVME_DSMGMT_AD))
		return 0;	/* only hints otherwise: nothing to do */
	for (unsigned i = 0; i < nr; i++) {
		uint64_t slba = le64toh(r[i].slba), nlb = le32toh(r[i].nlb);

		if (slba + nlb < slba || slba + nlb > ns->nsze)
			return ST_LBA_RANGE;
	}
	for (unsigned i = 0; i < nr; i++) {
		uint64_t slba = le64toh(r[i].slba), nlb = le32toh(r[i].nlb);

		/* -ENOSPC: a full disk, or a mark split in a full table */
		if (nlb && (st = ctrl_store_status(ctrl_ns_discard(c, ns, slba, nlb, true))))
			return st;
	}
	return 0;
}

/* Copy blocks through a bounce buffer, data area then metadata area. */
static int copy_blocks(struct ctrl_ns *ns, uint64_t src, uint64_t dst, uint64_t nlb, char *buf)
{
	uint32_t ds = ctrl_ns_ds(ns);
	uint16_t ms = ctrl_ns_ms(ns);
	uint64_t per = COPY_CHUNK / (ds + ms);

	for (uint64_t done = 0; done < nlb; done += per) {
		uint64_t n = nlb - done < per ? nlb - done : per;
		int ret;

		ret = store_read(ns->st, buf, n * ds, ctrl_ns_data_off(ns, src + done));
		if (!ret)
			ret = store_write(ns->st, buf, n * ds, ctrl_ns_data_off(ns, dst + done), false);
		if (!ret && ms) {
			ret = store_read(ns->st, buf, n * ms, ctrl_ns_meta_off(ns, src + done));
			if (!ret)
				ret = store_write(ns->st, buf, n * ms,
						  ctrl_ns_meta_off(ns, dst + done), false);
		}
		if (ret)
			return ret;
	}
	return 0;
}

uint16_t ctrl_nvm_copy(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	struct ctrl_ns *ns = ctrl_ns_active(c, req->cmd.nsid);
	uint64_t sdlba = (uint64_t)req->cmd.cdw11 << 32 | req->cmd.cdw10, total = 0, dst;
	unsigned nr = (req->cmd.cdw12 & 0xff) + 1, fmt = (req->cmd.cdw12 >> 8) & 0xf;
	struct ctrl_copy_src r[UCMD_COPY_MSRC + 1];
	uint8_t list[(UCMD_COPY_MSRC + 1) * 40];
	uint32_t stream;
	uint16_t st;
	char *buf;

	if (!ns)
		return ST_INVALID_NS;
	if ((st = ctrl_fdp_write_check(c, ns, req->cmd.cdw12, req->cmd.cdw13, &stream)))
		return st;
	/* formats 0h and 1h (OCFS); PRINFOR and PRINFOW where formatted with protection */
	if (fmt > 1 || (!ns->dps && (CDW12_PRINFO(req->cmd.cdw12) || ((req->cmd.cdw12 >> 12) & 0xf))))
		return ST_INVALID;
	/* a namespace with protection takes the entry format of its guard: 0h 16b, 1h 64b */
	if (ns->dps && (fmt == 1) != (ctrl_lbaf_pif(ns->lbaf) == 2))
		return ST_INVALID_NS;
	if (nr > UCMD_COPY_MSRC + 1u)
		return UCMD_CMD(NVME_SC_CMD_SIZE_LIMIT_EXCEEDED) | UCMD_DNR;
	st = ctrl_data_from_host(c, req, list, nr * (fmt == 1 ? 40u : 32u));
	if (st)
		return st;
	for (unsigned i = 0; i < nr; i++) {
		uint64_t slba, nlb;

		ctrl_copy_src_parse(list, fmt, i, &r[i]);
		slba = r[i].slba;
		nlb = r[i].nlb;
		if (nlb > UCMD_COPY_MSSRL)
			return UCMD_CMD(NVME_SC_CMD_SIZE_LIMIT_EXCEEDED) | UCMD_DNR;
		if (slba + nlb < slba || slba + nlb > ns->nsze)
			return ST_LBA_RANGE;
		if (ns->zoned && (st = ctrl_zns_read_check(ns, slba, nlb)))
			return st;
		if (ctrl_ranges_overlap(&ns->uncor, slba, nlb))
			return read_error(c);
		total += nlb;
	}
	if (total > UCMD_COPY_MCL)
		return UCMD_CMD(NVME_SC_CMD_SIZE_LIMIT_EXCEEDED) | UCMD_DNR;
	if (sdlba + total < sdlba || sdlba + total > ns->nsze)
		return ST_LBA_RANGE;
	/* the destination of a zoned namespace is written at its write pointer */
	if (ns->zoned && (st = ctrl_zns_write_check(ns, sdlba, total)))
		return st;
	if (ns->dps && (st = ctrl_pi_copy_check(req, ns, r, nr, sdlba)))
		return st;
	if (!ctrl_ranges_remove_fits(&ns->uncor, sdlba, total))
		return UCMD_ST_RANGES_FULL;
	buf = malloc(COPY_CHUNK);
	if (!buf)
		return ST_INTERNAL;
	dst = sdlba;
	for (unsigned i = 0; i < nr && !st; i++) {
		st = ctrl_store_status(copy_blocks(ns, r[i].slba, dst, r[i].nlb, buf));
		dst += r[i].nlb;
	}
	free(buf);
	if (!st && ns->dps)
		st = ctrl_pi_generate_range(req, ns, sdlba, total);
	if (st)
		return st;
	switch (ctrl_ranges_remove(&ns->uncor, sdlba, total)) {
	case 0:
		break;
	case 1:
		ctrl_persist_range(c, ns, false, sdlba, total);
		break;
	default:
		return ST_INTERNAL;
	}
	if (ns->zoned)
		ctrl_zns_write_commit(c, ns, sdlba, total, false);
	if (ns->fdpm)
		ctrl_fdp_write_commit(c, ns, stream, sdlba, total);
	if (((req->cmd.cdw12 & CDW12_FUA) || !c->cur.vwc) &&
	    ((st = ctrl_store_status(ns->st->ops->flush(ns->st))) ||
	     (st = ctrl_store_status(ctrl_zns_flush(ns)))))
		return st;
	c->smart.host_writes++;
	return 0;
}
