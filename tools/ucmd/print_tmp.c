/* SPDX-License-Identifier: MIT */
/*
 * TEMPORARY printers (print.h), only so that the CLI links before h-out's
 * print_*.c are merged: a few nvme-cli keys, raw binary, a line of text.
 * The lead drops this file at merge.
 */
#include <stdio.h>
#include <unistd.h>

#include <json-c/json.h>

#include "print.h"

static void raw(const void *p, size_t n)
{
	if (write(STDOUT_FILENO, p, n) != (ssize_t)n)
		perror("write");
}

static void jput(struct json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
	json_object_put(o);
}

static void dump(const void *b, uint32_t len)
{
	const uint8_t *p = b;

	for (uint32_t i = 0; i < len; i += 16) {
		printf("%04x:", i);
		for (uint32_t j = i; j < i + 16 && j < len; j++)
			printf(" %02x", p[j]);
		printf("\n");
	}
}

static void devs(const struct print_ctrl *c, int nr, enum out_fmt f)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();

	for (int i = 0; i < nr; i++)
		for (int k = 0; k < c[i].nr_ns; k++) {
			struct json_object *d = json_object_new_object();
			json_object_object_add(d, "NameSpace", json_object_new_int64(c[i].ns[k].nsid));
			json_object_object_add(d, "DevicePath", json_object_new_string(c[i].ns[k].blkdev));
			json_object_object_add(d, "GenericPath", json_object_new_string(c[i].ns[k].gendev));
			json_object_array_add(a, d);
		}
	json_object_object_add(o, "Devices", a);
	if (f == OUT_JSON)
		jput(o);
	else {
		for (int i = 0; i < nr; i++)
			for (int k = 0; k < c[i].nr_ns; k++)
				printf("%s %s %s\n", c[i].ns[k].blkdev, c[i].ns[k].gendev, c[i].name);
		json_object_put(o);
	}
}

void print_list(const struct print_ctrl *c, int nr, enum out_fmt f, unsigned flags)
{
	(void)flags;
	devs(c, nr, f);
}

void print_list_subsys(const struct print_ctrl *c, int nr, enum out_fmt f, unsigned flags)
{
	(void)flags;
	devs(c, nr, f);
}

void print_id_ctrl(const struct nvme_id_ctrl *id, enum out_fmt f, unsigned flags)
{
	(void)flags;
	if (f == OUT_BINARY)
		return raw(id, sizeof(*id));
	struct json_object *o = json_object_new_object();
	char sn[21], mn[41], fr[9];

	snprintf(sn, sizeof(sn), "%.20s", id->sn);
	snprintf(mn, sizeof(mn), "%.40s", id->mn);
	snprintf(fr, sizeof(fr), "%.8s", id->fr);
	json_object_object_add(o, "vid", json_object_new_int(id->vid));
	json_object_object_add(o, "sn", json_object_new_string(sn));
	json_object_object_add(o, "mn", json_object_new_string(mn));
	json_object_object_add(o, "fr", json_object_new_string(fr));
	json_object_object_add(o, "nn", json_object_new_int64(id->nn));
	json_object_object_add(o, "ver", json_object_new_int64(id->ver));
	json_object_object_add(o, "cntlid", json_object_new_int(id->cntlid));
	json_object_object_add(o, "oncs", json_object_new_int(id->oncs));
	if (f == OUT_JSON)
		return jput(o);
	printf("NVME Identify Controller:\nsn        : %s\nmn        : %s\nfr        : %s\n"
	       "nn        : %u\noncs      : %#x\nsubnqn    : %.256s\n", sn, mn, fr, id->nn,
	       id->oncs, id->subnqn);
	json_object_put(o);
}

void print_id_ns(const struct nvme_id_ns *ns, uint32_t nsid, enum out_fmt f, unsigned flags)
{
	(void)flags;
	if (f == OUT_BINARY)
		return raw(ns, sizeof(*ns));
	if (f != OUT_JSON) {
		printf("NVME Identify Namespace %u:\nnsze    : %#llx\nflbas   : %#x\n", nsid,
		       (unsigned long long)ns->nsze, ns->flbas);
		return;
	}
	struct json_object *o = json_object_new_object(), *l = json_object_new_array();
	json_object_object_add(o, "nsze", json_object_new_int64((int64_t)ns->nsze));
	json_object_object_add(o, "ncap", json_object_new_int64((int64_t)ns->ncap));
	json_object_object_add(o, "nlbaf", json_object_new_int(ns->nlbaf));
	json_object_object_add(o, "flbas", json_object_new_int(ns->flbas));
	for (int i = 0; i <= ns->nlbaf && i < 64; i++) {
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "ms", json_object_new_int(ns->lbaf[i].ms));
		json_object_object_add(e, "ds", json_object_new_int(ns->lbaf[i].ds));
		json_object_object_add(e, "rp", json_object_new_int(ns->lbaf[i].rp));
		json_object_array_add(l, e);
	}
	json_object_object_add(o, "lbafs", l);
	jput(o);
}

