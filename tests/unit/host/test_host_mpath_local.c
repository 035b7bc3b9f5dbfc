/* SPDX-License-Identifier: MIT */
/*
 * The NVM subsystem of a controller directory with several controllers:
 * each has its own controller ID and reports CMIC, namespace 1 is shared
 * (NMIC) and in the one ANA group, the host makes one head over the
 * controllers as paths, data written through one controller is read
 * through the other, the count of controllers is kept in ctrl.json, a
 * directory of one loads as before, and each controller's saved features
 * and SMART counters are its own.
 */
#include "mpath_fixture.h"

static void test_two_controllers_one_subsystem(void **state)
{
	struct mp m = { 0 };
	struct nvme_id_ctrl *id = fx_alloc(4096), *id2 = fx_alloc(4096);
	struct nvme_id_ns *ns = fx_alloc(4096);
	struct nvme_ctrl_list *cl = fx_alloc(4096);
	uint8_t *ana = fx_alloc(4096), *wr = fx_alloc(8 * 512), *rd = fx_alloc(8 * 512);
	struct ucmd_nvme_path_info pi[2];

	(void)state;
	snprintf(m.dir, sizeof(m.dir), "/tmp/ucmd-mpl-XXXXXX");
	assert_non_null(mkdtemp(m.dir));
	up(&m, 2, true);
	assert_int_equal(ucmd_ctrl_controllers(m.ctrl), 2);
	assert_non_null(ucmd_ctrl_controller(m.ctrl, 1));
	assert_null(ucmd_ctrl_controller(m.ctrl, 2));

	/* a controller device per path; the namespace's devices are the head's only */
	int ng = ucmd_open(m.e, "ng0n1", O_RDWR);
	assert_true(ng >= 0);
	assert_int_equal(ucmd_open(m.e, "ng1n1", O_RDWR), -ENOENT);

	assert_int_equal(identify(&m, "nvme0", NVME_IDENTIFY_CNS_CTRL, 0, id), 0);
	assert_int_equal(identify(&m, "nvme1", NVME_IDENTIFY_CNS_CTRL, 0, id2), 0);
	assert_int_equal(le16toh(id->cntlid), 1);
	assert_int_equal(le16toh(id2->cntlid), 2);
	assert_int_equal(id->cmic, NVME_CTRL_CMIC_MULTI_PORT | NVME_CTRL_CMIC_MULTI_CTRL |
				   NVME_CTRL_CMIC_MULTI_ANA_REPORTING);
	assert_int_equal(id2->cmic, id->cmic);
	assert_int_equal(le32toh(id2->nanagrpid), 1);
	assert_memory_equal(id->subnqn, id2->subnqn, sizeof(id->subnqn));
	assert_memory_equal(id->sn, id2->sn, sizeof(id->sn));
	assert_int_equal(identify(&m, "nvme1", NVME_IDENTIFY_CNS_NS, 1, ns), 0);
	assert_int_equal(ns->nmic, NVME_NS_NMIC_SHARED);
	assert_int_equal(le32toh(ns->anagrpid), 1);
	/* namespace 1 is attached to both controllers */
	assert_int_equal(identify(&m, "nvme1", NVME_IDENTIFY_CNS_NS_CTRL_LIST, 1, cl), 0);
	assert_int_equal(le16toh(cl->num), 2);
	assert_int_equal(le16toh(cl->identifier[0]), 1);
	assert_int_equal(le16toh(cl->identifier[1]), 2);

	/* the ANA log of controller 2: one group, optimized, namespace 1 */
	struct nvme_uring_cmd g = { .opcode = nvme_admin_get_log_page, .nsid = 0xffffffff,
				    .cdw10 = NVME_LOG_LID_ANA | ((4096 / 4 - 1) << 16),
				    .addr = (uint64_t)(uintptr_t)ana, .data_len = 4096 };
	int c1 = ucmd_open(m.e, "nvme1", O_RDWR);
	assert_true(c1 >= 0);
	assert_int_equal(cmd(&m, c1, NVME_URING_CMD_ADMIN, &g, NULL), 0);
	struct nvme_ana_log *al = (void *)ana;
	struct nvme_ana_group_desc *d = (void *)(ana + sizeof(*al));
	assert_int_equal(le16toh(al->ngrps), 1);
	assert_int_equal(le32toh(d->grpid), 1);
	assert_int_equal(d->state, NVME_ANA_STATE_OPTIMIZED);
	assert_int_equal(le32toh(d->nnsids), 1);
	assert_int_equal(le32toh(d->nsids[0]), 1);
	/* firmware and self-test are controller 1's only */
	struct nvme_uring_cmd dst = { .opcode = nvme_admin_dev_self_test, .nsid = 0xffffffff,
				      .cdw10 = 1 };
	assert_int_equal(cmd(&m, c1, NVME_URING_CMD_ADMIN, &dst, NULL),
			 NVME_SC_INVALID_OPCODE | NVME_SC_DNR);
	ucmd_close(m.e, c1);

	/* round-robin over both: every block written and read through the head */
	assert_int_equal(ucmd_nvme_subsys_set_iopolicy(m.s, "round-robin"), 0);
	for (unsigned b = 0; b < 16; b++) {
		struct nvme_uring_cmd c;

		fx_fill(wr, 8 * 512, 100 + b);
		fx_rw_cmd(&c, nvme_cmd_write, 1, b * 8, 8, wr, 8 * 512);
		assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL), 0);
	}
	for (unsigned b = 0; b < 16; b++) {
		struct nvme_uring_cmd c;

		fx_fill(wr, 8 * 512, 100 + b);
		fx_rw_cmd(&c, nvme_cmd_read, 1, b * 8, 8, rd, 8 * 512);
		assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL), 0);
		assert_memory_equal(wr, rd, 8 * 512);
	}
	assert_int_equal(ucmd_nvme_subsys_path_info(m.s, 1, 0, &pi[0]), 0);
	assert_int_equal(ucmd_nvme_subsys_path_info(m.s, 1, 1, &pi[1]), 0);
	assert_int_equal(pi[0].ana_state, NVME_ANA_STATE_OPTIMIZED);
	assert_int_equal(pi[1].ana_state, NVME_ANA_STATE_OPTIMIZED);
	/* each path carried half: a write on one is read on the other */
	assert_int_equal(pi[0].dispatched, 16);
	assert_int_equal(pi[1].dispatched, 16);
	ucmd_close(m.e, ng);
	down(&m);

	/* the directory keeps its two controllers, and the data */
	up(&m, 0, false);
	assert_int_equal(ucmd_ctrl_controllers(m.ctrl), 2);
	ng = ucmd_open(m.e, "ng0n1", O_RDWR);
	assert_true(ng >= 0);
	struct nvme_uring_cmd c;
	fx_fill(wr, 8 * 512, 100 + 5);
	fx_rw_cmd(&c, nvme_cmd_read, 1, 5 * 8, 8, rd, 8 * 512);
	assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL), 0);
	assert_memory_equal(wr, rd, 8 * 512);
	assert_int_equal(identify(&m, "nvme1", NVME_IDENTIFY_CNS_CTRL, 0, id2), 0);
	assert_int_equal(le16toh(id2->cntlid), 2);
	ucmd_close(m.e, ng);
	down(&m);
	char rm[128];
	snprintf(rm, sizeof(rm), "rm -rf %s", m.dir);
	assert_int_equal(system(rm), 0);
	free(id); free(id2); free(ns); free(cl); free(ana); free(wr); free(rd);
}

