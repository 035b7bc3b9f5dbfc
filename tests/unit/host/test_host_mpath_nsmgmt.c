/* SPDX-License-Identifier: MIT */
/*
 * Namespace management, per-controller attachment, Format and Sanitize
 * through any controller of a controller directory's subsystem of several.
 */
#include "mpath_fixture.h"
#include "nvme/host/multipath.h"

/*
 * Namespace management, attachment, Format and Sanitize through any
 * controller: a namespace made through controller 2 and attached to
 * controllers 1 and 3 is active on them only (and stays so across a
 * restart), each hears of it, a format through controller 2 is what
 * controller 1 reports, a sanitize started on controller 3 is the
 * subsystem's; bad controller lists are refused.
 */
static void test_ns_mgmt_any_controller(void **state)
{
	struct mp m = { 0 };
	struct nvme_id_ns *id = fx_alloc(4096);
	struct nvme_ctrl_list *cl = fx_alloc(4096);
	struct nvme_sanitize_log_page *sl = fx_alloc(4096);
	uint64_t res = 0;
	const uint16_t one_three[] = { 1, 3 }, three[] = { 3 }, bad[] = { 9 }, twice[] = { 2, 2 };

	(void)state;
	snprintf(m.dir, sizeof(m.dir), "/tmp/ucmd-mpl-XXXXXX");
	assert_non_null(mkdtemp(m.dir));
	up(&m, 3, true);

	/* created through controller 2: 2048 blocks of 512 bytes */
	memset(id, 0, 4096);
	id->nsze = id->ncap = htole64(2048);
	struct nvme_uring_cmd mk = { .opcode = nvme_admin_ns_mgmt, .cdw10 = 0,
				     .addr = (uint64_t)(uintptr_t)id, .data_len = 4096 };
	assert_int_equal(admin(&m, "nvme1", &mk, &res), 0);
	assert_int_equal(res, 2);
	assert_false(active(&m, "nvme0", 2));
	/* allocated on every controller, active on none yet */
	assert_int_equal(identify(&m, "nvme0", NVME_IDENTIFY_CNS_ALLOCATED_NS, 2, id), 0);
	assert_int_equal(le64toh(id->nsze), 2048);

	/* bad lists: a controller that is none, one named twice, none at all */
	assert_int_equal(attach(&m, "nvme1", 2, 0, 1, bad),
			 (NVME_SCT_CMD_SPECIFIC << NVME_SCT_SHIFT) | NVME_SC_CTRL_LIST_INVALID | NVME_SC_DNR);
	assert_int_equal(attach(&m, "nvme1", 2, 0, 2, twice),
			 (NVME_SCT_CMD_SPECIFIC << NVME_SCT_SHIFT) | NVME_SC_CTRL_LIST_INVALID | NVME_SC_DNR);
	assert_int_equal(attach(&m, "nvme1", 2, 0, 0, bad),
			 (NVME_SCT_CMD_SPECIFIC << NVME_SCT_SHIFT) | NVME_SC_CTRL_LIST_INVALID | NVME_SC_DNR);
	/* attached to controllers 1 and 3 through controller 2 */
	assert_int_equal(attach(&m, "nvme1", 2, 0, 2, one_three), 0);
	assert_true(active(&m, "nvme0", 2));
	assert_false(active(&m, "nvme1", 2));
	assert_true(active(&m, "nvme2", 2));
	assert_int_equal(attach(&m, "nvme0", 2, 0, 1, three),
			 (NVME_SCT_CMD_SPECIFIC << NVME_SCT_SHIFT) | NVME_SC_NS_ALREADY_ATTACHED | NVME_SC_DNR);
	assert_int_equal(identify(&m, "nvme1", NVME_IDENTIFY_CNS_NS_CTRL_LIST, 2, cl), 0);
	assert_int_equal(le16toh(cl->num), 2);
	assert_int_equal(le16toh(cl->identifier[0]), 1);
	assert_int_equal(le16toh(cl->identifier[1]), 3);
	/*
	 * controller 3 told its host (a Namespace Attribute notice, which the
	 * host clears by reading the log): an ANA change after it is not
	 * masked, the host hears of it at once, not at its 10 s poll
	 */
	assert_int_equal(ucmd_ctrl_ana_state(ucmd_ctrl_controller(m.ctrl, 2), 1,
					     NVME_ANA_STATE_INACCESSIBLE), NVME_ANA_STATE_INACCESSIBLE);
	wait_path_state(&m, 2, NVME_ANA_STATE_INACCESSIBLE);
	assert_int_equal(ucmd_ctrl_ana_state(ucmd_ctrl_controller(m.ctrl, 2), 1,
					     NVME_ANA_STATE_OPTIMIZED), NVME_ANA_STATE_OPTIMIZED);
	/* data through controller 3 reads back through controller 1 */
	assert_int_equal(identify(&m, "nvme2", NVME_IDENTIFY_CNS_NS, 2, id), 0);
	assert_int_equal(le64toh(id->nsze), 2048);
	assert_int_equal(identify(&m, "nvme1", NVME_IDENTIFY_CNS_NS, 2, id), 0);
	assert_int_equal(le64toh(id->nsze), 0);

	/* format of namespace 1 through controller 2 to 4 KiB blocks: controller 1 says so */
	struct nvme_uring_cmd fmt = { .opcode = nvme_admin_format_nvm, .nsid = 1, .cdw10 = 4 };
	assert_int_equal(admin(&m, "nvme1", &fmt, NULL), 0);
	assert_int_equal(identify(&m, "nvme0", NVME_IDENTIFY_CNS_NS, 1, id), 0);
	assert_int_equal(id->flbas & 0xf, 4);
	assert_int_equal(le64toh(id->nsze), 4096 * 512 / 4096);
	/* a namespace not attached to controller 2 is not its to format */
	fmt.nsid = 2;
	assert_int_equal(admin(&m, "nvme1", &fmt, NULL) & 0x7ff, NVME_SC_INVALID_NS);

	/* a sanitize started on controller 3 is what controller 1's log says */
	struct nvme_uring_cmd san = { .opcode = nvme_admin_sanitize_nvm,
				      .cdw10 = NVME_SANITIZE_SANACT_START_BLOCK_ERASE };
	assert_int_equal(admin(&m, "nvme2", &san, NULL), 0);
	struct nvme_uring_cmd gl = { .opcode = nvme_admin_get_log_page, .nsid = 0xffffffff,
				     .cdw10 = NVME_LOG_LID_SANITIZE | ((512 / 4 - 1) << 16),
				     .addr = (uint64_t)(uintptr_t)sl, .data_len = 512 };
	for (unsigned t = 0; t < 500; t++) {
		assert_int_equal(admin(&m, "nvme0", &gl, NULL), 0);
		if ((le16toh(sl->sstat) & 7) != NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS)
			break;
		usleep(10000);
	}
	assert_int_equal(le16toh(sl->sstat) & 7, NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS);
	assert_int_equal(le32toh(sl->scdw10), NVME_SANITIZE_SANACT_START_BLOCK_ERASE);
	assert_int_equal(admin(&m, "nvme1", &gl, NULL), 0);
	assert_int_equal(le16toh(sl->sstat) & 7, NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS);
	down(&m);

	/* the attachments are the directory's */
	up(&m, 0, false);
	assert_true(active(&m, "nvme0", 2));
	assert_false(active(&m, "nvme1", 2));
	assert_true(active(&m, "nvme2", 2));
	/* detached from controller 3 through controller 1; deleted through controller 3 */
	assert_int_equal(attach(&m, "nvme0", 2, 1, 1, three), 0);
	assert_false(active(&m, "nvme2", 2));
	assert_int_equal(attach(&m, "nvme0", 2, 1, 1, three),
			 (NVME_SCT_CMD_SPECIFIC << NVME_SCT_SHIFT) | NVME_SC_NS_NOT_ATTACHED | NVME_SC_DNR);
	struct nvme_uring_cmd del = { .opcode = nvme_admin_ns_mgmt, .nsid = 2, .cdw10 = 1 };
	assert_int_equal(admin(&m, "nvme2", &del, NULL), 0);
	assert_false(active(&m, "nvme0", 2));
	assert_int_equal(identify(&m, "nvme1", NVME_IDENTIFY_CNS_ALLOCATED_NS, 2, id), 0);
	assert_int_equal(le64toh(id->nsze), 0);
	down(&m);
	char rm[128];
	snprintf(rm, sizeof(rm), "rm -rf %s", m.dir);
	assert_int_equal(system(rm), 0);
	free(id); free(cl); free(sl);
}

