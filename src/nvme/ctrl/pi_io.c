/* SPDX-License-Identifier: MIT */
/*
 * Read and Write on a namespace formatted with protection information
 * (16b or 64b guard, types 1 to 3, tuple first or last, extended or separate
 * metadata). Unlike the zero-copy path of nvm.c, the blocks go through a
 * bounce buffer: a write is checked (or its tuples generated, PRACT) before
 * anything is stored, so a failed check changes nothing; a read is checked
 * before anything reaches the host. With PRACT and metadata that is the
 * tuple alone, the host transfers no metadata at all (inserted on write,
 * stripped on read). Compare shares the path. The checks and tuples
 * themselves are pi.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "ctrl_int.h"
#include "nvme/ctrl/pi.h"

#define CDW12_FUA	((uint32_t)NVME_IO_FUA << 16)
#define CDW12_STC	((uint32_t)NVME_IO_STC << 16)
#define ST_INTERNAL	UCMD_GEN(NVME_SC_INTERNAL)
#define ST_COMPARE	(UCMD_MEDIA(NVME_SC_COMPARE_FAILED) | UCMD_DNR)
#define PRINFO_BITS	(NVME_IO_PRINFO_PRACT | NVME_IO_PRINFO_PRCHK_GUARD | \
			 NVME_IO_PRINFO_PRCHK_APP | NVME_IO_PRINFO_PRCHK_REF)

void ctrl_pi_fmt(const struct ctrl_ns *ns, struct pi_fmt *f)
{
	*f = (struct pi_fmt){
		.type = ns->dps & NVME_NS_DPS_PI_MASK,
		.pif = ctrl_lbaf_pif(ns->lbaf),
		.first = ns->dps & NVME_NS_DPS_PI_FIRST,
		.ms = ctrl_ns_ms(ns),
		.lbads = ctrl_ns_ds(ns),
		.plain = ns->pi_plain,
		.sts = ctrl_lbaf_sts(ns->lbaf),
		.lbstm = ns->lbstm,
	};
}

void ctrl_pi_cmd(const struct pi_fmt *f, const struct ucmd_nvme_sqe *cmd, uint64_t slba,
		  struct pi_cmd *pc)
{
	*pc = (struct pi_cmd){
		.control = (uint16_t)(cmd->cdw12 >> 16) & PRINFO_BITS,
		.ilbrt = cmd->cdw14,
		.lbat = (uint16_t)cmd->cdw15,
		.lbatm = (uint16_t)(cmd->cdw15 >> 16),
		.slba = slba,
		.stc = cmd->cdw12 & CDW12_STC,
	};
	/* with the 64b guard the space's bits 47:32 are CDW3's 15:0 (CDW2 is ignored) */
	if (f->pif == PI_PIF_64B)
		pc->ilbrt |= (uint64_t)(cmd->cdw3 & 0xffff) << 32;
}

void ctrl_pi_store_bytes(const struct ctrl_ns *ns, uint64_t off, uint8_t *buf, uint64_t n)
{
	uint64_t md = ctrl_ns_meta_off(ns, 0);
	struct pi_fmt f;

	if (!ns->dps || ns->pi_plain || off + n <= md)
		return;
	ctrl_pi_fmt(ns, &f);
	for (uint64_t p = off > md ? off : md; p < off + n; p++) {
		uint64_t in = (p - md) % f.ms;

		if (in >= pi_tuple_offset(&f) && in < pi_tuple_offset(&f) + pi_tuple_size(&f))
			buf[p - off] ^= 0xff;
	}
}

uint16_t ctrl_pi_check_blocks(struct ctrl_req *req, const struct pi_fmt *f,
			       const struct pi_cmd *pc, uint64_t first, uint64_t nlb,
			       const uint8_t *data, const uint8_t *md)
{
	for (uint64_t i = 0; i < nlb; i++) {
		uint16_t st = pi_check(f, pc, (uint32_t)(first + i), data + i * f->lbads,
				       md + i * f->ms);

		if (st) {
			/* the error log entry names the block that failed */
			req->err_lba = pc->slba + first + i;
			return st;
		}
	}
	return 0;
}

