/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: sequences of Flexible Data Placement commands through
 * the real path (ring, uring_cmd, the host driver, the emulated controller)
 * on a fresh controller per input: FDP with 4 handles in 2 reclaim groups,
 * reclaim units of 4 KiB (8 blocks of 512 bytes), a RAM namespace of 256
 * blocks. Writes, Write Zeroes and Copy with any DTYPE/DSPEC, Dataset
 * Management, I/O Management Receive and Send, Get Log Page 20h-23h with
 * any LSP, LSI, offset and length, Get/Set Features 1Dh and 1Eh, Format,
 * Namespace Management Create with placement handle lists valid and not
 * (too many handles, out of range, repeated) and Delete, Namespace
 * Attachment; writes, RUH updates and status go to any of the namespaces.
 *
 * After every command every namespace's media model must be consistent (every mapped
 * block's unit written that far and mapped back to it, valid counts equal
 * to the mapped blocks, free units counted, streams on open units), a
 * command's media bytes at least its host bytes (none for Write Zeroes), and
 * a command that failed must have changed neither the model nor the
 * statistics, a Create that failed made no namespace, and one that
 * succeeded with FDP enabled has a model and the list it asked for (or
 * every handle): any violation aborts.
 *
 * Input: records of 12 bytes: op, LBA, block count, DTYPE, DSPEC (2
 * bytes), CDW10 high half (2), CDW11 (2), data length (2).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "nvme/ctrl/fdp.h"
#include "ucmd/nvme.h"
#include "ucmd/ucmd.h"

#define NSZE	256
#define BUF	(16u * 1024)
#define REC	12

static uint8_t *data_buf;

struct rig {
	struct ucmd_engine *e;
	struct ucmd_ctrl *c;
	struct ucmd_nvme_host *host;
	struct ucmd_ring ring;
	int ng, ctrl;
	uint16_t cntlid;
};

#define NSID_MAX	4	/* namespaces the inputs name */

static void rig_up(struct rig *r)
{
	struct ucmd_ctrl_params cp = { .mdts = 2 };
	struct ucmd_ns_params np = { .nsze = NSZE, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };

	cp.fdp.enable = true;
	cp.fdp.nruh = 4;
	cp.fdp.nrg = 2;
	cp.fdp.ru_size = 4096;
	cp.fdp.op_pct = 10;
	r->e = ucmd_engine_new();
	if (!r->e || ucmd_ctrl_create(&cp, &r->c) || ucmd_ctrl_ns_create(r->c, &np) != 1 ||
	    ucmd_nvme_attach(r->e, r->c, NULL, &r->host) ||
	    ucmd_queue_init_engine(r->e, 8, &r->ring, &p))
		abort();
	r->ng = ucmd_open(r->e, "ng0n1", O_RDWR);
	r->ctrl = ucmd_open(r->e, "nvme0", O_RDWR);
	if (r->ng < 0 || r->ctrl < 0)
		abort();
	r->cntlid = r->c->p.cntlid;
}

static void rig_down(struct rig *r)
{
	ucmd_queue_exit(&r->ring);
	ucmd_close(r->e, r->ng);
	ucmd_close(r->e, r->ctrl);
	ucmd_nvme_detach(r->host);
	ucmd_engine_free(r->e);
	ucmd_ctrl_destroy(r->c);
}

