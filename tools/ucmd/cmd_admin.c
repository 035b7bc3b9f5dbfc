/* SPDX-License-Identifier: MIT */
/*
 * Admin commands: ns-descs, error-log, effects-log, get-feature,
 * set-feature, format, create-ns, delete-ns, attach-ns, detach-ns. Options
 * come parsed (cli->a, cmd_tab.c); reports go through print.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvme/types.h>

#include "cli.h"

int cmd_ns_descs(struct cli *cli, int argc, char **argv)
{
	uint8_t *buf = cli_identify(cli, "ns-descs", NVME_IDENTIFY_CNS_NS_DESC_LIST, cli->s.nsid);

	(void)argc;
	(void)argv;
	if (!buf)
		return 1;
	print_ns_descs(buf, cli->s.nsid, cli_fmt(cli));
	free(buf);
	return 0;
}

int cmd_error_log(struct cli *cli, int argc, char **argv)
{
	uint32_t n = cli->a.log_entries;
	uint32_t len = n * (uint32_t)sizeof(struct nvme_error_log_page);
	struct nvme_error_log_page *log = cli_zalloc(len);
	int ret = 1;

	(void)argc;
	(void)argv;
	if (log && !cli_get_log(cli, "error-log", NVME_LOG_LID_ERROR, NVME_NSID_ALL, log, len)) {
		print_error_log(log, (int)n, "nvme0", cli_fmt(cli));
		ret = 0;
	}
	free(log);
	return ret;
}

int cmd_effects_log(struct cli *cli, int argc, char **argv)
{
	struct nvme_cmd_effects_log *log = cli_zalloc(sizeof(*log));
	int ret = 1;

	(void)argc;
	(void)argv;
	if (log && !cli_get_log(cli, "effects-log", NVME_LOG_LID_CMD_EFFECTS, NVME_NSID_ALL, log,
				sizeof(*log))) {
		print_effects_log(log, cli_fmt(cli), cli_pflags(cli));
		ret = 0;
	}
	free(log);
	return ret;
}

int cmd_get_feature(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	struct nvme_uring_cmd c = { .opcode = nvme_admin_get_features };
	uint64_t result = 0;
	void *buf = NULL;
	int ret = 1;

	(void)argc;
	(void)argv;
	c.nsid = a->nsid_given ? a->nsid : 0;
	c.cdw10 = a->fid | (a->sel << 8);
	c.cdw11 = a->cdw11;
	if (a->data_len) {
		buf = cli_zalloc(a->data_len);
		if (!buf)
			return 1;
		c.addr = (uint64_t)(uintptr_t)buf;
		c.data_len = a->data_len;
	}
	if (!cli_admin(cli, "get-feature", &c, &result)) {
		print_feature((uint8_t)a->fid, (uint8_t)a->sel, (uint32_t)result, buf, a->data_len,
			      cli_fmt(cli), cli_pflags(cli));
		ret = 0;
	}
	free(buf);
	return ret;
}

int cmd_set_feature(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	struct nvme_uring_cmd c = { .opcode = nvme_admin_set_features };
	uint64_t result = 0;

	(void)argc;
	(void)argv;
	c.nsid = a->nsid_given ? a->nsid : 0;
	c.cdw10 = a->fid | (a->save ? 1u << 31 : 0);
	c.cdw11 = a->value;
	c.cdw12 = a->cdw12;
	if (cli_admin(cli, "set-feature", &c, &result))
		return 1;
	/* nvme-cli's line: what was set, and the completion's dword 0 */
	printf("set-feature:%#04x, value:0x%08x, cdw12:0x%08x, save:%#x\n", a->fid, a->value,
	       a->cdw12, a->save);
	(void)result;
	return 0;
}

static volatile sig_atomic_t format_cancelled;

static void on_sigint(int sig)
{
	(void)sig;
	format_cancelled = 1;
}

/*
 * nvme-cli's safety delay: name the device, then 10 s for Ctrl-C. SIGINT
 * is caught (not the default kill) so that the session still closes
 * cleanly and the controller's state is written back untouched.
 */
static bool format_confirm(struct cli *cli)
{
	struct sigaction sa = { .sa_handler = on_sigint }, old;
	char dev[32];

	fprintf(stderr, "You are about to format %s (controller %s), namespace %#x.\n"
		"WARNING: Format may irrevocably delete this device's data.\n"
		"You have 10 seconds to press Ctrl-C to cancel this operation.\n\n"
		"Use the force [--force] option to suppress this warning.\n",
		session_devname(&cli->s, dev, sizeof(dev)), cli->s.dir, cli->s.nsid);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	struct timespec left = { .tv_sec = 10 };
	while (!format_cancelled && nanosleep(&left, &left) && errno == EINTR)
		;
	sigaction(SIGINT, &old, NULL);
	if (format_cancelled) {
		fprintf(stderr, "format: cancelled, nothing sent\n");
		return false;
	}
	fprintf(stderr, "Sending format operation ...\n");
	return true;
}

