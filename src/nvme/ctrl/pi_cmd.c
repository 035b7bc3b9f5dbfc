/* SPDX-License-Identifier: MIT */
/*
 * Protection information in the commands that move no host data through
 * pi_io.c: Verify (the stored tuples checked as PRCHK asks), Write Zeroes
 * and Copy (the destination's tuples generated with PRACT, the sources and
 * what lands at the destination checked before anything is written). The
 * blocks go through the controller in chunks, so a command of any length
 * needs bounded memory.
 */
#include <stdlib.h>
#include <string.h>

#include "ctrl_int.h"
#include "nvme/ctrl/pi.h"

#define CHUNK_BYTES	(1u << 20)
#define ST_INTERNAL	UCMD_GEN(NVME_SC_INTERNAL)
#define ST_INVALID	(UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR)
#define CDW12_PRINFOR(x) (((x) >> 12) & 0xfu)
#define CDW12_STCR	(1u << 25)	/* Copy: Storage Tag Check Read (STCW is bit 24, STC) */

struct chunk {
	struct ctrl_ns *ns;
	struct pi_fmt f;
	uint64_t per;		/* blocks per chunk */
	uint8_t *data, *md;
};

static int chunk_init(struct chunk *k, struct ctrl_ns *ns)
{
	ctrl_pi_fmt(ns, &k->f);
	k->ns = ns;
	k->per = CHUNK_BYTES / (k->f.lbads + k->f.ms);
	if (!k->per)
		k->per = 1;
	k->data = malloc(k->per * k->f.lbads);
	k->md = malloc(k->per * k->f.ms);
	return k->data && k->md ? 0 : -1;
}

static void chunk_free(struct chunk *k)
{
	free(k->data);
	free(k->md);
}

static uint16_t chunk_load(struct chunk *k, uint64_t lba, uint64_t n)
{
	struct ctrl_ns *ns = k->ns;
	int ret = store_read(ns->st, k->data, n * k->f.lbads, ctrl_ns_data_off(ns, lba));

	if (!ret)
		ret = store_read(ns->st, k->md, n * k->f.ms, ctrl_ns_meta_off(ns, lba));
	if (ret)
		return ctrl_store_status(ret);
	pi_store_codec(&k->f, k->md, n);
	return 0;
}

uint16_t ctrl_pi_cmd_valid(struct ctrl_ns *ns, const struct ucmd_nvme_sqe *cmd, uint64_t slba)
{
	struct pi_fmt f;
	struct pi_cmd pc;

	ctrl_pi_fmt(ns, &f);
	ctrl_pi_cmd(&f, cmd, slba, &pc);
	return pi_cmd_check(&f, &pc);
}

uint16_t ctrl_pi_verify(struct ctrl_req *req, struct ctrl_ns *ns, uint64_t slba, uint64_t nlb)
{
	struct pi_cmd pc;
	struct chunk k;
	uint16_t st = 0;

	if (chunk_init(&k, ns)) {
		chunk_free(&k);
		return ST_INTERNAL;
	}
	ctrl_pi_cmd(&k.f, &req->cmd, slba, &pc);
	st = pi_cmd_check(&k.f, &pc);
	for (uint64_t done = 0; !st && done < nlb; done += k.per) {
		uint64_t n = nlb - done < k.per ? nlb - done : k.per;

		if (!(st = chunk_load(&k, slba + done, n)))
			st = ctrl_pi_check_blocks(req, &k.f, &pc, done, n, k.data, k.md);
	}
	chunk_free(&k);
	return st;
}

uint16_t ctrl_pi_generate_range(struct ctrl_req *req, struct ctrl_ns *ns, uint64_t slba,
				 uint64_t nlb)
{
	struct pi_cmd pc;
	struct chunk k;
	uint16_t st = 0;

	ctrl_pi_fmt(ns, &k.f);
	ctrl_pi_cmd(&k.f, &req->cmd, slba, &pc);
	if (!(pc.control & NVME_IO_PRINFO_PRACT))
		return 0;
	if (chunk_init(&k, ns)) {
		chunk_free(&k);
		return ST_INTERNAL;
	}
	for (uint64_t done = 0; !st && done < nlb; done += k.per) {
		uint64_t n = nlb - done < k.per ? nlb - done : k.per;
		int ret;

		if ((st = chunk_load(&k, slba + done, n)))
			break;
		for (uint64_t i = 0; i < n; i++)
			pi_generate(&k.f, &pc, (uint32_t)(done + i), k.data + i * k.f.lbads,
				    k.md + i * k.f.ms);
		pi_store_codec(&k.f, k.md, n);
		ret = store_write(ns->st, k.md, n * k.f.ms, ctrl_ns_meta_off(ns, slba + done), false);
		st = ret ? ctrl_store_status(ret) : 0;
	}
	chunk_free(&k);
	return st;
}

