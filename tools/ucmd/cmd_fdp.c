/* SPDX-License-Identifier: MIT */
/*
 * `ucmd fdp ...`: nvme-cli 2.3's fdp plugin (configs, usage, stats, events,
 * status, update, set-events) with its options, text and JSON keys, so that
 * a script written for `nvme fdp` runs against ucmd unchanged; and
 * `feature` as later nvme-cli has it (show, enable, disable Feature 1Dh).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvme/types.h>

#include "cli.h"
#include "print_priv.h"

/* Get Log Page with LSP and LSI (the endurance group) */
static int fdp_log(struct cli *cli, const char *what, uint8_t lid, uint8_t lsp, uint16_t lsi,
		   void *buf, uint32_t len)
{
	uint32_t numd = len / 4 - 1;
	struct nvme_uring_cmd c = { .opcode = nvme_admin_get_log_page };

	c.addr = (uint64_t)(uintptr_t)buf;
	c.data_len = len;
	c.cdw10 = (numd & 0xffff) << 16 | (uint32_t)lsp << 8 | lid;
	c.cdw11 = numd >> 16 | (uint32_t)lsi << 16;
	return cli_admin(cli, what, &c, NULL);
}

static uint16_t egid(const struct cli *cli)
{
	return (uint16_t)cli->a.endgrp_id;
}

/* The whole of a log whose header says its size (bytes 4..7 for 20h) or count */
static void *fdp_log_all(struct cli *cli, const char *what, uint8_t lid, uint32_t *len)
{
	uint8_t *buf = cli_zalloc(4096);
	uint32_t size;

	if (!buf || fdp_log(cli, what, lid, 0, egid(cli), buf, 16)) {
		free(buf);
		return NULL;
	}
	size = lid == NVME_LOG_LID_FDP_CONFIGS ? pl32(buf + 4)
	       : 8 + 8u * pl16(buf);	/* RUH Usage: nruh descriptors of 8 bytes */
	if (size < 16 || size > 1u << 20) {
		fprintf(stderr, "%s: the log says it is %u bytes\n", what, size);
		free(buf);
		return NULL;
	}
	size = (size + 3) & ~3u;
	free(buf);
	buf = cli_zalloc(size);
	if (!buf || fdp_log(cli, what, lid, 0, egid(cli), buf, size)) {
		free(buf);
		return NULL;
	}
	*len = size;
	return buf;
}

static const char *ruht_name(uint8_t t)
{
	switch (t) {
	case NVME_FDP_RUHT_INITIALLY_ISOLATED: return "Initially Isolated";
	case NVME_FDP_RUHT_PERSISTENTLY_ISOLATED: return "Persistently Isolated";
	}
	return "Reserved";
}

