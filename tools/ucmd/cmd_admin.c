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

/* Fixed-width, space-padded spec strings (SN, MN, FR) as C strings. */
static void spec_str(char *dst, const char *src, size_t n)
{
	memcpy(dst, src, n);
	dst[n] = 0;
	for (size_t i = n; i > 0 && (dst[i - 1] == ' ' || dst[i - 1] == 0); i--)
		dst[i - 1] = 0;
}

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
	char sn[21], mn[41], fr[9];

	(void)argc;
	(void)argv;
	struct nvme_id_ctrl *id = identify(cli, NVME_IDENTIFY_CNS_CTRL, 0, &res);
	if (!id) {
		print_status_error("id-ctrl", res);
		return 1;
	}
	spec_str(sn, id->sn, 20);
	spec_str(mn, id->mn, 40);
	spec_str(fr, id->fr, 8);
	if (cli->fmt == OUT_JSON) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "vid", json_object_new_int(id->vid));
		json_object_object_add(o, "ssvid", json_object_new_int(id->ssvid));
		json_object_object_add(o, "sn", json_object_new_string(sn));
		json_object_object_add(o, "mn", json_object_new_string(mn));
		json_object_object_add(o, "fr", json_object_new_string(fr));
		json_object_object_add(o, "mdts", json_object_new_int(id->mdts));
		json_object_object_add(o, "cntlid", json_object_new_int(id->cntlid));
		json_object_object_add(o, "ver", json_object_new_int64(id->ver));
		json_object_object_add(o, "oacs", json_object_new_int(id->oacs));
		json_object_object_add(o, "oncs", json_object_new_int(id->oncs));
		json_object_object_add(o, "sgls", json_object_new_int64(id->sgls));
		json_object_object_add(o, "nn", json_object_new_int64(id->nn));
		json_object_object_add(o, "subnqn", json_object_new_string(id->subnqn));
		json_print(o);
	} else {
		printf("NVME Identify Controller:\n");
		printf("vid       : %#x\nssvid     : %#x\nsn        : %s\nmn        : %s\n"
		       "fr        : %s\nmdts      : %u\ncntlid    : %#x\nver       : %#x\n"
		       "oacs      : %#x\noncs      : %#x\nsgls      : %#x\nnn        : %u\n"
		       "subnqn    : %.256s\n",
		       id->vid, id->ssvid, sn, mn, fr, id->mdts, id->cntlid, id->ver, id->oacs,
		       id->oncs, id->sgls, id->nn, id->subnqn);
	}
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
	unsigned nlbaf = id->nlbaf + 1u;
	if (cli->fmt == OUT_JSON) {
		struct json_object *o = json_object_new_object(), *lbafs = json_object_new_array();
		json_object_object_add(o, "nsid", json_object_new_int64(cli->s.nsid));
		json_object_object_add(o, "nsze", json_object_new_int64((int64_t)id->nsze));
		json_object_object_add(o, "ncap", json_object_new_int64((int64_t)id->ncap));
		json_object_object_add(o, "nuse", json_object_new_int64((int64_t)id->nuse));
		json_object_object_add(o, "nlbaf", json_object_new_int(id->nlbaf));
		json_object_object_add(o, "flbas", json_object_new_int(id->flbas));
		for (unsigned i = 0; i < nlbaf && i < 64; i++) {
			struct json_object *l = json_object_new_object();
			json_object_object_add(l, "ms", json_object_new_int(id->lbaf[i].ms));
			json_object_object_add(l, "ds", json_object_new_int(id->lbaf[i].ds));
			json_object_object_add(l, "rp", json_object_new_int(id->lbaf[i].rp));
			json_object_array_add(lbafs, l);
		}
		json_object_object_add(o, "lbafs", lbafs);
		json_print(o);
	} else {
		printf("NVME Identify Namespace %u:\n", cli->s.nsid);
		printf("nsze    : %#" PRIx64 "\nncap    : %#" PRIx64 "\nnuse    : %#" PRIx64
		       "\nnlbaf   : %u\nflbas   : %#x\n",
		       (uint64_t)id->nsze, (uint64_t)id->ncap, (uint64_t)id->nuse, id->nlbaf,
		       id->flbas);
		unsigned cur = (id->flbas & 0xf) | (((id->flbas >> 5) & 3) << 4);
		for (unsigned i = 0; i < nlbaf && i < 64; i++)
			printf("lbaf %2u : ms:%-3u lbads:%-2u rp:%#x %s\n", i, id->lbaf[i].ms,
			       id->lbaf[i].ds, id->lbaf[i].rp, i == cur ? "(in use)" : "");
	}
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
	unsigned temp = log->temperature[0] | (log->temperature[1] << 8);
	struct { const char *name; uint64_t v; } f[] = {
		{ "critical_warning", log->critical_warning },
		{ "temperature", temp },
		{ "avail_spare", log->avail_spare },
		{ "spare_thresh", log->spare_thresh },
		{ "percent_used", log->percent_used },
		{ "data_units_read", le128_lo(log->data_units_read) },
		{ "data_units_written", le128_lo(log->data_units_written) },
		{ "host_read_commands", le128_lo(log->host_reads) },
		{ "host_write_commands", le128_lo(log->host_writes) },
		{ "controller_busy_time", le128_lo(log->ctrl_busy_time) },
		{ "power_cycles", le128_lo(log->power_cycles) },
		{ "power_on_hours", le128_lo(log->power_on_hours) },
		{ "unsafe_shutdowns", le128_lo(log->unsafe_shutdowns) },
		{ "media_errors", le128_lo(log->media_errors) },
		{ "num_err_log_entries", le128_lo(log->num_err_log_entries) },
	};
	if (cli->fmt == OUT_JSON) {
		struct json_object *o = json_object_new_object();
		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
			json_object_object_add(o, f[i].name, json_object_new_int64((int64_t)f[i].v));
		json_print(o);
	} else {
		printf("Smart Log for NVME device:nvme0 namespace-id:%x\n", NVME_NSID_ALL);
		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
			if (!strcmp(f[i].name, "temperature"))
				printf("%-36s: %" PRIu64 " K (%d C)\n", f[i].name, f[i].v,
				       (int)f[i].v - 273);
			else
				printf("%-36s: %" PRIu64 "\n", f[i].name, f[i].v);
		}
	}
	free(log);
	return 0;
}

