/* SPDX-License-Identifier: MIT */
/*
 * The NVM subsystem of a controller directory with several controllers:
 * each has its own controller ID and reports CMIC, namespace 1 is shared
 * (NMIC) and in the one ANA group, the host makes one head over the
 * controllers as paths, data written through one controller is read
 * through the other, the count of controllers is kept in ctrl.json, and a
 * directory of one loads as before.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvme/types.h>

#include "host_fixture.h"

struct mp {
	struct ucmd_engine *e;
	struct ucmd_ctrl *ctrl;
	struct ucmd_nvme_subsys *s;
	struct ucmd_ring ring;
	char dir[64];
};

static int cmd(struct mp *m, int fd, uint32_t op, struct nvme_uring_cmd *c, uint64_t *res)
{
	struct io_uring_cqe *cqe;
	int ret;

	ucmd_prep_nvme_cmd(ucmd_get_sqe(&m->ring), fd, op, c);
	assert_int_equal(ucmd_submit_and_wait(&m->ring, 1), 1);
	assert_int_equal(ucmd_wait_cqe(&m->ring, &cqe), 0);
	ret = cqe->res;
	if (res)
		*res = cqe->big_cqe[0];
	ucmd_cqe_seen(&m->ring, cqe);
	return ret;
}

static void up(struct mp *m, unsigned controllers, bool fresh)
{
	struct ucmd_ctrl_params cp = { .dir = m->dir, .controllers = (uint8_t)controllers };
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct ucmd_nvme_host_opts ho = { 0 };

	m->e = ucmd_engine_new();
	assert_non_null(m->e);
	assert_int_equal(ucmd_ctrl_create(&cp, &m->ctrl), 0);
	if (fresh) {
		struct ucmd_ns_params np = { .nsze = 4096, .store = UCMD_NS_STORE_FILE,
					     .attach = true };

		assert_int_equal(ucmd_ctrl_ns_create(m->ctrl, &np), 1);
	}
	assert_int_equal(ucmd_nvme_attach_multipath(m->e, m->ctrl, &ho, &m->s), 0);
	assert_int_equal(ucmd_queue_init_engine(m->e, 16, &m->ring, &p), 0);
}

static void down(struct mp *m)
{
	ucmd_queue_exit(&m->ring);
	ucmd_nvme_subsys_detach(m->s);
	assert_int_equal(ucmd_ctrl_destroy(m->ctrl), 0);
	ucmd_engine_free(m->e);
}

static int identify(struct mp *m, const char *dev, uint8_t cns, uint32_t nsid, void *buf)
{
	struct nvme_uring_cmd c = { .opcode = nvme_admin_identify, .nsid = nsid, .cdw10 = cns,
				    .addr = (uint64_t)(uintptr_t)buf, .data_len = 4096 };
	int fd = ucmd_open(m->e, dev, O_RDWR), ret;

	assert_true(fd >= 0);
	ret = cmd(m, fd, NVME_URING_CMD_ADMIN, &c, NULL);
	ucmd_close(m->e, fd);
	return ret;
}

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

/* Until path i of namespace 1 has ANA state want as the host knows it (the notice, the log) */
static void wait_path_state(struct mp *m, unsigned i, uint8_t want)
{
	struct ucmd_nvme_path_info pi;

	for (unsigned t = 0; t < 500; t++) {
		assert_int_equal(ucmd_nvme_subsys_path_info(m->s, 1, i, &pi), 0);
		if (pi.ana_state == want)
			return;
		usleep(10000);
	}
	fail_msg("path %u stays in ANA state %u, not %u", i, pi.ana_state, want);
}

