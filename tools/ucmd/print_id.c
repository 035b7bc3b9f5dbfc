/* SPDX-License-Identifier: MIT */
/*
 * Identify Controller, Identify Namespace and the Namespace Identification
 * Descriptor list, in nvme-cli 2.3's layouts. One table per structure
 * drives both the normal and the JSON output, so the two never disagree
 * on a field's name or order.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <nvme/util.h>

#include "print_priv.h"

enum fkind {
	F_HEX,		/* normal "%#x", JSON int */
	F_DEC,		/* normal "%d" */
	F_UNS,		/* normal "%u" */
	F_U64HEX,	/* normal "%#" PRIx64, JSON unsigned number */
	F_U128,		/* decimal; JSON string */
	F_STR,		/* space-padded ASCII as on the wire; JSON string */
	F_IEEE,		/* 3 bytes, most significant first in normal output */
	F_UUID,
};

struct field {
	const char *name;
	uint16_t off;
	uint16_t size;
	uint8_t kind;
};

#define C(n, k) { #n, offsetof(struct nvme_id_ctrl, n), sizeof(((struct nvme_id_ctrl *)0)->n), k }

static const struct field ctrl_fields[] = {
	C(vid, F_HEX), C(ssvid, F_HEX), C(sn, F_STR), C(mn, F_STR), C(fr, F_STR),
	C(rab, F_DEC), C(ieee, F_IEEE), C(cmic, F_HEX), C(mdts, F_DEC), C(cntlid, F_HEX),
	C(ver, F_HEX), C(rtd3r, F_HEX), C(rtd3e, F_HEX), C(oaes, F_HEX), C(ctratt, F_HEX),
	C(rrls, F_HEX), C(cntrltype, F_DEC), C(fguid, F_UUID), C(crdt1, F_UNS),
	C(crdt2, F_UNS), C(crdt3, F_UNS), C(nvmsr, F_UNS), C(vwci, F_UNS), C(mec, F_UNS),
	C(oacs, F_HEX), C(acl, F_DEC), C(aerl, F_DEC), C(frmw, F_HEX), C(lpa, F_HEX),
	C(elpe, F_DEC), C(npss, F_DEC), C(avscc, F_HEX), C(apsta, F_HEX), C(wctemp, F_DEC),
	C(cctemp, F_DEC), C(mtfa, F_DEC), C(hmpre, F_DEC), C(hmmin, F_DEC),
	C(tnvmcap, F_U128), C(unvmcap, F_U128), C(rpmbs, F_HEX), C(edstt, F_DEC),
	C(dsto, F_DEC), C(fwug, F_DEC), C(kas, F_DEC), C(hctma, F_HEX), C(mntmt, F_DEC),
	C(mxtmt, F_DEC), C(sanicap, F_HEX), C(hmminds, F_UNS), C(hmmaxd, F_DEC),
	C(nsetidmax, F_DEC), C(endgidmax, F_DEC), C(anatt, F_DEC), C(anacap, F_DEC),
	C(anagrpmax, F_UNS), C(nanagrpid, F_UNS), C(pels, F_UNS), C(domainid, F_DEC),
	C(megcap, F_U128), C(sqes, F_HEX), C(cqes, F_HEX), C(maxcmd, F_DEC), C(nn, F_DEC),
	C(oncs, F_HEX), C(fuses, F_HEX), C(fna, F_HEX), C(vwc, F_HEX), C(awun, F_DEC),
	C(awupf, F_DEC), C(icsvscc, F_DEC), C(nwpc, F_DEC), C(acwu, F_DEC), C(ocfs, F_HEX),
	C(sgls, F_HEX), C(mnan, F_UNS), C(maxdna, F_U128), C(maxcna, F_UNS),
	C(subnqn, F_STR), C(ioccsz, F_UNS), C(iorcsz, F_UNS), C(icdoff, F_DEC),
	C(fcatt, F_HEX), C(msdbd, F_DEC), C(ofcs, F_DEC),
};

static uint64_t field_uint(const void *base, const struct field *f)
{
	const uint8_t *p = (const uint8_t *)base + f->off;

	switch (f->size) {
	case 1: return p[0];
	case 2: return pl16(p);
	case 4: return pl32(p);
	default: return pl64(p);
	}
}

