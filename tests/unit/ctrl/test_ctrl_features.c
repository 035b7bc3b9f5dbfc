/* SPDX-License-Identifier: MIT */
/* Get/Set Features with SEL, saving, Number of Queues, timestamp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <nvme/types.h>

#include "host_sim.h"

#define SC(sct, sc) ((sct) << 8 | (sc))
#define DNR 0x4000

static void test_features(void **state)
{
	struct ucmd_ctrl_params p;
	struct host h;
	uint32_t v;

	(void)state;
	host_default_params(&p);
	assert_int_equal(host_open(&h, &p), 0);

	/* Volatile write cache: current, default, saved, supported */
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_VOLATILE_WC, 0, 0, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_VOLATILE_WC, 0, false, NULL), 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_VOLATILE_WC, 0, 0, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_VOLATILE_WC, 1, 0, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_VOLATILE_WC, 2, 0, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_VOLATILE_WC, 3, 0, &v), 0);
	assert_int_equal(v, 5);		/* saveable, changeable */
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_VOLATILE_WC, 0, true, NULL), 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_VOLATILE_WC, 2, 0, &v), 0);
	assert_int_equal(v, 0);

	/* Arbitration, power management, error recovery, coalescing, atomicity */
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_ARBITRATION, 0x03020103, false, NULL), 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_ARBITRATION, 0, 0, &v), 0);
	assert_int_equal(v, 0x03020103);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_POWER_MGMT, 1, false, NULL), SC(0, 2) | DNR);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_POWER_MGMT, 0, false, NULL), 0);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_ERR_RECOVERY, 30, false, NULL), 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_ERR_RECOVERY, 0, 0, &v), 0);
	assert_int_equal(v, 30);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_ERR_RECOVERY, 1u << 16, false, NULL),
			 SC(0, 2) | DNR);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_IRQ_COALESCE, 0x0a04, false, NULL), 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_IRQ_COALESCE, 0, 0, &v), 0);
	assert_int_equal(v, 0x0a04);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_WRITE_ATOMIC, 1, false, NULL), 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_WRITE_ATOMIC, 0, 0, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_ASYNC_EVENT, 0xffffffff, false, NULL), 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_ASYNC_EVENT, 0, 0, &v), 0);
	assert_int_equal(v, NVME_CTRL_OAES_NA | NVME_CTRL_OAES_ZD | 3);

	/* Temperature threshold: over and under */
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_TEMP_THRESH, 0, 0, &v), 0);
	assert_int_equal(v & 0xffff, 343);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_TEMP_THRESH, 1u << 20 | 273, false, NULL), 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_TEMP_THRESH, 0, 1u << 20, &v), 0);
	assert_int_equal(v & 0xffff, 273);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_TEMP_THRESH, 3u << 16 | 300, false, NULL),
			 SC(0, 2) | DNR);
	/* Over threshold below the temperature: SMART critical warning */
	uint8_t *buf = host_alloc(&h, 4096);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_TEMP_THRESH, 300, false, NULL), 0);
	assert_int_equal(host_get_log(&h, NVME_LOG_LID_SMART, 0, buf, 512), 0);
	assert_true(((struct nvme_smart_log *)buf)->critical_warning & NVME_SMART_CRIT_TEMPERATURE);

	/* Number of queues: not saveable, granted <= max, fixed after creation */
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_NUM_QUEUES, 0, true, NULL), SC(1, 0x0d) | DNR);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_NUM_QUEUES, 0xffff, false, NULL), SC(0, 2) | DNR);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_NUM_QUEUES, 100u << 16 | 1, false, &v), 0);
	assert_int_equal(v, 3u << 16 | 1);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_NUM_QUEUES, 0, 0, &v), 0);
	assert_int_equal(v, 3u << 16 | 1);
	/* only 2 SQs granted: qid 3 is invalid */
	assert_int_equal(host_create_io_queue(&h, 3, 16, true, 1), SC(1, 0x01) | DNR);
	assert_int_equal(host_create_io_queue(&h, 2, 16, true, 1), 0);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_NUM_QUEUES, 0, false, NULL), SC(0, 0x0c) | DNR);

	/* Timestamp: set, read back running */
	struct ucmd_nvme_sqe s = { .opcode = nvme_admin_set_features, .cdw10 = NVME_FEAT_FID_TIMESTAMP };
	uint64_t ms = 1700000000000ull;
	memcpy(buf, &ms, 6);
	host_set_prp(&h, &s, buf, 8);
	assert_int_equal(host_cmd(&h, 0, &s, NULL), 0);
	memset(buf, 0, 8);
	s.opcode = nvme_admin_get_features;
	assert_int_equal(host_cmd(&h, 0, &s, NULL), 0);
	uint64_t got = 0;
	memcpy(&got, buf, 6);
	assert_true(got >= ms);
	assert_int_equal((buf[6] >> 1) & 7, 1);
	s.opcode = nvme_admin_set_features;
	s.cdw10 |= 1u << 31;
	assert_int_equal(host_cmd(&h, 0, &s, NULL), SC(1, 0x0d) | DNR);

	/* Unsupported FID and SEL */
	assert_int_equal(host_get_feature(&h, 0x03, 0, 0, &v), SC(0, 2) | DNR);
	assert_int_equal(host_set_feature(&h, 0x7f, 0, false, NULL), SC(0, 2) | DNR);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_ARBITRATION, 4, 0, &v), SC(0, 2) | DNR);

	/* Controller reset restores saved values (VWC saved as 0) */
	host_disable(&h);
	assert_int_equal(host_enable(&h, 16), 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_VOLATILE_WC, 0, 0, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_ARBITRATION, 0, 0, &v), 0);
	assert_int_equal(v, 0);
	host_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_features),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