/* Until the head's device name appears (the rescan a notice starts): its fd, else a failure */
static int wait_head(struct mp *m, const char *name)
{
	for (unsigned t = 0; t < 500; t++) {
		int fd = ucmd_open(m->e, name, O_RDWR);

		if (fd >= 0)
			return fd;
		usleep(10000);
	}
	fail_msg("no %s 5 s after the namespace was attached", name);
	return -1;
}

/*
 * A namespace made and attached after the attach gets its head, as Linux's
 * nvme_scan_work makes it on the Namespace Attribute notice, without a new
 * attach: namespace 2 on both controllers is read and written through
 * ng0n2 and nvme0n2 over either path; namespace 3 on controller 2 alone
 * has only that path (controller 2 inaccessible: no usable path).
 */
static void test_head_after_attach(void **state)
{
	struct mp m = { 0 };
	struct nvme_id_ns *id = fx_alloc(4096);
	uint8_t *wr = fx_alloc(8 * 512), *rd = fx_alloc(8 * 512);
	const uint16_t both[] = { 1, 2 }, second[] = { 2 };
	struct ucmd_nvme_path_info pi;
	uint64_t res = 0;

	(void)state;
	snprintf(m.dir, sizeof(m.dir), "/tmp/ucmd-mpl-XXXXXX");
	assert_non_null(mkdtemp(m.dir));
	up(&m, 2, true);
	assert_int_equal(ucmd_open(m.e, "ng0n2", O_RDWR), -ENOENT);
	for (uint32_t nsid = 2; nsid <= 3; nsid++) {
		struct nvme_uring_cmd mk = { .opcode = nvme_admin_ns_mgmt, .cdw10 = 0,
					     .addr = (uint64_t)(uintptr_t)id, .data_len = 4096 };

		memset(id, 0, 4096);
		id->nsze = id->ncap = htole64(1024);
		assert_int_equal(admin(&m, "nvme0", &mk, &res), 0);
		assert_int_equal(res, nsid);
	}
	assert_int_equal(attach(&m, "nvme1", 2, 0, 2, both), 0);
	assert_int_equal(attach(&m, "nvme0", 3, 0, 1, second), 0);

	int ng = wait_head(&m, "ng0n2");
	int ng3 = wait_head(&m, "ng0n3");
	assert_int_equal(ucmd_nvme_subsys_set_iopolicy(m.s, "round-robin"), 0);
	for (unsigned b = 0; b < 4; b++) {
		struct nvme_uring_cmd c;

		fx_fill(wr, 8 * 512, 300 + b);
		fx_rw_cmd(&c, nvme_cmd_write, 2, b * 8, 8, wr, 8 * 512);
		assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL), 0);
		fx_rw_cmd(&c, nvme_cmd_read, 2, b * 8, 8, rd, 8 * 512);
		assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL), 0);
		assert_memory_equal(wr, rd, 8 * 512);
	}
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(ucmd_nvme_subsys_path_info(m.s, 2, i, &pi), 0);
		assert_int_equal(pi.ana_state, NVME_ANA_STATE_OPTIMIZED);
		assert_true(pi.dispatched > 0);
	}
	/* its block device too */
	int bd = ucmd_open(m.e, "nvme0n2", O_RDWR);
	assert_true(bd >= 0);
	ucmd_close(m.e, bd);

	/* namespace 3: through controller 2 only */
	struct nvme_uring_cmd c;
	fx_fill(wr, 8 * 512, 400);
	fx_rw_cmd(&c, nvme_cmd_write, 3, 0, 8, wr, 8 * 512);
	assert_int_equal(cmd(&m, ng3, NVME_URING_CMD_IO, &c, NULL), 0);
	assert_int_equal(ucmd_ctrl_ana_state(ucmd_ctrl_controller(m.ctrl, 1), 1,
					     NVME_ANA_STATE_INACCESSIBLE), NVME_ANA_STATE_INACCESSIBLE);
	for (unsigned t = 0; t < 500; t++) {
		assert_int_equal(ucmd_nvme_subsys_path_info(m.s, 3, 1, &pi), 0);
		if (pi.ana_state == NVME_ANA_STATE_INACCESSIBLE)
			break;
		usleep(10000);
	}
	assert_int_equal(pi.ana_state, NVME_ANA_STATE_INACCESSIBLE);
	fx_rw_cmd(&c, nvme_cmd_read, 3, 0, 8, rd, 8 * 512);
	assert_int_equal(cmd(&m, ng3, NVME_URING_CMD_IO, &c, NULL), -EINVAL);
	/* namespace 2 still has controller 1 */
	fx_rw_cmd(&c, nvme_cmd_read, 2, 0, 8, rd, 8 * 512);
	assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL), 0);
	ucmd_close(m.e, ng);
	ucmd_close(m.e, ng3);
	down(&m);
	char rm[128];
	snprintf(rm, sizeof(rm), "rm -rf %s", m.dir);
	assert_int_equal(system(rm), 0);
	free(id);
	free(wr);
	free(rd);
}

