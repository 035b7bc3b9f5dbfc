/* SPDX-License-Identifier: MIT */
/*
 * create-ctrl: make the controller directory named by --ctrl (or
 * $UCMD_CTRL, ./ucmd-ctrl) with its first namespace, explicitly, so that
 * every other command can refuse a directory that does not exist.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* QEMU's zoned.zone_size default */
#define ZONE_SIZE_DEFAULT	(128ull << 20)

/* --zns and its options to the namespace's zone geometry, in blocks; 2 on a bad value */
static int zns_params(const struct cmd_args *a, uint32_t bs, uint64_t blocks,
		      struct ucmd_zns_params *zp)
{
	uint64_t zsze = a->zone_size ? a->zone_size : ZONE_SIZE_DEFAULT;

	if (!a->zns) {
		if (a->zone_size || a->zone_cap || a->max_open || a->max_active || a->zasl ||
		    a->cross_read || a->nr_conv || a->zd_ext_size) {
			fprintf(stderr, "create-ctrl: zone options need --zns\n");
			return 2;
		}
		return 0;
	}
	if (a->nr_conv) {
		/* a ZNS 1.1 zone is sequential write required; Linux refuses any other type */
		fprintf(stderr, "create-ctrl: --nr-conv: a zoned namespace has no conventional "
			"zones (ZNS 1.1 defines only sequential write required ones); create a "
			"second, NVM namespace for random writes\n");
		return 2;
	}
	if (zsze % bs || (a->zone_cap && a->zone_cap % bs)) {
		fprintf(stderr, "create-ctrl: --zone-size and --zone-cap must be multiples of the "
			"%u-byte block\n", bs);
		return 2;
	}
	zp->zone_size = zsze / bs;
	zp->zone_cap = a->zone_cap / bs;
	if (zp->zone_cap > zp->zone_size || zp->zone_size > blocks) {
		fprintf(stderr, "create-ctrl: zones of %llu bytes (capacity %llu) do not fit a "
			"namespace of %llu bytes\n", (unsigned long long)zsze,
			(unsigned long long)(a->zone_cap ? a->zone_cap : zsze),
			(unsigned long long)blocks * bs);
		return 2;
	}
	if (a->max_active && a->max_open > a->max_active) {
		fprintf(stderr, "create-ctrl: --max-open %u is more than --max-active %u\n",
			a->max_open, a->max_active);
		return 2;
	}
	if (a->zd_ext_size % 64 || a->zd_ext_size > 255 * 64) {
		fprintf(stderr, "create-ctrl: --zd-ext-size must be a multiple of 64 up to %u\n",
			255 * 64);
		return 2;
	}
	zp->zdes = (uint8_t)(a->zd_ext_size / 64);
	zp->max_open = a->max_open;
	zp->max_active = a->max_active;
	zp->zasl = (uint8_t)a->zasl;
	zp->cross_read = a->cross_read;
	return 0;
}

/* --fdp and its options; 2 on a bad value */
static int fdp_params(const struct cmd_args *a, struct ucmd_fdp_params *fp)
{
	if (!a->fdp) {
		if (a->fdp_ruhs || a->fdp_rgs || a->fdp_ru_size || a->fdp_op || a->fdp_initially ||
		    a->fdp_rutl) {
			fprintf(stderr, "create-ctrl: FDP options need --fdp\n");
			return 2;
		}
		return 0;
	}
	if (a->zns) {
		fprintf(stderr, "create-ctrl: --fdp and --zns: a zoned namespace places its data "
			"by zone; FDP is for the NVM command set\n");
		return 2;
	}
	if (a->fdp_ru_size % 4096 || a->fdp_ru_size > (1ull << 30)) {
		fprintf(stderr, "create-ctrl: --fdp-ru-size must be a multiple of 4K up to 1G\n");
		return 2;
	}
	fp->enable = true;
	fp->nruh = (uint16_t)a->fdp_ruhs;
	fp->nrg = (uint16_t)a->fdp_rgs;
	fp->ru_size = a->fdp_ru_size;
	fp->op_pct = (uint8_t)a->fdp_op;
	fp->initially = a->fdp_initially;
	fp->ru_time_limit = a->fdp_rutl;
	return 0;
}

int cmd_create_ctrl(struct cli *cli, int argc, char **argv)
{
	struct ucmd_fdp_params fp = { 0 };
	struct ucmd_ns_params np = { .lbaf = (uint8_t)cli->a.lbaf };
	/* formats 4-7 and 10-13 have 4 KiB blocks (include/ucmd/ctrl.h) */
	uint32_t bs = (cli->a.lbaf >= 4 && cli->a.lbaf <= 7) || cli->a.lbaf >= 10 ? 4096 : 512;
	uint64_t blocks = cli->a.nsze ? cli->a.nsze : (1ull << 30) / bs;
	char path[4096];
	struct stat sb;
	int ret;

	(void)argc;
	(void)argv;
	if ((ret = zns_params(&cli->a, bs, blocks, &np.zoned)) ||
	    (ret = fdp_params(&cli->a, &fp)))
		return ret;
	if (cli->daemon || !strncmp(cli->ctrl_dir, "nvme-tcp://", 11)) {
		fprintf(stderr, "create-ctrl: makes a controller directory (--ctrl DIR), not %s\n",
			cli->daemon ? "a daemon's" : "a remote one");
		return 2;
	}
	if (snprintf(path, sizeof(path), "%s/ctrl.json", cli->ctrl_dir) >= (int)sizeof(path))
		return 2;
	if (!lstat(path, &sb)) {
		fprintf(stderr, "create-ctrl: %s already holds a controller\n", cli->ctrl_dir);
		return 1;
	}
	session_bootstrap_ns = &np;
	session_bootstrap_fdp = fp.enable ? &fp : NULL;
	session_bootstrap_controllers = cli->a.controllers;
	ret = session_open(&cli->s, cli->ctrl_dir, 1, cli->policy, cli->audit, false, blocks);
	session_bootstrap_ns = NULL;
	session_bootstrap_fdp = NULL;
	session_bootstrap_controllers = 0;
	if (ret) {
		print_status_error(cli->ctrl_dir, ret);
		session_close(&cli->s);
		return 1;
	}
	if (session_close(&cli->s)) {
		fprintf(stderr, "create-ctrl: %s\n", ucmd_last_error());
		return 1;
	}
	if (np.zoned.zone_size)
		blocks -= blocks % np.zoned.zone_size;	/* whole zones */
	printf("create-ctrl: %s: controller with namespace 1 of %llu blocks of %u bytes\n",
	       cli->ctrl_dir, (unsigned long long)blocks, bs);
	if (np.zoned.zone_size)
		printf("create-ctrl: namespace 1 is zoned: %llu zones of %llu blocks, %llu "
		       "writable each\n", (unsigned long long)(blocks / np.zoned.zone_size),
		       (unsigned long long)np.zoned.zone_size,
		       (unsigned long long)(np.zoned.zone_cap ? np.zoned.zone_cap
							  : np.zoned.zone_size));
	if (cli->a.controllers > 1)
		printf("create-ctrl: %u controllers (IDs 1 to %u) of one subsystem share "
		       "namespace 1\n", cli->a.controllers, cli->a.controllers);
	if (fp.enable)
		printf("create-ctrl: FDP in endurance group 1: %u reclaim unit handles, %u "
		       "reclaim group(s), reclaim units of %llu bytes\n",
		       fp.nruh ? fp.nruh : 8, fp.nrg ? fp.nrg : 1,
		       (unsigned long long)(fp.ru_size ? fp.ru_size : 1ull << 20));
	return 0;
}
