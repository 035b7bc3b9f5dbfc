/* SPDX-License-Identifier: MIT */
/*
 * NVME_IOCTL_RESET on the controller's device (nvme-cli's "nvme reset"):
 * the controller goes through CC.EN 0 and back, the same queues carry
 * commands again, what was in flight ends with -EINTR as in Linux, and a
 * firmware image committed for "the next reset" is then active. Also the
 * register snapshot a show-regs reads.
 */
#include "host_fixture.h"

#include <stdlib.h>
#include <string.h>
#include <nvme/types.h>

#include "ucmd/uapi/nvme_ioctl.h"

static int admin(struct fx *f, uint8_t opcode, uint32_t cdw10, void *buf, uint32_t len)
{
	struct nvme_passthru_cmd64 c = { .opcode = opcode, .cdw10 = cdw10,
					 .addr = (uint64_t)(uintptr_t)buf, .data_len = len };

	return ucmd_ioctl(f->e, f->dev, NVME_IOCTL_ADMIN64_CMD, &c);
}

static void test_reset_io(void **state)
{
	struct fx f;
	uint8_t *w = fx_alloc(4096), *r = fx_alloc(4096);
	struct io_uring_cqe *cqe;
	struct nvme_uring_cmd c;

	(void)state;
	assert_int_equal(fx_setup(&f, NULL), 0);
	fx_fill(w, 4096, 9);
	fx_rw_cmd(&c, nvme_cmd_write, f.nsid, 8, 4096 / f.lbs, w, 4096);
	assert_int_equal(fx_nvme(&f, f.ng, NVME_URING_CMD_IO, &c, NULL), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(ucmd_ioctl(f.e, f.dev, NVME_IOCTL_RESET, NULL), 0);
		assert_int_equal(ctrl_read32(f.ctrl, UCMD_NVME_REG_CSTS) & UCMD_NVME_CSTS_RDY, 1);
		memset(r, 0, 4096);
		fx_rw_cmd(&c, nvme_cmd_read, f.nsid, 8, 4096 / f.lbs, r, 4096);
		assert_int_equal(fx_nvme(&f, f.ng, NVME_URING_CMD_IO, &c, NULL), 0);
		assert_memory_equal(r, w, 4096);
		assert_int_equal(admin(&f, nvme_admin_identify, NVME_IDENTIFY_CNS_CTRL, r, 4096), 0);
	}
	/* the block device's queues too */
	assert_int_equal(ucmd_ioctl(f.e, f.dev, NVME_IOCTL_RESET, NULL), 0);
	memset(r, 0, 4096);
	ucmd_prep_read(ucmd_get_sqe(&f.ring), f.bdev, r, 4096, 8 * f.lbs);
	assert_int_equal(ucmd_submit_and_wait(&f.ring, 1), 1);
	assert_int_equal(ucmd_wait_cqe(&f.ring, &cqe), 0);
	assert_int_equal(cqe->res, 4096);
	ucmd_cqe_seen(&f.ring, cqe);
	assert_memory_equal(r, w, 4096);
	/* as in Linux, only the controller's device resets */
	assert_int_equal(ucmd_ioctl(f.e, f.ng, NVME_IOCTL_RESET, NULL), -ENOTTY);
	assert_int_equal(ucmd_ioctl(f.e, f.bdev, NVME_IOCTL_RESET, NULL), -ENOTTY);
	assert_int_equal(ucmd_nvme_reset(NULL), -EINVAL);
	assert_int_equal(ucmd_nvme_reset(f.host), 0);
	fx_teardown(&f);
	free(w);
	free(r);
}

/* A command the controller holds when the reset comes ends with -EINTR */
static void test_inflight(void **state)
{
	struct fx f;
	struct fx_opts o = { .mode = UCMD_CTRL_THREAD };
	uint8_t *r = fx_alloc(4096);
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct nvme_uring_cmd c;

	(void)state;
	assert_int_equal(fx_setup(&f, &o), 0);
	ctrl_inject_delay(f.ctrl, false, nvme_cmd_read, 60000);
	fx_rw_cmd(&c, nvme_cmd_read, f.nsid, 0, 4096 / f.lbs, r, 4096);
	sqe = ucmd_get_sqe(&f.ring);
	ucmd_prep_nvme_cmd(sqe, f.ng, NVME_URING_CMD_IO, &c);
	assert_int_equal(ucmd_submit(&f.ring), 1);
	assert_int_equal(ucmd_ioctl(f.e, f.dev, NVME_IOCTL_RESET, NULL), 0);
	assert_int_equal(ucmd_wait_cqe(&f.ring, &cqe), 0);
	assert_int_equal(cqe->res, -EINTR);
	ucmd_cqe_seen(&f.ring, cqe);
	ctrl_inject_delay(f.ctrl, false, nvme_cmd_read, 0);
	assert_int_equal(fx_nvme(&f, f.ng, NVME_URING_CMD_IO, &c, NULL), 0);
	fx_teardown(&f);
	free(r);
}

