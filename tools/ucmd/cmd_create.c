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

int cmd_create_ctrl(struct cli *cli, int argc, char **argv)
{
	uint64_t blocks = cli->a.nsze ? cli->a.nsze : (1ull << 30) / 512;
	char path[4096];
	struct stat sb;
	int ret;

	(void)argc;
	(void)argv;
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
	ret = session_open(&cli->s, cli->ctrl_dir, 1, cli->policy, cli->audit, false, blocks);
	if (ret) {
		print_status_error(cli->ctrl_dir, ret);
		session_close(&cli->s);
		return 1;
	}
	if (session_close(&cli->s)) {
		fprintf(stderr, "create-ctrl: %s\n", ucmd_last_error());
		return 1;
	}
	printf("create-ctrl: %s: controller with namespace 1 of %llu blocks of 512 bytes\n",
	       cli->ctrl_dir, (unsigned long long)blocks);
	return 0;
}
