/* SPDX-License-Identifier: MIT */
/*
 * difftest --kernel /dev/ngXn1 /dev/ngXn2    QEMU's (or any) NVMe device, kernel backend
 * difftest --emulated                        ucmd's emulated controller (full build only)
 * difftest --tcp nvme-tcp://HOST:PORT/NQN     a remote controller of the same shape, through
 *                                             ucmd's NVMe/TCP host transport (full build only)
 * difftest --kernel-zp /dev/ngXn1 ... /dev/ngXn5
 *                                             the zoned and protection information sequences
 *                                             on QEMU's controller of that shape (difftest.h)
 * difftest --emulated-zp DIR                  the same on ucmd's controller in DIR, made by
 *                                             the CLI (tests/system/qemu_kernel.sh)
 * difftest --kernel-mp /dev/ngXn1 /dev/nvmeA /dev/nvmeB
 *                                             the multipath sequence (dt_subsys.c) on a
 *                                             subsystem of two controllers: its head, each
 *                                             controller
 * difftest --emulated-mp DIR                  the same on ucmd's subsystem in DIR
 *                                             (create-ctrl --controllers 2)
 * Prints the sequence's lines on stdout; exit 0 when every step ran (their
 * results are for the comparison to judge, not this program).
 */
#include <stdio.h>
#include <string.h>

#include "dt_subsys.h"

static int run_mp(int ret, struct dt_mp *m)
{
	int failed;

	if (ret) {
		fprintf(stderr, "difftest: cannot open the subsystem: %s\n", strerror(-ret));
		return 2;
	}
	failed = dt_run_mp(m);
	m->close(m);
	if (failed)
		fprintf(stderr, "difftest: %d multipath steps could not run\n", failed);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct dt_target t;
	struct dt_mp m;
	int ret = -EINVAL, failed;
	bool zp = false;

	memset(&t, 0, sizeof(t));
	memset(&m, 0, sizeof(m));
	if (argc == 5 && !strcmp(argv[1], "--kernel-mp"))
		return run_mp(dt_open_kernel_mp(&m, argv[2], argv + 3), &m);
#ifdef DT_EMULATED
	if (argc == 3 && !strcmp(argv[1], "--emulated-mp"))
		return run_mp(dt_open_emulated_mp(&m, argv[2]), &m);
#endif
	if (argc == 4 && !strcmp(argv[1], "--kernel"))
		ret = dt_open_kernel(&t, argv + 2, 2);
	else if (argc == 2 + DT_ZP_NS && !strcmp(argv[1], "--kernel-zp"))
		ret = dt_open_kernel(&t, argv + 2, DT_ZP_NS), zp = true;
#ifdef DT_EMULATED
	else if (argc == 2 && !strcmp(argv[1], "--emulated"))
		ret = dt_open_emulated(&t);
	else if (argc == 3 && !strcmp(argv[1], "--tcp"))
		ret = dt_open_tcp(&t, argv[2]);
	else if (argc == 3 && !strcmp(argv[1], "--emulated-zp"))
		ret = dt_open_emulated_dir(&t, argv[2], DT_ZP_NS), zp = true;
#endif
	else {
		fprintf(stderr, "usage: difftest --kernel NS1 NS2 | --kernel-zp NS1..NS%d"
			" | --kernel-mp HEAD CTRL0 CTRL1%s\n",
			DT_ZP_NS,
#ifdef DT_EMULATED
			" | --emulated | --tcp URL | --emulated-zp DIR | --emulated-mp DIR"
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
	failed = zp ? dt_run_zp(&t) : dt_run(&t);
	t.close(&t);
	if (failed)
		fprintf(stderr, "difftest: %d steps could not run\n", failed);
	return failed ? 1 : 0;
}
