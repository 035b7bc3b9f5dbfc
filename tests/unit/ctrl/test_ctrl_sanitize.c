/* SPDX-License-Identifier: MIT */
/*
 * Sanitize through the admin queue: each action leaves on the media what
 * the Sanitize Status log claims, commands other than the allowed ones see
 * Sanitize In Progress while it runs (it advances one chunk per controller
 * pass, so the tests count passes, never time), failure and its exits, and
 * an operation interrupted by a restart resumes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <nvme/types.h>

#include "host_sim.h"

#define SC(sct, sc)	((sct) << 8 | (sc))
#define DNR		0x4000
#define ST_IN_PROGRESS	SC(0, NVME_SC_SANITIZE_IN_PROGRESS)
#define ST_FAILED	(SC(0, NVME_SC_SANITIZE_FAILED) | DNR)
#define ST_INVALID	(SC(0, NVME_SC_INVALID_FIELD) | DNR)
/* 64 MiB of 512-byte blocks: sixteen controller passes at 4 MiB each */
#define NSZE		131072u
#define BE		NVME_SANITIZE_SANACT_START_BLOCK_ERASE
#define OW		NVME_SANITIZE_SANACT_START_OVERWRITE
#define CE		NVME_SANITIZE_SANACT_START_CRYPTO_ERASE
#define AUSE		(1u << 3)
#define OIPBP		(1u << 8)
#define NDAS		(1u << 9)
#define OWPASS(n)	((uint32_t)(n) << 4)

static uint16_t sanitize(struct host *h, uint32_t dw10, uint32_t pattern)
{
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_admin_sanitize_nvm, .cdw10 = dw10,
				     .cdw11 = pattern };

	return host_cmd(h, 0, &sqe, NULL);
}

static struct nvme_sanitize_log_page *san_log(struct host *h)
{
	static struct nvme_sanitize_log_page *l;

	l = host_alloc(h, sizeof(*l));
	assert_int_equal(host_get_log(h, NVME_LOG_LID_SANITIZE, 0, l, sizeof(*l)), 0);
	return l;
}

/* Poll the log (each poll is a controller pass) until it is no longer in progress */
static struct nvme_sanitize_log_page *wait_done(struct host *h)
{
	for (unsigned i = 0; i < 10000; i++) {
		struct nvme_sanitize_log_page *l = san_log(h);

		if ((l->sstat & 7) != NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS)
			return l;
	}
	fail_msg("the sanitize never completed");
	return NULL;
}

static uint32_t open_ram(struct host *h)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = NSZE, .lbaf = 0, .store = UCMD_NS_STORE_RAM,
				      .attach = true };

	uint32_t nsid;

	host_default_params(&p);
	nsid = host_open_ns(h, &p, &nsp);
	/* 4 MiB written per pass: the 64 MiB namespace takes sixteen */
	ctrl_test_knobs(h->ctrl, 2000, 60000, false);
	return nsid;
}

static void write_pattern(struct host *h, uint64_t slba, unsigned seed)
{
	uint8_t *w = host_alloc(h, 8 * 512);

	fill_pattern(w, 8 * 512, seed);
	assert_int_equal(host_io(h, nvme_cmd_write, 1, slba, 8, w, 8 * 512, NULL, 0), 0);
}

static uint8_t *read_blocks(struct host *h, uint64_t slba)
{
	uint8_t *r = host_alloc(h, 8 * 512);

	assert_int_equal(host_io(h, nvme_cmd_read, 1, slba, 8, r, 8 * 512, NULL, 0), 0);
	return r;
}

static void test_identify(void **state)
{
	struct host h;
	struct nvme_id_ctrl *id;

	(void)state;
	open_ram(&h);
	id = host_alloc(&h, 4096);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CTRL, 0, 0, id), 0);
	assert_int_equal(id->sanicap & 7, NVME_CTRL_SANICAP_CES | NVME_CTRL_SANICAP_BES |
			 NVME_CTRL_SANICAP_OWS);
	assert_int_equal(id->sanicap & NVME_CTRL_SANICAP_NDI, 0);
	assert_int_equal(id->sanicap >> 30, 1);
	/* never sanitized, never written: Global Data Erased */
	assert_int_equal(san_log(&h)->sstat, NVME_SANITIZE_SSTAT_GLOBAL_DATA_ERASED);
	write_pattern(&h, 0, 1);
	assert_int_equal(san_log(&h)->sstat, 0);
	host_close(&h);
}

