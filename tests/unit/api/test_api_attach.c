/* SPDX-License-Identifier: MIT */
/*
 * ucmd_nvme_attach() through the public headers alone: the driver wires
 * the controller's interrupts itself (no irq line for the caller), one host
 * per controller, and detach disconnects so the controller can take another.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <ucmd/ctrl.h>
#include <ucmd/nvme.h>
#include <ucmd/ucmd.h>

struct rig {
	struct ucmd_engine *e;
	struct ucmd_nvme_host *host;
	struct ucmd_ring ring;
	int ng;
};

static struct ucmd_ctrl *new_ctrl(enum ucmd_ctrl_mode mode)
{
	struct ucmd_ctrl_params cp = { .mode = mode };
	struct ucmd_ns_params np = { .nsze = 2048, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct ucmd_ctrl *c;

	assert_int_equal(ucmd_ctrl_create(&cp, &c), 0);
	assert_int_equal(ucmd_ctrl_ns_create(c, &np), 1);
	return c;
}

static void rig_up(struct rig *r, struct ucmd_ctrl *c)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };

	assert_int_equal(ucmd_engine_create(&r->e), 0);
	assert_int_equal(ucmd_nvme_attach(r->e, c, NULL, &r->host), 0);
	assert_int_equal(ucmd_queue_init_engine(r->e, 64, &r->ring, &p), 0);
	r->ng = ucmd_open(r->e, "ng0n1", O_RDWR);
	assert_true(r->ng >= 0);
}

static void rig_down(struct rig *r)
{
	ucmd_queue_exit(&r->ring);
	ucmd_close(r->e, r->ng);
	ucmd_nvme_detach(r->host);
	ucmd_engine_free(r->e);
}

static int rw(struct rig *r, uint8_t opcode, void *buf, uint64_t slba)
{
	struct nvme_uring_cmd c = { .opcode = opcode, .nsid = 1, .data_len = 512,
				    .addr = (uint64_t)(uintptr_t)buf, .cdw10 = (uint32_t)slba };
	struct io_uring_cqe *cqe;
	int res;

	ucmd_prep_nvme_cmd(ucmd_get_sqe(&r->ring), r->ng, NVME_URING_CMD_IO, &c);
	assert_int_equal(ucmd_submit_and_wait(&r->ring, 1), 1);
	assert_int_equal(ucmd_wait_cqe(&r->ring, &cqe), 0);
	res = cqe->res;
	ucmd_cqe_seen(&r->ring, cqe);
	return res;
}

/* A write and a read back: their completions arrive through interrupts. */
static void io_round_trip(struct rig *r, int pattern)
{
	uint8_t *w = aligned_alloc(4096, 4096), *rd = aligned_alloc(4096, 4096);

	memset(w, pattern, 512);
	memset(rd, 0, 512);
	assert_int_equal(rw(r, 0x01, w, 5), 0);
	assert_int_equal(rw(r, 0x02, rd, 5), 0);
	assert_memory_equal(w, rd, 512);
	free(w);
	free(rd);
}

static void test_attach_wires_interrupts(void **state)
{
	(void)state;
	/* thread mode: completions come from the controller's thread as interrupts */
	for (int mode = UCMD_CTRL_INLINE; mode <= UCMD_CTRL_THREAD; mode++) {
		struct ucmd_ctrl *c = new_ctrl((enum ucmd_ctrl_mode)mode);
		struct ucmd_ctrl_stats st;
		struct rig r;

		rig_up(&r, c);
		io_round_trip(&r, 0x5a + mode);
		ucmd_ctrl_get_stats(c, &st);
		assert_true(st.interrupts > 0);
		rig_down(&r);
		ucmd_ctrl_destroy(c);
	}
}

/* A second host is refused before it touches the controller: the first keeps working. */
static void test_one_host_per_controller(void **state)
{
	struct ucmd_ctrl *c = new_ctrl(UCMD_CTRL_THREAD);
	struct ucmd_nvme_host *h2 = NULL;
	struct ucmd_engine *e2;
	struct rig r;

	(void)state;
	rig_up(&r, c);
	assert_int_equal(ucmd_engine_create(&e2), 0);
	assert_int_equal(ucmd_nvme_attach(e2, c, NULL, &h2), -EBUSY);
	assert_null(h2);
	assert_non_null(strstr(ucmd_last_error(), "already has a host"));
	assert_int_equal(ucmd_open(e2, "ng0n1", O_RDWR), -ENOENT);
	io_round_trip(&r, 0x11);
	rig_down(&r);
	ucmd_engine_free(e2);
	ucmd_ctrl_destroy(c);
}

/* Detach disconnects the interrupt target: another host may attach after it. */
static void test_detach_disconnects(void **state)
{
	struct ucmd_ctrl *c = new_ctrl(UCMD_CTRL_THREAD);
	struct rig r;

	(void)state;
	for (int i = 0; i < 3; i++) {
		rig_up(&r, c);
		io_round_trip(&r, 0x20 + i);
		rig_down(&r);
	}
	ucmd_ctrl_destroy(c);
}

/*
 * Detach with commands in flight on a controller thread that raises
 * interrupts: none may reach the freed host (ASan, TSan builds).
 */
static void test_detach_with_io_in_flight(void **state)
{
	struct ucmd_ctrl *c = new_ctrl(UCMD_CTRL_THREAD);
	uint8_t *buf = aligned_alloc(4096, 32 * 4096);
	struct rig r;

	(void)state;
	for (int round = 0; round < 8; round++) {
		rig_up(&r, c);
		for (unsigned i = 0; i < 32; i++) {
			struct nvme_uring_cmd cmd = {
				.opcode = 0x02, .nsid = 1, .data_len = 512,
				.addr = (uint64_t)(uintptr_t)(buf + i * 4096), .cdw10 = i,
			};
			ucmd_prep_nvme_cmd(ucmd_get_sqe(&r.ring), r.ng, NVME_URING_CMD_IO, &cmd);
		}
		assert_int_equal(ucmd_submit(&r.ring), 32);
		ucmd_nvme_detach(r.host);
		r.host = NULL;
		rig_down(&r);
	}
	free(buf);
	ucmd_ctrl_destroy(c);
}

static void test_attach_bad_arguments(void **state)
{
	struct ucmd_ctrl *c = new_ctrl(UCMD_CTRL_INLINE);
	struct ucmd_nvme_host *h;
	struct ucmd_engine *e;

	(void)state;
	assert_int_equal(ucmd_engine_create(&e), 0);
	assert_int_equal(ucmd_nvme_attach(NULL, c, NULL, &h), -EINVAL);
	assert_non_null(strstr(ucmd_last_error(), "engine"));
	assert_int_equal(ucmd_nvme_attach(e, NULL, NULL, &h), -EINVAL);
	assert_non_null(strstr(ucmd_last_error(), "controller"));
	assert_int_equal(ucmd_nvme_attach(e, c, NULL, NULL), -EINVAL);
	/* nothing was attached: a real attach still works */
	assert_int_equal(ucmd_nvme_attach(e, c, NULL, &h), 0);
	ucmd_nvme_detach(h);
	ucmd_engine_free(e);
	ucmd_ctrl_destroy(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach_wires_interrupts),
		cmocka_unit_test(test_one_host_per_controller),
		cmocka_unit_test(test_detach_disconnects),
		cmocka_unit_test(test_detach_with_io_in_flight),
		cmocka_unit_test(test_attach_bad_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
