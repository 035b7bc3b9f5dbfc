/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the emulated controller's register file, doorbells and
 * queue creation (src/nvme/ctrl/regs.c, queue.c, admin.c) driven by a
 * hostile host. The controller runs in UCMD_CTRL_INLINE mode, so that every
 * doorbell is processed before the write returns and a run is
 * deterministic; each input gets a fresh controller with a small RAM
 * namespace.
 *
 * Host memory is a 128 KiB heap arena at bus address ARENA_BUS; map()
 * refuses any window not wholly inside it, so the queues and data buffers
 * the controller may touch are arena bytes, and ASan reports any access past
 * the arena. The input is a sequence of at most MAX_OPS operations, each one
 * opcode byte and its operands (missing bytes read as zero):
 *
 *   0 write32 OFF16 VAL32     any register or doorbell, any value
 *   1 write64 OFF16 VAL64
 *   2 read32  OFF16
 *   3 enable  ASQS8 ACQS8 ASQPAGE16 ACQPAGE16 CC32
 *             AQA, ASQ/ACQ = ARENA_BUS + page * 4 KiB (in or out of the
 *             arena), then CC (with EN forced on); the host keeps track of
 *             the admin queue it described
 *   4 admin   SQE[64]         placed at the admin SQ tail the host knows,
 *             then the tail doorbell; Create I/O CQ/SQ that succeed are
 *             remembered, so later I/O commands can reach them
 *   5 io      QID8 SQE[64]    placed at that I/O SQ's tail, then its doorbell
 *   6 poke    OFF16 VAL64     host memory changes behind the controller's back
 *   7 reap                    consume completions and ring CQ head doorbells
 *
 * The host reaps every CQ it knows after each doorbell. Nothing but the
 * controller's own checks stands between these operations and its state.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "nvme/ctrl/ctrl.h"

#define ARENA_BUS	0x10000ull
#define ARENA_SIZE	(128u * 1024)
#define PAGE		4096u
#define MAX_OPS		256
#define MAX_Q		5	/* admin + max_io_queues */

static uint8_t *arena;

struct hsq {
	bool live;
	uint64_t bus;
	uint32_t size, tail;
};

struct hcq {
	bool live;
	uint64_t bus;
	uint32_t size, head;
	uint8_t phase;
};

struct fz {
	struct ucmd_ctrl *c;
	struct hsq sq[MAX_Q];
	struct hcq cq[MAX_Q];
	uint16_t cid;
	const uint8_t *in;
	size_t left;
};

static void *arena_map(const struct ucmd_dma *dma, uint64_t addr, uint64_t len)
{
	(void)dma;
	if (addr < ARENA_BUS || len > ARENA_SIZE || addr - ARENA_BUS > ARENA_SIZE - len)
		return NULL;
	return arena + (addr - ARENA_BUS);
}

static const struct ucmd_dma arena_dma = { .map = arena_map };

static void on_irq(void *arg, uint16_t vector)
{
	(void)arg;
	(void)vector;
}

static uint64_t take(struct fz *f, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		if (f->left) {
			v |= (uint64_t)*f->in++ << (8 * i);
			f->left--;
		}
	return v;
}

static void take_sqe(struct fz *f, struct ucmd_nvme_sqe *s)
{
	size_t n = f->left < sizeof(*s) ? f->left : sizeof(*s);

	memset(s, 0, sizeof(*s));
	memcpy(s, f->in, n);
	f->in += n;
	f->left -= n;
}

/* The host's view of bus memory: only arena bytes are host memory. */
static void *host_ptr(uint64_t bus, uint64_t len)
{
	return arena_map(NULL, bus, len);
}

static void reap(struct fz *f, uint16_t qid, uint16_t want_cid, uint16_t *status, bool *seen)
{
	struct hcq *q = &f->cq[qid];

	for (uint32_t n = 0; q->live && n < q->size; n++) {
		struct ucmd_nvme_cqe *e = host_ptr(q->bus + (uint64_t)q->head * 16, 16);
		struct ucmd_nvme_cqe cqe;

		if (!e)
			return;
		memcpy(&cqe, e, sizeof(cqe));
		if ((cqe.status & 1) != q->phase)
			break;
		if (seen && cqe.cid == want_cid) {
			*seen = true;
			*status = cqe.status >> 1;
		}
		if (++q->head == q->size) {
			q->head = 0;
			q->phase ^= 1;
		}
		ctrl_write32(f->c, ucmd_nvme_db_offset(qid, 1, 0), q->head);
	}
}

static void reap_all(struct fz *f)
{
	for (uint16_t q = 0; q < MAX_Q; q++)
		reap(f, q, 0, NULL, NULL);
}

