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
	static const char *const names[] = { "?", "eui64", "nguid", "uuid", "csi" };

	(void)argc;
	(void)argv;
	if (!buf || admin(cli, "ns-descs", nvme_admin_identify, cli->s.nsid,
			  NVME_IDENTIFY_CNS_NS_DESC_LIST, 0, buf, 4096, NULL)) {
		free(buf);
		return 1;
	}
	struct json_object *o = json_object_new_object();
	if (cli->fmt == OUT_NORMAL)
		printf("NVME Namespace Identification Descriptors NS %u:\n", cli->s.nsid);
	for (unsigned off = 0; off + 4 <= 4096;) {
		struct nvme_ns_id_desc *d = (struct nvme_ns_id_desc *)(buf + off);
		if (!d->nidt || off + 4 + d->nidl > 4096)
			break;
		char hex[2 * 255 + 1] = "";
		for (unsigned i = 0; i < d->nidl; i++)
			sprintf(hex + 2 * i, "%02x", d->nid[i]);
		const char *name = d->nidt <= 4 ? names[d->nidt] : "unknown";
		if (cli->fmt == OUT_JSON)
			json_object_object_add(o, name, json_object_new_string(hex));
		else
			printf("%-6s: %s\n", name, hex);
		off += 4 + d->nidl;
	}
	if (cli->fmt == OUT_JSON)
		json_print(o);
	else
		json_object_put(o);
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
	struct json_object *arr = json_object_new_array();
	for (uint32_t i = 0; i < n; i++) {
		if (!log[i].error_count)
			continue;
		if (cli->fmt == OUT_JSON) {
			struct json_object *e = json_object_new_object();
			json_object_object_add(e, "error_count", json_object_new_int64((int64_t)log[i].error_count));
			json_object_object_add(e, "sqid", json_object_new_int(log[i].sqid));
			json_object_object_add(e, "cmdid", json_object_new_int(log[i].cmdid));
			json_object_object_add(e, "status_field", json_object_new_int(log[i].status_field >> 1));
			json_object_object_add(e, "lba", json_object_new_int64((int64_t)log[i].lba));
			json_object_object_add(e, "nsid", json_object_new_int64(log[i].nsid));
			json_object_array_add(arr, e);
		} else {
			printf("entry %u: error_count %" PRIu64 " sqid %u cmdid %#x status %#x (%s) "
			       "lba %" PRIu64 " nsid %u\n", i, (uint64_t)log[i].error_count,
			       log[i].sqid, log[i].cmdid, log[i].status_field >> 1,
			       nvme_status_to_string(log[i].status_field >> 1, false),
			       (uint64_t)log[i].lba, log[i].nsid);
		}
	}
	if (cli->fmt == OUT_JSON) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "errors", arr);
		json_print(o);
	} else {
		json_object_put(arr);
	}
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
	struct json_object *o = json_object_new_object();
	struct { const char *name; const uint32_t *tab; } sets[] = {
		{ "admin", log->acs }, { "io", log->iocs } };
	for (int s = 0; s < 2; s++) {
		struct json_object *set = json_object_new_object();
		if (cli->fmt == OUT_NORMAL)
			printf("%s command set\n", sets[s].name);
		for (int op = 0; op < 256; op++) {
			uint32_t e = sets[s].tab[op];
			if (!(e & 1))	/* CSUPP */
				continue;
			char key[8];
			snprintf(key, sizeof(key), "%#04x", op);
			if (cli->fmt == OUT_JSON) {
				json_object_object_add(set, key, json_object_new_int64(e));
			} else {
				printf("  opcode %#04x: %08x  CSUPP%s%s%s%s CSE:%u\n", op, e,
				       e & 2 ? " LBCC" : "", e & 4 ? " NCC" : "", e & 8 ? " NIC" : "",
				       e & 16 ? " CCC" : "", (e >> 16) & 7);
			}
		}
		json_object_object_add(o, sets[s].name, set);
	}
	if (cli->fmt == OUT_JSON)
		json_print(o);
	else
		json_object_put(o);
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
	if (cli->fmt == OUT_JSON) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "feature_id", json_object_new_int((int)fid));
		json_object_object_add(o, "result", json_object_new_int64((int64_t)(uint32_t)result));
		json_print(o);
	} else {
		printf("%s: feature id %#04x, %s value: %#010x\n", what, fid,
		       set ? "new" : sel == 1 ? "default" : sel == 2 ? "saved" :
		       sel == 3 ? "capabilities" : "current", (uint32_t)result);
	}
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