static void field_normal(const void *base, const struct field *f, int width)
{
	const uint8_t *p = (const uint8_t *)base + f->off;
	uint64_t v = field_uint(base, f);
	char buf[64];

	printf("%-*s: ", width, f->name);
	switch (f->kind) {
	case F_HEX: printf("%#x\n", (unsigned)v); break;
	case F_DEC: printf("%d\n", (int32_t)v); break;
	case F_UNS: printf("%u\n", (unsigned)v); break;
	case F_U64HEX: printf("%#llx\n", (unsigned long long)v); break;
	case F_U128: printf("%s\n", p_u128_str(p, buf, sizeof(buf))); break;
	case F_STR: printf("%-.*s\n", f->size, (const char *)p); break;
	case F_IEEE: printf("%02x%02x%02x\n", p[2], p[1], p[0]); break;
	case F_UUID:
		nvme_uuid_to_string((unsigned char *)p, buf);
		printf("%s\n", buf);
		break;
	}
}

static void field_json(struct json_object *o, const void *base, const struct field *f)
{
	const uint8_t *p = (const uint8_t *)base + f->off;
	char buf[520];

	switch (f->kind) {
	case F_U64HEX: pj_u64(o, f->name, field_uint(base, f)); break;
	case F_U128: pj_u128(o, f->name, p); break;
	case F_STR:
		snprintf(buf, sizeof(buf), "%-.*s", f->size, (const char *)p);
		/* nvme-cli leaves out an empty subnqn */
		if (buf[0] || strcmp(f->name, "subnqn"))
			pj_str(o, f->name, buf);
		break;
	case F_IEEE: pj_int(o, f->name, p[2] << 16 | p[1] << 8 | p[0]); break;
	case F_UUID:
		nvme_uuid_to_string((unsigned char *)p, buf);
		pj_str(o, f->name, buf);
		break;
	default: pj_int(o, f->name, (int64_t)field_uint(base, f)); break;
	}
}

static void ps_power(uint16_t power, unsigned scale)
{
	switch (scale & 3) {
	case 0: printf("-"); break;
	case 1: printf("%01u.%04uW", power / 10000, power % 10000); break;
	case 2: printf("%01u.%02uW", power / 100, power % 100); break;
	default: printf("reserved"); break;
	}
}

static const char *ps_workload(uint8_t apws)
{
	static const char *const w[] = { "-", "1MiB 32 RW, 30s idle", "80K 128KiB SW" };

	return (apws & 7) < 3 ? w[apws & 7] : "reserved";
}

static void id_ctrl_power_normal(const struct nvme_id_ctrl *id)
{
	for (int i = 0; i <= id->npss && i < 32; i++) {
		const struct nvme_id_psd *ps = &id->psd[i];
		uint16_t mp = pl16(&ps->mp);

		printf("ps   %4d : mp:", i);
		if (ps->flags & NVME_PSD_FLAGS_MXPS)
			printf("%01u.%04uW ", mp / 10000, mp % 10000);
		else
			printf("%01u.%02uW ", mp / 100, mp % 100);
		if (ps->flags & NVME_PSD_FLAGS_NOPS)
			printf("non-");
		printf("operational enlat:%d exlat:%d rrt:%d rrl:%d\n"
		       "            rwt:%d rwl:%d idle_power:",
		       (int)pl32(&ps->enlat), (int)pl32(&ps->exlat), ps->rrt, ps->rrl,
		       ps->rwt, ps->rwl);
		ps_power(pl16(&ps->idlp), nvme_psd_power_scale(ps->ips));
		printf(" active_power:");
		ps_power(pl16(&ps->actp), nvme_psd_power_scale(ps->apws));
		printf("\n            active_power_workload:%s\n", ps_workload(ps->apws));
	}
}

static void id_ctrl_json(const struct nvme_id_ctrl *id)
{
	struct json_object *o = json_object_new_object();
	struct json_object *psds = json_object_new_array();

	for (size_t i = 0; i < ARRAY_LEN(ctrl_fields); i++)
		field_json(o, id, &ctrl_fields[i]);
	for (int i = 0; i <= id->npss && i < 32; i++) {
		const struct nvme_id_psd *ps = &id->psd[i];
		struct json_object *p = json_object_new_object();

		pj_int(p, "max_power", pl16(&ps->mp));
		pj_int(p, "flags", ps->flags);
		pj_int(p, "entry_lat", pl32(&ps->enlat));
		pj_int(p, "exit_lat", pl32(&ps->exlat));
		pj_int(p, "read_tput", ps->rrt);
		pj_int(p, "read_lat", ps->rrl);
		pj_int(p, "write_tput", ps->rwt);
		pj_int(p, "write_lat", ps->rwl);
		pj_int(p, "idle_power", pl16(&ps->idlp));
		pj_int(p, "idle_scale", nvme_psd_power_scale(ps->ips));
		pj_int(p, "active_power", pl16(&ps->actp));
		pj_int(p, "active_power_work", ps->apws & 7);
		pj_int(p, "active_scale", nvme_psd_power_scale(ps->apws));
		json_object_array_add(psds, p);
	}
	json_object_object_add(o, "psds", psds);
	pj_print(o);
}

