/* SPDX-License-Identifier: MIT */
/*
 * `ucmd zns ...`: nvme-cli 2.3's zns plugin, with its command names,
 * options, messages and JSON keys (report-zones' zone_list, id-ns' lbafe),
 * so that a script written for `nvme zns` runs against ucmd unchanged.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <nvme/types.h>

#include "cli.h"
#include "print_priv.h"

#define REPORT_CHUNK	1024u	/* descriptors per Zone Management Receive */

static int io_cmd(struct cli *cli, const char *what, struct nvme_uring_cmd *c, uint64_t *result)
{
	int res;

	c->nsid = cli->s.nsid;
	res = session_passthru(&cli->s, false, c, result);
	if (res)
		print_status_error(what, res);
	return res;
}

int cmd_zns_id_ctrl(struct cli *cli, int argc, char **argv)
{
	struct nvme_zns_id_ctrl *id = cli_identify_csi(cli, "zns id-ctrl", NVME_IDENTIFY_CNS_CSI_CTRL, NVME_CSI_ZNS, 0);

	(void)argc;
	(void)argv;
	if (!id)
		return 1;
	if (cli->a.fmt == OUT_BINARY) {
		p_raw(id, sizeof(*id));
	} else if (cli->a.fmt == OUT_JSON) {
		struct json_object *o = json_object_new_object();

		pj_int(o, "zasl", id->zasl);
		pj_print(o);
	} else {
		printf("NVMe ZNS Identify Controller:\n");
		printf("zasl    : %u\n", id->zasl);
	}
	free(id);
	return 0;
}

static void print_limit(uint32_t v, bool human, const char *name)
{
	if (!v && human)
		printf("%s    : Not Reported\n", name);
	else
		printf("%s    : %u\n", name, v);
}

static void zns_id_ns_json(const struct nvme_zns_id_ns *z, const struct nvme_id_ns *id)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();

	/* nvme-cli 2.3 prints these 32-bit fields as signed ints ("mar":-1: no limit) */
	pj_int(o, "zoc", le16toh(z->zoc));
	pj_int(o, "ozcs", le16toh(z->ozcs));
	pj_int(o, "mar", (int32_t)le32toh(z->mar));
	pj_int(o, "mor", (int32_t)le32toh(z->mor));
	pj_int(o, "rrl", (int32_t)le32toh(z->rrl));
	pj_int(o, "frl", (int32_t)le32toh(z->frl));
	pj_int(o, "rrl1", (int32_t)le32toh(z->rrl1));
	pj_int(o, "rrl2", (int32_t)le32toh(z->rrl2));
	pj_int(o, "rrl3", (int32_t)le32toh(z->rrl3));
	pj_int(o, "frl1", (int32_t)le32toh(z->frl1));
	pj_int(o, "frl2", (int32_t)le32toh(z->frl2));
	pj_int(o, "frl3", (int32_t)le32toh(z->frl3));
	pj_int(o, "numzrwa", (int32_t)le32toh(z->numzrwa));
	pj_int(o, "zrwafg", le16toh(z->zrwafg));
	pj_int(o, "zrwasz", le16toh(z->zrwasz));
	pj_int(o, "zrwacap", z->zrwacap);
	for (unsigned i = 0; i <= id->nlbaf; i++) {
		struct json_object *l = json_object_new_object();

		/* nvme-cli 2.3 prints zsze as a (32-bit) int */
		pj_int(l, "zsze", (int32_t)le64toh(z->lbafe[i].zsze));
		pj_int(l, "zdes", z->lbafe[i].zdes);
		json_object_array_add(a, l);
	}
	json_object_object_add(o, "lbafe", a);
	pj_print(o);
}