/* Firmware committed with action 1 is active after the reset, FR too */
static void test_firmware(void **state)
{
	struct fx f;
	uint8_t *img = fx_alloc(4096);
	struct nvme_firmware_slot *log = fx_alloc(4096);
	struct nvme_id_ctrl *id = fx_alloc(4096);
	struct nvme_passthru_cmd64 gl = { .opcode = nvme_admin_get_log_page, .nsid = 0xffffffff,
					  .cdw10 = NVME_LOG_LID_FW_SLOT | (512 / 4 - 1) << 16,
					  .addr = (uint64_t)(uintptr_t)log, .data_len = 512 };

	(void)state;
	assert_int_equal(fx_setup(&f, NULL), 0);
	memcpy(img, "UCMDFW01" "9.9.9   ", 16);
	assert_int_equal(admin(&f, nvme_admin_fw_download, 4096 / 4 - 1, img, 4096), 0);
	/* slot 2, CA 1: replace and activate at the next reset */
	assert_int_equal(admin(&f, nvme_admin_fw_commit, 1u << 3 | 2, NULL, 0), 0);
	assert_int_equal(ucmd_ioctl(f.e, f.dev, NVME_IOCTL_ADMIN64_CMD, &gl), 0);
	assert_int_equal(log->afi, 1 | 2 << 4);
	assert_int_equal(ucmd_ioctl(f.e, f.dev, NVME_IOCTL_RESET, NULL), 0);
	assert_int_equal(ucmd_ioctl(f.e, f.dev, NVME_IOCTL_ADMIN64_CMD, &gl), 0);
	assert_int_equal(log->afi, 2);
	assert_int_equal(admin(&f, nvme_admin_identify, NVME_IDENTIFY_CNS_CTRL, id, 4096), 0);
	assert_memory_equal(id->fr, "9.9.9   ", 8);
	fx_teardown(&f);
	free(img);
	free(log);
	free(id);
}

static void test_regs(void **state)
{
	struct fx f;
	uint8_t regs[0x40];
	uint64_t cap;
	uint32_t v;

	(void)state;
	assert_int_equal(fx_setup(&f, NULL), 0);
	assert_int_equal(ucmd_ctrl_regs_read(f.ctrl, 0, regs, sizeof(regs)), 0);
	memcpy(&cap, regs, 8);
	assert_int_equal(cap, ctrl_read64(f.ctrl, UCMD_NVME_REG_CAP));
	memcpy(&v, regs + UCMD_NVME_REG_VS, 4);
	assert_int_equal(v, 0x00010400);
	memcpy(&v, regs + UCMD_NVME_REG_CSTS, 4);
	assert_int_equal(v & UCMD_NVME_CSTS_RDY, 1);
	memcpy(&v, regs + UCMD_NVME_REG_CC, 4);
	assert_int_equal(v & 1, 1);
	assert_int_equal(ucmd_ctrl_regs_read(f.ctrl, 0x1000 - 4, regs, 4), 0);
	assert_int_equal(ucmd_ctrl_regs_read(f.ctrl, 2, regs, 4), -EINVAL);
	assert_int_equal(ucmd_ctrl_regs_read(f.ctrl, 0, regs, 6), -EINVAL);
	assert_int_equal(ucmd_ctrl_regs_read(f.ctrl, 0x1000, regs, 4), -EINVAL);
	assert_int_equal(ucmd_ctrl_regs_read(f.ctrl, 0, NULL, 4), -EINVAL);
	fx_teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reset_io),
		cmocka_unit_test(test_inflight),
		cmocka_unit_test(test_firmware),
		cmocka_unit_test(test_regs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
