/* SPDX-License-Identifier: MIT */
/*
 * timeout_ms: a command the controller holds past its timeout is aborted
 * and completes with -EINTR, well before the controller would have run it;
 * the queue keeps working afterwards.
 */
#include "host_fixture.h"

#include <nvme/types.h>
#include <stdlib.h>
#include <time.h>

#include "lib/clock.h"

static uint64_t now_ms(void)
{
	return ktime_get_ns() / NSEC_PER_MSEC;
}

static void test_timeout(void **state)
{
	struct fx f;
	struct fx_opts o = { .mode = UCMD_CTRL_THREAD };
	uint8_t *buf = fx_alloc(4096), *r = fx_alloc(4096);
	struct nvme_uring_cmd c;
	uint64_t t0;

	(void)state;
	assert_int_equal(fx_setup(&f, &o), 0);
	fx_fill(buf, 4096, 4);
	fx_rw_cmd(&c, nvme_cmd_write, f.nsid, 0, 4096 / f.lbs, buf, 4096);
	assert_int_equal(fx_nvme(&f, f.ng, NVME_URING_CMD_IO, &c, NULL), 0);

	ctrl_inject_delay(f.ctrl, false, nvme_cmd_read, 5000);
	fx_rw_cmd(&c, nvme_cmd_read, f.nsid, 0, 4096 / f.lbs, r, 4096);
	c.timeout_ms = 50;
	t0 = now_ms();
	assert_int_equal(fx_nvme(&f, f.ng, NVME_URING_CMD_IO, &c, NULL), -EINTR);
	assert_true(now_ms() - t0 < 3000);

	/* several at once */
	for (int i = 0; i < 4; i++) {
		struct io_uring_sqe *sqe = ucmd_get_sqe(&f.ring);
		ucmd_prep_nvme_cmd(sqe, f.ng, NVME_URING_CMD_IO, &c);
	}
	assert_int_equal(ucmd_submit_and_wait(&f.ring, 4), 4);
	for (int i = 0; i < 4; i++) {
		struct io_uring_cqe *cqe;
		assert_int_equal(ucmd_wait_cqe(&f.ring, &cqe), 0);
		assert_int_equal(cqe->res, -EINTR);
		ucmd_cqe_seen(&f.ring, cqe);
	}

	/* the ring and the queue still work */
	ctrl_inject_delay(f.ctrl, false, nvme_cmd_read, 0);
	c.timeout_ms = 1000;
	assert_int_equal(fx_nvme(&f, f.ng, NVME_URING_CMD_IO, &c, NULL), 0);
	assert_memory_equal(r, buf, 4096);

	/* admin timeouts too (the sync ioctl path) */
	ctrl_inject_delay(f.ctrl, true, nvme_admin_get_features, 5000);
	struct nvme_passthru_cmd64 p = { .opcode = nvme_admin_get_features, .cdw10 = 7,
					 .timeout_ms = 50 };
	struct ucmd_file *file = fget(f.e, f.dev);
	assert_int_equal(vfs_ioctl(file, NVME_IOCTL_ADMIN64_CMD, &p), -EINTR);
	ctrl_inject_delay(f.ctrl, true, nvme_admin_get_features, 0);
	assert_int_equal(vfs_ioctl(file, NVME_IOCTL_ADMIN64_CMD, &p), 0);
	fput(file);
	fx_teardown(&f);
	free(buf);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