static void test_block_erase(void **state)
{
	struct host h;
	struct nvme_sanitize_log_page *l;
	uint8_t zero[8 * 512] = { 0 };
	uint8_t *buf;

	(void)state;
	open_ram(&h);
	write_pattern(&h, 0, 7);
	write_pattern(&h, NSZE - 8, 8);
	assert_int_equal(host_io(&h, nvme_cmd_write_uncor, 1, 100, 2, NULL, 0, NULL, 0), 0);
	/* No-Deallocate: zeros written, 4 MiB per pass (deallocating goes faster) */
	assert_int_equal(sanitize(&h, BE | NDAS, 0), 0);
	/* in progress: I/O and most admin commands wait it out; a few are allowed */
	buf = host_alloc(&h, 4096);
	assert_int_equal(host_io(&h, nvme_cmd_read, 1, 0, 8, buf, 4096, NULL, 0), ST_IN_PROGRESS);
	assert_int_equal(host_io(&h, nvme_cmd_write, 1, 0, 8, buf, 4096, NULL, 0), ST_IN_PROGRESS);
	assert_int_equal(host_io(&h, nvme_cmd_flush, 1, 0, 0, NULL, 0, NULL, 0), 0);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CTRL, 0, 0, buf), 0);
	assert_int_equal(host_get_log(&h, NVME_LOG_LID_SMART, 0, buf, 512), 0);
	assert_int_equal(host_get_log(&h, NVME_LOG_LID_FW_SLOT, 0, buf, 512), ST_IN_PROGRESS);
	assert_int_equal(sanitize(&h, BE, 0), ST_IN_PROGRESS);
	l = san_log(&h);
	assert_int_equal(l->sstat & 7, NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS);
	assert_true(l->sprog > 0 && l->sprog < 0xffff);
	l = wait_done(&h);
	assert_int_equal(l->sstat, NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS |
			 NVME_SANITIZE_SSTAT_GLOBAL_DATA_ERASED);
	assert_int_equal(l->sprog, 0xffff);
	assert_int_equal(l->scdw10, BE | NDAS);
	assert_true(l->etbe >= 1 && l->eto >= 1 && l->etbend >= 1);
	assert_memory_equal(read_blocks(&h, 0), zero, sizeof(zero));
	assert_memory_equal(read_blocks(&h, NSZE - 8), zero, sizeof(zero));
	/* the write-uncorrectable marks are gone with the data */
	assert_memory_equal(read_blocks(&h, 96), zero, sizeof(zero));
	/* a write clears Global Data Erased */
	write_pattern(&h, 0, 9);
	assert_int_equal(san_log(&h)->sstat, NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS);
	/* deallocating: reads zeros too (DLFEAT) */
	assert_int_equal(sanitize(&h, BE, 0), 0);
	assert_int_equal(wait_done(&h)->sstat, NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS |
			 NVME_SANITIZE_SSTAT_GLOBAL_DATA_ERASED);
	assert_memory_equal(read_blocks(&h, 0), zero, sizeof(zero));
	host_close(&h);
}

static void check_words(const uint8_t *b, size_t len, uint32_t want)
{
	for (size_t i = 0; i < len; i += 4) {
		uint32_t v;

		memcpy(&v, b + i, 4);
		assert_int_equal(v, want);
	}
}

static void test_overwrite(void **state)
{
	struct host h;
	struct nvme_sanitize_log_page *l;

	(void)state;
	open_ram(&h);
	write_pattern(&h, 0, 3);
	/* two passes, inverted between them: the second leaves ~pattern */
	assert_int_equal(sanitize(&h, OW | OWPASS(2) | OIPBP, 0x11223344), 0);
	l = wait_done(&h);
	assert_int_equal(l->sstat & 7, NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS);
	assert_int_equal((l->sstat >> 3) & 0x1f, 2);
	assert_int_equal(l->scdw10, OW | OWPASS(2) | OIPBP);
	check_words(read_blocks(&h, 0), 8 * 512, ~0x11223344u);
	check_words(read_blocks(&h, NSZE - 8), 8 * 512, ~0x11223344u);
	/* three passes without inversion, No-Deallocate: the pattern */
	assert_int_equal(sanitize(&h, OW | OWPASS(3) | NDAS, 0xa5a55a5a), 0);
	l = wait_done(&h);
	assert_int_equal((l->sstat >> 3) & 0x1f, 3);
	check_words(read_blocks(&h, 8), 8 * 512, 0xa5a55a5au);
	host_close(&h);
}