void print_id_ctrl(const struct nvme_id_ctrl *id, enum out_fmt f, unsigned flags)
{
	if (f == OUT_BINARY)
		return p_raw(id, sizeof(*id));
	if (f == OUT_JSON)
		return id_ctrl_json(id);
	printf("NVME Identify Controller:\n");
	for (size_t i = 0; i < ARRAY_LEN(ctrl_fields); i++) {
		field_normal(id, &ctrl_fields[i], 10);
		if (flags & PRINT_HUMAN)
			print_id_ctrl_human(ctrl_fields[i].name, id);
	}
	id_ctrl_power_normal(id);
	if (flags & PRINT_VS) {
		printf("vs[]:\n");
		p_hexdump(id->vs, sizeof(id->vs));
	}
}

#define N(n, k) { #n, offsetof(struct nvme_id_ns, n), sizeof(((struct nvme_id_ns *)0)->n), k }

/* nsze..noiob; nvmcap; the NPWG group when NSFEAT bit 4; mssrl..msrc; nulbaf */
static const struct field ns_head[] = {
	N(nsze, F_U64HEX), N(ncap, F_U64HEX), N(nuse, F_U64HEX), N(nsfeat, F_HEX),
	N(nlbaf, F_DEC), N(flbas, F_HEX), N(mc, F_HEX), N(dpc, F_HEX), N(dps, F_HEX),
	N(nmic, F_HEX), N(rescap, F_HEX), N(fpi, F_HEX), N(dlfeat, F_DEC), N(nawun, F_DEC),
	N(nawupf, F_DEC), N(nacwu, F_DEC), N(nabsn, F_DEC), N(nabo, F_DEC),
	N(nabspf, F_DEC), N(noiob, F_DEC), N(nvmcap, F_U128),
};
static const struct field ns_npwg[] = {
	N(npwg, F_UNS), N(npwa, F_UNS), N(npdg, F_UNS), N(npda, F_UNS), N(nows, F_UNS),
};
static const struct field ns_mid[] = {
	N(mssrl, F_UNS), N(mcl, F_UNS), N(msrc, F_UNS), N(nulbaf, F_UNS),
};
/* JSON puts nsattr and nvmsetid before the NPWG group; normal output after nulbaf */
static const struct field ns_attr[] = { N(nsattr, F_UNS), N(nvmsetid, F_DEC) };
static const struct field ns_tail_json[] = { N(anagrpid, F_UNS), N(endgid, F_DEC) };

static void hexstr(char *out, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * n] = '\0';
}

static void id_ns_json(const struct nvme_id_ns *ns)
{
	struct json_object *o = json_object_new_object();
	struct json_object *lbafs = json_object_new_array();
	char buf[40];
	size_t i;

	for (i = 0; i < ARRAY_LEN(ns_head); i++) {
		if (ns_head[i].kind == F_U64HEX)
			pj_u64(o, ns_head[i].name, field_uint(ns, &ns_head[i]));
		else
			field_json(o, ns, &ns_head[i]);
	}
	for (i = 0; i < ARRAY_LEN(ns_attr); i++)
		field_json(o, ns, &ns_attr[i]);
	if (ns->nsfeat & 0x10)
		for (i = 0; i < ARRAY_LEN(ns_npwg); i++)
			field_json(o, ns, &ns_npwg[i]);
	for (i = 0; i < ARRAY_LEN(ns_mid); i++)
		field_json(o, ns, &ns_mid[i]);
	for (i = 0; i < ARRAY_LEN(ns_tail_json); i++)
		field_json(o, ns, &ns_tail_json[i]);
	hexstr(buf, ns->eui64, sizeof(ns->eui64));
	pj_str(o, "eui64", buf);
	hexstr(buf, ns->nguid, sizeof(ns->nguid));
	pj_str(o, "nguid", buf);
	for (i = 0; i <= ns->nlbaf && i < 64; i++) {
		struct json_object *l = json_object_new_object();

		pj_int(l, "ms", pl16(&ns->lbaf[i].ms));
		pj_int(l, "ds", ns->lbaf[i].ds);
		pj_int(l, "rp", ns->lbaf[i].rp);
		json_object_array_add(lbafs, l);
	}
	json_object_object_add(o, "lbafs", lbafs);
	pj_print(o);
}

