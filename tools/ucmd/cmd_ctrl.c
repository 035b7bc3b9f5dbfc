/* SPDX-License-Identifier: MIT */
/*
 * Admin commands: ns-descs, error-log, effects-log, get-feature,
 * set-feature, format, create-ns, delete-ns, attach-ns, detach-ns.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>
#include <nvme/util.h>

#include "args.h"
#include "cli.h"

/* One admin command with an optional 4 KiB-aligned data buffer. */
static int admin(struct cli *cli, const char *what, uint8_t opcode, uint32_t nsid,
		 uint32_t cdw10, uint32_t cdw11, void *buf, uint32_t len, uint64_t *result)
{
	struct nvme_uring_cmd c = { .opcode = opcode, .nsid = nsid, .cdw10 = cdw10,
				    .cdw11 = cdw11 };

	c.addr = (uint64_t)(uintptr_t)buf;
	c.data_len = len;
	int res = session_passthru(&cli->s, true, &c, result);
	if (res)
		print_status_error(what, res);
	return res;
}

static void *zalloc(size_t len)
{
	void *p = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);

	if (p)
		memset(p, 0, len);
	return p;
}

static uint32_t get_log_cdw10(uint8_t lid, uint32_t bytes)
{
	return ((bytes / 4 - 1) << 16) | lid;	/* NUMDL, LID */
}

int cmd_ns_descs(struct cli *cli, int argc, char **argv)
{
	uint8_t *buf = zalloc(4096);

	(void)argc;
	(void)argv;
	if (!buf || admin(cli, "ns-descs", nvme_admin_identify, cli->s.nsid,
			  NVME_IDENTIFY_CNS_NS_DESC_LIST, 0, buf, 4096, NULL)) {
		free(buf);
		return 1;
	}
	print_ns_descs(buf, cli->s.nsid, cli->fmt);
	free(buf);
	return 0;
}

int cmd_error_log(struct cli *cli, int argc, char **argv)
{
	uint32_t n;

	if (error_log_args_parse(&n, argc, argv)) {
		fprintf(stderr, "usage: ucmd error-log [--log-entries 1..256]\n");
		return 1;
	}
	uint32_t len = n * (uint32_t)sizeof(struct nvme_error_log_page);
	struct nvme_error_log_page *log = zalloc(len);
	if (!log || admin(cli, "error-log", nvme_admin_get_log_page, NVME_NSID_ALL,
			  get_log_cdw10(NVME_LOG_LID_ERROR, len), 0, log, len, NULL)) {
		free(log);
		return 1;
	}
	print_error_log(log, (int)n, "nvme0", cli->fmt);
	free(log);
	return 0;
}

int cmd_effects_log(struct cli *cli, int argc, char **argv)
{
	struct nvme_cmd_effects_log *log = zalloc(sizeof(*log));

	(void)argc;
	(void)argv;
	if (!log || admin(cli, "effects-log", nvme_admin_get_log_page, NVME_NSID_ALL,
			  get_log_cdw10(NVME_LOG_LID_CMD_EFFECTS, sizeof(*log)), 0, log,
			  sizeof(*log), NULL)) {
		free(log);
		return 1;
	}
	print_effects_log(log, cli->fmt, 0);
	free(log);
	return 0;
}

/* get-feature -f FID [-s SEL] [--cdw11 V] ; set-feature -f FID -V VALUE [--save] */
static int feature(struct cli *cli, int argc, char **argv, bool set)
{
	struct feature_args a;
	const char *what = set ? "set-feature" : "get-feature";

	if (feature_args_parse(&a, argc, argv, set))
		goto bad;
	uint32_t fid = a.fid, sel = a.sel, cdw11 = a.cdw11;
	bool save = a.save;
	uint64_t result = 0;
	uint32_t cdw10 = set ? fid | (save ? 1u << 31 : 0) : fid | (sel << 8);
	if (admin(cli, what, set ? nvme_admin_set_features : nvme_admin_get_features,
		  cli->s.nsid, cdw10, cdw11, NULL, 0, &result))
		return 1;
	if (!set)
		print_feature((uint8_t)fid, (uint8_t)sel, (uint32_t)result, NULL, 0, cli->fmt, 0);
	else if (cli->fmt == OUT_JSON) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "feature_id", json_object_new_int((int)fid));
		json_object_object_add(o, "result", json_object_new_int64((int64_t)(uint32_t)result));
		json_print(o);
	} else
		printf("%s: feature id %#04x, new value: %#010x\n", what, fid, (uint32_t)result);
	return 0;
