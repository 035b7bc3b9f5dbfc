/* SPDX-License-Identifier: MIT */
/*
 * Read and Write on a namespace formatted with protection information
 * (16b guard, types 1 to 3, tuple first or last, extended or separate
 * metadata). Unlike the zero-copy path of nvm.c, the blocks go through a
 * bounce buffer: a write is checked (or its tuples generated, PRACT) before
 * anything is stored, so a failed check changes nothing; a read is checked
 * before anything reaches the host. With PRACT and metadata that is the
 * tuple alone, the host transfers no metadata at all (inserted on write,
 * stripped on read). The checks and tuples themselves are pi.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "ctrl_int.h"
#include "nvme/ctrl/pi.h"

#define CDW12_FUA	((uint32_t)NVME_IO_FUA << 16)
#define ST_READ_ERROR	(UCMD_MEDIA(NVME_SC_READ_ERROR) | UCMD_DNR)
#define ST_INTERNAL	UCMD_GEN(NVME_SC_INTERNAL)

void nvmet_pi_fmt(const struct nvmet_ns *ns, struct pi_fmt *f)
{
	*f = (struct pi_fmt){
		.type = ns->dps & NVME_NS_DPS_PI_MASK,
		.pif = PI_PIF_16B,
		.first = ns->dps & NVME_NS_DPS_PI_FIRST,
		.ms = nvmet_ns_ms(ns),
		.lbads = nvmet_ns_ds(ns),
	};
}

/* One command's blocks in controller memory */
struct pi_io {
	struct nvmet_ns *ns;
	struct pi_fmt f;
	struct pi_cmd pc;
	uint64_t nlb;
	uint16_t hms;		/* metadata bytes per block the host transfers */
	uint8_t *data, *md, *ext;
	struct nvmet_iovs host, mv;
};

static uint16_t from_host(struct pi_io *io)
{
	uint32_t ds = io->f.lbads, ms = io->f.ms;
	uint16_t st;

	if (!io->ns->extended) {
		st = nvmet_iovs_copy_in(&io->host, io->data, io->nlb * ds);
		if (!st && io->hms)
			st = nvmet_iovs_copy_in(&io->mv, io->md, io->nlb * ms);
		return st;
	}
	st = nvmet_iovs_copy_in(&io->host, io->ext, io->nlb * (ds + io->hms));
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
		st = nvmet_iovs_copy_out(&io->host, io->data, io->nlb * ds);
		if (!st && io->hms)
			st = nvmet_iovs_copy_out(&io->mv, io->md, io->nlb * ms);
		return st;
	}
	for (uint64_t i = 0; i < io->nlb; i++) {
		memcpy(io->ext + i * (ds + io->hms), io->data + i * ds, ds);
		memcpy(io->ext + i * (ds + io->hms) + ds, io->md + i * ms, io->hms);
	}
	return nvmet_iovs_copy_out(&io->host, io->ext, io->nlb * (ds + io->hms));
}

/* Each block checked as PRCHK asks; the first failure is the status */
static uint16_t check_all(struct pi_io *io)
{
	for (uint64_t i = 0; i < io->nlb; i++) {
		uint16_t st = pi_check(&io->f, &io->pc, (uint32_t)i, io->data + i * io->f.lbads,
				       io->md + i * io->f.ms);

		if (st)
			return st;
	}
	return 0;
}

