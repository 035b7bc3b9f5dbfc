/* SPDX-License-Identifier: MIT */
/* Queues: creation/deletion errors, phase wrap, CQ-full backpressure,
 * interrupts per batch, invalid doorbells. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "host_sim.h"

#define SC(sct, sc) ((sct) << 8 | (sc))
#define DNR 0x4000

static struct ucmd_nvme_sqe flush_cmd(uint32_t nsid)
{
	struct ucmd_nvme_sqe s = { .opcode = 0x00, .nsid = nsid };
	return s;
}

static uint16_t admin_raw(struct host *h, uint8_t opc, uint32_t cdw10, uint32_t cdw11, void *mem)
{
	struct ucmd_nvme_sqe s = { .opcode = opc, .cdw10 = cdw10, .cdw11 = cdw11 };

	s.dptr.prp1 = (uintptr_t)mem;
	return host_cmd(h, 0, &s, NULL);
}

static void test_create_delete_errors(void **state)
{
	struct ucmd_ctrl_params p;
	struct host h;
	void *mem;

	(void)state;
	host_default_params(&p);
	assert_int_equal(host_open(&h, &p), 0);
	mem = host_alloc(&h, 64 * 64);
	/* CQ: qid 0, qid beyond max, size 0-based 0, size > MQES, not contiguous */
	assert_int_equal(admin_raw(&h, 0x05, 15 << 16 | 0, 1, mem), SC(1, 0x01) | DNR);
	assert_int_equal(admin_raw(&h, 0x05, 15 << 16 | 5, 1, mem), SC(1, 0x01) | DNR);
	assert_int_equal(admin_raw(&h, 0x05, 0 << 16 | 1, 1, mem), SC(1, 0x02) | DNR);
	assert_int_equal(admin_raw(&h, 0x05, 256u << 16 | 1, 1, mem), SC(1, 0x02) | DNR);
	assert_int_equal(admin_raw(&h, 0x05, 15 << 16 | 1, 0, mem), SC(0, 0x02) | DNR);
	assert_int_equal(admin_raw(&h, 0x05, 15 << 16 | 1, 1, (char *)mem + 8), SC(0, 0x13) | DNR);
	assert_int_equal(admin_raw(&h, 0x05, 15 << 16 | 1, 100u << 16 | 3, mem), SC(1, 0x08) | DNR);
	/* SQ bound to a CQ that does not exist */
	assert_int_equal(admin_raw(&h, 0x01, 15 << 16 | 1, 1u << 16 | 1, mem), SC(1, 0x00) | DNR);
	assert_int_equal(admin_raw(&h, 0x05, 15 << 16 | 1, 1, mem), 0);
	/* duplicate CQ */
	assert_int_equal(admin_raw(&h, 0x05, 15 << 16 | 1, 1, mem), SC(1, 0x01) | DNR);
	void *sqmem = host_alloc(&h, 16 * 64);
	assert_int_equal(admin_raw(&h, 0x01, 15 << 16 | 1, 1u << 16 | 1, sqmem), 0);
	/* CQ with an SQ still bound cannot go */
	assert_int_equal(admin_raw(&h, 0x04, 1, 0, NULL), SC(1, 0x0c) | DNR);
	assert_int_equal(admin_raw(&h, 0x00, 2, 0, NULL), SC(1, 0x01) | DNR);
	assert_int_equal(admin_raw(&h, 0x00, 0, 0, NULL), SC(1, 0x01) | DNR);
	assert_int_equal(admin_raw(&h, 0x00, 1, 0, NULL), 0);
	assert_int_equal(admin_raw(&h, 0x04, 1, 0, NULL), 0);
	assert_int_equal(admin_raw(&h, 0x04, 1, 0, NULL), SC(1, 0x01) | DNR);
	/* unknown admin opcode */
	assert_int_equal(admin_raw(&h, 0x7e, 0, 0, NULL), SC(0, 0x01) | DNR);
	host_close(&h);
}

static void test_phase_wrap(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct host h;
	struct ucmd_nvme_cqe cqe;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	assert_int_not_equal(nsid, 0);
	/* 64-entry queue: 200 commands wrap the phase three times. */
	for (int i = 0; i < 200; i++) {
		struct ucmd_nvme_sqe s = flush_cmd(nsid);

		assert_int_equal(host_cmd(&h, 1, &s, &cqe), 0);
		assert_int_equal(cqe.sq_id, 1);
		assert_int_equal(cqe.sq_head, (i + 1) % 64);
	}
	host_close(&h);
}