static void submit(struct fz *f, uint16_t qid, struct ucmd_nvme_sqe *s)
{
	struct hsq *q = &f->sq[qid];
	void *slot;

	if (!q->live || !q->size)
		return;
	slot = host_ptr(q->bus + (uint64_t)q->tail * sizeof(*s), sizeof(*s));
	if (slot)
		memcpy(slot, s, sizeof(*s));
	q->tail = (q->tail + 1) % q->size;
	ctrl_write32(f->c, ucmd_nvme_db_offset(qid, 0, 0), q->tail);
}

static void op_enable(struct fz *f)
{
	uint32_t asqs = (uint32_t)take(f, 1), acqs = (uint32_t)take(f, 1);
	uint64_t asq = ARENA_BUS + take(f, 2) * PAGE, acq = ARENA_BUS + take(f, 2) * PAGE;
	uint32_t cc = (uint32_t)take(f, 4) | UCMD_NVME_CC_EN;

	ctrl_write32(f->c, UCMD_NVME_REG_CC, 0);
	memset(f->sq, 0, sizeof(f->sq));
	memset(f->cq, 0, sizeof(f->cq));
	ctrl_write32(f->c, UCMD_NVME_REG_AQA, acqs << 16 | asqs);
	ctrl_write64(f->c, UCMD_NVME_REG_ASQ, asq);
	ctrl_write64(f->c, UCMD_NVME_REG_ACQ, acq);
	ctrl_write32(f->c, UCMD_NVME_REG_CC, cc);
	if (!(ctrl_read32(f->c, UCMD_NVME_REG_CSTS) & UCMD_NVME_CSTS_RDY))
		return;
	f->sq[0] = (struct hsq){ .live = true, .bus = asq, .size = asqs + 1 };
	f->cq[0] = (struct hcq){ .live = true, .bus = acq, .size = acqs + 1, .phase = 1 };
}

static void op_admin(struct fz *f)
{
	struct ucmd_nvme_sqe s;
	uint16_t status = 0xffff;
	bool seen = false;

	take_sqe(f, &s);
	s.cid = ++f->cid;
	submit(f, 0, &s);
	reap(f, 0, s.cid, &status, &seen);
	if (!seen || status != 0)
		return;
	/* the controller accepted a queue: the host can use it from now on */
	uint16_t qid = s.cdw10 & 0xffff;
	uint32_t size = (s.cdw10 >> 16) + 1;

	if (qid >= MAX_Q)
		return;
	if (s.opcode == nvme_admin_create_cq)
		f->cq[qid] = (struct hcq){ .live = true, .bus = s.dptr.prp1, .size = size,
					   .phase = 1 };
	else if (s.opcode == nvme_admin_create_sq)
		f->sq[qid] = (struct hsq){ .live = true, .bus = s.dptr.prp1, .size = size };
	else if (s.opcode == nvme_admin_delete_cq)
		f->cq[qid].live = false;
	else if (s.opcode == nvme_admin_delete_sq)
		f->sq[qid].live = false;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	struct ucmd_ctrl_params p = { .mode = UCMD_CTRL_INLINE,
				      .max_io_queues = MAX_Q - 1, .mqes = 255, .mdts = 4 };
	struct ucmd_ns_params np = { .nsze = 64, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct fz f = { .in = in, .left = size };
	struct ucmd_nvme_sqe s;

	if (!arena && !(arena = malloc(ARENA_SIZE)))
		abort();
	memset(arena, 0, ARENA_SIZE);
	if (ctrl_create_dma(&p, &arena_dma, &f.c) || ctrl_set_irq(f.c, on_irq, NULL) ||
	    ucmd_ctrl_ns_create(f.c, &np) != 1)
		abort();
	for (unsigned n = 0; n < MAX_OPS && f.left; n++) {
		uint8_t op = (uint8_t)take(&f, 1);
		uint32_t off;
		uint64_t v;

		switch (op & 7) {
		case 0:
			off = (uint32_t)take(&f, 2) & 0x1fff;
			ctrl_write32(f.c, off, (uint32_t)take(&f, 4));
			break;
		case 1:
			off = (uint32_t)take(&f, 2) & 0x1fff;
			ctrl_write64(f.c, off, take(&f, 8));
			break;
		case 2:
			off = (uint32_t)take(&f, 2) & 0x1fff;
			(void)ctrl_read32(f.c, off);
			break;
		case 3:
			op_enable(&f);
			break;
		case 4:
			op_admin(&f);
			break;
		case 5: {
			uint16_t qid = (uint16_t)(1 + take(&f, 1) % (MAX_Q - 1));

			take_sqe(&f, &s);
			s.cid = ++f.cid;
			submit(&f, qid, &s);
			break;
		}
		case 6:
			off = (uint32_t)take(&f, 2) % (ARENA_SIZE / 8);
			v = take(&f, 8);
			memcpy(arena + off * 8, &v, 8);
			break;
		default:
			break;
		}
		reap_all(&f);
	}
	ucmd_ctrl_destroy(f.c);
	return 0;
}