void print_ns_descs(const void *buf, uint32_t nsid, enum out_fmt f)
{
	if (f == OUT_BINARY)
		return raw(buf, 4096);
	printf("NVME Namespace Identification Descriptors NS %u:\n", nsid);
	dump(buf, 64);
}

static uint64_t lo(const uint8_t v[16])
{
	uint64_t r = 0;

	for (int i = 7; i >= 0; i--)
		r = (r << 8) | v[i];
	return r;
}

void print_smart_log(const struct nvme_smart_log *s, uint32_t nsid, const char *devname,
		     enum out_fmt f, unsigned flags)
{
	(void)flags;
	if (f == OUT_BINARY)
		return raw(s, sizeof(*s));
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "data_units_written",
			       json_object_new_int64((int64_t)lo(s->data_units_written)));
	json_object_object_add(o, "host_write_commands",
			       json_object_new_int64((int64_t)lo(s->host_writes)));
	json_object_object_add(o, "power_cycles", json_object_new_int64((int64_t)lo(s->power_cycles)));
	json_object_object_add(o, "num_err_log_entries",
			       json_object_new_int64((int64_t)lo(s->num_err_log_entries)));
	if (f == OUT_JSON)
		return jput(o);
	printf("Smart Log for NVME device:%s namespace-id:%x\n%s\n", devname, nsid,
	       json_object_to_json_string(o));
	json_object_put(o);
}

void print_error_log(const struct nvme_error_log_page *e, int nr, const char *devname,
		     enum out_fmt f)
{
	if (f == OUT_BINARY)
		return raw(e, (size_t)nr * sizeof(*e));
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();
	for (int i = 0; i < nr; i++) {
		struct json_object *x = json_object_new_object();
		json_object_object_add(x, "error_count", json_object_new_int64((int64_t)e[i].error_count));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "errors", a);
	if (f == OUT_JSON)
		return jput(o);
	printf("Error Log Entries for device:%s entries:%d\n", devname, nr);
	json_object_put(o);
}

void print_effects_log(const struct nvme_cmd_effects_log *e, enum out_fmt f, unsigned flags)
{
	(void)flags;
	if (f == OUT_BINARY)
		return raw(e, sizeof(*e));
	dump(e, 64);
}

void print_fw_log(const struct nvme_firmware_slot *fw, const char *devname, enum out_fmt f)
{
	if (f == OUT_BINARY)
		return raw(fw, sizeof(*fw));
	printf("Firmware Log for device:%s\nafi  : %#x\n", devname, fw->afi);
}

void print_sanitize_log(const struct nvme_sanitize_log_page *s, const char *devname,
			enum out_fmt f, unsigned flags)
{
	(void)flags;
	if (f == OUT_BINARY)
		return raw(s, sizeof(*s));
	printf("Sanitize Progress Log for device:%s\nSPROG : %u\nSSTAT : %#x\n", devname,
	       s->sprog, s->sstat);
}

void print_self_test_log(const struct nvme_self_test_log *l, uint32_t nr_entries,
			 const char *devname, enum out_fmt f)
{
	(void)nr_entries;
	if (f == OUT_BINARY)
		return raw(l, sizeof(*l));
	printf("Device Self Test Log for device:%s\nCurrent operation : %#x\n", devname,
	       l->current_operation);
}

void print_feature(uint8_t fid, uint8_t sel, uint32_t result, const void *data, uint32_t len,
		   enum out_fmt f, unsigned flags)
{
	(void)flags;
	if (f == OUT_BINARY && data)
		return raw(data, len);
	printf("get-feature:%#04x, sel %u, Current value:%#010x\n", fid, sel, result);
}

void print_get_log(const char *devname, uint8_t lid, uint32_t nsid, const void *buf,
		   uint32_t len, enum out_fmt f)
{
	if (f == OUT_BINARY)
		return raw(buf, len);
	printf("Device:%s log-id:%d namespace-id:%#x\n", devname, lid, nsid);
	dump(buf, len);
}

void print_show_regs(const void *bar, enum out_fmt f, unsigned flags)
{
	(void)flags;
	if (f == OUT_BINARY)
		return raw(bar, 0x1000);
	dump(bar, 0x40);
}