/* One command's blocks in controller memory */
struct pi_io {
	struct ctrl_ns *ns;
	struct pi_fmt f;
	struct pi_cmd pc;
	uint64_t nlb;
	uint16_t hms;		/* metadata bytes per block the host transfers */
	uint8_t *data, *md, *ext;
	struct ctrl_iovs host, mv;
};

static uint16_t from_host(struct pi_io *io)
{
	uint32_t ds = io->f.lbads, ms = io->f.ms;
	uint16_t st;

	if (!io->ns->extended) {
		st = ctrl_iovs_copy_in(&io->host, io->data, io->nlb * ds);
		if (!st && io->hms)
			st = ctrl_iovs_copy_in(&io->mv, io->md, io->nlb * ms);
		return st;
	}
	st = ctrl_iovs_copy_in(&io->host, io->ext, io->nlb * (ds + io->hms));
	for (uint64_t i = 0; !st && i < io->nlb; i++) {
		memcpy(io->data + i * ds, io->ext + i * (ds + io->hms), ds);
		memcpy(io->md + i * ms, io->ext + i * (ds + io->hms) + ds, io->hms);
	}
	return st;
}

static uint16_t to_host(struct pi_io *io)
{
	uint32_t ds = io->f.lbads, ms = io->f.ms;
	uint16_t st;

	if (!io->ns->extended) {
		st = ctrl_iovs_copy_out(&io->host, io->data, io->nlb * ds);
		if (!st && io->hms)
			st = ctrl_iovs_copy_out(&io->mv, io->md, io->nlb * ms);
		return st;
	}
	for (uint64_t i = 0; i < io->nlb; i++) {
		memcpy(io->ext + i * (ds + io->hms), io->data + i * ds, ds);
		memcpy(io->ext + i * (ds + io->hms) + ds, io->md + i * ms, io->hms);
	}
	return ctrl_iovs_copy_out(&io->host, io->ext, io->nlb * (ds + io->hms));
}

/* The blocks as stored, into data and md */
static uint16_t load(struct pi_io *io, uint64_t slba, uint8_t *data, uint8_t *md)
{
	struct ctrl_ns *ns = io->ns;
	int ret = store_read(ns->st, data, io->nlb * io->f.lbads, ctrl_ns_data_off(ns, slba));

	if (!ret)
		ret = store_read(ns->st, md, io->nlb * io->f.ms, ctrl_ns_meta_off(ns, slba));
	if (ret)
		return ctrl_store_status(ret);
	pi_store_codec(&io->f, md, io->nlb);
	return 0;
}

static uint16_t pi_write(struct ucmd_ctrl *c, struct ctrl_req *req, struct pi_io *io,
			 uint64_t slba, bool fua)
{
	struct ctrl_ns *ns = io->ns;
	uint16_t st = from_host(io);
	int ret;

	if (st)
		return st;
	if (io->pc.control & NVME_IO_PRINFO_PRACT) {
		for (uint64_t i = 0; i < io->nlb; i++)
			pi_generate(&io->f, &io->pc, (uint32_t)i, io->data + i * io->f.lbads,
				    io->md + i * io->f.ms);
	} else if ((st = ctrl_pi_check_blocks(req, &io->f, &io->pc, 0, io->nlb, io->data,
					       io->md))) {
		return st;
	}
	if (!ctrl_ranges_remove_fits(&ns->uncor, slba, io->nlb))
		return UCMD_ST_RANGES_FULL;
	pi_store_codec(&io->f, io->md, io->nlb);
	ret = store_write(ns->st, io->data, io->nlb * io->f.lbads, ctrl_ns_data_off(ns, slba), fua);
	if (!ret)
		ret = store_write(ns->st, io->md, io->nlb * io->f.ms, ctrl_ns_meta_off(ns, slba), fua);
	if (ret)
		return ctrl_store_status(ret);
	return ctrl_nvm_written(c, ns, slba, io->nlb, fua);
}