/* A directory of one controller: as before (no CMIC, no ANA log, no "controllers"). */
static void test_one_controller_as_before(void **state)
{
	struct mp m = { 0 };
	struct nvme_id_ctrl *id = fx_alloc(4096);
	char path[128], *text = calloc(1, 65536);
	FILE *fp;

	(void)state;
	snprintf(m.dir, sizeof(m.dir), "/tmp/ucmd-mpl-XXXXXX");
	assert_non_null(mkdtemp(m.dir));
	up(&m, 0, true);
	assert_int_equal(ucmd_ctrl_controllers(m.ctrl), 1);
	assert_int_equal(identify(&m, "nvme0", NVME_IDENTIFY_CNS_CTRL, 0, id), 0);
	assert_int_equal(id->cmic, 0);
	assert_int_equal(le16toh(id->cntlid), 1);
	uint8_t *ana = fx_alloc(4096);
	struct nvme_uring_cmd g = { .opcode = nvme_admin_get_log_page, .nsid = 0xffffffff,
				    .cdw10 = NVME_LOG_LID_ANA | ((4096 / 4 - 1) << 16),
				    .addr = (uint64_t)(uintptr_t)ana, .data_len = 4096 };
	int c0 = ucmd_open(m.e, "nvme0", O_RDWR);
	assert_int_equal(cmd(&m, c0, NVME_URING_CMD_ADMIN, &g, NULL),
			 (NVME_SCT_CMD_SPECIFIC << NVME_SCT_SHIFT) | NVME_SC_INVALID_LOG_PAGE | NVME_SC_DNR);
	ucmd_close(m.e, c0);
	down(&m);
	snprintf(path, sizeof(path), "%s/ctrl.json", m.dir);
	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_true(fread(text, 1, 65535, fp) > 0);
	fclose(fp);
	assert_null(strstr(text, "controllers"));

	/* more than a subsystem may have: refused, saying why */
	struct ucmd_ctrl_params cp = { .controllers = 9 };
	struct ucmd_ctrl *c = NULL;
	assert_int_equal(ucmd_ctrl_create(&cp, &c), -EINVAL);
	assert_non_null(strstr(ucmd_last_error(), "9 controllers"));
	snprintf(path, sizeof(path), "rm -rf %s", m.dir);
	assert_int_equal(system(path), 0);
	free(text); free(id); free(ana);
}

