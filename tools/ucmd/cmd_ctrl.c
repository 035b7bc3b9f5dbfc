/* SPDX-License-Identifier: MIT */
/*
 * Identify and health: id-ctrl, id-ns, smart-log (list and list-subsys are
 * cmd_list.c). Each fetches its data and hands it to one printer (print.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include <ucmd/ctrl.h>

#include "cli.h"

int cmd_id_ctrl(struct cli *cli, int argc, char **argv)
{
	struct nvme_id_ctrl *id = cli_identify(cli, "id-ctrl", NVME_IDENTIFY_CNS_CTRL, 0);

	(void)argc;
	(void)argv;
	if (!id)
		return 1;
	print_id_ctrl(id, cli_fmt(cli), cli_pflags(cli));
	free(id);
	return 0;
}

int cmd_id_ns(struct cli *cli, int argc, char **argv)
{
	uint32_t nsid = cli->s.nsid;
	/* --force: the namespace even when it is not attached (allocated list) */
	uint32_t cns = cli->a.force ? NVME_IDENTIFY_CNS_ALLOCATED_NS : NVME_IDENTIFY_CNS_NS;
	struct nvme_id_ns *id = cli_identify(cli, "id-ns", cns, nsid);

	(void)argc;
	(void)argv;
	if (!id)
		return 1;
	if (!id->nsze) {
		fprintf(stderr, "id-ns: namespace %u is not active%s\n", nsid,
			cli->a.force ? " nor allocated" : " (--force shows an allocated one)");
		free(id);
		return 1;
	}
	print_id_ns(id, nsid, cli_fmt(cli), cli_pflags(cli));
	free(id);
	return 0;
}

int cmd_smart_log(struct cli *cli, int argc, char **argv)
{
	struct nvme_smart_log *log = cli_zalloc(sizeof(*log));
	/* nvme-cli: the controller's log unless -n names a namespace */
	uint32_t nsid = cli->a.nsid_given ? cli->a.nsid : NVME_NSID_ALL;
	int ret = 1;

	(void)argc;
	(void)argv;
	if (log && !cli_get_log(cli, "smart-log", NVME_LOG_LID_SMART, nsid, log, sizeof(*log))) {
		print_smart_log(log, nsid, "nvme0", cli_fmt(cli), cli_pflags(cli));
		ret = 0;
	}
	free(log);
	return ret;
}