/* Every invariant of one namespace's media model; abort() on a violation */
static void check_ns(struct rig *r, struct ctrl_ns *ns)
{
	struct fdp_media *m;
	uint32_t *valid, nfree = 0;
	uint64_t live = 0;

	m = ns->fdpm;
	if (!m) {
		if (r->c->fdp->enabled)
			abort();
		return;
	}
	if (m->nlba != ns->nsze)
		abort();
	/* a placement handle list names each handle of the configuration once */
	for (uint16_t i = 0; i < ns->nphndl; i++) {
		if (ns->phndl[i] >= r->c->fdp->nruh)
			abort();
		for (uint16_t j = 0; j < i; j++)
			if (ns->phndl[j] == ns->phndl[i])
				abort();
	}
	valid = calloc(m->nru, sizeof(*valid));
	if (!valid)
		abort();
	/* the valid bitmap has a bit for each mapped block and no other */
	for (uint64_t w = 0; w < ((uint64_t)m->nru * m->bpr + 63) / 64; w++)
		live += (uint64_t)__builtin_popcountll(m->vmap[w]);
	for (uint64_t lba = 0; lba < m->nlba; lba++) {
		uint32_t p = m->l2p[lba];

		if (!p--)
			continue;
		if (p >= m->nru * m->bpr || m->p2l[p] != lba + 1 ||
		    p % m->bpr >= m->ru[p / m->bpr].wp || m->ru[p / m->bpr].state == FDP_RU_FREE ||
		    !(m->vmap[p / 64] >> (p % 64) & 1))
			abort();
		valid[p / m->bpr]++;
		live--;
	}
	if (live)
		abort();
	for (uint32_t u = 0; u < m->nru; u++) {
		if (valid[u] != m->ru[u].valid || m->ru[u].wp > m->bpr)
			abort();
		nfree += m->ru[u].state == FDP_RU_FREE;
	}
	if (nfree != m->nfree)
		abort();
	for (uint32_t s = 0; s < m->nstreams; s++)
		if (m->stream[s] != FDP_NONE && (m->stream[s] >= m->nru ||
						 m->ru[m->stream[s]].state != FDP_RU_OPEN))
			abort();
	free(valid);
}

static void check(struct rig *r)
{
	for (unsigned i = 1; i <= UCMD_MAX_NS; i++)
		if (r->c->ns[i])
			check_ns(r, r->c->ns[i]);
}

static unsigned ns_count(struct rig *r)
{
	unsigned n = 0;

	for (unsigned i = 1; i <= UCMD_MAX_NS; i++)
		n += r->c->ns[i] != NULL;
	return n;
}

static int submit(struct rig *r, bool admin, struct nvme_uring_cmd *c)
{
	struct io_uring_cqe *cqe;
	int res, fd = admin ? r->ctrl : r->ng;

	/* I/O for another namespace goes through its own generic device, once attached */
	if (!admin && c->nsid != 1) {
		char name[16];

		snprintf(name, sizeof(name), "ng0n%u", c->nsid);
		fd = ucmd_open(r->e, name, O_RDWR);
		if (fd < 0)
			return fd;
	}
	ucmd_prep_nvme_cmd(ucmd_get_sqe(&r->ring), fd,
			   admin ? NVME_URING_CMD_ADMIN : NVME_URING_CMD_IO, c);
	if (ucmd_submit_and_wait(&r->ring, 1) != 1 || ucmd_wait_cqe(&r->ring, &cqe))
		abort();
	res = cqe->res;
	ucmd_cqe_seen(&r->ring, cqe);
	if (fd != r->ng && fd != r->ctrl)
		ucmd_close(r->e, fd);
	if (res < -4095 || res > 0x7fff)
		abort();
	return res;
}

/* What a failed command must leave as it was: statistics, every model's map and streams */
static uint8_t *state_of(struct rig *r, size_t *len)
{
	size_t n = 3 * sizeof(uint64_t), off;
	uint8_t *b;

	for (unsigned i = 1; i <= NSID_MAX; i++) {
		struct fdp_media *m = r->c->ns[i] ? r->c->ns[i]->fdpm : NULL;

		n += 4 + (m ? m->nlba * 4 + m->nstreams * 4 : 0);
	}
	if (!(b = malloc(n)))
		abort();
	memcpy(b, &r->c->fdp->hbmw, 8);
	memcpy(b + 8, &r->c->fdp->mbmw, 8);
	memcpy(b + 16, &r->c->fdp->mbe, 8);
	off = 24;
	for (unsigned i = 1; i <= NSID_MAX; i++) {
		struct fdp_media *m = r->c->ns[i] ? r->c->ns[i]->fdpm : NULL;
		uint32_t here = r->c->ns[i] != NULL;

		memcpy(b + off, &here, 4);
		off += 4;
		if (m) {
			memcpy(b + off, m->l2p, m->nlba * 4);
			memcpy(b + off + m->nlba * 4, m->stream, m->nstreams * 4);
			off += m->nlba * 4 + m->nstreams * 4;
		}
	}
	*len = n;
	return b;
}

enum { OP_WRITE, OP_WZ, OP_COPY, OP_DSM, OP_RECV, OP_SEND, OP_LOG, OP_GETF, OP_SETF, OP_FORMAT,
       OP_READ, OP_NSMGMT, OP_ATTACH };