int cmd_zns_id_ns(struct cli *cli, int argc, char **argv)
{
	struct nvme_zns_id_ns *z;
	struct nvme_id_ns *id;
	bool human = cli->a.human;
	uint8_t inuse;

	(void)argc;
	(void)argv;
	id = cli_identify(cli, "zns id-ns", NVME_IDENTIFY_CNS_NS, cli->s.nsid);
	if (!id)
		return 1;
	z = cli_identify_csi(cli, "zns id-ns", NVME_IDENTIFY_CNS_CSI_NS, NVME_CSI_ZNS, cli->s.nsid);
	if (!z) {
		free(id);
		return 1;
	}
	inuse = (uint8_t)((id->flbas & NVME_NS_FLBAS_LOWER_MASK) |
			  ((id->flbas & NVME_NS_FLBAS_HIGHER_MASK) >> 1));
	if (cli->a.fmt == OUT_BINARY) {
		p_raw(z, sizeof(*z));
	} else if (cli->a.fmt == OUT_JSON) {
		zns_id_ns_json(z, id);
	} else {
		uint16_t zoc = le16toh(z->zoc), ozcs = le16toh(z->ozcs);

		printf("ZNS Command Set Identify Namespace:\n");
		if (human) {
			printf("zoc     : %u\tZone Operation Characteristics\n", zoc);
			printf("  [1:1] : %#x\t  Zone Active Excursions: %s\n", (zoc >> 1) & 1,
			       zoc & 2 ? "Yes (Host support required)" : "No");
			printf("  [0:0] : %#x\t  Variable Zone Capacity: %s\n", zoc & 1,
			       zoc & 1 ? "Yes (Host support required)" : "No");
			printf("\n");
			printf("ozcs    : %u\tOptional Zoned Command Support\n", ozcs);
			printf("  [0:0] : %#x\t  Read Across Zone Boundaries: %s\n", ozcs & 1,
			       ozcs & 1 ? "Yes" : "No");
			printf("  [1:1] : %#x\t  Zone Random Write Area: %s\n", (ozcs >> 1) & 1,
			       ozcs & 2 ? "Yes" : "No");
			if (z->mar == 0xffffffffu)
				printf("mar     : No Active Resource Limit\n");
			else
				printf("mar     : %u\tActive Resources\n", le32toh(z->mar) + 1);
			if (z->mor == 0xffffffffu)
				printf("mor     : No Open Resource Limit\n");
			else
				printf("mor     : %u\tOpen Resources\n", le32toh(z->mor) + 1);
		} else {
			printf("zoc     : %u\n", zoc);
			printf("ozcs    : %u\n", ozcs);
			printf("mar     : %#x\n", le32toh(z->mar));
			printf("mor     : %#x\n", le32toh(z->mor));
		}
		print_limit(le32toh(z->rrl), human, "rrl ");
		print_limit(le32toh(z->frl), human, "frl ");
		print_limit(le32toh(z->rrl1), human, "rrl1");
		print_limit(le32toh(z->rrl2), human, "rrl2");
		print_limit(le32toh(z->rrl3), human, "rrl3");
		/* nvme-cli 2.3 prints frl for frl1..frl3 */
		print_limit(le32toh(z->frl), human, "frl1");
		print_limit(le32toh(z->frl), human, "frl2");
		print_limit(le32toh(z->frl), human, "frl3");
		printf("numzrwa : %#x\n", le32toh(z->numzrwa));
		printf("zrwafg  : %u\n", le16toh(z->zrwafg));
		printf("zrwasz  : %u\n", le16toh(z->zrwasz));
		if (human) {
			printf("zrwacap : %u\tZone Random Write Area Capability\n", z->zrwacap);
			printf("  [0:0] : %#x\t  Explicit ZRWA Flush Operations: %s\n",
			       z->zrwacap & 1, z->zrwacap & 1 ? "Yes" : "No");
		} else {
			printf("zrwacap : %u\n", z->zrwacap);
		}
		for (unsigned i = 0; i <= id->nlbaf; i++) {
			if (human)
				printf("LBA Format Extension %2u : Zone Size: 0x%" PRIx64 " LBAs - "
				       "Zone Descriptor Extension Size: %-1d bytes%s\n", i,
				       (uint64_t)le64toh(z->lbafe[i].zsze), z->lbafe[i].zdes << 6,
				       i == inuse ? " (in use)" : "");
			else
				printf("lbafe %2u: zsze:0x%" PRIx64 " zdes:%u%s\n", i,
				       (uint64_t)le64toh(z->lbafe[i].zsze), z->lbafe[i].zdes,
				       i == inuse ? " (in use)" : "");
		}
		if (cli->a.vs) {
			printf("vs[]    :\n");
			p_hexdump(z->vs, sizeof(z->vs));
		}
	}
	free(z);
	free(id);
	return 0;
}