static uint16_t pi_read(struct ucmd_ctrl *c, struct ctrl_req *req, struct pi_io *io,
			uint64_t slba)
{
	uint16_t st;

	if ((st = ctrl_nvm_read_check(c, io->ns, slba, io->nlb)) ||
	    (st = load(io, slba, io->data, io->md)) ||
	    (st = ctrl_pi_check_blocks(req, &io->f, &io->pc, 0, io->nlb, io->data, io->md)) ||
	    (st = to_host(io)))
		return st;
	ctrl_nvm_read_done(c, io->ns, io->nlb);
	return 0;
}

/*
 * Compare: the stored blocks are checked as PRCHK asks (as a Read), then
 * compared with what the host sent: the data, and the metadata when the host
 * transfers it (not with PRACT and a tuple-only metadata).
 */
static uint16_t pi_compare(struct ucmd_ctrl *c, struct ctrl_req *req, struct pi_io *io,
			   uint64_t slba)
{
	size_t dlen = io->nlb * io->f.lbads, mlen = io->nlb * io->f.ms;
	uint8_t *sd = malloc(dlen), *sm = malloc(mlen ? mlen : 1);
	uint16_t st;

	if (!sd || !sm)
		st = ST_INTERNAL;
	else if (!(st = ctrl_nvm_read_check(c, io->ns, slba, io->nlb)) &&
		 !(st = load(io, slba, sd, sm)) &&
		 !(st = ctrl_pi_check_blocks(req, &io->f, &io->pc, 0, io->nlb, sd, sm)) &&
		 !(st = from_host(io))) {
		if (memcmp(sd, io->data, dlen) || (io->hms && memcmp(sm, io->md, mlen)))
			st = ST_COMPARE;
		else
			c->smart.host_reads++;
	}
	free(sd);
	free(sm);
	return st;
}

uint16_t ctrl_pi_rw(struct ucmd_ctrl *c, struct ctrl_req *req, struct ctrl_ns *ns,
		     uint64_t slba, uint64_t nlb)
{
	uint8_t op = req->cmd.opcode;
	bool fua = (req->cmd.cdw12 & CDW12_FUA) || !c->cur.vwc;
	struct pi_io io = { .ns = ns, .nlb = nlb };
	uint32_t ds;
	uint16_t st;

	ctrl_pi_fmt(ns, &io.f);
	ds = io.f.lbads;
	ctrl_pi_cmd(&io.f, &req->cmd, slba, &io.pc);
	io.hms = (io.pc.control & NVME_IO_PRINFO_PRACT) && pi_md_is_tuple(&io.f) ? 0 : io.f.ms;
	if ((st = pi_cmd_check(&io.f, &io.pc)))
		return st;
	ctrl_iovs_init(&io.host);
	ctrl_iovs_init(&io.mv);
	st = ctrl_map_data(c, req, nlb * (ds + (ns->extended ? io.hms : 0)), &io.host);
	if (!st && !ns->extended && io.hms)
		st = ctrl_map_meta(c, req, nlb * io.f.ms, &io.mv);
	if (!st) {
		io.data = malloc(nlb * ds);
		io.md = calloc(nlb, io.f.ms);
		io.ext = ns->extended ? malloc(nlb * (ds + io.hms)) : NULL;
		if (!io.data || !io.md || (ns->extended && !io.ext))
			st = ST_INTERNAL;
	}
	if (!st)
		st = op == nvme_cmd_write   ? pi_write(c, req, &io, slba, fua)
		   : op == nvme_cmd_compare ? pi_compare(c, req, &io, slba)
					    : pi_read(c, req, &io, slba);
	free(io.data);
	free(io.md);
	free(io.ext);
	ctrl_iovs_free(&io.host);
	ctrl_iovs_free(&io.mv);
	return st;
}