static void test_cq_backpressure(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct host h;
	struct ucmd_nvme_cqe cqe;
	uint32_t nsid;
	int got = 0;
	uint64_t irqs;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	/* Small CQ (8) behind a bigger SQ (32) sharing it: queue 2 */
	struct host_q *q = &h.q[2];
	struct ucmd_nvme_sqe s = { .opcode = 0x05 };
	q->qid = 2; q->size = 8; q->phase = 1;
	q->cq = host_alloc(&h, 8 * 16);
	s.dptr.prp1 = (uintptr_t)q->cq;
	s.cdw10 = 7u << 16 | 2;
	s.cdw11 = 2u << 16 | 3;
	assert_int_equal(host_cmd(&h, 0, &s, NULL), 0);
	q->size = 32;
	q->sq = host_alloc(&h, 32 * 64);
	memset(&s, 0, sizeof(s));
	s.opcode = 0x01;
	s.dptr.prp1 = (uintptr_t)q->sq;
	s.cdw10 = 31u << 16 | 2;
	s.cdw11 = 2u << 16 | 1;
	assert_int_equal(host_cmd(&h, 0, &s, NULL), 0);
	q->auto_ack = false;

	irqs = h.irqs;
	for (int i = 0; i < 20; i++) {
		s = flush_cmd(nsid);
		host_push(&h, 2, &s);
	}
	/* The SQ ring index wraps against the CQ size: pop with CQ size 8. */
	host_ring(&h, 2);
	assert_int_equal(h.irqs, irqs + 1);	/* one interrupt for the batch */
	q->size = 8;
	/* At most size-1 = 7 entries before the host frees slots */
	while (host_pop(&h, 2, &cqe))
		got++;
	assert_int_equal(got, 7);
	host_ack(&h, 2);
	while (got < 20) {
		int before = got;

		while (host_pop(&h, 2, &cqe))
			got++;
		host_ack(&h, 2);
		assert_true(got > before);
	}
	assert_int_equal(got, 20);
	assert_false(host_pop(&h, 2, &cqe));
	host_close(&h);
}

static void test_irq_per_batch(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct host h;
	struct ucmd_nvme_cqe cqe;
	struct ucmd_ctrl_stats st0, st1;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	h.q[1].auto_ack = false;
	ucmd_ctrl_get_stats(h.ctrl, &st0);
	uint64_t irqs = h.irqs;
	for (int i = 0; i < 10; i++) {
		struct ucmd_nvme_sqe s = flush_cmd(nsid);
		host_push(&h, 1, &s);
	}
	host_ring(&h, 1);
	ucmd_ctrl_get_stats(h.ctrl, &st1);
	assert_int_equal(h.irqs - irqs, 1);
	assert_true(h.irq_vectors & (1u << 1));
	assert_int_equal(st1.commands - st0.commands, 10);
	for (int i = 0; i < 10; i++)
		assert_true(host_pop(&h, 1, &cqe));
	host_ack(&h, 1);
	host_close(&h);
}

static void test_no_irq_without_ien(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct host h;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	assert_int_equal(host_open(&h, &p), 0);
	nsid = (uint32_t)ucmd_ctrl_ns_create(h.ctrl, &nsp);
	assert_int_equal(host_create_io_queue(&h, 1, 16, false, 0), 0);
	uint64_t irqs = h.irqs;
	struct ucmd_nvme_sqe s = flush_cmd(nsid);
	assert_int_equal(host_cmd(&h, 1, &s, NULL), 0);
	assert_int_equal(h.irqs, irqs);
	host_close(&h);
}

static void test_invalid_doorbells(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct host h;
	struct ucmd_nvme_cqe cqe;
	uint32_t nsid;
	uint8_t log[64 * 64];

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	/* Outstanding AER to receive the error event */
	struct ucmd_nvme_sqe aer = { .opcode = 0x0c };
	uint16_t aer_cid = host_push(&h, 0, &aer);
	host_ring(&h, 0);
	assert_false(host_pop(&h, 0, &cqe));
	/* SQ tail beyond the queue size: ignored, error event */
	ctrl_write32(h.ctrl, ucmd_nvme_db_offset(1, 0, 0), 64);
	assert_true(host_pop(&h, 0, &cqe));
	assert_int_equal(cqe.cid, aer_cid);
	assert_int_equal(ucmd_nvme_cqe_status(&cqe), 0);
	assert_int_equal(cqe.dw0 & 7, 0);			/* error event */
	assert_int_equal((cqe.dw0 >> 8) & 0xff, 1);		/* invalid doorbell value */
	assert_int_equal((cqe.dw0 >> 16) & 0xff, 1);		/* error log */
	/* Doorbell of a queue that does not exist, and CQ head past the tail */
	ctrl_write32(h.ctrl, ucmd_nvme_db_offset(3, 0, 0), 1);
	ctrl_write32(h.ctrl, ucmd_nvme_db_offset(1, 1, 0), 5);
	assert_int_equal(host_get_log(&h, 1, 0, log, sizeof(log)), 0);
	/* The queue still works */
	struct ucmd_nvme_sqe s = flush_cmd(nsid);
	assert_int_equal(host_cmd(&h, 1, &s, NULL), 0);
	host_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_delete_errors),
		cmocka_unit_test(test_phase_wrap),
		cmocka_unit_test(test_cq_backpressure),
		cmocka_unit_test(test_irq_per_batch),
		cmocka_unit_test(test_no_irq_without_ien),
		cmocka_unit_test(test_invalid_doorbells),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