static const char *zone_state(uint8_t zs)
{
	switch (zs) {
	case NVME_ZNS_ZS_EMPTY: return "EMPTY";
	case NVME_ZNS_ZS_IMPL_OPEN: return "IMP_OPENED";
	case NVME_ZNS_ZS_EXPL_OPEN: return "EXP_OPENED";
	case NVME_ZNS_ZS_CLOSED: return "CLOSED";
	case NVME_ZNS_ZS_READ_ONLY: return "READONLY";
	case NVME_ZNS_ZS_FULL: return "FULL";
	case NVME_ZNS_ZS_OFFLINE: return "OFFLINE";
	}
	return "Unknown State";
}

static const char *zone_type(uint8_t zt)
{
	return zt == NVME_ZONE_TYPE_SEQWRITE_REQ ? "SEQWRITE_REQ" : "Unknown";
}

/* zsze (blocks) and zdes (bytes) of the namespace's format in use */
static int zone_geometry(struct cli *cli, uint64_t *zsze, unsigned *zdes)
{
	struct nvme_id_ns *id = cli_identify(cli, "zns", NVME_IDENTIFY_CNS_NS, cli->s.nsid);
	struct nvme_zns_id_ns *z;
	uint8_t inuse;

	if (!id)
		return -EIO;
	z = cli_identify_csi(cli, "zns", NVME_IDENTIFY_CNS_CSI_NS, NVME_CSI_ZNS, cli->s.nsid);
	if (!z) {
		free(id);
		return -EIO;
	}
	inuse = (uint8_t)((id->flbas & NVME_NS_FLBAS_LOWER_MASK) |
			  ((id->flbas & NVME_NS_FLBAS_HIGHER_MASK) >> 1));
	*zsze = le64toh(z->lbafe[inuse].zsze);
	*zdes = (unsigned)z->lbafe[inuse].zdes << 6;
	free(z);
	free(id);
	return *zsze ? 0 : -EINVAL;
}

static int mgmt_recv(struct cli *cli, uint64_t slba, uint8_t zra, uint8_t zrasf, bool partial,
		     void *buf, uint32_t len)
{
	struct nvme_uring_cmd c = { .opcode = nvme_zns_cmd_mgmt_recv };

	c.cdw10 = (uint32_t)slba;
	c.cdw11 = (uint32_t)(slba >> 32);
	c.cdw12 = len / 4 - 1;
	c.cdw13 = zra | (uint32_t)zrasf << 8 | (partial ? 1u << 16 : 0);
	c.addr = (uint64_t)(uintptr_t)buf;
	c.data_len = len;
	return io_cmd(cli, "zns report-zones", &c, NULL);
}