static void ana_log(struct mp *m, const char *dev, uint8_t *buf)
{
	struct nvme_uring_cmd g = { .opcode = nvme_admin_get_log_page, .nsid = 0xffffffff,
				    .cdw10 = NVME_LOG_LID_ANA | ((4096 / 4 - 1) << 16),
				    .addr = (uint64_t)(uintptr_t)buf, .data_len = 4096 };
	int fd = ucmd_open(m->e, dev, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(cmd(m, fd, NVME_URING_CMD_ADMIN, &g, NULL), 0);
	ucmd_close(m->e, fd);
}

static unsigned long dispatched(struct mp *m, unsigned i)
{
	struct ucmd_nvme_path_info pi;

	assert_int_equal(ucmd_nvme_subsys_path_info(m->s, 1, i, &pi), 0);
	return pi.dispatched;
}

/*
 * The owner changes a controller's ANA state at run time: the controller
 * sends the ANA Change notice, its log says the new state with a higher
 * change count, the head's paths follow (optimized before non-optimized,
 * inaccessible never), and the states are kept in ctrl.json.
 */
static void test_ana_state_change(void **state)
{
	struct mp m = { 0 };
	struct nvme_id_ctrl *id = fx_alloc(4096);
	uint8_t *ana = fx_alloc(4096), *buf = fx_alloc(4096);
	struct nvme_ana_log *al = (void *)ana;
	struct nvme_ana_group_desc *d = (void *)(ana + sizeof(*al));
	struct ucmd_nvme_path_info pi;
	struct nvme_uring_cmd c;
	struct ucmd_ctrl *c2;

	(void)state;
	snprintf(m.dir, sizeof(m.dir), "/tmp/ucmd-mpl-XXXXXX");
	assert_non_null(mkdtemp(m.dir));
	up(&m, 2, true);
	c2 = ucmd_ctrl_controller(m.ctrl, 1);
	/* ANA Change notices and every state: what a host needs to follow the owner */
	assert_int_equal(identify(&m, "nvme1", NVME_IDENTIFY_CNS_CTRL, 0, id), 0);
	assert_true(le32toh(id->oaes) & NVME_CTRL_OAES_ANA);
	assert_true(id->anacap & NVME_CTRL_ANACAP_INACCESSIBLE);
	assert_int_equal(ucmd_ctrl_ana_state(c2, 1, 0), NVME_ANA_STATE_OPTIMIZED);
	/* bad input: no such group, no such state; a subsystem of one has no ANA */
	assert_int_equal(ucmd_ctrl_ana_state(c2, 2, 0), -EINVAL);
	assert_int_equal(ucmd_ctrl_ana_state(c2, 1, 5), -EINVAL);
	assert_int_equal(ucmd_ctrl_ana_state(NULL, 1, 0), -EINVAL);

	assert_int_equal(ucmd_nvme_subsys_set_iopolicy(m.s, "round-robin"), 0);
	assert_int_equal(ucmd_ctrl_ana_state(c2, 1, NVME_ANA_STATE_INACCESSIBLE),
			 NVME_ANA_STATE_INACCESSIBLE);
	/* the host hears of it from the notice, not from a failed I/O */
	wait_path_state(&m, 1, NVME_ANA_STATE_INACCESSIBLE);
	assert_int_equal(ucmd_nvme_subsys_path_info(m.s, 1, 1, &pi), 0);
	assert_true(pi.ana_aens >= 1);
	ana_log(&m, "nvme1", ana);
	assert_int_equal(le64toh(al->chgcnt), 1);
	assert_int_equal(d->state, NVME_ANA_STATE_INACCESSIBLE);
	ana_log(&m, "nvme0", ana);
	assert_int_equal(d->state, NVME_ANA_STATE_OPTIMIZED);
	assert_int_equal(le64toh(al->chgcnt), 1);

	/* round-robin never takes the inaccessible path */
	int ng = ucmd_open(m.e, "ng0n1", O_RDWR);
	assert_true(ng >= 0);
	unsigned long before0 = dispatched(&m, 0), before1 = dispatched(&m, 1);
	for (unsigned b = 0; b < 8; b++) {
		fx_rw_cmd(&c, nvme_cmd_read, 1, b, 1, buf, 512);
		assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL), 0);
	}
	assert_int_equal(dispatched(&m, 0) - before0, 8);
	assert_int_equal(dispatched(&m, 1), before1);

	/* optimized before non-optimized: controller 2 carries everything now */
	assert_int_equal(ucmd_ctrl_ana_state(m.ctrl, 1, NVME_ANA_STATE_NONOPTIMIZED),
			 NVME_ANA_STATE_NONOPTIMIZED);
	assert_int_equal(ucmd_ctrl_ana_state(c2, 1, NVME_ANA_STATE_OPTIMIZED),
			 NVME_ANA_STATE_OPTIMIZED);
	wait_path_state(&m, 0, NVME_ANA_STATE_NONOPTIMIZED);
	wait_path_state(&m, 1, NVME_ANA_STATE_OPTIMIZED);
	before0 = dispatched(&m, 0);
	before1 = dispatched(&m, 1);
	for (unsigned b = 0; b < 8; b++) {
		fx_rw_cmd(&c, nvme_cmd_read, 1, b, 1, buf, 512);
		assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL), 0);
	}
	assert_int_equal(dispatched(&m, 0), before0);
	assert_int_equal(dispatched(&m, 1) - before1, 8);
	ana_log(&m, "nvme1", ana);
	assert_int_equal(le64toh(al->chgcnt), 3);

	/* both inaccessible: passthrough on the head has no path (Linux's -EINVAL) */
	assert_int_equal(ucmd_ctrl_ana_state(m.ctrl, 1, NVME_ANA_STATE_INACCESSIBLE),
			 NVME_ANA_STATE_INACCESSIBLE);
	assert_int_equal(ucmd_ctrl_ana_state(c2, 1, NVME_ANA_STATE_INACCESSIBLE),
			 NVME_ANA_STATE_INACCESSIBLE);
	wait_path_state(&m, 0, NVME_ANA_STATE_INACCESSIBLE);
	wait_path_state(&m, 1, NVME_ANA_STATE_INACCESSIBLE);
	fx_rw_cmd(&c, nvme_cmd_read, 1, 0, 1, buf, 512);
	assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL), -EINVAL);
	assert_int_equal(ucmd_ctrl_ana_state(m.ctrl, 1, NVME_ANA_STATE_OPTIMIZED),
			 NVME_ANA_STATE_OPTIMIZED);
	ucmd_close(m.e, ng);
	down(&m);

	/* the owner's states are the directory's */
	up(&m, 0, false);
	assert_int_equal(ucmd_ctrl_ana_state(m.ctrl, 1, 0), NVME_ANA_STATE_OPTIMIZED);
	assert_int_equal(ucmd_ctrl_ana_state(ucmd_ctrl_controller(m.ctrl, 1), 1, 0),
			 NVME_ANA_STATE_INACCESSIBLE);
	assert_int_equal(ucmd_nvme_subsys_path_info(m.s, 1, 1, &pi), 0);
	assert_int_equal(pi.ana_state, NVME_ANA_STATE_INACCESSIBLE);
	ana_log(&m, "nvme1", ana);
	assert_int_equal(le64toh(al->chgcnt), 6);
	down(&m);
	char rm[128];
	snprintf(rm, sizeof(rm), "rm -rf %s", m.dir);
	assert_int_equal(system(rm), 0);
	free(id); free(ana); free(buf);
}