int cmd_fdp_configs(struct cli *cli, int argc, char **argv)
{
	uint32_t len, off = 16;
	uint8_t *log = fdp_log_all(cli, "fdp configs", NVME_LOG_LID_FDP_CONFIGS, &len);
	struct json_object *o = NULL, *a = NULL;
	unsigned n;

	(void)argc;
	(void)argv;
	if (!log)
		return 1;
	if (cli_fmt(cli) == OUT_BINARY) {
		p_raw(log, len);
		free(log);
		return 0;
	}
	n = pl16(log) + 1u;
	if (cli_fmt(cli) == OUT_JSON) {
		o = json_object_new_object();
		a = json_object_new_array();
		pj_int(o, "n", pl16(log));
	}
	for (unsigned i = 0; i < n && off + 64 <= len; i++) {
		const struct nvme_fdp_config_desc *d = (const void *)(log + off);
		uint16_t nruh = le16toh(d->nruh);

		if (o) {
			struct json_object *c = json_object_new_object();

			pj_int(c, "fdpa", d->fdpa);
			pj_int(c, "vss", d->vss);
			pj_int(c, "nrg", le32toh(d->nrg));
			pj_int(c, "nruh", nruh);
			pj_int(c, "nnss", le32toh(d->nnss));
			pj_u64(c, "runs", le64toh(d->runs));
			pj_int(c, "erutl", le32toh(d->erutl));
			json_object_array_add(a, c);
		} else {
			printf("FDP Attributes: %#x\n", d->fdpa);
			if (cli->a.human) {
				printf("  [7:7] : %#x\tFDP Configuration %sValid\n", d->fdpa >> 7,
				       d->fdpa >> 7 ? "" : "In");
				printf("  [4:4] : %#x\tFDP Volatile Write Cache %sPresent\n",
				       (d->fdpa >> 4) & 1, (d->fdpa >> 4) & 1 ? "" : "Not ");
				printf("  [3:0] : %#x\tReclaim Group Identifier Format\n", d->fdpa & 0xf);
			}
			printf("Vendor Specific Size: %u\n", d->vss);
			printf("Number of Reclaim Groups: %u\n", le32toh(d->nrg));
			printf("Number of Reclaim Unit Handles: %u\n", nruh);
			printf("Number of Namespaces Supported: %u\n", le32toh(d->nnss));
			printf("Reclaim Unit Nominal Size: %" PRIu64 "\n", le64toh(d->runs));
			printf("Estimated Reclaim Unit Time Limit: %u\n", le32toh(d->erutl));
			printf("Reclaim Unit Handle List:\n");
			for (unsigned k = 0; k < nruh && off + 64 + 4 * (k + 1) <= len; k++)
				printf("  [%u]: %s\n", k, ruht_name(d->ruhs[k].ruht));
		}
		off += le16toh(d->size) ? le16toh(d->size) : 64;
	}
	if (o) {
		json_object_object_add(o, "configs", a);
		pj_print(o);
	}
	free(log);
	return 0;
}

static const char *ruha_name(uint8_t a)
{
	switch (a) {
	case 0: return "Unused";
	case 1: return "Host Specified";
	case 2: return "Controller Specified";
	}
	return "Unknown";
}

int cmd_fdp_usage(struct cli *cli, int argc, char **argv)
{
	uint32_t len;
	struct nvme_fdp_ruhu_log *l = fdp_log_all(cli, "fdp usage", NVME_LOG_LID_FDP_RUH_USAGE,
						  &len);
	uint16_t nruh;

	(void)argc;
	(void)argv;
	if (!l)
		return 1;
	nruh = le16toh(l->nruh);
	if (cli_fmt(cli) == OUT_BINARY) {
		p_raw(l, len);
	} else if (cli_fmt(cli) == OUT_JSON) {
		struct json_object *o = json_object_new_object(), *a = json_object_new_array();

		pj_int(o, "nruh", nruh);
		for (unsigned i = 0; i < nruh; i++) {
			struct json_object *r = json_object_new_object();

			pj_int(r, "ruha", l->ruhus[i].ruha);
			json_object_array_add(a, r);
		}
		json_object_object_add(o, "ruhus", a);
		pj_print(o);
	} else {
		for (unsigned i = 0; i < nruh; i++)
			printf("Reclaim Unit Handle %u Attributes: %#x (%s)\n", i, l->ruhus[i].ruha,
			       ruha_name(l->ruhus[i].ruha));
	}
	free(l);
	return 0;
}

int cmd_fdp_stats(struct cli *cli, int argc, char **argv)
{
	struct nvme_fdp_stats_log *s = cli_zalloc(sizeof(*s));
	char b[48];

	(void)argc;
	(void)argv;
	if (!s || fdp_log(cli, "fdp stats", NVME_LOG_LID_FDP_STATS, 0, egid(cli), s,
			  sizeof(*s))) {
		free(s);
		return 1;
	}
	if (cli_fmt(cli) == OUT_BINARY) {
		p_raw(s, sizeof(*s));
	} else if (cli_fmt(cli) == OUT_JSON) {
		struct json_object *o = json_object_new_object();

		pj_u128(o, "hbmw", s->hbmw);
		pj_u128(o, "mbmw", s->mbmw);
		pj_u128(o, "mbe", s->mbe);
		pj_print(o);
	} else {
		printf("Host Bytes with Metadata Written (HBMW): %s\n",
		       p_u128_str(s->hbmw, b, sizeof(b)));
		printf("Media Bytes with Metadata Written (MBMW): %s\n",
		       p_u128_str(s->mbmw, b, sizeof(b)));
		printf("Media Bytes Erased (MBE): %s\n", p_u128_str(s->mbe, b, sizeof(b)));
	}
	free(s);
	return 0;
}

