/* SPDX-License-Identifier: MIT */
/*
 * Log pages: get-log (any log, raw), fw-log, sanitize-log, self-test-log.
 * Each sends Get Log Page and hands the data to one printer (print.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "cli.h"

struct log_req {
	uint8_t lid;
	uint32_t nsid, len, lsp, lsi, csi;
	uint64_t lpo;
	bool rae;
};

/* Get Log Page with every field nvme-cli's get-log sets */
static int get_log(struct cli *cli, const char *what, const struct log_req *r, void *buf)
{
	uint32_t numd = r->len / 4 - 1;
	struct nvme_uring_cmd c = { .opcode = nvme_admin_get_log_page, .nsid = r->nsid };

	c.addr = (uint64_t)(uintptr_t)buf;
	c.data_len = r->len;
	c.cdw10 = r->lid | (r->lsp << 8) | (r->rae ? 1u << 15 : 0) | ((numd & 0xffff) << 16);
	c.cdw11 = (numd >> 16) | (r->lsi << 16);
	c.cdw12 = (uint32_t)r->lpo;
	c.cdw13 = (uint32_t)(r->lpo >> 32);
	c.cdw14 = r->csi << 24;
	return cli_admin(cli, what, &c, NULL);
}

int cmd_get_log(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	struct log_req r = { .lid = (uint8_t)a->log_id, .len = a->log_len, .lsp = a->lsp,
			     .lsi = a->lsi, .csi = a->csi, .lpo = a->lpo, .rae = a->rae };
	int ret = 1;

	(void)argc;
	(void)argv;
	if (!r.len || r.len % 4) {
		fprintf(stderr, "get-log: --log-len must be a non-zero multiple of 4 (dwords)\n");
		return 2;
	}
	if (r.lpo % 4) {
		fprintf(stderr, "get-log: --lpo must be a multiple of 4 (dwords)\n");
		return 2;
	}
	r.nsid = a->nsid_given ? a->nsid : NVME_NSID_ALL;
	void *buf = cli_zalloc(r.len);
	if (buf && !get_log(cli, "get-log", &r, buf)) {
		print_get_log("nvme0", r.lid, r.nsid, buf, r.len, a->raw ? OUT_BINARY : OUT_NORMAL);
		ret = 0;
	}
	free(buf);
	return ret;
}

int cmd_fw_log(struct cli *cli, int argc, char **argv)
{
	struct log_req r = { .lid = NVME_LOG_LID_FW_SLOT, .nsid = NVME_NSID_ALL,
			     .len = sizeof(struct nvme_firmware_slot) };
	struct nvme_firmware_slot *fw = cli_zalloc(r.len);
	int ret = 1;

	(void)argc;
	(void)argv;
	if (fw && !get_log(cli, "fw-log", &r, fw)) {
		print_fw_log(fw, "nvme0", cli_fmt(cli));
		ret = 0;
	}
	free(fw);
	return ret;
}

int cmd_sanitize_log(struct cli *cli, int argc, char **argv)
{
	struct log_req r = { .lid = NVME_LOG_LID_SANITIZE, .nsid = NVME_NSID_ALL,
			     .len = sizeof(struct nvme_sanitize_log_page), .rae = cli->a.rae };
	struct nvme_sanitize_log_page *s = cli_zalloc(r.len);
	int ret = 1;

	(void)argc;
	(void)argv;
	if (s && !get_log(cli, "sanitize-log", &r, s)) {
		print_sanitize_log(s, "nvme0", cli_fmt(cli), cli_pflags(cli));
		ret = 0;
	}
	free(s);
	return ret;
}

int cmd_self_test_log(struct cli *cli, int argc, char **argv)
{
	struct log_req r = { .lid = NVME_LOG_LID_DEVICE_SELF_TEST, .nsid = NVME_NSID_ALL,
			     .len = sizeof(struct nvme_self_test_log) };
	struct nvme_self_test_log *l = cli_zalloc(r.len);
	int ret = 1;

	(void)argc;
	(void)argv;
	if (l && !get_log(cli, "self-test-log", &r, l)) {
		print_self_test_log(l, cli->a.dst_entries, "nvme0", cli_fmt(cli));
		ret = 0;
	}
	free(l);
	return ret;
}