static void step(struct rig *r, const uint8_t *in)
{
	static const struct { uint8_t opcode; bool admin; } ops[] = {
		{ nvme_cmd_write, false }, { nvme_cmd_write_zeroes, false },
		{ nvme_cmd_copy, false }, { nvme_cmd_dsm, false },
		{ nvme_cmd_io_mgmt_recv, false }, { nvme_cmd_io_mgmt_send, false },
		{ nvme_admin_get_log_page, true }, { nvme_admin_get_features, true },
		{ nvme_admin_set_features, true }, { nvme_admin_format_nvm, true },
		{ nvme_cmd_read, false },
		{ nvme_admin_ns_mgmt, true }, { nvme_admin_ns_attach, true },
	};
	const unsigned nops = sizeof(ops) / sizeof(ops[0]);
	struct nvme_uring_cmd c = { .nsid = 1 };
	uint16_t dspec = in[4] | (uint16_t)in[5] << 8, hi = in[6] | (uint16_t)in[7] << 8;
	uint16_t w11 = in[8] | (uint16_t)in[9] << 8, len = in[10] | (uint16_t)in[11] << 8;
	unsigned k = in[0] % nops;
	uint8_t *before, *after;
	unsigned nns = ns_count(r);
	bool had[UCMD_MAX_NS + 1];
	uint16_t want_n = 0, want[UCMD_FDP_MAX_RUH];
	size_t n1, n2;
	int res;

	c.opcode = ops[k].opcode;
	c.addr = (uint64_t)(uintptr_t)data_buf;
	c.data_len = len % (BUF + 1);
	/* by index: admin and I/O opcodes share values */
	switch (k) {
	case OP_WRITE:
	case OP_WZ:
	case OP_READ:
		c.cdw10 = in[1];
		c.cdw12 = (in[2] % 16) | (uint32_t)(in[3] & 0xf) << 20;
		c.cdw13 = (uint32_t)dspec << 16;
		c.data_len = ((in[2] % 16) + 1) * 512;
		c.nsid = 1 + (in[3] >> 4) % NSID_MAX;	/* any namespace, and its list */
		break;
	case OP_COPY: {
		struct nvme_copy_range *cr = (void *)data_buf;

		memset(cr, 0, sizeof(*cr));
		cr->slba = htole64(in[8]);
		cr->nlb = htole16(in[9] % 16);
		c.cdw10 = in[1];
		c.cdw12 = (uint32_t)(in[3] & 0xf) << 20;
		c.cdw13 = (uint32_t)dspec << 16;
		c.data_len = sizeof(*cr);
		break;
	}
	case OP_DSM: {
		struct nvme_dsm_range *d = (void *)data_buf;

		memset(d, 0, sizeof(*d));
		d->slba = htole64(in[1]);
		d->nlb = htole32(in[2]);
		c.cdw11 = NVME_DSMGMT_AD;
		c.data_len = sizeof(*d);
		break;
	}
	case OP_RECV:
	case OP_SEND:
		c.nsid = 1 + (in[3] >> 4) % NSID_MAX;
		c.cdw10 = (in[3] & 0xf) | (uint32_t)hi << 16;
		c.cdw11 = w11;
		memcpy(data_buf, in + 1, 4);
		break;
	case OP_NSMGMT:
		if (in[1] & 0x80) {	/* Delete */
			c.nsid = 1 + in[2] % NSID_MAX;
			c.cdw10 = 1;
			c.data_len = 0;
			break;
		}
		/*
		 * Create, 32 to 287 blocks of 512 or 4096 bytes, NPHNDLS 0 to 5
		 * handles (of 4) out of 0 to 5: too many, out of range and
		 * repeated ones among them
		 */
		memset(data_buf, 0, 4096);
		{
			struct nvme_id_ns *id = (void *)data_buf;
			uint16_t n = in[3] % 6;

			id->nsze = id->ncap = htole64(32 + (uint64_t)in[2]);
			id->flbas = in[1] & 1 ? 4 : 0;
			memcpy(data_buf + 392, &n, 2);
			for (uint16_t i = 0; i < n; i++) {
				uint16_t h = (uint16_t)(in[4 + i % 8] % 6);

				memcpy(data_buf + 512 + 2 * i, &h, 2);
				want[i] = h;
			}
			want_n = n;
		}
		c.nsid = 0;
		c.data_len = 4096;
		break;
	case OP_ATTACH: {
		struct nvme_ctrl_list *cl = (void *)data_buf;

		memset(cl, 0, sizeof(*cl));
		cl->num = htole16(1);
		cl->identifier[0] = htole16(r->cntlid);
		c.nsid = 1 + in[1] % NSID_MAX;
		c.cdw10 = in[2] & 1;	/* attach or detach */
		c.data_len = 4096;
		break;
	}
	case OP_LOG:
		c.nsid = in[1] & 1 ? 1 : 0xffffffffu;
		c.cdw10 = (0x20 + in[2] % 5) | (uint32_t)(in[3] & 0x7f) << 8 | (uint32_t)hi << 16;
		c.cdw11 = (uint32_t)dspec << 16;
		c.cdw12 = w11;
		break;
	case OP_GETF:
	case OP_SETF:
		c.nsid = in[1] & 1 ? 1 : 0;
		c.cdw10 = (in[2] & 1 ? NVME_FEAT_FID_FDP_EVENTS : NVME_FEAT_FID_FDP) |
			  (uint32_t)(in[3] & 7) << 8 | (in[3] & 0x80 ? 1u << 31 : 0);
		c.cdw11 = dspec | (uint32_t)(hi & 0xff) << 16;
		c.cdw12 = w11;
		memcpy(data_buf, in + 4, 4);
		break;
	case OP_FORMAT:
		c.cdw10 = in[1] & 7;
		break;
	}
	for (unsigned i = 1; i <= UCMD_MAX_NS; i++)
		had[i] = r->c->ns[i] != NULL;
	before = state_of(r, &n1);
	if (k == OP_ATTACH) {
		/*
		 * Through the ioctl, as nvme-cli sends it: the host scans the
		 * namespaces again after it (Linux's nvme_passthru_end), so an
		 * attached one gets its ng0nN for the I/O that follows.
		 */
		struct nvme_passthru_cmd64 pc = { .opcode = c.opcode, .nsid = c.nsid,
			.addr = c.addr, .data_len = c.data_len, .cdw10 = c.cdw10 };

		res = ucmd_ioctl(r->e, r->ctrl, NVME_IOCTL_ADMIN64_CMD, &pc);
		if (res < -4095 || res > 0x7fff)
			abort();
	} else {
		res = submit(r, ops[k].admin, &c);
	}
	check(r);
	after = state_of(r, &n2);
	/* a command that failed changed neither the model nor the statistics */
	if (res && (n1 != n2 || memcmp(before, after, n1)))
		abort();
	if (k == OP_NSMGMT && !(in[1] & 0x80)) {
		/* a failed Create made nothing; a good one has what it asked for */
		if (res && ns_count(r) != nns)
			abort();
		if (!res) {
			struct ctrl_ns *ns;
			unsigned id = 0;

			for (unsigned i = 1; i <= UCMD_MAX_NS && !id; i++)
				if (r->c->ns[i] && !had[i])
					id = i;
			if (!id || ns_count(r) != nns + 1)
				abort();
			ns = r->c->ns[id];
			if (r->c->fdp->enabled &&
			    (!ns->fdpm || ns->nphndl != want_n ||
			     memcmp(ns->phndl, want, want_n * sizeof(want[0]))))
				abort();
		}
	}
	/*
	 * Unless enabling FDP started the statistics over, a command's media bytes
	 * are at least its host bytes, and Write Zeroes takes no media at all.
	 */
	uint64_t h0, m0, h1, m1;

	memcpy(&h0, before, 8);
	memcpy(&m0, before + 8, 8);
	memcpy(&h1, after, 8);
	memcpy(&m1, after + 8, 8);
	if (!res && h1 >= h0 && m1 >= m0 && (k == OP_WZ ? m1 != m0 : m1 - m0 < h1 - h0))
		abort();
	free(before);
	free(after);
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	struct rig r;

	if (!data_buf && !(data_buf = aligned_alloc(4096, BUF)))
		abort();
	memset(data_buf, 0x5a, BUF);
	rig_up(&r);
	check(&r);
	for (size_t off = 0; off + REC <= size && off < 64 * REC; off += REC)
		step(&r, in + off);
	rig_down(&r);
	return 0;
}
