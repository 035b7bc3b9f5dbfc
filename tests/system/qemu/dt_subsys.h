/* SPDX-License-Identifier: MIT */
/*
 * The multipath sequence's target (dt_subsys.c): one subsystem of
 * DT_MP_PATHS controllers sharing namespace 1 of DT_MP_BLOCKS 512-byte
 * blocks (QEMU's nvme-subsys of tests/system/qemu/run.sh --mp; ucmd's
 * create-ctrl --controllers 2 --nsze=DT_MP_BLOCKS).
 */
#ifndef UCMD_DT_SUBSYS_H
#define UCMD_DT_SUBSYS_H

#include <linux/nvme_ioctl.h>

#include "difftest.h"

#define DT_MP_PATHS	2
#define DT_MP_BLOCKS	32768ull	/* 16 MiB */

struct dt_mp {
	struct ucmd_engine *e;
	int head_fd;			/* the head's generic device, ngXn1 */
	int ctrl_fd[DT_MP_PATHS];	/* each controller's nvmeX */
	uint32_t nsid;
	/* c (an I/O command) through controller i alone; its status or -errno */
	int (*path_io)(struct dt_mp *m, unsigned i, struct nvme_passthru_cmd *c, uint32_t *result);
	void (*close)(struct dt_mp *m);
	void *priv;
};

/* head: /dev/ngXn1; ctrls: each controller's /dev/nvmeX */
int dt_open_kernel_mp(struct dt_mp *m, const char *head, char *const *ctrls);
/* ucmd's subsystem in dir (full build only) */
int dt_open_emulated_mp(struct dt_mp *m, const char *dir);
int dt_run_mp(struct dt_mp *m);

#endif /* UCMD_DT_SUBSYS_H */