/*
 * Controllers with threads of their own (UCMD_CTRL_THREAD), 16 writes in
 * flight through the head over three of them: each controller's thread
 * reaches the shared namespace under controller 1's lock.
 */
static void test_threaded_controllers(void **state)
{
	struct ucmd_ctrl_params cp = { .mode = UCMD_CTRL_THREAD, .controllers = 3 };
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct ucmd_ns_params np = { .nsze = 4096, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct ucmd_nvme_host_opts ho = { 0 };
	struct mp m = { 0 };
	uint8_t *wr = fx_alloc(16 * 4096), *rd = fx_alloc(4096);
	struct ucmd_nvme_path_info pi;

	(void)state;
	m.e = ucmd_engine_new();
	assert_non_null(m.e);
	assert_int_equal(ucmd_ctrl_create(&cp, &m.ctrl), 0);
	assert_int_equal(ucmd_ctrl_ns_create(m.ctrl, &np), 1);
	assert_int_equal(ucmd_nvme_attach_multipath(m.e, m.ctrl, &ho, &m.s), 0);
	assert_int_equal(ucmd_queue_init_engine(m.e, 32, &m.ring, &p), 0);
	assert_int_equal(ucmd_nvme_subsys_set_iopolicy(m.s, "round-robin"), 0);
	int ng = ucmd_open(m.e, "ng0n1", O_RDWR);
	assert_true(ng >= 0);
	for (unsigned round = 0; round < 8; round++) {
		for (unsigned k = 0; k < 16; k++) {
			struct nvme_uring_cmd c;

			fx_fill(wr + k * 4096, 4096, round * 16 + k);
			fx_rw_cmd(&c, nvme_cmd_write, 1, k * 8, 8, wr + k * 4096, 4096);
			ucmd_prep_nvme_cmd(ucmd_get_sqe(&m.ring), ng, NVME_URING_CMD_IO, &c);
		}
		assert_int_equal(ucmd_submit_and_wait(&m.ring, 16), 16);
		for (unsigned k = 0; k < 16; k++) {
			struct io_uring_cqe *cqe;

			assert_int_equal(ucmd_wait_cqe(&m.ring, &cqe), 0);
			assert_int_equal(cqe->res, 0);
			ucmd_cqe_seen(&m.ring, cqe);
		}
		for (unsigned k = 0; k < 16; k++) {
			struct nvme_uring_cmd c;

			fx_rw_cmd(&c, nvme_cmd_read, 1, k * 8, 8, rd, 4096);
			assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL), 0);
			assert_memory_equal(rd, wr + k * 4096, 4096);
		}
	}
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(ucmd_nvme_subsys_path_info(m.s, 1, i, &pi), 0);
		assert_true(pi.dispatched > 0);
	}
	ucmd_close(m.e, ng);
	ucmd_queue_exit(&m.ring);
	ucmd_nvme_subsys_detach(m.s);
	assert_int_equal(ucmd_ctrl_destroy(m.ctrl), 0);
	ucmd_engine_free(m.e);
	free(wr);
	free(rd);
}

