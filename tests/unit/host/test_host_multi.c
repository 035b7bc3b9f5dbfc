/* SPDX-License-Identifier: MIT */
/*
 * Several controllers, several namespaces each, on one engine: the devices
 * Linux would create (nvmeX, ngXnY, nvmeXnY) all exist, each namespace
 * keeps its own format and data, and one ring drives them all.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "host_fixture.h"

#define NCTRL 2

struct multi {
	struct ucmd_engine *e;
	struct ucmd_ctrl *ctrl[NCTRL];
	struct ucmd_nvme_host *host[NCTRL];
	struct ucmd_ring ring;
};

static int io(struct ucmd_ring *ring, int fd, uint8_t opcode, uint32_t nsid, void *buf,
	      uint32_t len, uint64_t slba, uint32_t nlb)
{
	struct nvme_uring_cmd c = { .opcode = opcode, .nsid = nsid, .data_len = len,
				    .addr = (uint64_t)(uintptr_t)buf, .cdw10 = (uint32_t)slba,
				    .cdw12 = nlb - 1 };
	struct io_uring_cqe *cqe;

	ucmd_prep_nvme_cmd(ucmd_get_sqe(ring), fd, NVME_URING_CMD_IO, &c);
	assert_int_equal(ucmd_submit_and_wait(ring, 1), 1);
	assert_int_equal(ucmd_wait_cqe(ring, &cqe), 0);
	int res = cqe->res;
	ucmd_cqe_seen(ring, cqe);
	return res;
}

static void test_two_controllers_two_namespaces(void **state)
{
	struct multi m = { 0 };
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	/* ns 1: 512-byte blocks; ns 2: 4096 + 8 bytes of extended metadata */
	const struct ucmd_ns_params ns[2] = {
		{ .nsze = 4096, .lbaf = 0, .store = UCMD_NS_STORE_RAM, .attach = true },
		{ .nsze = 512, .lbaf = 5, .extended = true, .store = UCMD_NS_STORE_RAM,
		  .attach = true },
	};
	const unsigned lbs[2] = { 512, 4096 + 8 };

	(void)state;
	m.e = ucmd_engine_new();
	assert_non_null(m.e);
	for (unsigned x = 0; x < NCTRL; x++) {
		struct ucmd_ctrl_params cp = { .cntlid = (uint16_t)(x + 1) };
		struct ucmd_nvme_host_opts ho = { .instance = x };
		assert_int_equal(ucmd_ctrl_create(&cp, &m.ctrl[x]), 0);
		for (unsigned y = 0; y < 2; y++)
			assert_int_equal(ucmd_ctrl_ns_create(m.ctrl[x], &ns[y]), (int)y + 1);
		assert_int_equal(ucmd_nvme_attach(m.e, m.ctrl[x], &ho, &m.host[x]), 0);
	}
	assert_int_equal(ucmd_queue_init_engine(m.e, 16, &m.ring, &p), 0);

	const char *names[] = { "nvme0", "nvme1", "ng0n1", "ng0n2", "ng1n1", "ng1n2",
				"nvme0n1", "nvme0n2", "nvme1n1", "nvme1n2" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int fd = ucmd_open(m.e, names[i], O_RDWR);
		assert_true(fd >= 0);
		ucmd_close(m.e, fd);
	}
	assert_int_equal(ucmd_open(m.e, "ng2n1", O_RDWR), -ENOENT);
	assert_int_equal(ucmd_open(m.e, "ng0n3", O_RDWR), -ENOENT);

	/* a different pattern into LBA 3 of each of the four namespaces */
	int fds[NCTRL][2];
	uint8_t *buf = aligned_alloc(4096, 8192), *rd = aligned_alloc(4096, 8192);
	for (unsigned x = 0; x < NCTRL; x++) {
		for (unsigned y = 0; y < 2; y++) {
			char name[16];
			snprintf(name, sizeof(name), "ng%un%u", x, y + 1);
			fds[x][y] = ucmd_open(m.e, name, O_RDWR);
			memset(buf, (int)(0x10 * (x + 1) + y), lbs[y]);
			assert_int_equal(io(&m.ring, fds[x][y], nvme_cmd_write, y + 1, buf, lbs[y], 3, 1),
					 0);
			/* the namespace of one device is not another's nsid */
			assert_int_equal(io(&m.ring, fds[x][y], nvme_cmd_read, 2 - y, rd, lbs[y], 3, 1),
					 -EINVAL);
		}
	}
	for (unsigned x = 0; x < NCTRL; x++) {
		for (unsigned y = 0; y < 2; y++) {
			memset(buf, (int)(0x10 * (x + 1) + y), lbs[y]);
			memset(rd, 0, lbs[y]);
			assert_int_equal(io(&m.ring, fds[x][y], nvme_cmd_read, y + 1, rd, lbs[y], 3, 1),
					 0);
			assert_memory_equal(rd, buf, lbs[y]);
			ucmd_close(m.e, fds[x][y]);
		}
	}
	free(buf);
	free(rd);
	ucmd_queue_exit(&m.ring);
	for (unsigned x = 0; x < NCTRL; x++) {
		ucmd_nvme_detach(m.host[x]);
		ucmd_ctrl_destroy(m.ctrl[x]);
	}
	ucmd_engine_free(m.e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_controllers_two_namespaces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