static const char *event_name(uint8_t t)
{
	switch (t) {
	case NVME_FDP_EVENT_RUNFW: return "Reclaim Unit Not Fully Written";
	case NVME_FDP_EVENT_RUTLE: return "Reclaim Unit Active Time Limit Exceeded";
	case NVME_FDP_EVENT_RESET: return "Controller Level Reset Modified Reclaim Unit Handles";
	case NVME_FDP_EVENT_PID: return "Invalid Placement Identifier";
	case NVME_FDP_EVENT_REALLOC: return "Media Reallocated";
	case NVME_FDP_EVENT_MODIFY: return "Implicitly Modified Reclaim Unit Handle";
	}
	return "Reserved";
}

static uint64_t ts48(const struct nvme_timestamp *t)
{
	uint64_t v = 0;

	memcpy(&v, t->timestamp, sizeof(t->timestamp));
	return le64toh(v);
}

static void event_print(unsigned i, const struct nvme_fdp_event *e, struct json_object *a)
{
	const struct nvme_fdp_event_realloc *mr = (const void *)e->type_specific;
	uint64_t ms = ts48(&e->ts);

	if (a) {
		struct json_object *o = json_object_new_object();

		pj_int(o, "type", e->type);
		pj_int(o, "fdpef", e->flags);
		if (e->flags & NVME_FDP_EVENT_F_PIV)
			pj_int(o, "pid", le16toh(e->pid));
		pj_u64(o, "timestamp", ms);
		if (e->flags & NVME_FDP_EVENT_F_NSIDV)
			pj_int(o, "nsid", le32toh(e->nsid));
		if (e->type == NVME_FDP_EVENT_REALLOC) {
			pj_int(o, "nlbam", le16toh(mr->nlbam));
			if (mr->flags & NVME_FDP_EVENT_REALLOC_F_LBAV)
				pj_u64(o, "lba", le64toh(mr->lba));
		}
		if (e->flags & NVME_FDP_EVENT_F_LV) {
			pj_int(o, "rgid", le16toh(e->rgid));
			pj_int(o, "ruhid", e->ruhid);
		}
		json_object_array_add(a, o);
		return;
	}
	time_t secs = (time_t)(ms / 1000);
	struct tm *tm = localtime(&secs);
	char when[64];

	printf("Event[%u]\n", i);
	printf("  Event Type: 0x%x (%s)\n", e->type, event_name(e->type));
	printf("  Event Timestamp: %" PRIu64 " (%s)\n", ms,
	       tm && strftime(when, sizeof(when), "%c %Z", tm) ? when : "-");
	if (e->flags & NVME_FDP_EVENT_F_PIV)
		printf("  Placement Identifier (PID): 0x%x\n", le16toh(e->pid));
	if (e->flags & NVME_FDP_EVENT_F_NSIDV)
		printf("  Namespace Identifier (NSID): %u\n", le32toh(e->nsid));
	if (e->type == NVME_FDP_EVENT_REALLOC) {
		printf("  Number of LBAs Moved (NLBAM): %u\n", le16toh(mr->nlbam));
		if (mr->flags & NVME_FDP_EVENT_REALLOC_F_LBAV)
			printf("  Logical Block Address (LBA): %#" PRIx64 "\n", le64toh(mr->lba));
	}
	if (e->flags & NVME_FDP_EVENT_F_LV) {
		printf("  Reclaim Group Identifier: %u\n", le16toh(e->rgid));
		/* sic: nvme-cli prints no colon here */
		printf("  Reclaim Unit Handle Identifier %u\n", e->ruhid);
	}
	printf("\n");
}

