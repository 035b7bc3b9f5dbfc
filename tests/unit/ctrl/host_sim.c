/* SPDX-License-Identifier: MIT */
#include "host_sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ftw.h>

#include <cmocka.h>

#define PAGE 4096u

static void on_irq(void *arg, uint16_t vector)
{
	struct host *h = arg;

	pthread_mutex_lock(&h->lock);
	h->irqs++;
	h->irq_vectors |= 1ull << (vector & 63);
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

void host_default_params(struct ucmd_ctrl_params *p)
{
	memset(p, 0, sizeof(*p));
	p->mode = UCMD_CTRL_INLINE;
	p->max_io_queues = 4;
	p->mqes = 255;
	p->serial = "TESTSN01";
}

void *host_alloc(struct host *h, size_t len)
{
	size_t n = (len + PAGE - 1) / PAGE * PAGE;
	void *p = aligned_alloc(PAGE, n ? n : PAGE);

	if (!p)
		abort();
	memset(p, 0, n ? n : PAGE);
	if (h->nallocs == h->cap_allocs) {
		h->cap_allocs = h->cap_allocs ? 2 * h->cap_allocs : 64;
		h->allocs = realloc(h->allocs, h->cap_allocs * sizeof(*h->allocs));
		if (!h->allocs)
			abort();
	}
	h->allocs[h->nallocs++] = p;
	return p;
}

const struct ucmd_dma *host_next_dma;

int host_create(struct host *h, const struct ucmd_ctrl_params *p)
{
	int ret;

	memset(h, 0, sizeof(*h));
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	h->params = *p;
	ret = ctrl_create_dma(&h->params, host_next_dma, &h->ctrl);
	host_next_dma = NULL;
	if (ret)
		return ret;
	/* the host is the interrupt target, as a driver sets it after creation */
	return ctrl_set_irq(h->ctrl, on_irq, h);
}

int host_enable(struct host *h, uint32_t qd)
{
	struct host_q *q = &h->q[0];

	memset(q, 0, sizeof(*q));
	q->live = true;
	q->size = qd;
	q->phase = 1;
	q->auto_ack = true;
	q->sq = host_alloc(h, qd * sizeof(*q->sq));
	q->cq = host_alloc(h, qd * sizeof(*q->cq));
	ctrl_write32(h->ctrl, UCMD_NVME_REG_AQA, (qd - 1) << 16 | (qd - 1));
	ctrl_write64(h->ctrl, UCMD_NVME_REG_ASQ, (uintptr_t)q->sq);
	ctrl_write64(h->ctrl, UCMD_NVME_REG_ACQ, (uintptr_t)q->cq);
	/* IOCQES=4, IOSQES=6, CSS=110b (all I/O command sets), EN */
	ctrl_write32(h->ctrl, UCMD_NVME_REG_CC, 4u << 20 | 6u << 16 | 6u << 4 | 1);
	return (ctrl_read32(h->ctrl, UCMD_NVME_REG_CSTS) & UCMD_NVME_CSTS_RDY) ? 0 : -1;
}

void host_disable(struct host *h)
{
	ctrl_write32(h->ctrl, UCMD_NVME_REG_CC, 0);
	memset(h->q, 0, sizeof(h->q));
}

int host_open(struct host *h, const struct ucmd_ctrl_params *p)
{
	int ret = host_create(h, p);

	if (ret)
		return ret;
	return host_enable(h, HOST_ADMIN_QD);
}

void host_close(struct host *h)
{
	ucmd_ctrl_destroy(h->ctrl);
	for (unsigned i = 0; i < h->nallocs; i++)
		free(h->allocs[i]);
	free(h->allocs);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->cond);
	memset(h, 0, sizeof(*h));
}

void host_set_prp(struct host *h, struct ucmd_nvme_sqe *sqe, void *buf, size_t len)
{
	uintptr_t a = (uintptr_t)buf;
	size_t first = PAGE - (a & (PAGE - 1));

	sqe->dptr.prp1 = a;
	sqe->dptr.prp2 = 0;
	if (len <= first)
		return;
	if (len - first <= PAGE) {
		sqe->dptr.prp2 = (a + first);
		return;
	}
	/* PRP list, chained every 511 entries */
	size_t npages = (len - first + PAGE - 1) / PAGE;
	uint64_t *list = host_alloc(h, PAGE);
	unsigned idx = 0;

	sqe->dptr.prp2 = (uintptr_t)list;
	for (size_t i = 0; i < npages; i++) {
		if (idx == PAGE / 8 - 1 && i != npages - 1) {
			uint64_t *next = host_alloc(h, PAGE);

			list[idx] = (uintptr_t)next;
			list = next;
			idx = 0;
		}
		list[idx++] = a + first + i * PAGE;
	}
}

