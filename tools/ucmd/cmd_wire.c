/* SPDX-License-Identifier: MIT */
/*
 * WIRE (temporary, dropped at merge for h-cli's commands): fw-log, get-log,
 * sanitize-log, self-test-log and list-subsys on the current CLI, so that
 * their printers can be tested end to end against nvme-cli before the
 * new option framework lands. Formats come from the global -o.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "cli.h"

static int wire_log(struct cli *cli, const char *what, uint8_t lid, uint32_t nsid, void *buf,
		    uint32_t len)
{
	struct nvme_uring_cmd c = { .opcode = nvme_admin_get_log_page, .nsid = nsid };

	c.addr = (uint64_t)(uintptr_t)buf;
	c.data_len = len;
	c.cdw10 = ((len / 4 - 1) << 16) | lid;
	int res = session_passthru(&cli->s, true, &c, NULL);
	if (res)
		print_status_error(what, res);
	return res;
}

static void *wire_alloc(size_t len)
{
	void *p = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);

	if (p)
		memset(p, 0, len);
	return p;
}

int cmd_fw_log(struct cli *cli, int argc, char **argv)
{
	struct nvme_firmware_slot *fw = wire_alloc(sizeof(*fw));

	(void)argc;
	(void)argv;
	if (!fw || wire_log(cli, "fw-log", NVME_LOG_LID_FW_SLOT, NVME_NSID_ALL, fw, sizeof(*fw))) {
		free(fw);
		return 1;
	}
	print_fw_log(fw, "nvme0", cli->fmt);
	free(fw);
	return 0;
}

int cmd_sanitize_log(struct cli *cli, int argc, char **argv)
{
	struct nvme_sanitize_log_page *s = wire_alloc(sizeof(*s));

	(void)argc;
	(void)argv;
	if (!s || wire_log(cli, "sanitize status log", NVME_LOG_LID_SANITIZE, NVME_NSID_ALL, s,
			   sizeof(*s))) {
		free(s);
		return 1;
	}
	print_sanitize_log(s, "nvme0", cli->fmt, 0);
	free(s);
	return 0;
}

int cmd_self_test_log(struct cli *cli, int argc, char **argv)
{
	struct nvme_self_test_log *l = wire_alloc(sizeof(*l));

	(void)argc;
	(void)argv;
	if (!l || wire_log(cli, "self-test log", NVME_LOG_LID_DEVICE_SELF_TEST, NVME_NSID_ALL, l,
			   sizeof(*l))) {
		free(l);
		return 1;
	}
	print_self_test_log(l, NVME_LOG_ST_MAX_RESULTS, "nvme0", cli->fmt);
	free(l);
	return 0;
}

/* get-log --log-id=N --log-len=L [--namespace-id=N] [-b] */
int cmd_get_log(struct cli *cli, int argc, char **argv)
{
	static const struct option o[] = {
		{ "log-id", required_argument, NULL, 'i' },
		{ "log-len", required_argument, NULL, 'l' },
		{ "namespace-id", required_argument, NULL, 'n' },
		{ "raw-binary", no_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t lid = 0x100, len = 0, nsid = NVME_NSID_ALL;
	bool raw = false;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "i:l:n:b", o, NULL)) != -1) {
		if ((c == 'i' && parse_u32(optarg, &lid)) || (c == 'l' && parse_u32(optarg, &len)) ||
		    (c == 'n' && parse_u32(optarg, &nsid)) || c == '?' || c == ':')
			goto usage;
		if (c == 'b')
			raw = true;
	}
	if (lid > 0xff || !len || len % 4 || len > (1u << 20))
		goto usage;
	void *buf = wire_alloc(len);
	if (!buf || wire_log(cli, "get-log", (uint8_t)lid, nsid, buf, len)) {
		free(buf);
		return 1;
	}
	print_get_log("nvme0", (uint8_t)lid, nsid, buf, len, raw ? OUT_BINARY : cli->fmt);
	free(buf);
	return 0;
usage:
	fprintf(stderr, "usage: ucmd get-log --log-id=0..255 --log-len=BYTES(multiple of 4) "
			"[--namespace-id=N] [-b]\n");
	return 1;
}

int cmd_list_subsys(struct cli *cli, int argc, char **argv)
{
	struct nvme_id_ctrl *id = wire_alloc(4096);
	struct nvme_uring_cmd c = { .opcode = nvme_admin_identify, .cdw10 = NVME_IDENTIFY_CNS_CTRL };
	char nqn[256] = "", hostid[64] = "";
	FILE *f;

	(void)argc;
	(void)argv;
	if (!id)
		return 1;
	c.addr = (uint64_t)(uintptr_t)id;
	c.data_len = 4096;
	int res = session_passthru(&cli->s, true, &c, NULL);
	if (res) {
		print_status_error("list-subsys", res);
		free(id);
		return 1;
	}
	/* the host identity nvme-cli shows: /etc/nvme/hostnqn and hostid */
	if ((f = fopen("/etc/nvme/hostnqn", "r"))) {
		if (!fgets(nqn, sizeof(nqn), f))
			nqn[0] = '\0';
		fclose(f);
	}
	if ((f = fopen("/etc/nvme/hostid", "r"))) {
		if (!fgets(hostid, sizeof(hostid), f))
			hostid[0] = '\0';
		fclose(f);
	}
	nqn[strcspn(nqn, "\n")] = '\0';
	hostid[strcspn(hostid, "\n")] = '\0';
	struct print_ctrl pc = { "nvme0", "nvme-subsys0", "pcie", "ucmd.0", "live",
				 nqn, hostid[0] ? hostid : NULL, id, 0, NULL };
	print_list_subsys(&pc, 1, cli->fmt, 0);
	free(id);
	return 0;
}