static void report_print(struct cli *cli, const uint8_t *rep, uint32_t descs, unsigned zdes,
			 struct json_object *list)
{
	for (uint32_t i = 0; i < descs; i++) {
		const struct nvme_zns_desc *d = (const void *)(rep + 64 + i * (64 + zdes));
		uint64_t zslba = le64toh(d->zslba), wp = le64toh(d->wp), cap = le64toh(d->zcap);

		if (list) {
			struct json_object *z = json_object_new_object();

			pj_u64(z, "slba", zslba);
			pj_u64(z, "wp", wp);
			pj_u64(z, "cap", cap);
			pj_str(z, "state", zone_state(d->zs >> 4));
			pj_str(z, "type", zone_type(d->zt));
			/* nvme-cli 2.3 adds "attrs" twice: the second (zai) is what stays */
			pj_u64(z, "attrs", d->zai);
			if (zdes && (d->za & NVME_ZNS_ZA_ZDEV)) {
				struct json_object *e = json_object_new_array();
				const uint8_t *x = (const void *)(d + 1);
				char line[17];

				/* nvme-cli's d_json(): 16 bytes a line, as ASCII, '.' if not graphic */
				for (unsigned off = 0; off < zdes; off += 16) {
					for (unsigned b = 0; b < 16; b++)
						line[b] = x[off + b] >= '!' && x[off + b] <= '~'
							  ? (char)x[off + b] : '.';
					line[16] = 0;
					json_object_array_add(e, json_object_new_string(line));
				}
				json_object_object_add(z, "ext_data", e);
			} else if (zdes) {
				pj_str(z, "ext_data", "Not valid");
			}
			json_object_array_add(list, z);
			continue;
		}
		if (cli->a.verbose) {
			printf("SLBA: %#-10" PRIx64 " WP: %#-10" PRIx64 " Cap: %#-10" PRIx64
			       " State: %-12s Type: %-14s\n", zslba, wp, cap,
			       zone_state(d->zs >> 4), zone_type(d->zt));
			printf("Attrs: Zone Descriptor Extension is %sVaild\n",
			       d->za & NVME_ZNS_ZA_ZDEV ? "" : "Not ");
			if (d->za & NVME_ZNS_ZA_ZFC)
				printf("       Zone Finished by Controller\n");
		} else {
			printf("SLBA: %#-10" PRIx64 " WP: %#-10" PRIx64 " Cap: %#-10" PRIx64
			       " State: %#-4x Type: %#-4x Attrs: %#-4x AttrsInfo: %#-4x\n",
			       zslba, wp, cap, d->zs, d->zt, d->za, d->zai);
		}
		if (zdes && (d->za & NVME_ZNS_ZA_ZDEV)) {
			printf("Extension Data: ");
			p_hexdump(d + 1, zdes);
			printf("..\n");
		}
	}
}

int cmd_zns_report_zones(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	struct json_object *list = NULL;
	uint64_t zsze, total, want, got = 0, slba = a->slba;
	uint8_t hdr[64] __attribute__((aligned(8)));
	uint8_t *hbuf, *rep;
	unsigned zdes;
	uint32_t chunk, len;
	int ret = 1;

	(void)argc;
	(void)argv;
	if (zone_geometry(cli, &zsze, &zdes))
		return 1;
	if (!a->extended)
		zdes = 0;
	/* nvme-cli asks for the count first, with a buffer for the header alone */
	hbuf = cli_zalloc(64);
	if (!hbuf || mgmt_recv(cli, 0, 0, (uint8_t)a->state, false, hbuf, 64)) {
		free(hbuf);
		return 1;
	}
	memcpy(hdr, hbuf, 64);
	free(hbuf);
	total = le64toh(((struct nvme_zone_report *)hdr)->nr_zones);
	want = a->descs == UINT32_MAX ? total : a->descs;
	chunk = want < REPORT_CHUNK ? (uint32_t)want : REPORT_CHUNK;
	len = 64 + chunk * (64 + zdes);
	rep = cli_zalloc(len);
	if (!rep)
		return 1;
	if (cli->a.fmt == OUT_JSON)
		list = json_object_new_array();
	else
		printf("nr_zones: %" PRIu64 "\n", total);
	while (got < want && chunk) {
		const struct nvme_zns_desc *last;

		if (got + chunk > want) {
			chunk = (uint32_t)(want - got);
			len = 64 + chunk * (64 + zdes);
		}
		memset(rep, 0, len);
		if (mgmt_recv(cli, slba, a->extended, (uint8_t)a->state, a->partial, rep, len))
			goto out;
		report_print(cli, rep, (uint32_t)(chunk < le64toh(((struct nvme_zone_report *)
				   rep)->nr_zones) ? chunk : le64toh(((struct nvme_zone_report *)
				   rep)->nr_zones)), zdes, list);
		got += chunk;
		last = (const void *)(rep + 64 + (chunk - 1) * (64 + zdes));
		slba = le64toh(last->zslba) + zsze;
	}
	ret = 0;
out:
	if (list) {
		struct json_object *o = json_object_new_object();

		pj_u64(o, "nr_zones", total);
		json_object_object_add(o, "zone_list", list);
		pj_print(o);
	}
	free(rep);
	return ret;
}