/* On a namespace with protection information the metadata takes the pattern, tuples included */
static void test_overwrite_pi(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = NSZE, .lbaf = 1, .store = UCMD_NS_STORE_RAM,
				      .attach = true };
	struct ucmd_nvme_sqe f = { .opcode = nvme_admin_format_nvm, .nsid = 1,
				   .cdw10 = 1 | 1u << 5 };	/* 512 + 8, PI type 1 */
	struct host h;
	uint8_t *r, *m;

	(void)state;
	host_default_params(&p);
	host_open_ns(&h, &p, &nsp);
	ctrl_test_knobs(h.ctrl, 2000, 60000, false);
	assert_int_equal(host_cmd(&h, 0, &f, NULL), 0);
	assert_int_equal(sanitize(&h, OW | OWPASS(1) | NDAS, 0x11223344), 0);
	assert_int_equal(wait_done(&h)->sstat & 7, NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS);
	r = host_alloc(&h, 8 * 512);
	m = host_alloc(&h, 8 * 8);
	assert_int_equal(host_io(&h, nvme_cmd_read, 1, NSZE - 8, 8, r, 8 * 512, m, 0), 0);
	check_words(r, 8 * 512, 0x11223344u);
	check_words(m, 8 * 8, 0x11223344u);
	host_close(&h);
}

static void test_crypto_erase(void **state)
{
	struct host h;
	uint8_t old[8 * 512], zero[8 * 512] = { 0 }, *r;

	(void)state;
	open_ram(&h);
	fill_pattern(old, sizeof(old), 5);
	write_pattern(&h, 0, 5);
	/* No-Deallocate: the old data under a new key: neither it nor zeros */
	assert_int_equal(sanitize(&h, CE | NDAS, 0), 0);
	assert_int_equal(wait_done(&h)->sstat & 7, NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS);
	r = read_blocks(&h, 0);
	assert_memory_not_equal(r, old, sizeof(old));
	assert_memory_not_equal(r, zero, sizeof(zero));
	/* deallocated: reads zeros (DLFEAT) */
	assert_int_equal(sanitize(&h, CE, 0), 0);
	wait_done(&h);
	assert_memory_equal(read_blocks(&h, 0), zero, sizeof(zero));
	host_close(&h);
}

static void test_invalid(void **state)
{
	struct host h;

	(void)state;
	open_ram(&h);
	assert_int_equal(sanitize(&h, 0, 0), ST_INVALID);
	assert_int_equal(sanitize(&h, 5, 0), ST_INVALID);
	assert_int_equal(sanitize(&h, 7, 0), ST_INVALID);
	assert_int_equal(sanitize(&h, BE | (1u << 10), 0), ST_INVALID);
	/* nothing failed: Exit Failure Mode has nothing to do and succeeds */
	assert_int_equal(sanitize(&h, NVME_SANITIZE_SANACT_EXIT_FAILURE, 0), 0);
	assert_int_equal(san_log(&h)->sstat, NVME_SANITIZE_SSTAT_GLOBAL_DATA_ERASED);
	host_close(&h);
}

static void test_failure(void **state)
{
	struct host h;
	uint8_t *buf;

	(void)state;
	open_ram(&h);
	buf = host_alloc(&h, 4096);
	/* AUSE clear: restricted; only a new sanitize that succeeds gets out */
	ctrl_test_knobs(h.ctrl, 2000, 60000, true);
	assert_int_equal(sanitize(&h, BE, 0), 0);
	assert_int_equal(san_log(&h)->sstat & 7, NVME_SANITIZE_SSTAT_STATUS_COMPLETED_FAILED);
	assert_int_equal(host_io(&h, nvme_cmd_read, 1, 0, 8, buf, 4096, NULL, 0), ST_FAILED);
	assert_int_equal(sanitize(&h, NVME_SANITIZE_SANACT_EXIT_FAILURE, 0), ST_FAILED);
	assert_int_equal(sanitize(&h, BE, 0), 0);
	assert_int_equal(wait_done(&h)->sstat & 7, NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS);
	assert_int_equal(host_io(&h, nvme_cmd_read, 1, 0, 8, buf, 4096, NULL, 0), 0);
	/* AUSE set: Exit Failure Mode leaves it */
	ctrl_test_knobs(h.ctrl, 2000, 60000, true);
	assert_int_equal(sanitize(&h, OW | AUSE, 0), 0);
	assert_int_equal(san_log(&h)->sstat & 7, NVME_SANITIZE_SSTAT_STATUS_COMPLETED_FAILED);
	assert_int_equal(host_io(&h, nvme_cmd_write, 1, 0, 8, buf, 4096, NULL, 0), ST_FAILED);
	assert_int_equal(sanitize(&h, NVME_SANITIZE_SANACT_EXIT_FAILURE, 0), 0);
	assert_int_equal(host_io(&h, nvme_cmd_write, 1, 0, 8, buf, 4096, NULL, 0), 0);
	/* the log still says the last one failed */
	assert_int_equal(san_log(&h)->sstat & 7, NVME_SANITIZE_SSTAT_STATUS_COMPLETED_FAILED);
	host_close(&h);
}

