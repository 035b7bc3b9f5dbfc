/* SPDX-License-Identifier: MIT */
/*
 * Device Self-test through the admin queue: start, observe, abort, the
 * 20 newest results, what ends a test (abort, reset, format, sanitize), and
 * results kept across restarts. Durations come from the test knob: a test
 * that must finish runs 0 ms (done at the next controller pass), one that
 * must be observed running runs an hour, so nothing depends on timing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <nvme/types.h>

#include "host_sim.h"

#define SC(sct, sc)	((sct) << 8 | (sc))
#define DNR		0x4000
#define HOUR_MS		3600000u
#define ALL		0xffffffffu

static uint16_t dst(struct host *h, uint32_t nsid, uint32_t stc)
{
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_admin_dev_self_test, .nsid = nsid,
				     .cdw10 = stc };

	return host_cmd(h, 0, &sqe, NULL);
}

static struct nvme_self_test_log *dst_log(struct host *h)
{
	struct nvme_self_test_log *l = host_alloc(h, sizeof(*l));

	assert_int_equal(host_get_log(h, NVME_LOG_LID_DEVICE_SELF_TEST, 0, l, sizeof(*l)), 0);
	return l;
}

static bool fresh_dir = true;	/* the next open_ram of a directory creates it */

static void open_ram(struct host *h, const char *dir, bool power_on)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 2048, .lbaf = 0, .store = UCMD_NS_STORE_RAM,
				      .attach = true };

	host_default_params(&p);
	p.dir = dir;
	p.power_on = power_on;
	if (dir && access(dir, F_OK) == 0 && !power_on && fresh_dir) {
		fresh_dir = false;
		assert_int_equal(host_open_ns(h, &p, &nsp), 1);
	} else if (dir) {
		assert_int_equal(host_open(h, &p), 0);
		assert_int_equal(host_create_io_queue(h, 1, 64, true, 1), 0);
	} else {
		assert_int_equal(host_open_ns(h, &p, &nsp), 1);
	}
}

static void test_identify(void **state)
{
	struct host h;
	struct nvme_id_ctrl *id;

	(void)state;
	open_ram(&h, NULL, false);
	id = host_alloc(&h, 4096);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CTRL, 0, 0, id), 0);
	assert_true(id->oacs & NVME_CTRL_OACS_SELF_TEST);
	assert_int_equal(id->edstt, 1);		/* 60 s: one minute */
	assert_int_equal(id->dsto & 1, 1);
	host_close(&h);
}

static void test_run_and_abort(void **state)
{
	struct host h;
	struct nvme_self_test_log *l;

	(void)state;
	open_ram(&h, NULL, false);
	/* nothing run yet: every result slot unused */
	l = dst_log(&h);
	assert_int_equal(l->current_operation, 0);
	for (unsigned i = 0; i < NVME_LOG_ST_MAX_RESULTS; i++)
		assert_int_equal(l->result[i].dsts, NVME_ST_RESULT_NOT_USED);
	/* a short test on namespace 1 that completes */
	ctrl_test_knobs(h.ctrl, 0, HOUR_MS, false);
	assert_int_equal(dst(&h, 1, NVME_DST_STC_SHORT), 0);
	l = dst_log(&h);
	assert_int_equal(l->current_operation, 0);
	assert_int_equal(l->result[0].dsts, NVME_ST_CODE_SHORT << 4 | NVME_ST_RESULT_NO_ERR);
	assert_int_equal(l->result[0].nsid, 1);
	assert_int_equal(l->result[0].vdi & 1, 1);
	assert_int_equal(l->result[1].dsts, NVME_ST_RESULT_NOT_USED);
	/* an extended one, observed running, a second refused, then aborted */
	assert_int_equal(dst(&h, ALL, NVME_DST_STC_LONG), 0);
	l = dst_log(&h);
	assert_int_equal(l->current_operation, NVME_ST_CURR_OP_EXTENDED);
	assert_true(l->completion < 100);
	assert_int_equal(dst(&h, 0, NVME_DST_STC_SHORT), SC(1, NVME_SC_SELF_TEST_IN_PROGRESS));
	assert_int_equal(dst(&h, 0, NVME_DST_STC_ABORT), 0);
	l = dst_log(&h);
	assert_int_equal(l->current_operation, 0);
	assert_int_equal(l->result[0].dsts, NVME_ST_CODE_EXTENDED << 4 | NVME_ST_RESULT_ABORTED);
	assert_int_equal(l->result[0].nsid, ALL);
	assert_int_equal(l->result[1].dsts, NVME_ST_CODE_SHORT << 4 | NVME_ST_RESULT_NO_ERR);
	/* abort with nothing running: nothing recorded */
	assert_int_equal(dst(&h, 0, NVME_DST_STC_ABORT), 0);
	assert_int_equal(dst_log(&h)->result[2].dsts, NVME_ST_RESULT_NOT_USED);
	host_close(&h);
}

static void test_invalid(void **state)
{
	struct host h;

	(void)state;
	open_ram(&h, NULL, false);
	assert_int_equal(dst(&h, 0, 0), SC(0, NVME_SC_INVALID_FIELD) | DNR);
	assert_int_equal(dst(&h, 0, 3), SC(0, NVME_SC_INVALID_FIELD) | DNR);
	assert_int_equal(dst(&h, 0, NVME_DST_STC_SHORT | 0x10), SC(0, NVME_SC_INVALID_FIELD) | DNR);
	assert_int_equal(dst(&h, 7, NVME_DST_STC_SHORT), SC(0, NVME_SC_INVALID_NS) | DNR);
	assert_int_equal(dst_log(&h)->result[0].dsts, NVME_ST_RESULT_NOT_USED);
	host_close(&h);
}