static int mgmt_send(struct cli *cli, const char *what, uint8_t zsa, bool all, bool zsaso,
		     void *buf, uint32_t len, uint64_t *result)
{
	struct nvme_uring_cmd c = { .opcode = nvme_zns_cmd_mgmt_send };

	c.cdw10 = (uint32_t)cli->a.slba;
	c.cdw11 = (uint32_t)(cli->a.slba >> 32);
	c.cdw13 = zsa | (all ? 1u << 8 : 0) | (zsaso ? 1u << 9 : 0);
	c.timeout_ms = cli->a.timeout;
	if (buf) {
		c.addr = (uint64_t)(uintptr_t)buf;
		c.data_len = len;
	}
	return io_cmd(cli, what, &c, result);
}

static int zone_action(struct cli *cli, const char *name, uint8_t zsa)
{
	uint64_t result = 0;

	if (mgmt_send(cli, name, zsa, cli->a.select_all, false, NULL, 0, &result))
		return 1;
	printf("%s: Success, action:%d zone:%" PRIx64 " all:%d zcapc:%u nsid:%d\n", name, zsa,
	       cli->a.slba, (int)cli->a.select_all,
	       zsa == NVME_ZNS_ZSA_RESET ? (unsigned)(result & 1) : 0u, cli->s.nsid);
	return 0;
}

int cmd_zns_reset_zone(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return zone_action(cli, "zns-reset-zone", NVME_ZNS_ZSA_RESET);
}

int cmd_zns_close_zone(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return zone_action(cli, "zns-close-zone", NVME_ZNS_ZSA_CLOSE);
}

int cmd_zns_finish_zone(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return zone_action(cli, "zns-finish-zone", NVME_ZNS_ZSA_FINISH);
}

int cmd_zns_offline_zone(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return zone_action(cli, "zns-offline-zone", NVME_ZNS_ZSA_OFFLINE);
}

int cmd_zns_open_zone(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (cli->a.zrwaa) {
		fprintf(stderr, "zns-open-zone: --zrwaa: no zone random write area here\n");
		return 2;
	}
	if (mgmt_send(cli, "zns-open-zone", NVME_ZNS_ZSA_OPEN, cli->a.select_all, false, NULL, 0,
		      NULL))
		return 1;
	printf("zns-open-zone: Success zone slba:%" PRIx64 " nsid:%d\n", cli->a.slba,
	       cli->s.nsid);
	return 0;
}

/* The descriptor extension's bytes from --data (stdin without), zero padded */
static void *ext_data(struct cli *cli, const char *what, uint32_t len)
{
	uint8_t *buf = cli_zalloc(len);
	int fd = cli->a.data ? open(cli->a.data, O_RDONLY) : STDIN_FILENO;

	if (!buf || fd < 0 || read(fd, buf, len) < 0) {
		fprintf(stderr, "%s: cannot read %u bytes from %s\n", what, len,
			cli->a.data ? cli->a.data : "stdin");
		free(buf);
		buf = NULL;
	}
	if (fd > STDERR_FILENO)
		close(fd);
	return buf;
}

int cmd_zns_set_zone_desc(struct cli *cli, int argc, char **argv)
{
	uint64_t zsze;
	unsigned zdes;
	void *buf;
	int ret;

	(void)argc;
	(void)argv;
	if (zone_geometry(cli, &zsze, &zdes))
		return 1;
	if (!zdes) {
		fprintf(stderr, "zone format does not provide descriptor extension\n");
		return 1;
	}
	buf = ext_data(cli, "set-zone-desc", zdes);
	if (!buf)
		return 1;
	ret = mgmt_send(cli, "set-zone-desc", NVME_ZNS_ZSA_SET_DESC_EXT, false, cli->a.zrwaa, buf,
			zdes, NULL);
	free(buf);
	if (ret)
		return 1;
	printf("set-zone-desc: Success, zone:%" PRIx64 " nsid:%d\n", cli->a.slba, cli->s.nsid);
	return 0;
}

