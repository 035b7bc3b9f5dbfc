/* SPDX-License-Identifier: MIT */
/*
 * Zone Append through the public API with a real ring: the LBA the
 * controller chose reaches the application in the big CQE of
 * NVME_URING_CMD_IO (big_cqe[0], as Linux's nvme_uring_cmd_end_io puts
 * the 64-bit result there), and a zone report through the same ring agrees.
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

#define ZSZE	96	/* blocks: not a power of two */
#define NR_Z	4

struct rig {
	struct ucmd_ctrl *c;
	struct ucmd_engine *e;
	struct ucmd_nvme_host *host;
	struct ucmd_ring ring;
	int ng;
};

static void rig_up(struct rig *r, enum ucmd_ctrl_mode mode)
{
	struct ucmd_ctrl_params cp = { .mode = mode };
	struct ucmd_ns_params np = { .nsze = NR_Z * ZSZE, .store = UCMD_NS_STORE_RAM,
				     .attach = true, .zoned = { .zone_size = ZSZE } };
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };

	assert_int_equal(ucmd_ctrl_create(&cp, &r->c), 0);
	assert_int_equal(ucmd_ctrl_ns_create(r->c, &np), 1);
	assert_int_equal(ucmd_engine_create(&r->e), 0);
	assert_int_equal(ucmd_nvme_attach(r->e, r->c, NULL, &r->host), 0);
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
	ucmd_ctrl_destroy(r->c);
}

static void prep_append(struct rig *r, uint64_t zslba, uint32_t nlb, void *buf, uint64_t tag)
{
	struct nvme_uring_cmd c = { .opcode = 0x7d, .nsid = 1, .data_len = nlb * 512,
				    .addr = (uint64_t)(uintptr_t)buf, .cdw10 = (uint32_t)zslba,
				    .cdw11 = (uint32_t)(zslba >> 32), .cdw12 = nlb - 1 };
	struct io_uring_sqe *sqe = ucmd_get_sqe(&r->ring);

	ucmd_prep_nvme_cmd(sqe, r->ng, NVME_URING_CMD_IO, &c);
	sqe->user_data = tag;
}

static void test_append_lba_in_big_cqe(void **state)
{
	(void)state;
	for (int mode = UCMD_CTRL_INLINE; mode <= UCMD_CTRL_THREAD; mode++) {
		uint8_t *buf = aligned_alloc(4096, 8 * 4096), *rd = aligned_alloc(4096, 4096);
		bool seen[8] = { false };
		uint64_t lbas[8];
		struct io_uring_cqe *cqe;
		struct rig r;

		rig_up(&r, (enum ucmd_ctrl_mode)mode);
		/* eight appends of 2 blocks in flight at once, into zone 1 */
		for (unsigned i = 0; i < 8; i++) {
			memset(buf + i * 1024, 0x40 + (int)i, 1024);
			prep_append(&r, ZSZE, 2, buf + i * 1024, i);
		}
		assert_int_equal(ucmd_submit_and_wait(&r.ring, 8), 8);
		for (unsigned n = 0; n < 8; n++) {
			assert_int_equal(ucmd_wait_cqe(&r.ring, &cqe), 0);
			assert_int_equal(cqe->res, 0);
			assert_true(cqe->user_data < 8);
			lbas[cqe->user_data] = cqe->big_cqe[0];
			ucmd_cqe_seen(&r.ring, cqe);
		}
		for (unsigned tag = 0; tag < 8; tag++) {
			uint64_t lba = lbas[tag];
			struct nvme_uring_cmd c = { .opcode = 0x02, .nsid = 1, .data_len = 512,
						    .addr = (uint64_t)(uintptr_t)rd };

			/* inside zone 1, 2-block aligned, each slot once */
			assert_true(lba >= ZSZE && lba < ZSZE + 16 && !((lba - ZSZE) & 1));
			assert_false(seen[(lba - ZSZE) / 2]);
			seen[(lba - ZSZE) / 2] = true;
			/* the data of that append is where the controller said */
			c.cdw10 = (uint32_t)lba;
			ucmd_prep_nvme_cmd(ucmd_get_sqe(&r.ring), r.ng, NVME_URING_CMD_IO, &c);
			assert_int_equal(ucmd_submit_and_wait(&r.ring, 1), 1);
			assert_int_equal(ucmd_wait_cqe(&r.ring, &cqe), 0);
			assert_int_equal(cqe->res, 0);
			ucmd_cqe_seen(&r.ring, cqe);
			assert_int_equal(rd[0], 0x40 + (int)tag);
		}
		/* the report agrees: write pointer after the 16 blocks */
		{
			uint8_t *rep = aligned_alloc(4096, 4096);
			struct nvme_uring_cmd c = { .opcode = 0x7a, .nsid = 1, .data_len = 4096,
						    .addr = (uint64_t)(uintptr_t)rep,
						    .cdw10 = ZSZE, .cdw12 = 4096 / 4 - 1 };

			ucmd_prep_nvme_cmd(ucmd_get_sqe(&r.ring), r.ng, NVME_URING_CMD_IO, &c);
			assert_int_equal(ucmd_submit_and_wait(&r.ring, 1), 1);
			assert_int_equal(ucmd_wait_cqe(&r.ring, &cqe), 0);
			assert_int_equal(cqe->res, 0);
			ucmd_cqe_seen(&r.ring, cqe);
			assert_int_equal(*(uint64_t *)rep, NR_Z - 1);		/* nr_zones */
			assert_int_equal(*(uint64_t *)(rep + 64 + 16), ZSZE);	/* zslba */
			assert_int_equal(*(uint64_t *)(rep + 64 + 24), ZSZE + 16);	/* wp */
			free(rep);
		}
		/* an append not at a zone start: Invalid Field, nothing in the big CQE */
		prep_append(&r, ZSZE + 1, 1, buf, 99);
		assert_int_equal(ucmd_submit_and_wait(&r.ring, 1), 1);
		assert_int_equal(ucmd_wait_cqe(&r.ring, &cqe), 0);
		assert_int_equal(cqe->res, 0x4002);
		ucmd_cqe_seen(&r.ring, cqe);
		rig_down(&r);
		free(buf);
		free(rd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_append_lba_in_big_cqe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