int cmd_fdp_events(struct cli *cli, int argc, char **argv)
{
	struct nvme_fdp_events_log *l = cli_zalloc(sizeof(*l));
	uint32_t n;

	(void)argc;
	(void)argv;
	if (!l || fdp_log(cli, "fdp events", NVME_LOG_LID_FDP_EVENTS, cli->a.host_events,
			  egid(cli), l, sizeof(*l))) {
		free(l);
		return 1;
	}
	n = le32toh(l->n);
	if (n > ARRAY_LEN(l->events))
		n = ARRAY_LEN(l->events);
	if (cli_fmt(cli) == OUT_BINARY) {
		p_raw(l, sizeof(*l));
	} else if (cli_fmt(cli) == OUT_JSON) {
		struct json_object *o = json_object_new_object(), *a = json_object_new_array();

		pj_int(o, "n", le32toh(l->n));
		for (uint32_t i = 0; i < n; i++)
			event_print(i, &l->events[i], a);
		json_object_object_add(o, "events", a);
		pj_print(o);
	} else {
		for (uint32_t i = 0; i < n; i++)
			event_print(i, &l->events[i], NULL);
	}
	free(l);
	return 0;
}

static int io_mgmt(struct cli *cli, const char *what, uint8_t opcode, uint32_t cdw10, void *buf,
		   uint32_t len)
{
	struct nvme_uring_cmd c = { .opcode = opcode, .nsid = cli->s.nsid, .cdw10 = cdw10 };
	int res;

	c.addr = (uint64_t)(uintptr_t)buf;
	c.data_len = len;
	if (opcode == nvme_cmd_io_mgmt_recv)
		c.cdw11 = len / 4 - 1;
	res = session_passthru(&cli->s, false, &c, NULL);
	if (res)
		print_status_error(what, res);
	return res;
}

int cmd_fdp_status(struct cli *cli, int argc, char **argv)
{
	struct nvme_fdp_ruh_status *s = cli_zalloc(16);
	uint32_t len;
	uint16_t n;

	(void)argc;
	(void)argv;
	if (!s || io_mgmt(cli, "fdp status", nvme_cmd_io_mgmt_recv, NVME_IO_MGMT_RECV_RUH_STATUS,
			  s, 16)) {
		free(s);
		return 1;
	}
	n = le16toh(s->nruhsd);
	len = 16 + 32u * n;
	free(s);
	s = cli_zalloc(len);
	if (!s || io_mgmt(cli, "fdp status", nvme_cmd_io_mgmt_recv, NVME_IO_MGMT_RECV_RUH_STATUS,
			  s, len)) {
		free(s);
		return 1;
	}
	n = le16toh(s->nruhsd) < n ? le16toh(s->nruhsd) : n;
	if (cli_fmt(cli) == OUT_BINARY) {
		p_raw(s, len);
	} else if (cli_fmt(cli) == OUT_JSON) {
		struct json_object *o = json_object_new_object(), *a = json_object_new_array();

		pj_int(o, "nruhsd", n);
		for (unsigned i = 0; i < n; i++) {
			struct json_object *r = json_object_new_object();

			pj_int(r, "pid", le16toh(s->ruhss[i].pid));
			pj_int(r, "ruhid", le16toh(s->ruhss[i].ruhid));
			pj_int(r, "earutr", le32toh(s->ruhss[i].earutr));
			pj_u64(r, "ruamw", le64toh(s->ruhss[i].ruamw));
			json_object_array_add(a, r);
		}
		json_object_object_add(o, "ruhss", a);
		pj_print(o);
	} else {
		for (unsigned i = 0; i < n; i++) {
			printf("Placement Identifier %u; Reclaim Unit Handle Identifier %u\n",
			       le16toh(s->ruhss[i].pid), le16toh(s->ruhss[i].ruhid));
			printf("  Estimated Active Reclaim Unit Time Remaining (EARUTR): %u\n",
			       le32toh(s->ruhss[i].earutr));
			printf("  Reclaim Unit Available Media Writes (RUAMW): %" PRIu64 "\n\n",
			       le64toh(s->ruhss[i].ruamw));
		}
	}
	free(s);
	return 0;
}