int cmd_zns_zone_mgmt_send(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	uint32_t len = a->data_len;
	void *buf = NULL;
	int ret;

	(void)argc;
	(void)argv;
	if (!a->zsa) {
		fprintf(stderr, "zone send action must be specified\n");
		return 2;
	}
	if (a->zsa == NVME_ZNS_ZSA_SET_DESC_EXT) {
		if (!len) {
			uint64_t zsze;
			unsigned zdes;

			if (zone_geometry(cli, &zsze, &zdes))
				return 1;
			if (!zdes) {
				fprintf(stderr, "Zone Descriptor Extensions are not supported\n");
				return 1;
			}
			len = zdes;
		}
		if (!(buf = ext_data(cli, "zone-mgmt-send", len)))
			return 1;
	} else if (a->data || len) {
		fprintf(stderr, "data, data_len only valid with set extended descriptor\n");
		return 2;
	}
	ret = mgmt_send(cli, "zone-mgmt-send", (uint8_t)a->zsa, a->select_all, a->zsaso, buf, len,
			NULL);
	free(buf);
	if (ret)
		return 1;
	printf("zone-mgmt-send: Success, action:%d zone:%" PRIx64 " all:%d nsid:%d\n", a->zsa,
	       a->slba, (int)a->select_all, cli->s.nsid);
	return 0;
}

int cmd_zns_zone_mgmt_recv(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	uint8_t *buf = NULL;
	int ret;

	(void)argc;
	(void)argv;
	if (a->zra == NVME_ZNS_ZRA_REPORT_ZONES && !a->data_len) {
		fprintf(stderr, "error: data len is needed for NVME_ZRA_ZONE_REPORT\n");
		return 2;
	}
	if (a->data_len && !(buf = cli_zalloc(a->data_len)))
		return 1;
	ret = mgmt_recv(cli, a->slba, (uint8_t)a->zra, (uint8_t)a->zrasf, a->partial, buf,
			a->data_len);
	if (!ret)
		printf("zone-mgmt-recv: Success, action:%d zone:%" PRIx64 " nsid:%d\n", a->zra,
		       a->slba, cli->s.nsid);
	/* nvme-cli 2.3 prints nothing of the data; -o binary gives it whole */
	if (!ret && buf && a->fmt == OUT_BINARY)
		p_raw(buf, a->data_len);
	free(buf);
	return ret ? 1 : 0;
}

