/* SPDX-License-Identifier: MIT */
/* ucmd's SQE, CQE, params and NVMe passthrough ABI is Linux's, byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "abi_table.h"
#include "ucmd/nvme_wire.h"

static void test_tables_match(void **state)
{
	(void)state;
	assert_int_equal(abi_sys_n, abi_ucmd_n);
	for (unsigned i = 0; i < abi_sys_n; i++) {
		assert_string_equal(abi_sys[i].name, abi_ucmd[i].name);
		if (abi_sys[i].value != abi_ucmd[i].value || abi_sys[i].size != abi_ucmd[i].size)
			fail_msg("%s: linux %lu/%lu, ucmd %lu/%lu", abi_sys[i].name,
				 abi_sys[i].value, abi_sys[i].size, abi_ucmd[i].value,
				 abi_ucmd[i].size);
	}
}

static void test_known_sizes(void **state)
{
	(void)state;
	/* The numbers the seeds state in prose */
	for (unsigned i = 0; i < abi_ucmd_n; i++) {
		if (!strcmp(abi_ucmd[i].name, "sizeof nvme_uring_cmd"))
			assert_int_equal(abi_ucmd[i].value, 72);
		if (!strcmp(abi_ucmd[i].name, "sizeof io_uring_sqe"))
			assert_int_equal(abi_ucmd[i].value, 64);
		if (!strcmp(abi_ucmd[i].name, "io_uring_sqe.cmd"))
			assert_int_equal(abi_ucmd[i].value, 48);	/* 128 - 48 = 80 bytes */
	}
	assert_int_equal(sizeof(struct ucmd_nvme_sqe), 64);
	assert_int_equal(sizeof(struct ucmd_nvme_cqe), 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_match),
		cmocka_unit_test(test_known_sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
