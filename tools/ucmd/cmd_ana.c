/* SPDX-License-Identifier: MIT */
/*
 * ana-log: the ANA log page, as nvme-cli's. ana-state: a port's ANA state, as nvmet's configfs
 * ports/N/ana_groups/G/ana_state reads and writes it, for ucmdd's NVMe/TCP
 * ports (docs/daemon.md) and the controllers of a directory of several: the
 * owner turns a path inaccessible and back while hosts use the subsystem
 * through the others.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "cli.h"
#include "ucmd/ctrl.h"
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

/*
 * ana-log: as long as nvme-cli 2.3 reads it, from Identify Controller: the
 * header, NANAGRPID descriptors and MNAN namespace IDs (none when ANACAP
 * bit 6 says a namespace's group never changes: nvme-cli's rule), with
 * RGO for --groups.
 */
int cmd_ana_log(struct cli *cli, int argc, char **argv)
{
	struct nvme_id_ctrl *id = cli_identify(cli, "ana-log", NVME_IDENTIFY_CNS_CTRL, 0);
	struct nvme_uring_cmd c = { .opcode = nvme_admin_get_log_page, .nsid = NVME_NSID_ALL };
	uint32_t len, numd;
	void *buf = NULL;
	int ret = 1;

	(void)argc;
	(void)argv;
	if (!id)
		return 1;
	len = sizeof(struct nvme_ana_log) +
	      le32toh(id->nanagrpid) * sizeof(struct nvme_ana_group_desc);
	if (!(id->anacap & NVME_CTRL_ANACAP_GRPID_NO_CHG))
		len += le32toh(id->mnan) * 4;
	if (!id->nanagrpid && !(id->cmic & NVME_CTRL_CMIC_MULTI_ANA_REPORTING)) {
		fprintf(stderr, "ana-log: the controller does not report ANA (CMIC bit 3 clear)\n");
		goto out;
	}
	buf = cli_zalloc(len);
	if (!buf)
		goto out;
	numd = len / 4 - 1;
	c.addr = (uint64_t)(uintptr_t)buf;
	c.data_len = len;
	c.cdw10 = NVME_LOG_LID_ANA | (cli->a.ana_groups ? 1u << 8 : 0) | ((numd & 0xffff) << 16);
	c.cdw11 = numd >> 16;
	if (!cli_admin(cli, "ana-log", &c, NULL)) {
		print_ana_log(buf, len, "nvme0", cli_fmt(cli));
		ret = 0;
	}
out:
	free(buf);
	free(id);
	return ret;
}

/* --controller nvmeX: the session's controller, in ucmdd or in this process */
static int ctrl_ana_state(struct cli *cli, const char *name, unsigned grpid, unsigned want)
{
	struct ucmd_ctrl *c;
	unsigned long x;
	char *end;

	if (cli->s.daemon)
		return ucmd_daemon_ctrl_ana_state(cli->s.e, name, grpid, want);
	if (!cli->s.ctrl)
		return -EOPNOTSUPP;	/* a real device: its own firmware's states */
	if (strncmp(name, "nvme", 4) || name[4] < '0' || name[4] > '9')
		return -ENODEV;
	x = strtoul(name + 4, &end, 10);
	/* in this process the directory's controllers are nvme0.. */
	if (*end || !(c = ucmd_ctrl_controller(cli->s.ctrl, x > 255 ? 255 : (unsigned)x)))
		return -ENODEV;
	return ucmd_ctrl_ana_state(c, grpid, want);
}

int cmd_ana_state(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	char where[80];
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
	if (!a->port == !a->ana_ctrl) {
		fprintf(stderr, "ana-state: name one port: an NVMe/TCP listener (--port N) or a "
			"controller (--controller nvmeX)\n");
		return 2;
	}
	if (a->port && !cli->s.daemon) {
		fprintf(stderr, "ana-state: --port: ANA states of ucmdd's NVMe/TCP ports: name "
			"the daemon (--daemon SOCKET)\n");
		return 2;
	}
	if (a->port) {
		snprintf(where, sizeof(where), "port %u", a->port);
		ret = ucmd_daemon_ana_state(cli->s.e, a->port, a->anagrp, want);
	} else {
		snprintf(where, sizeof(where), "%.64s", a->ana_ctrl);
		ret = ctrl_ana_state(cli, a->ana_ctrl, a->anagrp, want);
	}
	if (ret < 0) {
		fprintf(stderr, "ana-state: %s, group %u: %s%s\n", where, a->anagrp,
			strerror(-ret), ret == -ENODEV ? (a->port ? " (no such --nvme-tcp listener)"
							      : " (no such controller)") :
			ret == -EINVAL ? " (no such ANA group)" :
			ret == -EOPNOTSUPP ? " (a subsystem of one controller has no ANA)" :
			ret == -EPERM ? " (only ucmdd's user and root change it)" : "");
		return 1;
	}
	for (unsigned i = 0; i < NR_STATES; i++)
		if (states[i].state == (unsigned)ret)
			printf("%s group %u: %s\n", where, a->anagrp, states[i].name);
	return 0;
}

/*
 * port-state: one of ucmdd's NVMe/TCP ports taken down (no listener, its
 * connections closed) or brought back, so that hosts lose and regain a path.
 */
int cmd_port_state(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	unsigned want = 0;
	int ret;

	(void)argc;
	(void)argv;
	if (a->ana_state) {
		if (!strcmp(a->ana_state, "up"))
			want = UCMD_PORT_UP;
		else if (!strcmp(a->ana_state, "down"))
			want = UCMD_PORT_DOWN;
		else {
			fprintf(stderr, "port-state: --state %s: up or down\n", a->ana_state);
			return 2;
		}
	}
	if (!cli->s.daemon) {
		fprintf(stderr, "port-state: ports are ucmdd's NVMe/TCP listeners: name the daemon "
			"(--daemon SOCKET)\n");
		return 2;
	}
	ret = ucmd_daemon_port_state(cli->s.e, a->port, want);
	if (ret < 0) {
		fprintf(stderr, "port-state: port %u: %s%s\n", a->port, strerror(-ret),
			ret == -ENODEV ? " (no such --nvme-tcp listener)" :
			ret == -EPERM ? " (only ucmdd's user and root change it)" : "");
		return 1;
	}
	printf("port %u: %s\n", a->port, ret == UCMD_PORT_UP ? "up" : "down");
	return 0;
}