/* Twenty-two tests: the log holds the twenty newest, newest first */
static void test_twenty(void **state)
{
	struct host h;
	struct nvme_self_test_log *l;

	(void)state;
	open_ram(&h, NULL, false);
	ctrl_test_knobs(h.ctrl, 0, 0, false);
	for (unsigned i = 0; i < 22; i++) {
		assert_int_equal(dst(&h, i & 1 ? 1 : 0, i & 1 ? NVME_DST_STC_LONG : NVME_DST_STC_SHORT), 0);
		assert_int_equal(dst_log(&h)->current_operation, 0);
	}
	l = dst_log(&h);
	for (unsigned i = 0; i < NVME_LOG_ST_MAX_RESULTS; i++) {
		/* result i is test 21 - i: odd ones extended on nsid 1 */
		bool odd = (21 - i) & 1;

		assert_int_equal(l->result[i].dsts >> 4, odd ? NVME_ST_CODE_EXTENDED : NVME_ST_CODE_SHORT);
		assert_int_equal(l->result[i].nsid, odd ? 1 : 0);
	}
	host_close(&h);
}

/* What else ends a running test, with the result the spec gives it */
static void test_ended_by(void **state)
{
	struct host h;
	struct ucmd_nvme_sqe fmt = { .opcode = nvme_admin_format_nvm, .nsid = 1 };
	struct ucmd_nvme_sqe san = { .opcode = nvme_admin_sanitize_nvm,
				     .cdw10 = NVME_SANITIZE_SANACT_START_BLOCK_ERASE };

	(void)state;
	open_ram(&h, NULL, false);
	ctrl_test_knobs(h.ctrl, HOUR_MS, HOUR_MS, false);
	/* a Controller Level Reset ends a short test, not an extended one */
	assert_int_equal(dst(&h, 0, NVME_DST_STC_SHORT), 0);
	host_disable(&h);
	assert_int_equal(host_enable(&h, HOST_ADMIN_QD), 0);
	assert_int_equal(dst_log(&h)->result[0].dsts, NVME_ST_CODE_SHORT << 4 | NVME_ST_RESULT_CLR);
	assert_int_equal(dst(&h, 1, NVME_DST_STC_LONG), 0);
	host_disable(&h);
	assert_int_equal(host_enable(&h, HOST_ADMIN_QD), 0);
	assert_int_equal(dst_log(&h)->current_operation, NVME_ST_CURR_OP_EXTENDED);
	/* a format of the namespace under test */
	assert_int_equal(host_cmd(&h, 0, &fmt, NULL), 0);
	assert_int_equal(dst_log(&h)->result[0].dsts,
			 NVME_ST_CODE_EXTENDED << 4 | NVME_ST_RESULT_ABORTED_FORMAT);
	/* a sanitize */
	assert_int_equal(dst(&h, ALL, NVME_DST_STC_LONG), 0);
	assert_int_equal(host_cmd(&h, 0, &san, NULL), 0);
	assert_int_equal(dst_log(&h)->result[0].dsts,
			 NVME_ST_CODE_EXTENDED << 4 | NVME_ST_RESULT_ABORTED_SANITIZE);
	host_close(&h);
}

static void test_persist(void **state)
{
	char dir[] = "/tmp/ucmd-ctrl-dst-XXXXXX";
	struct host h;
	struct nvme_self_test_log *l;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fresh_dir = true;
	open_ram(&h, dir, false);
	ctrl_test_knobs(h.ctrl, 0, HOUR_MS, false);
	assert_int_equal(dst(&h, 1, NVME_DST_STC_SHORT), 0);
	assert_int_equal(dst_log(&h)->current_operation, 0);
	/* running when this user lets go: the device stays powered, it runs on */
	assert_int_equal(dst(&h, 0, NVME_DST_STC_LONG), 0);
	host_close(&h);
	open_ram(&h, dir, false);
	l = dst_log(&h);
	assert_int_equal(l->current_operation, NVME_ST_CURR_OP_EXTENDED);
	assert_int_equal(dst(&h, 0, NVME_DST_STC_SHORT), SC(1, NVME_SC_SELF_TEST_IN_PROGRESS));
	host_close(&h);
	/* the power goes: ended as a reset ends it */
	open_ram(&h, dir, true);
	l = dst_log(&h);
	assert_int_equal(l->current_operation, 0);
	assert_int_equal(l->result[0].dsts, NVME_ST_CODE_EXTENDED << 4 | NVME_ST_RESULT_CLR);
	assert_int_equal(l->result[1].dsts, NVME_ST_CODE_SHORT << 4 | NVME_ST_RESULT_NO_ERR);
	assert_int_equal(l->result[1].nsid, 1);
	assert_int_equal(l->result[2].dsts, NVME_ST_RESULT_NOT_USED);
	host_close(&h);
	assert_int_equal(host_rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identify),
		cmocka_unit_test(test_run_and_abort),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_twenty),
		cmocka_unit_test(test_ended_by),
		cmocka_unit_test(test_persist),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