static uint16_t pi_write(struct ucmd_ctrl *c, struct pi_io *io, uint64_t slba, bool fua)
{
	struct nvmet_ns *ns = io->ns;
	uint16_t st = from_host(io);
	int ret, r;

	if (st)
		return st;
	if (io->pc.control & NVME_IO_PRINFO_PRACT) {
		for (uint64_t i = 0; i < io->nlb; i++)
			pi_generate(&io->f, &io->pc, (uint32_t)i, io->data + i * io->f.lbads,
				    io->md + i * io->f.ms);
	} else if ((st = check_all(io))) {
		return st;
	}
	/* as nvm.c: a write that would split a mark of a full table fails first */
	if (!nvmet_ranges_remove_fits(&ns->uncor, slba, io->nlb))
		return UCMD_ST_RANGES_FULL;
	ret = store_write(ns->st, io->data, io->nlb * io->f.lbads, nvmet_ns_data_off(ns, slba), fua);
	if (!ret)
		ret = store_write(ns->st, io->md, io->nlb * io->f.ms, nvmet_ns_meta_off(ns, slba), fua);
	if (ret)
		return nvmet_store_status(ret);
	r = nvmet_ranges_remove(&ns->uncor, slba, io->nlb);
	if (r < 0)
		return ST_INTERNAL;
	if (r)
		nvmet_persist_range(c, ns, false, slba, io->nlb);
	c->smart.host_writes++;
	c->smart.units_written_512 += io->nlb * io->f.lbads / 512;
	return 0;
}

static uint16_t pi_read(struct ucmd_ctrl *c, struct pi_io *io, uint64_t slba)
{
	struct nvmet_ns *ns = io->ns;
	uint16_t st;
	int ret;

	if (nvmet_ranges_overlap(&ns->uncor, slba, io->nlb)) {
		c->smart.media_errors++;
		return ST_READ_ERROR;
	}
	ret = store_read(ns->st, io->data, io->nlb * io->f.lbads, nvmet_ns_data_off(ns, slba));
	if (!ret)
		ret = store_read(ns->st, io->md, io->nlb * io->f.ms, nvmet_ns_meta_off(ns, slba));
	if (ret)
		return nvmet_store_status(ret);
	if ((st = check_all(io)) || (st = to_host(io)))
		return st;
	c->smart.host_reads++;
	c->smart.units_read_512 += io->nlb * io->f.lbads / 512;
	return 0;
}

uint16_t nvmet_pi_rw(struct ucmd_ctrl *c, struct nvmet_req *req, struct nvmet_ns *ns,
		     uint64_t slba, uint64_t nlb)
{
	bool write = req->cmd.opcode == nvme_cmd_write;
	bool fua = (req->cmd.cdw12 & CDW12_FUA) || !c->cur.vwc;
	struct pi_io io = { .ns = ns, .nlb = nlb };
	uint32_t ds;
	uint16_t st;

	nvmet_pi_fmt(ns, &io.f);
	ds = io.f.lbads;
	io.pc = (struct pi_cmd){
		.control = (uint16_t)(req->cmd.cdw12 >> 16),
		.ilbrt = req->cmd.cdw14,
		.lbat = (uint16_t)req->cmd.cdw15,
		.lbatm = (uint16_t)(req->cmd.cdw15 >> 16),
		.slba = slba,
	};
	io.hms = (io.pc.control & NVME_IO_PRINFO_PRACT) && pi_md_is_tuple(&io.f) ? 0 : io.f.ms;
	if ((st = pi_cmd_check(&io.f, &io.pc)))
		return st;
	nvmet_iovs_init(&io.host);
	nvmet_iovs_init(&io.mv);
	st = nvmet_map_data(c, req, nlb * (ds + (ns->extended ? io.hms : 0)), &io.host);
	if (!st && !ns->extended && io.hms)
		st = nvmet_map_meta(c, req, nlb * io.f.ms, &io.mv);
	if (!st) {
		io.data = malloc(nlb * ds);
		io.md = calloc(nlb, io.f.ms);
		io.ext = ns->extended ? malloc(nlb * (ds + io.hms)) : NULL;
		if (!io.data || !io.md || (ns->extended && !io.ext))
			st = ST_INTERNAL;
	}
	if (!st)
		st = write ? pi_write(c, &io, slba, fua) : pi_read(c, &io, slba);
	free(io.data);
	free(io.md);
	free(io.ext);
	nvmet_iovs_free(&io.host);
	nvmet_iovs_free(&io.mv);
	return st;
}