/*
 * Set Features with Save on controller 2: its own saved value, kept in the
 * directory and its current value at the next start; controller 1's stay.
 */
static void test_saved_features_per_controller(void **state)
{
	struct mp m = { 0 };
	uint64_t res = 0;

	(void)state;
	snprintf(m.dir, sizeof(m.dir), "/tmp/ucmd-mpl-XXXXXX");
	assert_non_null(mkdtemp(m.dir));
	up(&m, 3, true);
	/* Arbitration: burst 3, saved (SV) on controller 2; Error Recovery on controller 3 */
	assert_int_equal(feature(&m, "nvme1", nvme_admin_set_features,
				 NVME_FEAT_FID_ARBITRATION | 1u << 31, 3, NULL), 0);
	assert_int_equal(feature(&m, "nvme2", nvme_admin_set_features,
				 NVME_FEAT_FID_ERR_RECOVERY | 1u << 31, 7, NULL), 0);
	assert_int_equal(feature(&m, "nvme1", nvme_admin_get_features,
				 NVME_FEAT_FID_ARBITRATION | 2u << 8, 0, &res), 0);
	assert_int_equal(res, 3);
	down(&m);

	up(&m, 0, false);
	/* saved (SEL 2) and current (SEL 0) of controller 2 */
	assert_int_equal(feature(&m, "nvme1", nvme_admin_get_features,
				 NVME_FEAT_FID_ARBITRATION | 2u << 8, 0, &res), 0);
	assert_int_equal(res, 3);
	assert_int_equal(feature(&m, "nvme1", nvme_admin_get_features,
				 NVME_FEAT_FID_ARBITRATION, 0, &res), 0);
	assert_int_equal(res, 3);
	assert_int_equal(feature(&m, "nvme2", nvme_admin_get_features,
				 NVME_FEAT_FID_ERR_RECOVERY | 2u << 8, 0, &res), 0);
	assert_int_equal(res, 7);
	assert_int_equal(feature(&m, "nvme2", nvme_admin_get_features,
				 NVME_FEAT_FID_ARBITRATION | 2u << 8, 0, &res), 0);
	assert_int_equal(res, 0);
	/* controller 1's are its own */
	assert_int_equal(feature(&m, "nvme0", nvme_admin_get_features,
				 NVME_FEAT_FID_ARBITRATION | 2u << 8, 0, &res), 0);
	assert_int_equal(res, 0);
	assert_int_equal(feature(&m, "nvme0", nvme_admin_get_features,
				 NVME_FEAT_FID_ERR_RECOVERY | 2u << 8, 0, &res), 0);
	assert_int_equal(res, 0);
	down(&m);
	char rm[128];
	snprintf(rm, sizeof(rm), "rm -rf %s", m.dir);
	assert_int_equal(system(rm), 0);
}

static uint64_t le64at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