/* Interrupted by a restart, it resumes at the next start and completes */
static void test_restart(void **state)
{
	char dir[] = "/tmp/ucmd-ctrl-sanitize-XXXXXX";
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = NSZE, .lbaf = 0, .store = UCMD_NS_STORE_FILE,
				      .attach = true };
	uint8_t zero[8 * 512] = { 0 }, *buf;
	struct nvme_sanitize_log_page *l;
	uint16_t sprog;
	struct host h;

	(void)state;
	assert_non_null(mkdtemp(dir));
	host_default_params(&p);
	p.dir = dir;
	assert_int_equal(host_open_ns(&h, &p, &nsp), 1);
	ctrl_test_knobs(h.ctrl, 2000, 60000, false);
	write_pattern(&h, 0, 11);
	assert_int_equal(sanitize(&h, BE | NDAS, 0), 0);
	l = san_log(&h);
	assert_int_equal(l->sstat & 7, NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS);
	sprog = l->sprog;
	assert_true(sprog > 0);
	host_close(&h);

	/* a read-only user sees it in progress and cannot move it */
	p.read_only = true;
	assert_int_equal(host_open(&h, &p), 0);
	ctrl_test_knobs(h.ctrl, 2000, 60000, false);
	l = san_log(&h);
	assert_int_equal(l->sstat & 7, NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS);
	assert_int_equal(san_log(&h)->sprog, l->sprog);
	host_close(&h);
	p.read_only = false;

	/* powered off and on: it goes on from where it got */
	p.power_on = true;
	assert_int_equal(host_open(&h, &p), 0);
	ctrl_test_knobs(h.ctrl, 2000, 60000, false);
	l = san_log(&h);
	assert_int_equal(l->sstat & 7, NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS);
	assert_true(l->sprog > sprog);
	assert_int_equal(host_create_io_queue(&h, 1, 64, true, 1), 0);
	buf = host_alloc(&h, 4096);
	assert_int_equal(host_io(&h, nvme_cmd_read, 1, 0, 8, buf, 4096, NULL, 0), ST_IN_PROGRESS);
	assert_int_equal(wait_done(&h)->sstat & 7, NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS);
	assert_memory_equal(read_blocks(&h, 0), zero, sizeof(zero));
	host_close(&h);
	/* and its result is kept */
	assert_int_equal(host_open(&h, &p), 0);
	assert_int_equal(san_log(&h)->sstat, NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS |
			 NVME_SANITIZE_SSTAT_GLOBAL_DATA_ERASED);
	assert_int_equal(san_log(&h)->scdw10, BE | NDAS);
	host_close(&h);
	assert_int_equal(host_rmdir(dir), 0);
}

/*
 * The wall clock moves a sanitize too: by half its duration at least half
 * is done, by all of it all, however few passes ran. The clock is set, not
 * waited for: the test asserts states, never durations.
 */
static void test_wall_clock(void **state)
{
	struct nvme_sanitize_log_page *l;
	uint8_t zero[8 * 512] = { 0 };
	struct host h;

	(void)state;
	open_ram(&h);
	write_pattern(&h, 0, 5);
	/* zeros written, 4 MiB per pass: sixteen passes by passes alone */
	assert_int_equal(sanitize(&h, BE | NDAS, 0), 0);
	l = san_log(&h);
	assert_int_equal(l->sstat & 7, NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS);
	assert_true(l->sprog < 16384);
	/* an hour in all, half of it gone */
	ctrl_test_sanitize_clock(h.ctrl, 3600000, 1800000);
	l = san_log(&h);
	assert_int_equal(l->sstat & 7, NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS);
	assert_true(l->sprog >= 32768 && l->sprog < 0xffff);
	/* all of it gone: done at the next look, data erased */
	ctrl_test_sanitize_clock(h.ctrl, 3600000, 3600000);
	l = san_log(&h);
	assert_int_equal(l->sstat, NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS |
			 NVME_SANITIZE_SSTAT_GLOBAL_DATA_ERASED);
	assert_memory_equal(read_blocks(&h, 0), zero, sizeof(zero));
	host_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identify),
		cmocka_unit_test(test_block_erase),
		cmocka_unit_test(test_overwrite),
		cmocka_unit_test(test_overwrite_pi),
		cmocka_unit_test(test_crypto_erase),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_failure),
		cmocka_unit_test(test_restart),
		cmocka_unit_test(test_wall_clock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
