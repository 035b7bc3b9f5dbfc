/* SPDX-License-Identifier: MIT */
/*
 * dt_mkctrl DIR: a controller directory of the differential test's shape
 * (the serial and the two namespaces dt_emulated.c creates in memory), for
 * ucmdd --ctrl DIR --nvme-tcp to export, so that difftest --tcp runs the
 * sequence on the same controller behind NVMe/TCP.
 */
#include <stdio.h>
#include <string.h>

#include "difftest.h"
#include "ucmd/ctrl.h"

int main(int argc, char **argv)
{
	struct ucmd_ctrl_params cp = { .serial = "ucmd0001", .mode = UCMD_CTRL_INLINE };
	struct ucmd_ns_params ns1 = { .nsze = DT_NS1_BLOCKS, .lbaf = 0,
				      .store = UCMD_NS_STORE_FILE, .attach = true };
	struct ucmd_ns_params ns2 = { .nsze = DT_NS2_BLOCKS, .lbaf = 5,	/* 4096+8 */
				      .store = UCMD_NS_STORE_FILE, .attach = true };
	struct ucmd_ctrl *c;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: dt_mkctrl DIR\n");
		return 2;
	}
	cp.dir = argv[1];
	ret = ucmd_ctrl_create(&cp, &c);
	if (!ret && ((ret = ucmd_ctrl_ns_create(c, &ns1)) < 0 ||
		     (ret = ucmd_ctrl_ns_create(c, &ns2)) < 0))
		ucmd_ctrl_destroy(c);
	if (ret < 0) {
		fprintf(stderr, "dt_mkctrl: %s: %s\n", argv[1], strerror(-ret));
		return 1;
	}
	ucmd_ctrl_destroy(c);
	return 0;
}
