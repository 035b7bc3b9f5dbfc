/* SPDX-License-Identifier: MIT */
/* Data transfer: PRP entries/lists/offsets, SGL data block, segments,
 * invalid descriptors and lengths, unmappable memory, MDTS. */
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
#define BS 512
#define NSZE 8192

/* Refuses one address range, identity elsewhere */
static uint64_t bad_lo, bad_hi;
static void *test_map(const struct ucmd_dma *dma, uint64_t addr, uint64_t len)
{
	(void)dma;
	if (!addr || (addr < bad_hi && addr + len > bad_lo))
		return NULL;
	return (void *)(uintptr_t)addr;
}
static const struct ucmd_dma test_dma = { .map = test_map };

struct fx {
	struct host h;
	uint32_t nsid;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = NSZE, .store = UCMD_NS_STORE_RAM, .attach = true };

	host_default_params(&p);
	host_next_dma = &test_dma;
	p.mdts = 9;		/* 2 MiB */
	bad_lo = bad_hi = 0;
	f->nsid = host_open_ns(&f->h, &p, &nsp);
	assert_int_not_equal(f->nsid, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	host_close(&f->h);
	free(f);
	return 0;
}

static uint16_t rw_sqe(struct fx *f, struct ucmd_nvme_sqe *s, uint8_t opc, uint64_t slba, uint32_t nlb)
{
	s->opcode = opc;
	s->nsid = f->nsid;
	s->cdw10 = (uint32_t)slba;
	s->cdw12 = nlb - 1;
	return host_cmd(&f->h, 1, s, NULL);
}

static uint16_t rw_sqe_flat(struct fx *f, uint8_t opc, uint64_t slba, uint32_t nlb, void *buf,
			    size_t len)
{
	struct ucmd_nvme_sqe s = { 0 };

	host_set_prp(&f->h, &s, buf, len);
	return rw_sqe(f, &s, opc, slba, nlb);
}

/* Write through PRPs of various shapes, read back flat */
static void prp_roundtrip(struct fx *f, size_t off, uint32_t nlb)
{
	size_t len = (size_t)nlb * BS;
	uint8_t *w = host_alloc(&f->h, len + off), *r = host_alloc(&f->h, len);
	struct ucmd_nvme_sqe s = { 0 };

	fill_pattern(w + off, len, (unsigned)(off + nlb));
	host_set_prp(&f->h, &s, w + off, len);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_write, 16, nlb), 0);
	memset(&s, 0, sizeof(s));
	host_set_prp(&f->h, &s, r, len);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 16, nlb), 0);
	assert_memory_equal(w + off, r, len);
}

static void test_prp_shapes(void **state)
{
	struct fx *f = *state;

	prp_roundtrip(f, 0, 1);		/* PRP1 only */
	prp_roundtrip(f, 0, 8);		/* exactly one page */
	prp_roundtrip(f, 0, 16);	/* PRP1 + PRP2 */
	prp_roundtrip(f, 512, 8);	/* offset: spills into PRP2 */
	prp_roundtrip(f, 0, 64);	/* PRP list */
	prp_roundtrip(f, 1024, 64);	/* list with offset PRP1 */
	prp_roundtrip(f, 0, 4096);	/* 2 MiB: chained PRP list pages */
}

/*
 * Write from and read into buffers at an offset in their page: len fits
 * PRP1's page and PRP2's exactly when len <= 8192 - offset (the short
 * path, ctrl_prp_short), and one byte more needs a PRP list at PRP2. The
 * bytes around the read's buffer stay as they were.
 */
static void prp_offsets(struct fx *f, size_t off, uint32_t nlb, uint64_t slba)
{
	size_t len = (size_t)nlb * BS, all = len + off + 4096;
	uint8_t *w = host_alloc(&f->h, all), *r = host_alloc(&f->h, all);
	uint8_t *ref = malloc(all);
	struct ucmd_nvme_sqe s = { 0 };

	assert_non_null(ref);
	fill_pattern(w + off, len, (unsigned)(off + nlb));
	memset(r, 0xa5, all);
	memset(ref, 0xa5, all);
	memcpy(ref + off, w + off, len);
	host_set_prp(&f->h, &s, w + off, len);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_write, slba, nlb), 0);
	memset(&s, 0, sizeof(s));
	host_set_prp(&f->h, &s, r + off, len);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, slba, nlb), 0);
	assert_memory_equal(ref, r, all);
	free(ref);
}