/*
 * I/O reaching an inaccessible controller (a host that does not follow
 * ANA: controller 2 attached alone) fails with the path status, without
 * DNR; admin commands still run; a subsystem of one has no ANA state.
 */
static void test_ana_io_status(void **state)
{
	struct ucmd_ctrl_params cp = { .controllers = 2 };
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct ucmd_ns_params np = { .nsze = 4096, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct ucmd_nvme_host_opts ho = { 0 };
	struct ucmd_nvme_host *h;
	struct mp m = { 0 };
	uint8_t *buf = fx_alloc(4096);
	struct nvme_id_ctrl *id = fx_alloc(4096);
	struct nvme_uring_cmd c;
	struct ucmd_ctrl *one;

	(void)state;
	m.e = ucmd_engine_new();
	assert_non_null(m.e);
	assert_int_equal(ucmd_ctrl_create(&cp, &m.ctrl), 0);
	assert_int_equal(ucmd_ctrl_ns_create(m.ctrl, &np), 1);
	assert_int_equal(ucmd_nvme_attach(m.e, ucmd_ctrl_controller(m.ctrl, 1), &ho, &h), 0);
	assert_int_equal(ucmd_queue_init_engine(m.e, 16, &m.ring, &p), 0);
	int ng = ucmd_open(m.e, "ng0n1", O_RDWR);
	assert_true(ng >= 0);
	fx_rw_cmd(&c, nvme_cmd_write, 1, 0, 1, buf, 512);
	assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL), 0);
	assert_int_equal(ucmd_ctrl_ana_state(ucmd_ctrl_controller(m.ctrl, 1), 1,
					     NVME_ANA_STATE_INACCESSIBLE), NVME_ANA_STATE_INACCESSIBLE);
	assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL),
			 (NVME_SCT_PATH << NVME_SCT_SHIFT) | NVME_SC_ANA_INACCESSIBLE);
	fx_rw_cmd(&c, nvme_cmd_read, 1, 0, 1, buf, 512);
	assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL),
			 (NVME_SCT_PATH << NVME_SCT_SHIFT) | NVME_SC_ANA_INACCESSIBLE);
	assert_int_equal(ucmd_ctrl_ana_state(ucmd_ctrl_controller(m.ctrl, 1), 1,
					     NVME_ANA_STATE_PERSISTENT_LOSS),
			 NVME_ANA_STATE_PERSISTENT_LOSS);
	assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL),
			 (NVME_SCT_PATH << NVME_SCT_SHIFT) | NVME_SC_ANA_PERSISTENT_LOSS);
	assert_int_equal(ucmd_ctrl_ana_state(ucmd_ctrl_controller(m.ctrl, 1), 1,
					     NVME_ANA_STATE_CHANGE), NVME_ANA_STATE_CHANGE);
	assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL),
			 (NVME_SCT_PATH << NVME_SCT_SHIFT) | NVME_SC_ANA_TRANSITION);
	/* admin commands still run through it */
	assert_int_equal(identify(&m, "nvme0", NVME_IDENTIFY_CNS_CTRL, 0, id), 0);
	assert_int_equal(ucmd_ctrl_ana_state(ucmd_ctrl_controller(m.ctrl, 1), 1,
					     NVME_ANA_STATE_NONOPTIMIZED), NVME_ANA_STATE_NONOPTIMIZED);
	fx_rw_cmd(&c, nvme_cmd_read, 1, 0, 1, buf, 512);
	assert_int_equal(cmd(&m, ng, NVME_URING_CMD_IO, &c, NULL), 0);
	ucmd_close(m.e, ng);
	ucmd_queue_exit(&m.ring);
	ucmd_nvme_detach(h);
	assert_int_equal(ucmd_ctrl_destroy(m.ctrl), 0);

	struct ucmd_ctrl_params cp1 = { 0 };
	assert_int_equal(ucmd_ctrl_create(&cp1, &one), 0);
	assert_int_equal(ucmd_ctrl_ana_state(one, 1, 0), -EOPNOTSUPP);
	assert_int_equal(ucmd_ctrl_destroy(one), 0);
	ucmd_engine_free(m.e);
	free(buf); free(id);
}