/* Controller dev's SMART log: host reads, host writes, data units written, power cycles */
static void smart_of(struct mp *m, const char *dev, uint64_t out[4])
{
	struct nvme_smart_log *s = fx_alloc(512);
	struct nvme_uring_cmd g = { .opcode = nvme_admin_get_log_page, .nsid = 0xffffffff,
				    .cdw10 = NVME_LOG_LID_SMART | ((512 / 4 - 1) << 16),
				    .addr = (uint64_t)(uintptr_t)s, .data_len = 512 };
	int fd = ucmd_open(m->e, dev, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(cmd(m, fd, NVME_URING_CMD_ADMIN, &g, NULL), 0);
	ucmd_close(m->e, fd);
	out[0] = le64at(s->host_reads);
	out[1] = le64at(s->host_writes);
	out[2] = le64at(s->data_units_written);
	out[3] = le64at(s->power_cycles);
	free(s);
}

/*
 * Each controller's SMART counters are its own and kept across a restart
 * (not only controller 1's): round-robin I/O through the head counts on
 * each path's controller; a start after a power-off counts a power cycle
 * on every controller of the subsystem.
 */
static void test_smart_per_controller(void **state)
{
	static const char *const dev[3] = { "nvme0", "nvme1", "nvme2" };
	struct mp m = { 0 };
	uint8_t *wr = fx_alloc(8 * 512);
	uint64_t before[3][4], after[3][4];

	(void)state;
	snprintf(m.dir, sizeof(m.dir), "/tmp/ucmd-mpl-XXXXXX");
	assert_non_null(mkdtemp(m.dir));
	up(&m, 3, true);
	assert_int_equal(ucmd_nvme_subsys_set_iopolicy(m.s, "round-robin"), 0);
	int ng = ucmd_open(m.e, "ng0n1", O_RDWR);
	assert_true(ng >= 0);
	/* 8 writes of 8 blocks and 4 reads over three paths */
	for (unsigned b = 0; b < 12; b++) {
		struct nvme_uring_cmd c;

		fx_fill(wr, 8 * 512, b);
		fx_rw_cmd(&c, b < 8 ? nvme_cmd_write : nvme_cmd_read, 1, b * 8, 8, wr, 8 * 512);
		assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL), 0);
	}
	ucmd_close(m.e, ng);
	uint64_t reads = 0, writes = 0;
	for (unsigned i = 0; i < 3; i++) {
		smart_of(&m, dev[i], before[i]);
		reads += before[i][0];
		writes += before[i][1];
		/* every path carried some; a new directory is one power-on */
		assert_true(before[i][0] + before[i][1] > 0);
		assert_int_equal(before[i][3], 1);
	}
	assert_true(reads >= 4);
	assert_true(writes >= 8);
	down(&m);

	/* the same boot, shut down cleanly: every count as it was */
	up(&m, 0, false);
	for (unsigned i = 0; i < 3; i++) {
		smart_of(&m, dev[i], after[i]);
		assert_memory_equal(after[i], before[i], sizeof(after[i]));
	}
	down(&m);

	/* a start after a power-off: one power cycle more on each controller */
	struct ucmd_ctrl_params cp = { .dir = m.dir, .power_on = true };
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct ucmd_nvme_host_opts ho = { 0 };

	m.e = ucmd_engine_new();
	assert_non_null(m.e);
	assert_int_equal(ucmd_ctrl_create(&cp, &m.ctrl), 0);
	assert_int_equal(ucmd_nvme_attach_multipath(m.e, m.ctrl, &ho, &m.s), 0);
	assert_int_equal(ucmd_queue_init_engine(m.e, 16, &m.ring, &p), 0);
	for (unsigned i = 0; i < 3; i++) {
		smart_of(&m, dev[i], after[i]);
		assert_int_equal(after[i][3], 2);
		assert_int_equal(after[i][1], before[i][1]);
		assert_int_equal(after[i][2], before[i][2]);
	}
	down(&m);
	char rm[128];
	snprintf(rm, sizeof(rm), "rm -rf %s", m.dir);
	assert_int_equal(system(rm), 0);
	free(wr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_controllers_one_subsystem),
		cmocka_unit_test(test_one_controller_as_before),
		cmocka_unit_test(test_threaded_controllers),
		cmocka_unit_test(test_saved_features_per_controller),
		cmocka_unit_test(test_smart_per_controller),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