bad:
	fprintf(stderr, set ? "usage: ucmd set-feature -f FID -V VALUE [--save]\n"
			    : "usage: ucmd get-feature -f FID [-s SEL 0..3] [--cdw11 V]\n");
	return 1;
}

int cmd_get_feature(struct cli *cli, int argc, char **argv)
{
	return feature(cli, argc, argv, false);
}

int cmd_set_feature(struct cli *cli, int argc, char **argv)
{
	return feature(cli, argc, argv, true);
}

/* format [--lbaf N] [--ses N] [--ms 0|1] */
int cmd_format(struct cli *cli, int argc, char **argv)
{
	struct format_args a;

	if (format_args_parse(&a, argc, argv))
		goto bad;
	uint32_t lbaf = a.lbaf, ses = a.ses, ms = a.ms;
	uint32_t cdw10 = (lbaf & 0xf) | (ms << 4) | (ses << 9) | ((lbaf >> 4) << 12);
	if (admin(cli, "format", nvme_admin_format_nvm, cli->s.nsid, cdw10, 0, NULL, 0, NULL))
		return 1;
	printf("Success formatting namespace:%x\n", cli->s.nsid);
	return 0;
bad:
	fprintf(stderr, "usage: ucmd format [--lbaf 0..63] [--ses 0..7] [--ms 0|1]\n");
	return 1;
}

/* create-ns --nsze N [--ncap N] [--flbas F] */
int cmd_create_ns(struct cli *cli, int argc, char **argv)
{
	struct create_ns_args a;

	if (create_ns_args_parse(&a, argc, argv))
		goto bad;
	uint64_t nsze = a.nsze, ncap = a.ncap;
	uint32_t flbas = a.flbas;
	struct nvme_id_ns *id = zalloc(sizeof(*id));
	if (!id)
		return 1;
	id->nsze = nsze;
	id->ncap = ncap ? ncap : nsze;
	id->flbas = (uint8_t)flbas;
	uint64_t result = 0;
	int res = admin(cli, "create-ns", nvme_admin_ns_mgmt, 0, NVME_NS_MGMT_SEL_CREATE, 0, id,
			sizeof(*id), &result);
	free(id);
	if (res)
		return 1;
	printf("create-ns: Success, created nsid:%u\n", (uint32_t)result);
	return 0;
bad:
	fprintf(stderr, "usage: ucmd create-ns --nsze BLOCKS [--ncap BLOCKS] [--flbas F]\n");
	return 1;
}

int cmd_delete_ns(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (!cli->nsid) {
		fprintf(stderr, "usage: ucmd --namespace-id N delete-ns\n");
		return 1;
	}
	if (admin(cli, "delete-ns", nvme_admin_ns_mgmt, cli->nsid, NVME_NS_MGMT_SEL_DELETE, 0,
		  NULL, 0, NULL))
		return 1;
	printf("delete-ns: Success, deleted nsid:%u\n", cli->nsid);
	return 0;
}

/* attach-ns / detach-ns [--controllers=ID,...]: default this controller */
static int attach(struct cli *cli, int argc, char **argv, bool detach)
{
	const char *what = detach ? "detach-ns" : "attach-ns";
	struct attach_args a;

	if (attach_args_parse(&a, argc, argv) || !cli->nsid)
		goto bad;
	uint32_t *ids = a.ids, n = a.n;
	uint16_t *list = zalloc(4096);
	if (!list)
		return 1;
	if (!n) {
		struct nvme_id_ctrl *id = zalloc(4096);
		if (!id || admin(cli, what, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, 0, id,
				 4096, NULL)) {
			free(id);
			free(list);
			return 1;
		}
		ids[n++] = id->cntlid;
		free(id);
	}
	list[0] = (uint16_t)n;
	for (uint32_t i = 0; i < n; i++)
		list[1 + i] = (uint16_t)ids[i];
	int res = admin(cli, what, nvme_admin_ns_attach, cli->nsid,
			detach ? NVME_NS_ATTACH_SEL_CTRL_DEATTACH : NVME_NS_ATTACH_SEL_CTRL_ATTACH,
			0, list, 4096, NULL);
	free(list);
	if (res)
		return 1;
	printf("%s: Success, nsid:%u\n", what, cli->nsid);
	return 0;
bad:
	fprintf(stderr, "usage: ucmd --namespace-id N %s [--controllers=ID,...]\n", what);
	return 1;
}

int cmd_attach_ns(struct cli *cli, int argc, char **argv)
{
	return attach(cli, argc, argv, false);
}

int cmd_detach_ns(struct cli *cli, int argc, char **argv)
{
	return attach(cli, argc, argv, true);
}
