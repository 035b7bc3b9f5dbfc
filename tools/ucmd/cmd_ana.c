/* SPDX-License-Identifier: MIT */
/*
 * ana-state: a port's ANA state, as nvmet's configfs
 * ports/N/ana_groups/G/ana_state reads and writes it, for ucmdd's NVMe/TCP
 * ports (docs/daemon.md): the owner turns a path inaccessible and back
 * while hosts use the subsystem through the others.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <nvme/types.h>

#include "cli.h"
#include "ucmd/daemon.h"

static const struct {
	const char *name;
	unsigned state;
} states[] = {
	{ "optimized", NVME_ANA_STATE_OPTIMIZED },
	{ "non-optimized", NVME_ANA_STATE_NONOPTIMIZED },
	{ "inaccessible", NVME_ANA_STATE_INACCESSIBLE },
	{ "persistent-loss", NVME_ANA_STATE_PERSISTENT_LOSS },
	{ "change", NVME_ANA_STATE_CHANGE },
};

#define NR_STATES (sizeof(states) / sizeof(states[0]))

int cmd_ana_state(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	unsigned want = 0;
	int ret;

	(void)argc;
	(void)argv;
	if (a->ana_state) {
		for (unsigned i = 0; i < NR_STATES; i++)
			if (!strcmp(a->ana_state, states[i].name))
				want = states[i].state;
		if (!want) {
			fprintf(stderr, "ana-state: --state %s: one of optimized, non-optimized, "
				"inaccessible, persistent-loss, change\n", a->ana_state);
			return 2;
		}
	}
	if (!cli->s.daemon) {
		fprintf(stderr, "ana-state: ANA states are those of ucmdd's NVMe/TCP ports: name "
			"the daemon (--daemon SOCKET)\n");
		return 2;
	}
	ret = ucmd_daemon_ana_state(cli->s.e, a->port, a->anagrp, want);
	if (ret < 0) {
		fprintf(stderr, "ana-state: port %u, group %u: %s%s\n", a->port, a->anagrp,
			strerror(-ret), ret == -ENODEV ? " (no such --nvme-tcp listener)" :
			ret == -EINVAL ? " (no such ANA group)" :
			ret == -EPERM ? " (only ucmdd's user and root change it)" : "");
		return 1;
	}
	for (unsigned i = 0; i < NR_STATES; i++)
		if (states[i].state == (unsigned)ret)
			printf("port %u group %u: %s\n", a->port, a->anagrp, states[i].name);
	return 0;
}
