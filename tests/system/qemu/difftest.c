/* SPDX-License-Identifier: MIT */
/*
 * difftest --kernel /dev/ngXn1 /dev/ngXn2    QEMU's (or any) NVMe device, kernel backend
 * difftest --emulated                        ucmd's emulated controller (full build only)
 * difftest --tcp nvme-tcp://HOST:PORT/NQN     a remote controller of the same shape, through
 *                                             ucmd's NVMe/TCP host transport (full build only)
 * Prints the sequence's lines on stdout; exit 0 when every step ran (their
 * results are for the comparison to judge, not this program).
 */
#include <stdio.h>
#include <string.h>

#include "difftest.h"

int main(int argc, char **argv)
{
	struct dt_target t;
	int ret = -EINVAL, failed;

	memset(&t, 0, sizeof(t));
	if (argc == 4 && !strcmp(argv[1], "--kernel"))
		ret = dt_open_kernel(&t, argv[2], argv[3]);
#ifdef DT_EMULATED
	else if (argc == 2 && !strcmp(argv[1], "--emulated"))
		ret = dt_open_emulated(&t);
	else if (argc == 3 && !strcmp(argv[1], "--tcp"))
		ret = dt_open_tcp(&t, argv[2]);
#endif
	else {
		fprintf(stderr, "usage: difftest --kernel NS1 NS2%s\n",
#ifdef DT_EMULATED
			" | --emulated | --tcp URL"
#else
			""
#endif
		);
		return 2;
	}
	if (ret) {
		fprintf(stderr, "difftest: cannot open the target: %s\n", strerror(-ret));
		return 2;
	}
	failed = dt_run(&t);
	t.close(&t);
	if (failed)
		fprintf(stderr, "difftest: %d steps could not run\n", failed);
	return failed ? 1 : 0;
}