uint16_t host_push(struct host *h, uint16_t qid, struct ucmd_nvme_sqe *sqe)
{
	struct host_q *q = &h->q[qid];

	sqe->cid = q->next_cid++;
	q->sq[q->sq_tail] = *sqe;
	q->sq_tail = (q->sq_tail + 1) % q->size;
	return sqe->cid;
}

void host_ring(struct host *h, uint16_t qid)
{
	ctrl_write32(h->ctrl, ucmd_nvme_db_offset(qid, 0, 0), h->q[qid].sq_tail);
}

void host_ack(struct host *h, uint16_t qid)
{
	ctrl_write32(h->ctrl, ucmd_nvme_db_offset(qid, 1, 0), h->q[qid].cq_head);
}

static bool cq_pop(struct host *h, uint16_t qid, struct ucmd_nvme_cqe *cqe)
{
	struct host_q *q = &h->q[qid];
	struct ucmd_nvme_cqe *e = &q->cq[q->cq_head];
	uint64_t hi = __atomic_load_n((uint64_t *)(void *)&e->sq_head, __ATOMIC_ACQUIRE);

	if (((hi >> 48) & 1) != q->phase)
		return false;
	cqe->dw0 = e->dw0;
	cqe->dw1 = e->dw1;
	cqe->sq_head = (uint16_t)hi;
	cqe->sq_id = (uint16_t)(hi >> 16);
	cqe->cid = (uint16_t)(hi >> 32);
	cqe->status = (uint16_t)(hi >> 48);
	if (++q->cq_head == q->size) {
		q->cq_head = 0;
		q->phase ^= 1;
	}
	if (q->auto_ack)
		host_ack(h, qid);
	return true;
}

bool host_pop(struct host *h, uint16_t qid, struct ucmd_nvme_cqe *cqe)
{
	struct host_q *q = &h->q[qid];

	if (q->nstash) {
		*cqe = q->stash[0];
		memmove(&q->stash[0], &q->stash[1], --q->nstash * sizeof(*cqe));
		return true;
	}
	return cq_pop(h, qid, cqe);
}

/*
 * Wait until pop() yields a CQE, sleeping on the interrupt's condition
 * variable in 1 ms steps. Bounded so a broken controller fails the test
 * instead of hanging it.
 */
static bool wait_for(struct host *h, uint16_t qid, struct ucmd_nvme_cqe *cqe,
		     bool (*pop)(struct host *, uint16_t, struct ucmd_nvme_cqe *))
{
	for (int i = 0; i < 20000; i++) {
		struct timespec ts;

		if (pop(h, qid, cqe))
			return true;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_mutex_lock(&h->lock);
		pthread_cond_timedwait(&h->cond, &h->lock, &ts);
		pthread_mutex_unlock(&h->lock);
	}
	return false;
}

static bool cq_wait(struct host *h, uint16_t qid, struct ucmd_nvme_cqe *cqe)
{
	return wait_for(h, qid, cqe, cq_pop);
}

bool host_wait(struct host *h, uint16_t qid, struct ucmd_nvme_cqe *cqe)
{
	return wait_for(h, qid, cqe, host_pop);
}

uint16_t host_cmd(struct host *h, uint16_t qid, struct ucmd_nvme_sqe *sqe, struct ucmd_nvme_cqe *out)
{
	struct ucmd_nvme_cqe cqe;
	uint16_t cid = host_push(h, qid, sqe);

	host_ring(h, qid);
	for (;;) {
		struct host_q *q = &h->q[qid];

		if (!cq_wait(h, qid, &cqe))
			return 0xffff;
		if (cqe.cid == cid)
			break;
		if (q->nstash < 64)
			q->stash[q->nstash++] = cqe;
	}
	if (out)
		*out = cqe;
	return ucmd_nvme_cqe_status(&cqe);
}