int cmd_format(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	uint32_t lbaf = a->lbaf;

	(void)argc;
	(void)argv;
	if (!cli_args_given(cli->spec, a, "lbaf")) {	/* no --lbaf: keep the format in use, as nvme-cli */
		struct nvme_id_ns *id = cli_identify(cli, "format", NVME_IDENTIFY_CNS_NS,
						     cli->s.nsid);
		if (!id)
			return 1;
		lbaf = (id->flbas & 0xf) | (((id->flbas >> 5) & 3u) << 4);
		free(id);
	}
	if (!a->force && !format_confirm(cli))
		return 130;	/* as a shell reports an interrupted command */
	struct nvme_uring_cmd c = { .opcode = nvme_admin_format_nvm, .nsid = cli->s.nsid };
	c.cdw10 = (lbaf & 0xf) | (a->ms << 4) | (a->pi << 5) | (a->pil << 8) | (a->ses << 9) |
		  ((lbaf >> 4) << 12);
	c.timeout_ms = a->timeout;
	if (cli_admin(cli, "format", &c, NULL))
		return 1;
	printf("Success formatting namespace:%x\n", cli->s.nsid);
	if (a->reset)
		return cmd_reset(cli, 0, NULL);
	return 0;
}

int cmd_create_ns(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	struct nvme_id_ns *id = cli_zalloc(sizeof(*id));
	uint64_t result = 0;

	(void)argc;
	(void)argv;
	if (!id)
		return 1;
	id->nsze = a->nsze;
	id->ncap = a->ncap ? a->ncap : a->nsze;
	id->flbas = (uint8_t)a->flbas;
	id->dps = (uint8_t)a->dps;
	id->lbstm = htole64(a->lbstm);
	struct nvme_uring_cmd c = { .opcode = nvme_admin_ns_mgmt,
				    .cdw10 = NVME_NS_MGMT_SEL_CREATE };
	c.cdw11 = a->csi << 24;
	c.addr = (uint64_t)(uintptr_t)id;
	c.data_len = sizeof(*id);
	c.timeout_ms = a->timeout;
	int res = cli_admin(cli, "create-ns", &c, &result);
	free(id);
	if (res)
		return 1;
	printf("create-ns: Success, created nsid:%u\n", (uint32_t)result);
	return 0;
}

int cmd_delete_ns(struct cli *cli, int argc, char **argv)
{
	struct nvme_uring_cmd c = { .opcode = nvme_admin_ns_mgmt, .nsid = cli->a.nsid,
				    .cdw10 = NVME_NS_MGMT_SEL_DELETE };

	(void)argc;
	(void)argv;
	c.timeout_ms = cli->a.timeout;
	if (cli_admin(cli, "delete-ns", &c, NULL))
		return 1;
	printf("delete-ns: Success, deleted nsid:%u\n", cli->a.nsid);
	return 0;
}

/* attach-ns / detach-ns -n NSID [-c ID,...]: default this controller */
static int attach(struct cli *cli, bool detach)
{
	const char *what = detach ? "detach-ns" : "attach-ns";
	const struct cmd_args *a = &cli->a;
	uint16_t *list = cli_zalloc(4096);
	int n = a->ctrls.n;

	if (!list)
		return 1;
	for (int i = 0; i < n; i++)
		list[1 + i] = (uint16_t)a->ctrls.v[i];
	if (!n) {
		struct nvme_id_ctrl *id = cli_identify(cli, what, NVME_IDENTIFY_CNS_CTRL, 0);

		if (!id) {
			free(list);
			return 1;
		}
		list[1] = id->cntlid;
		n = 1;
		free(id);
	}
	list[0] = (uint16_t)n;
	struct nvme_uring_cmd c = { .opcode = nvme_admin_ns_attach, .nsid = a->nsid };
	c.cdw10 = detach ? NVME_NS_ATTACH_SEL_CTRL_DEATTACH : NVME_NS_ATTACH_SEL_CTRL_ATTACH;
	c.addr = (uint64_t)(uintptr_t)list;
	c.data_len = 4096;
	int res = cli_admin(cli, what, &c, NULL);
	free(list);
	if (res)
		return 1;
	printf("%s: Success, nsid:%u\n", what, a->nsid);
	return 0;
}

int cmd_attach_ns(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return attach(cli, false);
}

int cmd_detach_ns(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return attach(cli, true);
}