static void test_prp_short_boundary(void **state)
{
	struct fx *f = *state;

	prp_offsets(f, 512, 15, 100);	/* 3584 + 4096: PRP1 and PRP2 exactly */
	prp_offsets(f, 512, 16, 200);	/* 512 bytes more: a list at PRP2 */
	prp_offsets(f, 4092, 1, 300);	/* 4 bytes in PRP1's page, 508 in PRP2's */
	prp_offsets(f, 4092, 9, 400);	/* 4 + 4096 + 508: a list */
	prp_offsets(f, 8, 16, 500);	/* 4088 + 4096 + 8: a list */
	prp_offsets(f, 0, 16, 600);	/* two whole pages */
}

/* PRP1 and PRP2 in pages apart: the short path's two iovecs, for each direction */
static void test_prp_short_apart(void **state)
{
	struct fx *f = *state;
	const size_t len = 15 * BS, first = 4096 - 512;
	uint8_t *flat = host_alloc(&f->h, len), *b = host_alloc(&f->h, 4 * 4096);
	uint8_t *back = host_alloc(&f->h, len);
	struct ucmd_nvme_sqe s = { 0 };

	fill_pattern(flat, len, 77);
	assert_int_equal(rw_sqe_flat(f, nvme_cmd_write, 700, 15, flat, len), 0);
	s.dptr.prp1 = (uintptr_t)b + 512;
	s.dptr.prp2 = (uintptr_t)b + 3 * 4096;
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 700, 15), 0);
	assert_memory_equal(b + 512, flat, first);
	assert_memory_equal(b + 3 * 4096, flat + first, len - first);
	for (size_t i = 4096; i < 3 * 4096; i++)
		assert_int_equal(b[i], 0);
	/* and written from the two places back to other blocks */
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_write, 800, 15), 0);
	assert_int_equal(rw_sqe_flat(f, nvme_cmd_read, 800, 15, back, len), 0);
	assert_memory_equal(back, flat, len);
}

static void test_prp_invalid_offset(void **state)
{
	struct fx *f = *state;
	uint8_t *b = host_alloc(&f->h, 5 * 4096);
	uint64_t *list = host_alloc(&f->h, 4096);
	struct ucmd_nvme_sqe s = { 0 };

	/* PRP1 not dword aligned */
	s.dptr.prp1 = (uintptr_t)b + 2;
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 1), SC(0, 0x13) | DNR);
	/* PRP2 data pointer with an offset */
	memset(&s, 0, sizeof(s));
	s.dptr.prp1 = (uintptr_t)b;
	s.dptr.prp2 = (uintptr_t)b + 4096 + 512;
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 16), SC(0, 0x13) | DNR);
	/* list entry with an offset */
	memset(&s, 0, sizeof(s));
	s.dptr.prp1 = (uintptr_t)b;
	s.dptr.prp2 = (uintptr_t)list;
	list[0] = (uintptr_t)b + 4096;
	list[1] = (uintptr_t)b + 2 * 4096 + 8;
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 24), SC(0, 0x13) | DNR);
}

/*
 * PRP2 in the last slot of its page makes that slot the chain pointer at
 * once; pointing it at itself (or at any list not starting a page) must be
 * refused, not walked forever with the controller's lock held.
 */