/* Until name is no device of the engine any more (the rescan a notice starts), else a failure */
static void wait_no_head(struct mp *m, const char *name)
{
	for (unsigned t = 0; t < 500; t++) {
		int fd = ucmd_open(m->e, name, O_RDWR);

		if (fd == -ENOENT)
			return;
		if (fd >= 0)
			ucmd_close(m->e, fd);
		usleep(10000);
	}
	fail_msg("%s still there 5 s after its namespace left every path", name);
}

/*
 * Linux removes a head's disk once no path has its namespace
 * (nvme_mpath_remove_disk): namespace 1, shared by both controllers,
 * deleted through controller 2, takes ng0n1 and nvme0n1 away; files
 * still open on them get what Linux gives with no path (passthrough
 * EINVAL, block I/O EIO, not a wait); a namespace made again with NSID 1
 * gets a new head, whose I/O works while the old files still fail.
 */
static void test_head_removed_with_namespace(void **state)
{
	struct mp m = { 0 };
	struct nvme_id_ns *id = fx_alloc(4096);
	uint8_t *wr = fx_alloc(8 * 512), *rd = fx_alloc(8 * 512);
	const uint16_t both[] = { 1, 2 };
	struct ucmd_nvme_path_info pi;
	struct io_uring_cqe *cqe;
	struct nvme_uring_cmd c;
	uint64_t res = 0;

	(void)state;
	snprintf(m.dir, sizeof(m.dir), "/tmp/ucmd-mpl-XXXXXX");
	assert_non_null(mkdtemp(m.dir));
	up(&m, 2, true);
	int ng = ucmd_open(m.e, "ng0n1", O_RDWR), bd = ucmd_open(m.e, "nvme0n1", O_RDWR);
	assert_true(ng >= 0);
	assert_true(bd >= 0);
	fx_fill(wr, 8 * 512, 500);
	fx_rw_cmd(&c, nvme_cmd_write, 1, 0, 8, wr, 8 * 512);
	assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL), 0);

	struct nvme_uring_cmd del = { .opcode = nvme_admin_ns_mgmt, .nsid = 1, .cdw10 = 1 };
	assert_int_equal(admin(&m, "nvme1", &del, NULL), 0);
	wait_no_head(&m, "ng0n1");
	wait_no_head(&m, "nvme0n1");
	assert_int_equal(ucmd_nvme_subsys_path_info(m.s, 1, 0, &pi), -ENODEV);
	/* the open files: no path, at once */
	fx_rw_cmd(&c, nvme_cmd_read, 1, 0, 8, rd, 8 * 512);
	assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL), -EINVAL);
	ucmd_prep_read(ucmd_get_sqe(&m.ring), bd, rd, 4096, 0);
	assert_int_equal(ucmd_submit_and_wait(&m.ring, 1), 1);
	assert_int_equal(ucmd_wait_cqe(&m.ring, &cqe), 0);
	assert_int_equal(cqe->res, -EIO);
	ucmd_cqe_seen(&m.ring, cqe);
	/*
	 * even while a path is still being connected (an NVMe/TCP path being
	 * retried, which a live head's block I/O waits for): the head is gone
	 */
	struct nvme_subsys *ks = (struct nvme_subsys *)m.s;
	struct __kernel_timespec two_s = { .tv_sec = 2 };

	pthread_mutex_lock(&ks->lock);
	ks->pending[1] = true;
	pthread_mutex_unlock(&ks->lock);
	ucmd_prep_read(ucmd_get_sqe(&m.ring), bd, rd, 4096, 0);
	assert_int_equal(ucmd_submit(&m.ring), 1);
	assert_int_equal(ucmd_wait_cqe_timeout(&m.ring, &cqe, &two_s), 0);
	assert_int_equal(cqe->res, -EIO);
	ucmd_cqe_seen(&m.ring, cqe);
	pthread_mutex_lock(&ks->lock);
	ks->pending[1] = false;
	pthread_mutex_unlock(&ks->lock);

	/* made again, 1024 blocks, attached to both: a new head */
	struct nvme_uring_cmd mk = { .opcode = nvme_admin_ns_mgmt, .cdw10 = 0,
				     .addr = (uint64_t)(uintptr_t)id, .data_len = 4096 };
	memset(id, 0, 4096);
	id->nsze = id->ncap = htole64(1024);
	assert_int_equal(admin(&m, "nvme0", &mk, &res), 0);
	assert_int_equal(res, 1);
	assert_int_equal(attach(&m, "nvme0", 1, 0, 2, both), 0);
	int ng2 = wait_head(&m, "ng0n1");
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(ucmd_nvme_subsys_path_info(m.s, 1, i, &pi), 0);
	fx_fill(wr, 8 * 512, 501);
	fx_rw_cmd(&c, nvme_cmd_write, 1, 1016, 8, wr, 8 * 512);
	assert_int_equal(cmd(&m, ng2, NVME_URING_CMD_IO, &c, NULL), 0);
	fx_rw_cmd(&c, nvme_cmd_read, 1, 1016, 8, rd, 8 * 512);
	assert_int_equal(cmd(&m, ng2, NVME_URING_CMD_IO, &c, NULL), 0);
	assert_memory_equal(wr, rd, 8 * 512);
	/* past the new namespace's end: its size, not the old one's */
	fx_rw_cmd(&c, nvme_cmd_read, 1, 1024, 8, rd, 8 * 512);
	assert_int_not_equal(cmd(&m, ng2, NVME_URING_CMD_IO, &c, NULL), 0);
	/* the old head's files stay without a path */
	fx_rw_cmd(&c, nvme_cmd_read, 1, 0, 8, rd, 8 * 512);
	assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL), -EINVAL);
	ucmd_close(m.e, ng2);
	ucmd_close(m.e, ng);
	ucmd_close(m.e, bd);
	down(&m);
	char rm[128];
	snprintf(rm, sizeof(rm), "rm -rf %s", m.dir);
	assert_int_equal(system(rm), 0);
	free(id);
	free(wr);
	free(rd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ns_mgmt_any_controller),
		cmocka_unit_test(test_head_after_attach),
		cmocka_unit_test(test_head_removed_with_namespace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