void print_id_ns(const struct nvme_id_ns *ns, uint32_t nsid, enum out_fmt f, unsigned flags)
{
	static const char *const rp[] = { "Best", "Better", "Good", "Degraded" };
	bool human = flags & PRINT_HUMAN;
	char buf[40];
	uint8_t inuse;
	size_t i;

	if (f == OUT_BINARY)
		return p_raw(ns, sizeof(*ns));
	if (f == OUT_JSON)
		return id_ns_json(ns);
	printf("NVME Identify Namespace %d:\n", (int)nsid);
	for (i = 0; i < ARRAY_LEN(ns_head); i++) {
		field_normal(ns, &ns_head[i], 8);
		if (human)
			print_id_ns_human(ns_head[i].name, ns);
	}
	if (ns->nsfeat & 0x10)
		for (i = 0; i < ARRAY_LEN(ns_npwg); i++)
			field_normal(ns, &ns_npwg[i], 8);
	for (i = 0; i < ARRAY_LEN(ns_mid); i++)
		field_normal(ns, &ns_mid[i], 8);
	printf("anagrpid: %u\n", pl32(&ns->anagrpid));
	printf("nsattr\t: %u\n", ns->nsattr);
	printf("nvmsetid: %d\n", pl16(&ns->nvmsetid));
	printf("endgid  : %d\n", pl16(&ns->endgid));
	hexstr(buf, ns->nguid, sizeof(ns->nguid));
	printf("nguid   : %s\n", buf);
	hexstr(buf, ns->eui64, sizeof(ns->eui64));
	printf("eui64   : %s\n", buf);
	nvme_id_ns_flbas_to_lbaf_inuse(ns->flbas, &inuse);
	for (i = 0; i <= (size_t)ns->nlbaf + ns->nulbaf && i < 64; i++) {
		const struct nvme_lbaf *l = &ns->lbaf[i];

		if (human)
			printf("LBA Format %2zu : Metadata Size: %-3d bytes - Data Size: %-2d bytes - "
			       "Relative Performance: %#x %s %s\n", i, pl16(&l->ms), l->ds < 31 ? 1 << l->ds : 0,
			       l->rp, rp[l->rp & 3], i == inuse ? "(in use)" : "");
		else
			printf("lbaf %2zu : ms:%-3d lbads:%-2d rp:%#x %s\n", i, pl16(&l->ms),
			       l->ds, l->rp, i == inuse ? "(in use)" : "");
	}
	if (flags & PRINT_VS) {
		printf("vs[]:\n");
		p_hexdump(ns->vs, sizeof(ns->vs));
	}
}

/* Namespace Identification Descriptor types nvme-cli names */
static const char *nidt_name(uint8_t t, uint8_t *len)
{
	switch (t) {
	case NVME_NIDT_EUI64: *len = 8; return "eui64";
	case NVME_NIDT_NGUID: *len = 16; return "nguid";
	case NVME_NIDT_UUID: *len = 16; return "uuid";
	case NVME_NIDT_CSI: *len = 1; return "csi";
	default: return NULL;
	}
}

static void desc_value(char *out, uint8_t t, const uint8_t *v)
{
	if (t == NVME_NIDT_UUID)
		nvme_uuid_to_string((unsigned char *)v, out);
	else if (t == NVME_NIDT_CSI)
		sprintf(out, "%#x", v[0]);
	else
		hexstr(out, v, t == NVME_NIDT_EUI64 ? 8 : 16);
}

void print_ns_descs(const void *buf, uint32_t nsid, enum out_fmt f)
{
	const uint8_t *b = buf;
	struct json_object *root = NULL, *arr = NULL;
	char val[48];

	if (f == OUT_BINARY)
		return p_raw(buf, NVME_IDENTIFY_DATA_SIZE);
	if (f == OUT_JSON)
		root = json_object_new_object();
	else
		printf("NVME Namespace Identification Descriptors NS %d:\n", (int)nsid);
	for (size_t pos = 0; pos + 4 <= NVME_IDENTIFY_DATA_SIZE;) {
		uint8_t t = b[pos], l = b[pos + 1], want = 0;
		const char *name = nidt_name(t, &want);

		if (l == 0)
			break;
		/* a descriptor shorter than its type or past the end is not shown */
		if (name && l >= want && pos + 4 + want <= NVME_IDENTIFY_DATA_SIZE) {
			desc_value(val, t, b + pos + 4);
			if (root) {
				struct json_object *e = json_object_new_object();

				pj_int(e, "loc", (int)pos);
				pj_int(e, "nidt", t);
				pj_int(e, "nidl", l);
				pj_str(e, "type", name);
				pj_str(e, name, val);
				if (!arr)
					arr = json_object_new_array();
				json_object_array_add(arr, e);
			} else {
				printf("%-8s: %s\n", name, val);
			}
		}
		pos += 4 + (size_t)l;
	}
	if (root) {
		if (arr)
			json_object_object_add(root, "ns-descs", arr);
		pj_print(root);
	}
}