static void test_prp_list_chain_offset(void **state)
{
	struct fx *f = *state;
	uint8_t *b = host_alloc(&f->h, 4 * 4096);
	uint64_t *list = host_alloc(&f->h, 2 * 4096);
	struct ucmd_nvme_sqe s = { 0 };

	s.dptr.prp1 = (uintptr_t)b;
	s.dptr.prp2 = (uintptr_t)&list[511];
	list[511] = (uintptr_t)&list[511];
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 24), SC(0, 0x13) | DNR);
	/* two lists chaining to each other's last slot */
	list[511] = (uintptr_t)&list[1023];
	list[1023] = (uintptr_t)&list[511];
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 24), SC(0, 0x13) | DNR);
	/* a chain pointer to a page-aligned list is the normal case */
	list[511] = (uintptr_t)&list[512];
	list[512] = (uintptr_t)b + 4096;
	list[513] = (uintptr_t)b + 2 * 4096;
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 24), 0);
}

static void test_unmappable(void **state)
{
	struct fx *f = *state;
	uint8_t *b = host_alloc(&f->h, 4 * 4096);
	struct ucmd_nvme_sqe s = { 0 };

	bad_lo = (uintptr_t)b + 4096;
	bad_hi = bad_lo + 4096;
	host_set_prp(&f->h, &s, b, 2 * 4096);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 16), SC(0, 0x04) | DNR);
	bad_lo = bad_hi = 0;
}

static void test_mdts(void **state)
{
	struct fx *f = *state;
	size_t len = (2u << 20) + 4096;
	uint8_t *b = host_alloc(&f->h, len);
	struct ucmd_nvme_sqe s = { 0 };

	host_set_prp(&f->h, &s, b, len);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, (uint32_t)(len / BS)), SC(0, 0x02) | DNR);
}

static void set_desc(void *p, uint64_t addr, uint32_t len, uint8_t type)
{
	struct ucmd_nvme_sgl_desc d = { .addr = addr, .length = len, .type = (uint8_t)(type << 4) };

	memcpy(p, &d, sizeof(d));
}

static void test_sgl(void **state)
{
	struct fx *f = *state;
	/* r has a byte past the transfer: an oversized SGL must leave it alone */
	uint8_t *w = host_alloc(&f->h, 8 * BS), *r = host_alloc(&f->h, 8 * BS + 1);
	struct ucmd_nvme_sgl_desc *seg1 = host_alloc(&f->h, 4096), *seg2 = host_alloc(&f->h, 4096);
	struct ucmd_nvme_sqe s = { .flags = UCMD_NVME_PSDT_SGL_MPTR_CONTIG };

	fill_pattern(w, 8 * BS, 77);
	/* single data block */
	set_desc(s.dptr.sgl1, (uintptr_t)w, 8 * BS, UCMD_NVME_SGL_DATA_BLOCK);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_write, 32, 8), 0);
	/* read back through segment -> last segment, scattered in odd pieces */
	memset(&s, 0, sizeof(s));
	s.flags = UCMD_NVME_PSDT_SGL_MPTR_CONTIG;
	set_desc(s.dptr.sgl1, (uintptr_t)seg1, 3 * 16, UCMD_NVME_SGL_SEGMENT);
	set_desc(&seg1[0], (uintptr_t)r, 100, UCMD_NVME_SGL_DATA_BLOCK);
	set_desc(&seg1[1], (uintptr_t)r + 100, 1000, UCMD_NVME_SGL_DATA_BLOCK);
	set_desc(&seg1[2], (uintptr_t)seg2, 2 * 16, UCMD_NVME_SGL_LAST_SEGMENT);
	set_desc(&seg2[0], (uintptr_t)r + 1100, 2000, UCMD_NVME_SGL_DATA_BLOCK);
	set_desc(&seg2[1], (uintptr_t)r + 3100, 8 * BS - 3100, UCMD_NVME_SGL_DATA_BLOCK);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 32, 8), 0);
	assert_memory_equal(w, r, 8 * BS);

	/* too short */
	set_desc(&seg2[1], (uintptr_t)r + 3100, 8 * BS - 3101, UCMD_NVME_SGL_DATA_BLOCK);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 32, 8), SC(0, 0x0f) | DNR);
	/* too long (SGLS bit 18): the transfer's bytes, nothing past them */
	r[8 * BS] = 0x5a;
	set_desc(&seg2[1], (uintptr_t)r + 3100, 8 * BS - 3099, UCMD_NVME_SGL_DATA_BLOCK);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 32, 8), 0);
	assert_memory_equal(w, r, 8 * BS);
	assert_int_equal(r[8 * BS], 0x5a);
	/* bit bucket / reserved types */
	set_desc(&seg2[1], (uintptr_t)r + 3100, 8 * BS - 3100, UCMD_NVME_SGL_BIT_BUCKET);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 32, 8), SC(0, 0x11) | DNR);
	set_desc(&seg2[1], (uintptr_t)r + 3100, 8 * BS - 3100, 0x7);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 32, 8), SC(0, 0x11) | DNR);
	/* a segment descriptor inside a last segment */
	set_desc(&seg2[1], (uintptr_t)seg1, 16, UCMD_NVME_SGL_SEGMENT);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 32, 8), SC(0, 0x0d) | DNR);
	/* segment pointer not last in its segment */
	set_desc(&seg1[0], (uintptr_t)seg2, 16, UCMD_NVME_SGL_SEGMENT);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 32, 8), SC(0, 0x0d) | DNR);
	/* unmappable segment */
	memset(&s, 0, sizeof(s));
	s.flags = UCMD_NVME_PSDT_SGL_MPTR_CONTIG;
	bad_lo = (uintptr_t)seg1;
	bad_hi = bad_lo + 4096;
	set_desc(s.dptr.sgl1, (uintptr_t)seg1, 16, UCMD_NVME_SGL_LAST_SEGMENT);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 32, 8), SC(0, 0x04) | DNR);
	bad_lo = bad_hi = 0;
	/* PSDT 11b is reserved */
	s.flags = UCMD_NVME_PSDT_MASK;
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 32, 8), SC(0, 0x02) | DNR);
}