static int feature(struct mp *m, const char *dev, uint8_t op, uint32_t cdw10, uint32_t cdw11,
		   uint64_t *res)
{
	struct nvme_uring_cmd c = { .opcode = op, .cdw10 = cdw10, .cdw11 = cdw11 };
	int fd = ucmd_open(m->e, dev, O_RDWR), ret;

	assert_true(fd >= 0);
	ret = cmd(m, fd, NVME_URING_CMD_ADMIN, &c, res);
	ucmd_close(m->e, fd);
	return ret;
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

static int admin(struct mp *m, const char *dev, struct nvme_uring_cmd *c, uint64_t *res)
{
	int fd = ucmd_open(m->e, dev, O_RDWR), ret;

	assert_true(fd >= 0);
	ret = cmd(m, fd, NVME_URING_CMD_ADMIN, c, res);
	ucmd_close(m->e, fd);
	return ret;
}

/* Namespace Attachment of nsid to the controller IDs given (sel 0 attach, 1 detach) */
static int attach(struct mp *m, const char *dev, uint32_t nsid, unsigned sel, unsigned n,
		  const uint16_t *ids)
{
	struct nvme_ctrl_list *l = fx_alloc(4096);
	struct nvme_uring_cmd c = { .opcode = nvme_admin_ns_attach, .nsid = nsid, .cdw10 = sel,
				    .addr = (uint64_t)(uintptr_t)l, .data_len = 4096 };
	int ret;

	l->num = htole16((uint16_t)n);
	for (unsigned i = 0; i < n; i++)
		l->identifier[i] = htole16(ids[i]);
	ret = admin(m, dev, &c, NULL);
	free(l);
	return ret;
}

/* Whether nsid is in dev's active namespace list */
static bool active(struct mp *m, const char *dev, uint32_t nsid)
{
	struct nvme_ns_list *l = fx_alloc(4096);
	bool found = false;

	assert_int_equal(identify(m, dev, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, l), 0);
	for (unsigned i = 0; i < 1024 && l->ns[i]; i++)
		found |= le32toh(l->ns[i]) == nsid;
	free(l);
	return found;
}

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

struct flipper {
	struct ucmd_ctrl *c[2];
	atomic_bool stop;
	unsigned flips;		/* atomic builtins: the writer loop reads it */
};

/* The owner turns one controller, then the other, inaccessible and back: one is always usable */
static void *flip(void *arg)
{
	struct flipper *fl = arg;

	while (!atomic_load(&fl->stop)) {
		struct ucmd_ctrl *c = fl->c[__atomic_load_n(&fl->flips, __ATOMIC_RELAXED) % 2];

		if (ucmd_ctrl_ana_state(c, 1, NVME_ANA_STATE_INACCESSIBLE) < 0 ||
		    usleep(2000) || ucmd_ctrl_ana_state(c, 1, NVME_ANA_STATE_OPTIMIZED) < 0)
			break;
		__atomic_fetch_add(&fl->flips, 1, __ATOMIC_RELAXED);
		usleep(1000);
	}
	return NULL;
}

/*
 * ANA changes racing with block I/O through the head: writes that reach a
 * controller turned inaccessible fail over to the other, none fails, and
 * every block reads back as last acknowledged.
 */
static void test_ana_flips_under_block_io(void **state)
{
	struct ucmd_ctrl_params cp = { .mode = UCMD_CTRL_THREAD, .controllers = 2 };
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct ucmd_ns_params np = { .nsze = 4096, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct ucmd_nvme_host_opts ho = { 0 };
	struct flipper fl = { 0 };
	struct mp m = { 0 };
	uint8_t *wr = fx_alloc(16 * 4096), *rd = fx_alloc(4096);
	unsigned rounds;
	pthread_t t;

	(void)state;
	m.e = ucmd_engine_new();
	assert_non_null(m.e);
	assert_int_equal(ucmd_ctrl_create(&cp, &m.ctrl), 0);
	assert_int_equal(ucmd_ctrl_ns_create(m.ctrl, &np), 1);
	assert_int_equal(ucmd_nvme_attach_multipath(m.e, m.ctrl, &ho, &m.s), 0);
	assert_int_equal(ucmd_queue_init_engine(m.e, 32, &m.ring, &p), 0);
	assert_int_equal(ucmd_nvme_subsys_set_iopolicy(m.s, "round-robin"), 0);
	int bd = ucmd_open(m.e, "nvme0n1", O_RDWR);
	assert_true(bd >= 0);
	fl.c[0] = m.ctrl;
	fl.c[1] = ucmd_ctrl_controller(m.ctrl, 1);
	assert_int_equal(pthread_create(&t, NULL, flip, &fl), 0);
	/* at least 64 rounds, and as many as 20 flips take (bounded: a stuck flipper fails) */
	for (rounds = 0; rounds < 64 || (__atomic_load_n(&fl.flips, __ATOMIC_RELAXED) < 20 &&
					  rounds < 200000); rounds++) {
		unsigned round = rounds;

		for (unsigned k = 0; k < 16; k++) {
			fx_fill(wr + k * 4096, 4096, round * 16 + k);
			ucmd_prep_write(ucmd_get_sqe(&m.ring), bd, wr + k * 4096, 4096, k * 4096);
		}
		assert_int_equal(ucmd_submit_and_wait(&m.ring, 16), 16);
		for (unsigned k = 0; k < 16; k++) {
			struct io_uring_cqe *cqe;

			assert_int_equal(ucmd_wait_cqe(&m.ring, &cqe), 0);
			assert_int_equal(cqe->res, 4096);
			ucmd_cqe_seen(&m.ring, cqe);
		}
	}
	atomic_store(&fl.stop, true);
	pthread_join(t, NULL);
	assert_true(fl.flips >= 20);
	struct ucmd_nvme_path_info pi;
	assert_int_equal(ucmd_nvme_subsys_path_info(m.s, 1, 0, &pi), 0);
	print_message("%u ANA flips, %lu block requests failed over\n", fl.flips, pi.failovers);
	for (unsigned k = 0; k < 16; k++) {
		struct io_uring_cqe *cqe;

		ucmd_prep_read(ucmd_get_sqe(&m.ring), bd, rd, 4096, k * 4096);
		assert_int_equal(ucmd_submit_and_wait(&m.ring, 1), 1);
		assert_int_equal(ucmd_wait_cqe(&m.ring, &cqe), 0);
		assert_int_equal(cqe->res, 4096);
		ucmd_cqe_seen(&m.ring, cqe);
		fx_fill(wr, 4096, (rounds - 1) * 16 + k);
		assert_memory_equal(rd, wr, 4096);
	}
	ucmd_close(m.e, bd);
	ucmd_queue_exit(&m.ring);
	ucmd_nvme_subsys_detach(m.s);
	assert_int_equal(ucmd_ctrl_destroy(m.ctrl), 0);
	ucmd_engine_free(m.e);
	free(wr);
	free(rd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_controllers_one_subsystem),
		cmocka_unit_test(test_one_controller_as_before),
		cmocka_unit_test(test_threaded_controllers),
		cmocka_unit_test(test_ana_state_change),
		cmocka_unit_test(test_ana_io_status),
		cmocka_unit_test(test_saved_features_per_controller),
		cmocka_unit_test(test_ns_mgmt_any_controller),
		cmocka_unit_test(test_ana_flips_under_block_io),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
