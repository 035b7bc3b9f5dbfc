/* SPDX-License-Identifier: MIT */
/*
 * The controller's DMA into host memory that is not there (docs/security.md,
 * "User memory"): the host driver faults buffers in before it submits, but the
 * application may unmap them before the device gets to them, and a hostile
 * descriptor may name anything. Every such transfer completes with Data
 * Transfer Error and the process lives on, on the RAM store (copies) and
 * the file store (preadv/pwritev report EFAULT themselves).
 */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include <nvme/types.h>

#include "host_sim.h"
#include "uaccess/uaccess.h"

#define XFER_ERROR (NVME_SC_DATA_XFER_ERROR | 0x4000)
#define PG 4096u

struct fx {
	struct host h;
	uint32_t nsid;
	uint8_t *hole;		/* 2 pages, PROT_NONE */
	char dir[64];
};

static int setup_store(void **state, enum ucmd_ns_store store)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 1024, .lbaf = 0, .store = store, .attach = true };

	host_default_params(&p);
	if (store == UCMD_NS_STORE_FILE) {
		strcpy(f->dir, "/tmp/ucmd-uaccess-XXXXXX");
		assert_non_null(mkdtemp(f->dir));
		p.dir = f->dir;
	}
	f->nsid = host_open_ns(&f->h, &p, &nsp);
	assert_int_not_equal(f->nsid, 0);
	f->hole = mmap(NULL, 2 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(f->hole != MAP_FAILED);
	*state = f;
	return 0;
}

static int setup_ram(void **state)
{
	return setup_store(state, UCMD_NS_STORE_RAM);
}

static int setup_file(void **state)
{
	return setup_store(state, UCMD_NS_STORE_FILE);
}

static int teardown(void **state)
{
	struct fx *f = *state;

	host_close(&f->h);
	munmap(f->hole, 2 * PG);
	if (f->dir[0])
		host_rmdir(f->dir);
	free(f);
	return 0;
}

/* cmocka sets its own SIGSEGV handler around each test: ucmd's goes in front. */
#define GUARD() assert_int_equal(ucmd_uaccess_init(), 0)

static void test_data_hole(void **state)
{
	struct fx *f = *state;
	uint8_t *m = host_alloc(&f->h, 3 * PG);

	GUARD();
	/* whole buffer gone, both directions */
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 0, 8, f->hole, PG, NULL, 0),
			 XFER_ERROR);
	assert_int_equal(host_io(&f->h, nvme_cmd_write, f->nsid, 0, 8, f->hole, PG, NULL, 0),
			 XFER_ERROR);
	/* the middle page of three gone */
	assert_int_equal(mprotect(m + PG, PG, PROT_NONE), 0);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 0, 24, m, 3 * PG, NULL, 0),
			 XFER_ERROR);
	assert_int_equal(host_io(&f->h, nvme_cmd_write, f->nsid, 0, 24, m, 3 * PG, NULL, 0),
			 XFER_ERROR);
	/* a read into read-only memory */
	assert_int_equal(mprotect(m + PG, PG, PROT_READ), 0);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 0, 8, m + PG, PG, NULL, 0),
			 XFER_ERROR);
	/* Compare reads host memory too */
	assert_int_equal(host_io(&f->h, nvme_cmd_compare, f->nsid, 0, 8, f->hole, PG, NULL, 0),
			 XFER_ERROR);
	/* and the controller still works */
	assert_int_equal(mprotect(m + PG, PG, PROT_READ | PROT_WRITE), 0);
	assert_int_equal(host_io(&f->h, nvme_cmd_write, f->nsid, 0, 24, m, 3 * PG, NULL, 0), 0);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 0, 24, m, 3 * PG, NULL, 0), 0);
}

/* A PRP list that lies in unmapped memory. */
static void test_prp_list_hole(void **state)
{
	struct fx *f = *state;
	uint8_t *buf = host_alloc(&f->h, 4 * PG);
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_cmd_read, .nsid = f->nsid };

	GUARD();
	sqe.cdw12 = 4 * PG / 512 - 1;
	sqe.dptr.prp1 = (uintptr_t)buf;
	sqe.dptr.prp2 = (uintptr_t)f->hole;
	assert_int_equal(host_cmd(&f->h, 1, &sqe, NULL), XFER_ERROR);
}

/* Admin data (Identify) into a hole, and a DSM range list read from one. */
static void test_admin_and_lists(void **state)
{
	struct fx *f = *state;
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_admin_identify, .cdw10 = NVME_IDENTIFY_CNS_CTRL };

	GUARD();
	sqe.dptr.prp1 = (uintptr_t)f->hole;
	assert_int_equal(host_cmd(&f->h, 0, &sqe, NULL), XFER_ERROR);
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = nvme_cmd_dsm;
	sqe.nsid = f->nsid;
	sqe.cdw11 = NVME_DSMGMT_AD;
	sqe.dptr.prp1 = (uintptr_t)f->hole;
	assert_int_equal(host_cmd(&f->h, 1, &sqe, NULL), XFER_ERROR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_data_hole, setup_ram, teardown),
		cmocka_unit_test_setup_teardown(test_data_hole, setup_file, teardown),
		cmocka_unit_test_setup_teardown(test_prp_list_hole, setup_ram, teardown),
		cmocka_unit_test_setup_teardown(test_admin_and_lists, setup_ram, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