int cmd_fdp_update(struct cli *cli, int argc, char **argv)
{
	const struct u64_list *l = &cli->a.pids;
	uint16_t *pids;
	int ret;

	(void)argc;
	(void)argv;
	if (!l->n) {
		fprintf(stderr, "update: --pids is required\n");
		return 2;
	}
	pids = cli_zalloc((size_t)l->n * 2);
	if (!pids)
		return 1;
	for (int i = 0; i < l->n; i++)
		pids[i] = htole16((uint16_t)l->v[i]);
	ret = io_mgmt(cli, "update", nvme_cmd_io_mgmt_send,
		      NVME_IO_MGMT_SEND_RUH_UPDATE | (uint32_t)(l->n - 1) << 16, pids,
		      (uint32_t)l->n * 2);
	free(pids);
	if (!ret)
		printf("update: Success\n");
	return ret ? 1 : 0;
}

int cmd_fdp_set_events(struct cli *cli, int argc, char **argv)
{
	const struct u64_list *l = &cli->a.event_types;
	struct nvme_uring_cmd c = { .opcode = nvme_admin_set_features, .nsid = cli->s.nsid };
	uint8_t *types;
	int ret;

	(void)argc;
	(void)argv;
	if (!l->n) {
		fprintf(stderr, "set-events: --event-types is required\n");
		return 2;
	}
	types = cli_zalloc((size_t)l->n);
	if (!types)
		return 1;
	for (int i = 0; i < l->n; i++)
		types[i] = (uint8_t)l->v[i];
	c.cdw10 = NVME_FEAT_FID_FDP_EVENTS;
	c.cdw11 = cli->a.placement_handle | (uint32_t)l->n << 16;
	c.cdw12 = cli->a.fdp_enable;
	c.addr = (uint64_t)(uintptr_t)types;
	c.data_len = (uint32_t)l->n;
	ret = cli_admin(cli, "set-events", &c, NULL);
	free(types);
	if (!ret)
		printf("set-events: Success\n");
	return ret ? 1 : 0;
}

int cmd_fdp_feature(struct cli *cli, int argc, char **argv)
{
	struct nvme_uring_cmd c = { .opcode = nvme_admin_get_features };
	uint16_t eg = egid(cli) ? egid(cli) : 1;
	uint64_t dw0 = 0;
	int ret;

	(void)argc;
	(void)argv;
	if (cli->a.fdp_disable && (cli->a.conf_idx != 256)) {
		fprintf(stderr, "feature: --enable-conf-idx and --disable exclude each other\n");
		return 2;
	}
	if (cli->a.fdp_disable || (cli->a.conf_idx != 256)) {
		c.opcode = nvme_admin_set_features;
		c.cdw10 = NVME_FEAT_FID_FDP;
		c.cdw11 = eg;
		c.cdw12 = cli->a.fdp_disable ? 0 : 1u | (cli->a.conf_idx & 0xff) << 8;
		ret = cli_admin(cli, "feature", &c, NULL);
		if (!ret)
			printf("Success %s Endurance Group: %u, FDP configuration index: %u\n",
			       cli->a.fdp_disable ? "disabling" : "enabling", eg, cli->a.conf_idx);
		return ret ? 1 : 0;
	}
	c.cdw10 = NVME_FEAT_FID_FDP;
	c.cdw11 = eg;
	if (cli_admin(cli, "feature", &c, &dw0))
		return 1;
	printf("Endurance Group                               : %u\n", eg);
	printf("Flexible Direct Placement Enable (FDPE)       : %s\n", dw0 & 1 ? "Yes" : "No");
	printf("Flexible Direct Placement Configuration Index : %u\n",
	       (unsigned)(dw0 >> 8) & 0xff);
	return 0;
}