uint16_t host_create_io_queue(struct host *h, uint16_t qid, uint32_t size, bool ien, uint16_t vector)
{
	struct host_q *q = &h->q[qid];
	struct ucmd_nvme_sqe sqe;
	uint16_t st;

	memset(q, 0, sizeof(*q));
	q->qid = qid;
	q->size = size;
	q->phase = 1;
	q->auto_ack = true;
	q->sq = host_alloc(h, size * sizeof(*q->sq));
	q->cq = host_alloc(h, size * sizeof(*q->cq));
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = 0x05;
	sqe.dptr.prp1 = (uintptr_t)q->cq;
	sqe.cdw10 = (size - 1) << 16 | qid;
	sqe.cdw11 = (uint32_t)vector << 16 | (ien ? 2u : 0u) | 1u;
	st = host_cmd(h, 0, &sqe, NULL);
	if (st)
		return st;
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = 0x01;
	sqe.dptr.prp1 = (uintptr_t)q->sq;
	sqe.cdw10 = (size - 1) << 16 | qid;
	sqe.cdw11 = (uint32_t)qid << 16 | 1u;
	st = host_cmd(h, 0, &sqe, NULL);
	if (!st)
		q->live = true;
	return st;
}

uint16_t host_identify(struct host *h, uint8_t cns, uint32_t nsid, uint8_t csi, void *buf4k)
{
	struct ucmd_nvme_sqe sqe = { .opcode = 0x06, .nsid = nsid };

	sqe.cdw10 = cns;
	sqe.cdw11 = (uint32_t)csi << 24;
	host_set_prp(h, &sqe, buf4k, 4096);
	return host_cmd(h, 0, &sqe, NULL);
}

uint16_t host_get_log(struct host *h, uint8_t lid, uint32_t nsid, void *buf, uint32_t len)
{
	struct ucmd_nvme_sqe sqe = { .opcode = 0x02, .nsid = nsid };
	uint32_t numd = len / 4 - 1;

	sqe.cdw10 = lid | (numd & 0xffff) << 16;
	sqe.cdw11 = numd >> 16;
	host_set_prp(h, &sqe, buf, len);
	return host_cmd(h, 0, &sqe, NULL);
}

uint16_t host_set_feature(struct host *h, uint8_t fid, uint32_t cdw11, bool save, uint32_t *dw0)
{
	struct ucmd_nvme_sqe sqe = { .opcode = 0x09 };
	struct ucmd_nvme_cqe cqe;
	uint16_t st;

	sqe.cdw10 = fid | (save ? 1u << 31 : 0);
	sqe.cdw11 = cdw11;
	st = host_cmd(h, 0, &sqe, &cqe);
	if (dw0)
		*dw0 = cqe.dw0;
	return st;
}

uint16_t host_get_feature(struct host *h, uint8_t fid, uint8_t sel, uint32_t cdw11, uint32_t *dw0)
{
	struct ucmd_nvme_sqe sqe = { .opcode = 0x0a };
	struct ucmd_nvme_cqe cqe;
	uint16_t st;

	sqe.cdw10 = fid | (uint32_t)sel << 8;
	sqe.cdw11 = cdw11;
	st = host_cmd(h, 0, &sqe, &cqe);
	if (dw0)
		*dw0 = cqe.dw0;
	return st;
}

uint16_t host_io(struct host *h, uint8_t opcode, uint32_t nsid, uint64_t slba, uint32_t nlb,
		 void *buf, size_t len, void *meta, uint32_t cdw12_flags)
{
	struct ucmd_nvme_sqe sqe = { .opcode = opcode, .nsid = nsid };

	sqe.cdw10 = (uint32_t)slba;
	sqe.cdw11 = (uint32_t)(slba >> 32);
	sqe.cdw12 = (nlb - 1) | cdw12_flags;
	sqe.mptr = (uintptr_t)meta;
	if (buf)
		host_set_prp(h, &sqe, buf, len);
	return host_cmd(h, 1, &sqe, NULL);
}

uint32_t host_open_ns(struct host *h, const struct ucmd_ctrl_params *p,
		      const struct ucmd_ns_params *nsp)
{
	int nsid;

	if (host_open(h, p))
		return 0;
	nsid = ucmd_ctrl_ns_create(h->ctrl, nsp);
	if (nsid <= 0)
		return 0;
	if (host_create_io_queue(h, 1, 64, true, 1))
		return 0;
	return (uint32_t)nsid;
}

void fill_pattern(void *buf, size_t len, unsigned seed)
{
	uint8_t *b = buf;

	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
}

char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
	buf[n] = 0;
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int host_rmdir(const char *dir)
{
	/* depth first, links not followed: only what is inside dir goes */
	return nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}