/* ctrl_set_dma_window: one window for every command, and who asked */
static struct ucmd_dma_window test_win;
static struct iovec test_win_seg[2];
static bool test_win_on;
static unsigned test_win_calls;
static uint16_t test_win_sqid;

static bool test_window(void *arg, uint16_t sqid, uint16_t cid, struct ucmd_dma_window *out)
{
	(void)arg;
	(void)cid;
	test_win_calls++;
	test_win_sqid = sqid;
	*out = test_win;
	return test_win_on;
}

/*
 * A windowed command reaches only its window: PRP1's page past the
 * buffer, PRP2 read as a list pointer into the data, a list page outside,
 * metadata past its buffer and an SGL longer than the window are Data
 * Transfer Errors with nothing written; the same commands inside it are
 * served; queue memory is never taken from one; an unwindowed command
 * (the host's own) reaches any memory map() takes.
 */
static void test_dma_window(void **state)
{
	struct fx *f = *state;
	uint8_t *b = host_alloc(&f->h, 4 * 4096), *canary = host_alloc(&f->h, 4096);
	uint64_t *list = host_alloc(&f->h, 4096);
	struct ucmd_nvme_sqe s = { 0 };

	memset(canary, 0x77, 4096);
	test_win_seg[0] = (struct iovec){ b, 2 * 4096 };
	test_win = (struct ucmd_dma_window){ .seg = test_win_seg, .nr_seg = 1 };
	test_win_on = true;
	test_win_calls = 0;
	ctrl_set_dma_window(f->h.ctrl, test_window, NULL);

	/* inside: two pages through PRP1/PRP2 */
	host_set_prp(&f->h, &s, b, 2 * 4096);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 16), 0);
	assert_true(test_win_calls > 0);
	assert_int_equal(test_win_sqid, 1);
	/* NLB for four pages: PRP2 (the second data page) taken for a list */
	for (unsigned i = 0; i < 512; i++)
		((uint64_t *)(void *)(b + 4096))[i] = (uintptr_t)canary;
	memset(&s, 0, sizeof(s));
	s.dptr.prp1 = (uintptr_t)b;
	s.dptr.prp2 = (uintptr_t)b + 4096;
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 32), SC(0, 0x04) | DNR);
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal(canary[i], 0x77);
	/* a 512-byte window: its page is the limit (an IOMMU's), PRP2's is past it */
	test_win_seg[0].iov_len = 512;
	memset(&s, 0, sizeof(s));
	host_set_prp(&f->h, &s, b, 2 * 4096);
	memset(b + 4096, 0x5a, 4096);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 16), SC(0, 0x04) | DNR);
	for (unsigned i = 4096; i < 2 * 4096; i++)
		assert_int_equal(b[i], 0x5a);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 8), 0);
	/* a window ending in the page before: PRP1 one byte in is outside */
	test_win_seg[0] = (struct iovec){ b - 512, 512 };
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 1), SC(0, 0x04) | DNR);

	/* a PRP list: outside the window, then in it (list range) */
	test_win_seg[0] = (struct iovec){ b, 4 * 4096 };
	list[0] = (uintptr_t)b + 4096;
	list[1] = (uintptr_t)b + 2 * 4096;
	list[2] = (uintptr_t)b + 3 * 4096;
	memset(&s, 0, sizeof(s));
	s.dptr.prp1 = (uintptr_t)b;
	s.dptr.prp2 = (uintptr_t)list;
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 32), SC(0, 0x04) | DNR);
	test_win.list = (uintptr_t)list;
	test_win.list_len = 3 * 8;
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 32), 0);
	/* the list's entries are checked too: one at the canary */
	list[2] = (uintptr_t)canary;
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 32), SC(0, 0x04) | DNR);
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal(canary[i], 0x77);

	/* an SGL data block longer than the window */
	memset(&s, 0, sizeof(s));
	s.flags = UCMD_NVME_PSDT_SGL_MPTR_CONTIG;
	set_desc(s.dptr.sgl1, (uintptr_t)b, 5 * 4096, UCMD_NVME_SGL_DATA_BLOCK);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 40), SC(0, 0x04) | DNR);
	set_desc(s.dptr.sgl1, (uintptr_t)b, 4 * 4096, UCMD_NVME_SGL_DATA_BLOCK);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 32), 0);
	/* an address whose end wraps past 2^64 */
	set_desc(s.dptr.sgl1, UINT64_MAX - 100, 4096, UCMD_NVME_SGL_DATA_BLOCK);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 8), SC(0, 0x04) | DNR);

	/* queue memory from a windowed command: refused before any field */
	memset(&s, 0, sizeof(s));
	s.opcode = nvme_admin_create_cq;
	s.dptr.prp1 = (uintptr_t)b;
	s.cdw10 = 1u << 16 | 4;
	s.cdw11 = 1;
	assert_int_equal(host_cmd(&f->h, 0, &s, NULL), SC(0, 0x04) | DNR);
	assert_int_equal(test_win_sqid, 0);
	s.opcode = nvme_admin_create_sq;
	s.cdw11 = 1 | 1u << 16;
	assert_int_equal(host_cmd(&f->h, 0, &s, NULL), SC(0, 0x04) | DNR);

	/* not windowed (the host's own): the canary page is reachable */
	test_win_on = false;
	memset(&s, 0, sizeof(s));
	host_set_prp(&f->h, &s, canary, 4096);
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 8), 0);
	/* removed: no more calls */
	ctrl_set_dma_window(f->h.ctrl, NULL, NULL);
	test_win_calls = 0;
	assert_int_equal(rw_sqe(f, &s, nvme_cmd_read, 0, 8), 0);
	assert_int_equal(test_win_calls, 0);
}

static void test_admin_rejects_sgl(void **state)
{
	struct fx *f = *state;
	uint8_t *b = host_alloc(&f->h, 4096);
	struct ucmd_nvme_sqe s = { .opcode = nvme_admin_identify, .flags = UCMD_NVME_PSDT_SGL_MPTR_CONTIG };

	s.cdw10 = 1;
	set_desc(s.dptr.sgl1, (uintptr_t)b, 4096, UCMD_NVME_SGL_DATA_BLOCK);
	assert_int_equal(host_cmd(&f->h, 0, &s, NULL), SC(0, 0x02) | DNR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_prp_shapes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prp_short_boundary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prp_short_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prp_invalid_offset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prp_list_chain_offset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unmappable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mdts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sgl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dma_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admin_rejects_sgl, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
