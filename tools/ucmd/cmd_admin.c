/* SPDX-License-Identifier: MIT */
/* Controller-side commands: list, id-ctrl, id-ns, smart-log, admin-passthru. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "cli.h"

static void *identify(struct cli *cli, uint32_t cns, uint32_t nsid, int *res)
{
	void *buf = aligned_alloc(4096, 4096);
	struct nvme_uring_cmd c = { 0 };

	if (!buf) {
		*res = -ENOMEM;
		return NULL;
	}
	memset(buf, 0, 4096);
	c.opcode = nvme_admin_identify;
	c.nsid = nsid;
	c.addr = (uint64_t)(uintptr_t)buf;
	c.data_len = 4096;
	c.cdw10 = cns;
	*res = session_passthru(&cli->s, true, &c, NULL);
	if (*res) {
		free(buf);
		return NULL;
	}
	return buf;
}

int cmd_id_ctrl(struct cli *cli, int argc, char **argv)
{
	int res;

	(void)argc;
	(void)argv;
	struct nvme_id_ctrl *id = identify(cli, NVME_IDENTIFY_CNS_CTRL, 0, &res);
	if (!id) {
		print_status_error("id-ctrl", res);
		return 1;
	}
	print_id_ctrl(id, cli->fmt, 0);
	free(id);
	return 0;
}

int cmd_id_ns(struct cli *cli, int argc, char **argv)
{
	int res;

	(void)argc;
	(void)argv;
	struct nvme_id_ns *id = identify(cli, NVME_IDENTIFY_CNS_NS, cli->s.nsid, &res);
	if (!id) {
		print_status_error("id-ns", res);
		return 1;
	}
	if (!id->nsze) {
		fprintf(stderr, "id-ns: namespace %u is not active\n", cli->s.nsid);
		free(id);
		return 1;
	}
	print_id_ns(id, cli->s.nsid, cli->fmt, 0);
	free(id);
	return 0;
}

int cmd_smart_log(struct cli *cli, int argc, char **argv)
{
	struct nvme_smart_log *log = aligned_alloc(4096, 4096);
	struct nvme_uring_cmd c = { 0 };
	int res;

	(void)argc;
	(void)argv;
	if (!log)
		return 1;
	c.opcode = nvme_admin_get_log_page;
	c.nsid = NVME_NSID_ALL;
	c.addr = (uint64_t)(uintptr_t)log;
	c.data_len = sizeof(*log);
	/* NUMDL (dwords - 1) in bits 31:16, LID in 7:0 */
	c.cdw10 = ((sizeof(*log) / 4 - 1) << 16) | NVME_LOG_LID_SMART;
	res = session_passthru(&cli->s, true, &c, NULL);
	if (res) {
		print_status_error("smart-log", res);
		free(log);
		return 1;
	}
	print_smart_log(log, NVME_NSID_ALL, "nvme0", cli->fmt, 0);
	free(log);
	return 0;
}

int cmd_list(struct cli *cli, int argc, char **argv)
{
	const char *names[64];
	int n = ucmd_device_names(cli->s.e, names, 64), res, nr = 0;
	struct print_ns ns[64];
	struct nvme_id_ns *ids[64];
	char blk[64][32], gen[64][32];

	(void)argc;
	(void)argv;
	struct nvme_id_ctrl *id = identify(cli, NVME_IDENTIFY_CNS_CTRL, 0, &res);
	if (!id) {
		print_status_error("list", res);
		return 1;
	}
	for (int i = 0; i < n && i < 64; i++) {
		unsigned nsid;

		if (sscanf(names[i], "ng0n%u", &nsid) != 1)
			continue;
		ids[nr] = identify(cli, NVME_IDENTIFY_CNS_NS, nsid, &res);
		if (!ids[nr])
			continue;
		snprintf(blk[nr], sizeof(blk[nr]), "/dev/nvme0n%u", nsid);
		snprintf(gen[nr], sizeof(gen[nr]), "/dev/ng0n%u", nsid);
		ns[nr] = (struct print_ns){ nsid, ids[nr], blk[nr], gen[nr] };
		nr++;
	}
	struct print_ctrl c = { "nvme0", "nvme-subsys0", "pcie", "ucmd.0", "live", NULL, NULL,
				id, nr, ns };
	print_list(&c, 1, cli->fmt, 0);
	for (int i = 0; i < nr; i++)
		free(ids[i]);
	free(id);
	return 0;
}
