/* SPDX-License-Identifier: MIT */
/*
 * ANA on a controller directory's subsystem of several controllers, each a
 * port of its own whose state the owner sets (ucmd_ctrl_ana_state): the
 * notice, the log, the head's choice, the path statuses, the states kept,
 * and changes racing with block I/O.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "mpath_fixture.h"

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
		cmocka_unit_test(test_ana_state_change),
		cmocka_unit_test(test_ana_io_status),
		cmocka_unit_test(test_ana_flips_under_block_io),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