int cmd_list(struct cli *cli, int argc, char **argv)
{
	const char *names[64];
	int n = ucmd_device_names(cli->s.e, names, 64);

	(void)argc;
	(void)argv;
	if (cli->fmt == OUT_JSON) {
		struct json_object *o = json_object_new_object(), *devs = json_object_new_array();
		for (int i = 0; i < n && i < 64; i++)
			json_object_array_add(devs, json_object_new_string(names[i]));
		json_object_object_add(o, cli->s.daemon ? "daemon" : "ctrl_dir",
				       json_object_new_string(cli->s.dir));
		json_object_object_add(o, "devices", devs);
		json_object_object_add(o, "nsid", json_object_new_int64(cli->s.nsid));
		json_object_object_add(o, "lba_size", json_object_new_int64(cli->s.lba_size));
		json_object_object_add(o, "nsze", json_object_new_int64((int64_t)cli->s.nsze));
		json_print(o);
		return 0;
	}
	printf("%s: %s\n", cli->s.daemon ? "daemon" :
	       !strncmp(cli->s.dir, "nvme-tcp://", 11) ? "controller" : "controller directory",
	       cli->s.dir);
	for (int i = 0; i < n && i < 64; i++)
		printf("  %s\n", names[i]);
	if (cli->s.lba_size)
		printf("namespace %u: %" PRIu64 " blocks of %u bytes (%.2f GiB)\n", cli->s.nsid,
		       cli->s.nsze, cli->s.lba_size,
		       (double)cli->s.nsze * cli->s.lba_size / (1u << 30));
	return 0;
}