int cmd_zns_zone_append(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	struct nvme_uring_cmd c = { .opcode = nvme_zns_cmd_append };
	struct timeval t0, t1;
	uint64_t result = 0;
	void *buf, *mbuf = NULL;
	int fd, ret;

	(void)argc;
	(void)argv;
	if (!a->data_size) {
		fprintf(stderr, "Append size not provided\n");
		return 2;
	}
	if (!cli->s.lba_size) {
		fprintf(stderr, "zone-append: namespace %u is not active\n", cli->s.nsid);
		return 1;
	}
	if (a->data_size % cli->s.lba_size || a->data_size > (64u << 20)) {
		fprintf(stderr, "Data size:%#" PRIx64 " not aligned to lba size:%#x\n",
			a->data_size, cli->s.lba_size);
		return 2;
	}
	if (cli->s.meta_size && (!a->metadata_size || a->metadata_size % cli->s.meta_size)) {
		fprintf(stderr, "Metadata size:%#" PRIx64 " not aligned to metadata size:%#x\n",
			a->metadata_size, cli->s.meta_size);
		return 2;
	}
	if (a->prinfo > 0xf) {
		fprintf(stderr, "Invalid value for prinfo:%#x\n", a->prinfo);
		return 2;
	}
	buf = ucmd_buf_alloc(cli->s.e, a->data_size);
	if (!buf) {
		print_status_error("zone-append", -errno);
		return 1;
	}
	memset(buf, 0, a->data_size);
	fd = a->data ? open(a->data, O_RDONLY) : STDIN_FILENO;
	if (fd < 0 || read(fd, buf, a->data_size) < 0) {
		perror(a->data ? a->data : "read-data");
		ret = 1;
		goto out;
	}
	if (a->metadata_size) {
		int mfd = a->metadata ? open(a->metadata, O_RDONLY) : -1;

		mbuf = cli_zalloc(a->metadata_size);
		if (!mbuf || mfd < 0 || read(mfd, mbuf, a->metadata_size) < 0) {
			perror(a->metadata ? a->metadata : "read-metadata");
			if (mfd >= 0)
				close(mfd);
			ret = 1;
			goto out;
		}
		close(mfd);
		c.metadata = (uint64_t)(uintptr_t)mbuf;
		c.metadata_len = (uint32_t)a->metadata_size;
	}
	c.addr = (uint64_t)(uintptr_t)buf;
	c.data_len = (uint32_t)a->data_size;
	c.cdw10 = (uint32_t)a->slba;
	c.cdw11 = (uint32_t)(a->slba >> 32);
	c.cdw12 = (uint32_t)(a->data_size / cli->s.lba_size - 1) | (a->prinfo << 26) |
		  (a->limited_retry ? 1u << 31 : 0) | (a->fua ? 1u << 30 : 0) |
		  (a->piremap ? 1u << 25 : 0);
	c.cdw14 = (uint32_t)a->ref_tag;
	c.cdw15 = a->lbat | a->lbatm << 16;
	gettimeofday(&t0, NULL);
	ret = io_cmd(cli, "zns zone-append", &c, &result);
	gettimeofday(&t1, NULL);
	if (a->latency)
		printf(" latency: zone append: %llu us\n",
		       (unsigned long long)((t1.tv_sec - t0.tv_sec) * 1000000ll +
					    (t1.tv_usec - t0.tv_usec)));
	if (!ret)
		printf("Success appended data to LBA %" PRIx64 "\n", result);
	ret = ret ? 1 : 0;
out:
	if (fd > STDERR_FILENO)
		close(fd);
	free(mbuf);
	ucmd_buf_free(cli->s.e, buf);
	return ret;
}

int cmd_zns_changed_zone_list(struct cli *cli, int argc, char **argv)
{
	struct nvme_zns_changed_zone_log *l = cli_zalloc(sizeof(*l));
	struct nvme_uring_cmd c = { .opcode = nvme_admin_get_log_page, .nsid = cli->s.nsid };
	uint32_t numd = sizeof(*l) / 4 - 1;
	uint16_t n;

	(void)argc;
	(void)argv;
	if (!l)
		return 1;
	c.addr = (uint64_t)(uintptr_t)l;
	c.data_len = sizeof(*l);
	c.cdw10 = NVME_LOG_LID_ZNS_CHANGED_ZONES | (cli->a.rae ? 1u << 15 : 0) |
		  (numd & 0xffff) << 16;
	c.cdw11 = numd >> 16;
	c.cdw14 = (uint32_t)NVME_CSI_ZNS << 24;
	if (cli_admin(cli, "changed-zone-list", &c, NULL)) {
		free(l);
		return 1;
	}
	if (cli->a.fmt == OUT_BINARY) {
		p_raw(l, sizeof(*l));
		free(l);
		return 0;
	}
	/* nvme-cli 2.3 has no JSON form of this log: the same text */
	n = le16toh(l->nrzid);
	printf("NVMe Changed Zone List:\n");
	if (n == 0xffff) {
		printf("Too many zones have changed to fit into the log. Use report zones for "
		       "changes.\n");
	} else {
		printf("nrzid:  %u\n", n);
		for (unsigned i = 0; i < n && i < NVME_ZNS_CHANGED_ZONES_MAX; i++)
			printf("zid %03u: %" PRIu64 "\n", i, (uint64_t)le64toh(l->zid[i]));
	}
	free(l);
	return 0;
}
