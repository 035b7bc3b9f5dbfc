/* SPDX-License-Identifier: MIT */
/* Metadata: extended LBAs (interleaved) and separate buffers (MPTR), and
 * that both are views of the same stored bytes. */
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

static void test_separate_metadata(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 256, .lbaf = 1, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct host h;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	uint8_t *d = host_alloc(&h, 4 * 512), *m = host_alloc(&h, 4 * 8);
	uint8_t *rd = host_alloc(&h, 4 * 512), *rm = host_alloc(&h, 4 * 8);
	fill_pattern(d, 4 * 512, 1);
	fill_pattern(m, 4 * 8, 2);
	assert_int_equal(host_io(&h, nvme_cmd_write, nsid, 10, 4, d, 4 * 512, m, 0), 0);
	assert_int_equal(host_io(&h, nvme_cmd_read, nsid, 10, 4, rd, 4 * 512, rm, 0), 0);
	assert_memory_equal(d, rd, 4 * 512);
	assert_memory_equal(m, rm, 4 * 8);
	/* compare covers metadata too */
	assert_int_equal(host_io(&h, nvme_cmd_compare, nsid, 10, 4, d, 4 * 512, m, 0), 0);
	m[5] ^= 0xff;
	assert_int_equal(host_io(&h, nvme_cmd_compare, nsid, 10, 4, d, 4 * 512, m, 0), SC(2, 0x85) | DNR);

	/* PSDT 01b: SGL data, contiguous MPTR */
	struct ucmd_nvme_sqe s = { .opcode = nvme_cmd_read, .nsid = nsid, .flags = UCMD_NVME_PSDT_SGL_MPTR_CONTIG };
	struct ucmd_nvme_sgl_desc desc = { .addr = (uintptr_t)rd, .length = 4 * 512 };
	memset(rm, 0, 32);
	memcpy(s.dptr.sgl1, &desc, sizeof(desc));
	s.mptr = (uintptr_t)rm;
	s.cdw10 = 10;
	s.cdw12 = 3;
	assert_int_equal(host_cmd(&h, 1, &s, NULL), 0);
	m[5] ^= 0xff;
	assert_memory_equal(m, rm, 32);
	/* PSDT 10b: MPTR points to an SGL descriptor */
	struct ucmd_nvme_sgl_desc *md = host_alloc(&h, 4096);
	md->addr = (uintptr_t)rm;
	md->length = 32;
	md->type = 0;
	memset(rm, 0, 32);
	s.flags = UCMD_NVME_PSDT_SGL_MPTR_SGL;
	s.mptr = (uintptr_t)md;
	assert_int_equal(host_cmd(&h, 1, &s, NULL), 0);
	assert_memory_equal(m, rm, 32);
	md->length = 16;
	assert_int_equal(host_cmd(&h, 1, &s, NULL), SC(0, 0x10) | DNR);
	/* metadata pointer not host memory */
	s.flags = 0;
	host_set_prp(&h, &s, rd, 4 * 512);
	s.mptr = 0;
	assert_int_equal(host_cmd(&h, 1, &s, NULL), SC(0, 0x04) | DNR);
	host_close(&h);
}

static void test_extended_lba(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 256, .lbaf = 6, .extended = true,
				      .store = UCMD_NS_STORE_RAM, .attach = true };
	const size_t lb = 4096 + 16;
	struct host h;
	uint32_t nsid;
	uint8_t id[4096];

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	assert_int_equal(host_identify(&h, 0, nsid, 0, id), 0);
	struct nvme_id_ns *ns = (void *)id;
	assert_int_equal(ns->flbas, 6 | NVME_NS_FLBAS_META_EXT);
	assert_int_equal(ns->lbaf[6].ds, 12);
	assert_int_equal(ns->lbaf[6].ms, 16);

	uint8_t *w = host_alloc(&h, 3 * lb), *r = host_alloc(&h, 3 * lb);
	fill_pattern(w, 3 * lb, 3);
	assert_int_equal(host_io(&h, nvme_cmd_write, nsid, 5, 3, w, 3 * lb, NULL, 0), 0);
	assert_int_equal(host_io(&h, nvme_cmd_read, nsid, 5, 3, r, 3 * lb, NULL, 0), 0);
	assert_memory_equal(w, r, 3 * lb);
	/* one block at a time lands in the same place */
	memset(r, 0, lb);
	assert_int_equal(host_io(&h, nvme_cmd_read, nsid, 6, 1, r, lb, NULL, 0), 0);
	assert_memory_equal(w + lb, r, lb);

	/* Reformat to separate metadata (same LBA format): the stored bytes
	 * are erased by format, so write again and view both ways. */
	struct ucmd_nvme_sqe f = { .opcode = nvme_admin_format_nvm, .nsid = nsid, .cdw10 = 6 };
	assert_int_equal(host_cmd(&h, 0, &f, NULL), 0);
	uint8_t *d = host_alloc(&h, 4096), *m = host_alloc(&h, 16);
	fill_pattern(d, 4096, 4);
	fill_pattern(m, 16, 5);
	assert_int_equal(host_io(&h, nvme_cmd_write, nsid, 0, 1, d, 4096, m, 0), 0);
	f.cdw10 = 6 | 1u << 4;	/* MSET: extended */
	assert_int_equal(host_cmd(&h, 0, &f, NULL), 0);
	assert_int_equal(host_io(&h, nvme_cmd_read, nsid, 0, 1, r, lb, NULL, 0), 0);
	for (size_t i = 0; i < lb; i++)
		assert_int_equal(r[i], 0);	/* format erased it */
	host_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_separate_metadata),
		cmocka_unit_test(test_extended_lba),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