static uint16_t le16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void ctrl_copy_src_parse(const uint8_t *list, unsigned fmt, unsigned i, struct ctrl_copy_src *s)
{
	const uint8_t *raw = list + (size_t)i * (fmt == 1 ? 40 : 32);
	uint64_t slba = 0;

	for (unsigned b = 0; b < 8; b++)
		slba |= (uint64_t)raw[8 + b] << (8 * b);
	s->slba = slba;
	s->nlb = le16_at(raw + 16) + 1ull;
	if (fmt == 1) {
		/*
		 * Format 1h: ELBT is bytes 35:26, most significant byte first
		 * as QEMU and libnvme fill it; with no storage tag (STS 0) the
		 * reference tag is its low 48 bits. ELBAT 37:36, ELBATM 39:38.
		 */
		s->eilbrt = 0;
		for (unsigned b = 30; b < 36; b++)
			s->eilbrt = s->eilbrt << 8 | raw[b];
		s->elbat = le16_at(raw + 36);
		s->elbatm = le16_at(raw + 38);
	} else {
		/* Format 0h: EILBRT 27:24, ELBAT 29:28, ELBATM 31:30 */
		s->eilbrt = le32_at(raw + 24);
		s->elbat = le16_at(raw + 28);
		s->elbatm = le16_at(raw + 30);
	}
}

/*
 * Copy's checks, before it writes: each source range's blocks as PRINFOR
 * asks with the range's EILBRT, ELBAT and ELBATM, and, unless PRINFOW's
 * PRACT has the destination's tuples generated, the same bytes as PRINFOW
 * asks of the destination with the command's ILBRT, LBAT and LBATM. The
 * caller has checked that the entry format is the namespace's guard's.
 */
uint16_t ctrl_pi_copy_check(struct ctrl_req *req, struct ctrl_ns *ns,
			     const struct ctrl_copy_src *r, unsigned nr, uint64_t sdlba)
{
	uint16_t prinfor = (uint16_t)(CDW12_PRINFOR(req->cmd.cdw12) << 10);
	struct pi_cmd w, s;
	struct chunk k;
	uint64_t off = 0;
	uint16_t st;

	ctrl_pi_fmt(ns, &k.f);
	ctrl_pi_cmd(&k.f, &req->cmd, sdlba, &w);
	if (!prinfor && !w.control && !(req->cmd.cdw12 & CDW12_STCR) && !w.stc)
		return 0;
	if ((st = pi_cmd_check(&k.f, &w)))
		return st;
	if (w.control & NVME_IO_PRINFO_PRACT) {
		/* the tuples written are the controller's own: PRCHK and STCW ignored */
		w.control = 0;
		w.stc = false;
	}
	if (chunk_init(&k, ns)) {
		chunk_free(&k);
		return ST_INTERNAL;
	}
	for (unsigned i = 0; i < nr && !st; i++) {
		uint64_t slba = r[i].slba, nlb = r[i].nlb;

		s = (struct pi_cmd){ .control = prinfor, .ilbrt = r[i].eilbrt,
				     .lbat = r[i].elbat, .lbatm = r[i].elbatm, .slba = slba,
				     .stc = req->cmd.cdw12 & CDW12_STCR };
		if ((st = pi_cmd_check(&k.f, &s)))
			break;
		for (uint64_t done = 0; !st && done < nlb; done += k.per) {
			uint64_t n = nlb - done < k.per ? nlb - done : k.per;

			if (!(st = chunk_load(&k, slba + done, n)) &&
			    !(st = ctrl_pi_check_blocks(req, &k.f, &s, done, n, k.data, k.md)))
				st = ctrl_pi_check_blocks(req, &k.f, &w, off + done, n, k.data,
							   k.md);
		}
		off += nlb;
	}
	chunk_free(&k);
	return st;
}
