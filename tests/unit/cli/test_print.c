/* SPDX-License-Identifier: MIT */
/*
 * Each printer fed a fixed structure: the JSON document parsed back and
 * checked key by key (name, type, value, nesting, as nvme-cli 2.3 prints
 * them), the key lines of the normal output, and -o binary byte for byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "print.h"

/* ---- stdout capture ---- */

static char *out;
static size_t out_len;
static int saved_fd = -1;
static FILE *cap;

static void cap_begin(void)
{
	fflush(stdout);
	cap = tmpfile();
	assert_non_null(cap);
	saved_fd = dup(STDOUT_FILENO);
	assert_true(saved_fd >= 0);
	assert_int_equal(dup2(fileno(cap), STDOUT_FILENO), STDOUT_FILENO);
}

static const char *cap_end(void)
{
	long n;

	fflush(stdout);
	assert_int_equal(dup2(saved_fd, STDOUT_FILENO), STDOUT_FILENO);
	close(saved_fd);
	n = ftell(cap);
	assert_true(n >= 0);
	free(out);
	out = calloc(1, (size_t)n + 1);
	assert_non_null(out);
	rewind(cap);
	out_len = fread(out, 1, (size_t)n, cap);
	assert_int_equal(out_len, (size_t)n);
	fclose(cap);
	return out;
}

#define CAPTURE(call) (cap_begin(), (call), cap_end())

static struct json_object *parse(const char *s)
{
	struct json_object *o = json_tokener_parse(s);

	if (!o)
		fail_msg("not JSON: %.300s", s);
	return o;
}

static struct json_object *key(struct json_object *o, const char *k, enum json_type t)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v))
		fail_msg("no key \"%s\"", k);
	if (!json_object_is_type(v, t))
		fail_msg("key \"%s\": type %s, want %s", k, json_type_to_name(json_object_get_type(v)),
			 json_type_to_name(t));
	return v;
}

static void key_int(struct json_object *o, const char *k, int64_t want)
{
	assert_int_equal(json_object_get_int64(key(o, k, json_type_int)), want);
}

static void key_str(struct json_object *o, const char *k, const char *want)
{
	assert_string_equal(json_object_get_string(key(o, k, json_type_string)), want);
}

static void no_key(struct json_object *o, const char *k)
{
	if (json_object_object_get_ex(o, k, NULL))
		fail_msg("unexpected key \"%s\"", k);
}

static void has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, line, n) && (p[n] == '\n' || p[n] == '\0'))
			return;
	fail_msg("no line \"%s\" in:\n%.2000s", line, text);
}

static void put_le(void *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((uint8_t *)p)[i] = (uint8_t)(v >> (8 * i));
}

/* ---- Identify ---- */

static void fill_id_ctrl(struct nvme_id_ctrl *id)
{
	memset(id, 0, sizeof(*id));
	put_le(&id->vid, 0x1b36, 2);
	memcpy(id->sn, "SN0001              ", 20);
	memcpy(id->mn, "model x                                 ", 40);
	memcpy(id->fr, "1.2     ", 8);
	id->ieee[0] = 0x00; id->ieee[1] = 0x54; id->ieee[2] = 0x52;
	put_le(&id->oaes, 0x80000100, 4);	/* bit 31: nvme-cli's int reads it negative */
	put_le(&id->ver, 0x10400, 4);
	put_le(&id->oacs, 0xa, 2);
	id->tnvmcap[8] = 0x40;			/* 2^70 */
	id->npss = 1;
	put_le(&id->psd[0].mp, 2500, 2);
	put_le(&id->psd[1].mp, 900, 2);
	id->psd[1].flags = NVME_PSD_FLAGS_NOPS;
	id->psd[1].ips = 2 << 6;
	put_le(&id->psd[1].idlp, 5, 2);
	put_le(&id->nn, 64, 4);
}

static void test_id_ctrl_json(void **state)
{
	struct nvme_id_ctrl id;

	(void)state;
	fill_id_ctrl(&id);
	struct json_object *o = parse(CAPTURE(print_id_ctrl(&id, OUT_JSON, 0)));
	/* every field of nvme-cli's document, none missing (subnqn: empty here) */
	static const char *const keys[] = { "vid", "ssvid", "sn", "mn", "fr", "rab", "ieee",
		"cmic", "mdts", "cntlid", "ver", "rtd3r", "rtd3e", "oaes", "ctratt", "rrls",
		"cntrltype", "fguid", "crdt1", "crdt2", "crdt3", "nvmsr", "vwci", "mec", "oacs",
		"acl", "aerl", "frmw", "lpa", "elpe", "npss", "avscc", "apsta", "wctemp", "cctemp",
		"mtfa", "hmpre", "hmmin", "tnvmcap", "unvmcap", "rpmbs", "edstt", "dsto", "fwug",
		"kas", "hctma", "mntmt", "mxtmt", "sanicap", "hmminds", "hmmaxd", "nsetidmax",
		"endgidmax", "anatt", "anacap", "anagrpmax", "nanagrpid", "pels", "domainid",
		"megcap", "sqes", "cqes", "maxcmd", "nn", "oncs", "fuses", "fna", "vwc", "awun",
		"awupf", "icsvscc", "nwpc", "acwu", "ocfs", "sgls", "mnan", "maxdna", "maxcna",
		"ioccsz", "iorcsz", "icdoff", "fcatt", "msdbd", "ofcs", "psds" };
	size_t i = 0;

	json_object_object_foreach(o, k, v) {
		(void)v;
		assert_true(i < sizeof(keys) / sizeof(keys[0]));
		assert_string_equal(k, keys[i]);	/* nvme-cli's order */
		i++;
	}
	assert_int_equal(i, sizeof(keys) / sizeof(keys[0]));
	key_int(o, "vid", 0x1b36);
	key_str(o, "sn", "SN0001              ");	/* padded, as nvme-cli prints it */
	key_str(o, "fr", "1.2     ");
	key_int(o, "ieee", 0x525400);
	key_int(o, "oaes", (int32_t)0x80000100);
	key_int(o, "nn", 64);
	key_str(o, "tnvmcap", "1180591620717411303424");
	key_str(o, "unvmcap", "0");
	key_str(o, "fguid", "00000000-0000-0000-0000-000000000000");
	no_key(o, "subnqn");
	struct json_object *psds = key(o, "psds", json_type_array);
	assert_int_equal(json_object_array_length(psds), 2);
	struct json_object *p1 = json_object_array_get_idx(psds, 1);
	key_int(p1, "max_power", 900);
	key_int(p1, "flags", NVME_PSD_FLAGS_NOPS);
	key_int(p1, "idle_power", 5);
	key_int(p1, "idle_scale", 2);
	key_int(p1, "active_power_work", 0);
	json_object_put(o);

	memcpy(id.subnqn, "nqn.test", 8);
	o = parse(CAPTURE(print_id_ctrl(&id, OUT_JSON, 0)));
	key_str(o, "subnqn", "nqn.test");
	json_object_put(o);
}

static void test_id_ctrl_normal(void **state)
{
	struct nvme_id_ctrl id;

	(void)state;
	fill_id_ctrl(&id);
	const char *s = CAPTURE(print_id_ctrl(&id, OUT_NORMAL, 0));
	has_line(s, "NVME Identify Controller:");
	has_line(s, "vid       : 0x1b36");
	has_line(s, "sn        : SN0001              ");
	has_line(s, "ieee      : 525400");
	has_line(s, "oaes      : 0x80000100");
	has_line(s, "tnvmcap   : 1180591620717411303424");
	has_line(s, "ps      0 : mp:25.00W operational enlat:0 exlat:0 rrt:0 rrl:0");
	has_line(s, "ps      1 : mp:9.00W non-operational enlat:0 exlat:0 rrt:0 rrl:0");
	has_line(s, "            rwt:0 rwl:0 idle_power:0.05W active_power:-");
	assert_null(strstr(s, "  [3:3]"));
	s = CAPTURE(print_id_ctrl(&id, OUT_NORMAL, PRINT_HUMAN));
	has_line(s, "  [3:3] : 0x1\tNS Management and Attachment Supported");
	has_line(s, "  [0:0] : 0\tSecurity Send and Receive Not Supported");
	has_line(s, "  [2:2] : 0\tPCI");
	has_line(s, "  [1:0] : 0\tController type not reported");
	has_line(s, " [1:0]  : 0\tScatter-Gather Lists Not Supported");
	has_line(s, "    [0:0] : 0\tCrypto Erase Sanitize Operation Not Supported");
	has_line(s, "[127:0] : 1180591620717411303424");
	has_line(s, "\tTotal NVM Capacity (TNVMCAP)");
	has_line(s, "  [31:31] : 0x1\tDiscovery Log Change Notice Supported");
	has_line(s, " [15:0] : -273°C (0 Kelvin)\tWarning Composite Temperature Threshold (WCTEMP)");
	assert_null(strstr(s, "Keyed SGL"));	/* SGLs not supported: only the set bits */
	s = CAPTURE(print_id_ctrl(&id, OUT_BINARY, 0));
	assert_int_equal(out_len, sizeof(id));
	assert_memory_equal(s, &id, sizeof(id));
}

static void fill_id_ns(struct nvme_id_ns *ns)
{
	memset(ns, 0, sizeof(*ns));
	put_le(&ns->nsze, 1ull << 40, 8);
	put_le(&ns->ncap, 1ull << 40, 8);
	put_le(&ns->nuse, 7, 8);
	ns->nlbaf = 1;
	ns->flbas = 1;
	ns->lbaf[0].ds = 9;
	ns->lbaf[1].ds = 12;
	put_le(&ns->lbaf[1].ms, 8, 2);
	ns->nvmcap[0] = 0x10;
	ns->eui64[0] = 0xab;
	ns->nguid[15] = 0x01;
	put_le(&ns->mcl, 0x800000, 4);
}

static void test_id_ns(void **state)
{
	struct nvme_id_ns ns;

	(void)state;
	fill_id_ns(&ns);
	struct json_object *o = parse(CAPTURE(print_id_ns(&ns, 1, OUT_JSON, 0)));
	key_int(o, "nsze", 1ll << 40);		/* a number, not a string */
	key_int(o, "nuse", 7);
	key_int(o, "flbas", 1);
	key_str(o, "nvmcap", "16");
	key_int(o, "mcl", 0x800000);
	key_str(o, "eui64", "ab00000000000000");
	key_str(o, "nguid", "00000000000000000000000000000001");
	no_key(o, "npwg");
	struct json_object *l = key(o, "lbafs", json_type_array);
	assert_int_equal(json_object_array_length(l), 2);
	key_int(json_object_array_get_idx(l, 1), "ms", 8);
	key_int(json_object_array_get_idx(l, 1), "ds", 12);
	key_int(json_object_array_get_idx(l, 1), "rp", 0);
	json_object_put(o);

	ns.nsfeat = 0x10;
	o = parse(CAPTURE(print_id_ns(&ns, 1, OUT_JSON, 0)));
	key_int(o, "npwg", 0);
	key_int(o, "nows", 0);
	json_object_put(o);

	const char *s = CAPTURE(print_id_ns(&ns, 3, OUT_NORMAL, 0));
	has_line(s, "NVME Identify Namespace 3:");
	has_line(s, "nsze    : 0x10000000000");
	has_line(s, "nuse    : 0x7");
	has_line(s, "nsattr\t: 0");
	has_line(s, "lbaf  0 : ms:0   lbads:9  rp:0 ");
	has_line(s, "lbaf  1 : ms:8   lbads:12 rp:0 (in use)");
	s = CAPTURE(print_id_ns(&ns, 3, OUT_NORMAL, PRINT_HUMAN));
	has_line(s, "LBA Format  1 : Metadata Size: 8   bytes - Data Size: 4096 bytes - "
		    "Relative Performance: 0 Best (in use)");
	has_line(s, "  [4:4] : 0x1\tNPWG, NPWA, NPDG, NPDA, and NOWS are Supported");
}

static void test_ns_descs(void **state)
{
	uint8_t buf[4096] = { 0 };

	(void)state;
	buf[0] = NVME_NIDT_EUI64; buf[1] = 8; buf[4] = 0x3d;
	buf[12] = NVME_NIDT_UUID; buf[13] = 16; buf[16] = 0x12;
	buf[32] = NVME_NIDT_CSI; buf[33] = 1; buf[36] = 2;
	buf[37] = 0x7f; buf[38] = 2;			/* unknown type: skipped */
	buf[43] = NVME_NIDT_NGUID; buf[44] = 4;		/* too short for an NGUID: skipped */
	struct json_object *o = parse(CAPTURE(print_ns_descs(buf, 1, OUT_JSON)));
	struct json_object *a = key(o, "ns-descs", json_type_array);
	assert_int_equal(json_object_array_length(a), 3);
	struct json_object *e = json_object_array_get_idx(a, 0);
	key_int(e, "loc", 0);
	key_int(e, "nidt", 1);
	key_int(e, "nidl", 8);
	key_str(e, "type", "eui64");
	key_str(e, "eui64", "3d00000000000000");
	e = json_object_array_get_idx(a, 1);
	key_int(e, "loc", 12);
	key_str(e, "uuid", "12000000-0000-0000-0000-000000000000");
	e = json_object_array_get_idx(a, 2);
	key_str(e, "type", "csi");
	key_str(e, "csi", "0x2");
	json_object_put(o);

	const char *s = CAPTURE(print_ns_descs(buf, 1, OUT_NORMAL));
	has_line(s, "NVME Namespace Identification Descriptors NS 1:");
	has_line(s, "eui64   : 3d00000000000000");
	has_line(s, "csi     : 0x2");

	memset(buf, 0, sizeof(buf));
	o = parse(CAPTURE(print_ns_descs(buf, 1, OUT_JSON)));
	no_key(o, "ns-descs");	/* nvme-cli prints {} for an empty list */
	json_object_put(o);
}

/* ---- logs ---- */

static void test_smart_log(void **state)
{
	struct nvme_smart_log s;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.critical_warning = 0x5;
	put_le(s.temperature, 313, 2);
	s.avail_spare = 100;
	s.power_cycles[0] = 5;
	s.power_cycles[8] = 1;			/* 2^64 + 5 */
	put_le(&s.temp_sensor[2], 300, 2);
	struct json_object *o = parse(CAPTURE(print_smart_log(&s, 0xffffffff, "nvme0", OUT_JSON, 0)));
	key_int(o, "critical_warning", 5);
	key_int(o, "temperature", 313);
	key_str(o, "power_cycles", "18446744073709551621");
	key_str(o, "data_units_read", "0");
	key_int(o, "temperature_sensor_3", 300);
	no_key(o, "temperature_sensor_1");
	key_int(o, "thm_temp2_total_time", 0);
	json_object_put(o);

	o = parse(CAPTURE(print_smart_log(&s, 0xffffffff, "nvme0", OUT_JSON, PRINT_HUMAN)));
	struct json_object *cw = key(o, "critical_warning", json_type_object);
	key_int(cw, "value", 5);
	key_int(cw, "available_spare", 1);
	key_int(cw, "temp_threshold", 0);
	key_int(cw, "reliability_degraded", 1);
	json_object_put(o);

	const char *t = CAPTURE(print_smart_log(&s, 0xffffffff, "nvme0", OUT_NORMAL, 0));
	has_line(t, "Smart Log for NVME device:nvme0 namespace-id:ffffffff");
	has_line(t, "critical_warning\t\t\t: 0x5");
	has_line(t, "temperature\t\t\t\t: 40°C (313 Kelvin)");
	has_line(t, "Data Units Read\t\t\t\t: 0 (0.00 B)");
	has_line(t, "power_cycles\t\t\t\t: 18446744073709551621");
	has_line(t, "Temperature Sensor 3           : 27°C (300 Kelvin)");
}

static void test_error_log(void **state)
{
	struct nvme_error_log_page e[3];

	(void)state;
	memset(e, 0, sizeof(e));
	put_le(&e[0].error_count, (1ull << 63) + 1, 8);
	put_le(&e[0].status_field, 0x4109 << 1 | 1, 2);
	put_le(&e[0].nsid, 0xffffffff, 4);
	put_le(&e[0].cmdid, 0x12, 2);
	put_le(&e[0].parm_error_location, 0xffff, 2);
	struct json_object *o = parse(CAPTURE(print_error_log(e, 3, "nvme0", OUT_JSON)));
	struct json_object *a = key(o, "errors", json_type_array);
	assert_int_equal(json_object_array_length(a), 3);	/* zero entries too */
	struct json_object *x = json_object_array_get_idx(a, 0);
	assert_true(json_object_get_uint64(key(x, "error_count", json_type_int)) == (1ull << 63) + 1);
	key_int(x, "status_field", 0x4109);
	key_int(x, "phase_tag", 1);
	key_int(x, "cmdid", 0x12);
	key_int(x, "nsid", -1);			/* nvme-cli: 32-bit as json int */
	key_int(x, "parm_error_location", 0xffff);
	key_int(x, "lba", 0);
	key_int(x, "trtype_spec_info", 0);
	json_object_put(o);

	const char *t = CAPTURE(print_error_log(e, 3, "nvme0", OUT_NORMAL));
	has_line(t, "Error Log Entries for device:nvme0 entries:3");
	has_line(t, " Entry[ 0]   ");
	has_line(t, "error_count\t: 9223372036854775809");
	has_line(t, "nsid\t\t: 0xffffffff");
	t = CAPTURE(print_error_log(e, 2, "nvme0", OUT_BINARY));
	assert_int_equal(out_len, 2 * sizeof(e[0]));
}

static void test_effects_log(void **state)
{
	struct nvme_cmd_effects_log e;

	(void)state;
	memset(&e, 0, sizeof(e));
	put_le(&e.acs[0x06], 1, 4);
	put_le(&e.acs[0x80], 0x20003, 4);
	put_le(&e.iocs[0x01], 3, 4);
	put_le(&e.iocs[0x02], 2, 4);		/* CSUPP clear: not listed */
	struct json_object *o = parse(CAPTURE(print_effects_log(&e, OUT_JSON, 0)));
	assert_true(json_object_is_type(o, json_type_array));
	assert_int_equal(json_object_array_length(o), 1);
	struct json_object *p = json_object_array_get_idx(o, 0);
	key_int(p, "command_set_identifier", 0);
	struct json_object *acs = key(p, "admin_cmd_set", json_type_object);
	key_int(acs, "ACS_6 (Identify)", 1);
	key_int(acs, "ACS_128 (Format NVM)", 0x20003);
	assert_int_equal(json_object_object_length(acs), 2);
	struct json_object *io = key(p, "io_cmd_set", json_type_object);
	key_int(io, "IOCS_1 (Write)", 3);
	assert_int_equal(json_object_object_length(io), 1);
	json_object_put(o);

	const char *t = CAPTURE(print_effects_log(&e, OUT_NORMAL, 0));
	has_line(t, "NVM Command Set Log Page");
	has_line(t, "Admin Commands");
	has_line(t, "ACS6     [Identify                        ] 00000001");
	has_line(t, "IOCS1    [Write                           ] 00000003");
	assert_null(strstr(t, "Vendor Specific"));
	t = CAPTURE(print_effects_log(&e, OUT_NORMAL, PRINT_HUMAN));
	has_line(t, "ACS128   [Format NVM                      ] 00020003  CSUPP+  LBCC+  NCC-  "
		    "NIC-  CCC-  USS-  No other command for any namespace");
}

static void test_fw_log(void **state)
{
	struct nvme_firmware_slot fw;

	(void)state;
	memset(&fw, 0, sizeof(fw));
	fw.afi = 0x11;
	memcpy(fw.frs[0], "0.1     ", 8);
	memcpy(fw.frs[2], "2.0\x01", 4);
	struct json_object *o = parse(CAPTURE(print_fw_log(&fw, "nvme0", OUT_JSON)));
	struct json_object *d = key(o, "nvme0", json_type_object);
	key_int(d, "Active Firmware Slot (afi)", 0x11);
	key_str(d, "Firmware Rev Slot 1", "2314885530819571248 (0.1.....)");
	key_str(d, "Firmware Rev Slot 3", "19934770 (2.0.....)");
	no_key(d, "Firmware Rev Slot 2");
	json_object_put(o);
	const char *t = CAPTURE(print_fw_log(&fw, "nvme0", OUT_NORMAL));
	has_line(t, "Firmware Log for device:nvme0");
	has_line(t, "afi  : 0x11");
	has_line(t, "frs1 : 0x2020202020312e30 (0.1.....)");
}

static void test_sanitize_log(void **state)
{
	struct nvme_sanitize_log_page s;

	(void)state;
	memset(&s, 0, sizeof(s));
	put_le(&s.sprog, 0x8000, 2);
	put_le(&s.sstat, 0x100 | 3 << 3 | NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS, 2);
	put_le(&s.scdw10, 0x2, 4);
	put_le(&s.etbe, 0xffffffff, 4);
	put_le(&s.etce, 10, 4);
	struct json_object *o = parse(CAPTURE(print_sanitize_log(&s, "nvme0", OUT_JSON, 0)));
	struct json_object *d = key(o, "nvme0", json_type_object);
	key_int(d, "sprog", 0x8000);
	struct json_object *st = key(d, "sstat", json_type_object);
	key_int(st, "global_erased", 1);
	key_int(st, "no_cmplted_passes", 3);
	key_str(st, "status", "(2) Sanitize in Progress.");
	key_int(d, "cdw10_info", 2);
	key_int(d, "time_block_erase", -1);
	key_int(d, "time_crypto_erase", 10);
	key_int(d, "time_crypto_erase_no_dealloc", 0);
	json_object_put(o);
	const char *t = CAPTURE(print_sanitize_log(&s, "nvme0", OUT_NORMAL, PRINT_HUMAN));
	has_line(t, "Sanitize Progress                      (SPROG) :  32768\t(50.000000%)");
	has_line(t, "Sanitize Status                        (SSTAT) :  0x2");
	has_line(t, "\t[2:0]\tSanitize in Progress.");
	has_line(t, "Estimated Time For Block Erase                 :  4294967295 (No time period reported)");
	has_line(t, "Estimated Time For Crypto Erase                :  10");
}

static void test_self_test_log(void **state)
{
	struct nvme_self_test_log l;

	(void)state;
	memset(&l, 0, sizeof(l));
	l.current_operation = 1;
	l.completion = 40;
	l.result[0].dsts = 0x1 << 4 | 0x7;
	l.result[0].seg = 2;
	l.result[0].vdi = NVME_ST_VALID_DIAG_INFO_NSID | NVME_ST_VALID_DIAG_INFO_SC;
	put_le(&l.result[0].nsid, 1, 4);
	put_le(&l.result[0].poh, 12, 8);
	l.result[0].sc = 0x81;
	for (int i = 1; i < NVME_LOG_ST_MAX_RESULTS; i++)
		l.result[i].dsts = NVME_ST_RESULT_NOT_USED;
	struct json_object *o = parse(CAPTURE(print_self_test_log(&l, 20, "nvme0", OUT_JSON)));
	key_int(o, "Current Device Self-Test Operation", 1);
	key_int(o, "Current Device Self-Test Completion", 40);
	struct json_object *a = key(o, "List of Valid Reports", json_type_array);
	assert_int_equal(json_object_array_length(a), 20);
	struct json_object *r = json_object_array_get_idx(a, 0);
	key_int(r, "Self test result", 7);
	key_int(r, "Self test code", 1);
	key_int(r, "Segment number", 2);
	key_int(r, "Power on hours", 12);
	key_int(r, "Namespace Identifier", 1);
	key_int(r, "Status Code", 0x81);
	no_key(r, "Failing LBA");
	no_key(r, "Status Code Type");
	r = json_object_array_get_idx(a, 1);
	key_int(r, "Self test result", 0xf);
	assert_int_equal(json_object_object_length(r), 1);
	json_object_put(o);
	o = parse(CAPTURE(print_self_test_log(&l, 2, "nvme0", OUT_JSON)));
	assert_int_equal(json_object_array_length(key(o, "List of Valid Reports", json_type_array)), 2);
	json_object_put(o);
	const char *t = CAPTURE(print_self_test_log(&l, 2, "nvme0", OUT_NORMAL));
	has_line(t, "Device Self Test Log for NVME device:nvme0");
	has_line(t, "Current Completion : 40%");
	has_line(t, "  Segment Number               : 0x2");
	has_line(t, "  Namespace Identifier         : 0x1");
	has_line(t, "Self Test Result[1]:");
	has_line(t, "  Operation Result             : 0xf");
	t = CAPTURE(print_self_test_log_flags(&l, 2, "nvme0", OUT_NORMAL, PRINT_VERBOSE));
	has_line(t, "  Operation Result             : 0x7 Operation completed with one or more "
		    "failed segments and the first segment that failed is indicated in the "
		    "SegmentNumber field");
	has_line(t, "  Self Test Code               : 1 Short device self-test operation");
	has_line(t, "  Operation Result             : 0xf Entry not used (does not contain a result)");
}

/* ---- get-feature, get-log ---- */

static void test_feature(void **state)
{
	uint8_t ts[8] = { 0xe8, 0x03, 0, 0, 0, 0, 0x02, 0 };

	(void)state;
	const char *t = CAPTURE(print_feature(6, 0, 1, NULL, 0, OUT_NORMAL, 0));
	assert_string_equal(t, "get-feature:0x06 (Volatile Write Cache), Current value:0x00000001\n");
	t = CAPTURE(print_feature(1, 1, 0, NULL, 0, OUT_NORMAL, 0));
	assert_string_equal(t, "get-feature:0x01 (Arbitration), Default value:00000000\n");
	t = CAPTURE(print_feature(6, 3, 5, NULL, 0, OUT_NORMAL, 0));
	has_line(t, "  Feature is saveable");
	has_line(t, "  Feature is changeable");
	assert_null(strstr(t, "per-namespace"));
	t = CAPTURE(print_feature(6, 0, 1, NULL, 0, OUT_NORMAL, PRINT_HUMAN));
	has_line(t, "\tVolatile Write Cache Enable (WCE): Enabled");
	t = CAPTURE(print_feature(7, 0, 0x00030001, NULL, 0, OUT_NORMAL, PRINT_HUMAN));
	has_line(t, "\tNumber of IO Completion Queues Allocated (NCQA): 4");
	has_line(t, "\tNumber of IO Submission Queues Allocated (NSQA): 2");
	t = CAPTURE(print_feature(4, 0, 0x157, NULL, 0, OUT_NORMAL, PRINT_HUMAN));
	has_line(t, "\tTemperature Threshold         (TMPTH): 70°C (343 Kelvin)");
	t = CAPTURE(print_feature(0x0e, 0, 0, ts, 8, OUT_NORMAL, 0));
	has_line(t, "0000: e8 03 00 00 00 00 02 00                          \"........\"");
	t = CAPTURE(print_feature(0x0e, 0, 0, ts, 8, OUT_BINARY, 0));
	assert_int_equal(out_len, 8);
	struct json_object *o = parse(CAPTURE(print_feature(6, 0, 1, NULL, 0, OUT_JSON, 0)));
	key_int(o, "feature_id", 6);
	key_str(o, "feature", "Volatile Write Cache");
	key_str(o, "sel", "Current");
	key_int(o, "value", 1);
	no_key(o, "data");
	json_object_put(o);
}

static void test_get_log(void **state)
{
	uint8_t buf[20];

	(void)state;
	for (int i = 0; i < 20; i++)
		buf[i] = (uint8_t)('A' + i);
	const char *t = CAPTURE(print_get_log("nvme0", 2, 0xffffffff, buf, 20, OUT_NORMAL));
	has_line(t, "Device:nvme0 log-id:2 namespace-id:0xffffffff");
	has_line(t, "       0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f");
	has_line(t, "0000: 41 42 43 44 45 46 47 48 49 4a 4b 4c 4d 4e 4f 50 \"ABCDEFGHIJKLMNOP\"");
	has_line(t, "0010: 51 52 53 54                                      \"QRST\"");
	t = CAPTURE(print_get_log("nvme0", 2, 0xffffffff, buf, 20, OUT_BINARY));
	assert_int_equal(out_len, 20);
	assert_memory_equal(t, buf, 20);
}

/* ---- list, list-subsys ---- */

static void test_list(void **state)
{
	struct nvme_id_ctrl id;
	struct nvme_id_ns ns;

	(void)state;
	fill_id_ctrl(&id);
	memcpy(id.subnqn, "nqn.x", 5);
	fill_id_ns(&ns);
	struct print_ns n = { 1, &ns, "/dev/nvme0n1", "/dev/ng0n1" };
	struct print_ctrl c = { "nvme0", "nvme-subsys0", "pcie", "ucmd.0", "live", "nqn.host",
				"hid", &id, 1, &n };
	struct json_object *o = parse(CAPTURE(print_list(&c, 1, OUT_JSON, 0)));
	struct json_object *d = json_object_array_get_idx(key(o, "Devices", json_type_array), 0);
	key_int(d, "NameSpace", 1);
	key_str(d, "DevicePath", "/dev/nvme0n1");
	key_str(d, "Firmware", "1.2");			/* trimmed, as sysfs has it */
	key_str(d, "ModelNumber", "model x");
	key_str(d, "SerialNumber", "SN0001");
	key_int(d, "UsedBytes", 7 * 4096);
	key_int(d, "MaximumLBA", 1ll << 40);
	key_int(d, "PhysicalSize", 1ll << 52);
	key_int(d, "SectorSize", 4096);
	json_object_put(o);

	o = parse(CAPTURE(print_list(&c, 1, OUT_JSON, PRINT_VERBOSE)));
	struct json_object *h = json_object_array_get_idx(key(o, "Devices", json_type_array), 0);
	key_str(h, "HostNQN", "nqn.host");
	key_str(h, "HostID", "hid");
	struct json_object *s = json_object_array_get_idx(key(h, "Subsystems", json_type_array), 0);
	key_str(s, "Subsystem", "nvme-subsys0");
	key_str(s, "SubsystemNQN", "nqn.x");
	key(s, "Namespaces", json_type_array);
	struct json_object *jc = json_object_array_get_idx(key(s, "Controllers", json_type_array), 0);
	key_str(jc, "Controller", "nvme0");
	key_str(jc, "Transport", "pcie");
	key_str(jc, "Address", "ucmd.0");
	key(jc, "Paths", json_type_array);
	struct json_object *jn = json_object_array_get_idx(key(jc, "Namespaces", json_type_array), 0);
	key_str(jn, "NameSpace", "nvme0n1");
	key_int(jn, "NSID", 1);
	key_int(jn, "SectorSize", 4096);
	json_object_put(o);

	const char *t = CAPTURE(print_list(&c, 1, OUT_NORMAL, 0));
	has_line(t, "Node                  Generic               SN                   Model                                    Namespace Usage                      Format           FW Rev  ");
	has_line(t, "/dev/nvme0n1          /dev/ng0n1            SN0001               model x                                  1          28.67  kB /   4.50  PB      4 KiB +  8 B   1.2     ");

	o = parse(CAPTURE(print_list_subsys(&c, 1, OUT_JSON, 0)));
	h = json_object_array_get_idx(o, 0);
	key_str(h, "HostNQN", "nqn.host");
	s = json_object_array_get_idx(key(h, "Subsystems", json_type_array), 0);
	key_str(s, "Name", "nvme-subsys0");
	key_str(s, "NQN", "nqn.x");
	struct json_object *p = json_object_array_get_idx(key(s, "Paths", json_type_array), 0);
	key_str(p, "Name", "nvme0");
	key_str(p, "State", "live");
	json_object_put(o);
	t = CAPTURE(print_list_subsys(&c, 1, OUT_NORMAL, 0));
	assert_string_equal(t, "nvme-subsys0 - NQN=nqn.x\n\\\n +- nvme0 pcie ucmd.0 live\n");
}

/*
 * list-subsys's paths of a namespace: nvme-cli's ANA field (even empty:
 * its trailing space), "ANAState" only with a state; a subsystem filtered
 * out leaves its host alone.
 */
static void test_list_subsys_paths(void **state)
{
	struct nvme_id_ctrl id;

	(void)state;
	fill_id_ctrl(&id);
	memcpy(id.subnqn, "nqn.x", 5);
	struct print_ctrl c[2] = {
		{ "nvme0", "nvme-subsys0", "pcie", "a0", "live", "nqn.host", "hid", &id, 0, NULL,
		  "optimized" },
		{ "nvme1", "nvme-subsys0", "pcie", "a1", "live", "nqn.host", "hid", &id, 0, NULL,
		  "inaccessible" },
	};
	const char *t = CAPTURE(print_list_subsys(c, 2, OUT_NORMAL, 0));

	assert_string_equal(t, "nvme-subsys0 - NQN=nqn.x\n\\\n +- nvme0 pcie a0 live optimized\n"
			       " +- nvme1 pcie a1 live inaccessible\n");
	struct json_object *o = parse(CAPTURE(print_list_subsys(c, 2, OUT_JSON, 0)));
	struct json_object *h = json_object_array_get_idx(o, 0);
	struct json_object *s = json_object_array_get_idx(key(h, "Subsystems", json_type_array), 0);
	struct json_object *p = key(s, "Paths", json_type_array);
	assert_int_equal(json_object_array_length(p), 2);
	key_str(json_object_array_get_idx(p, 0), "ANAState", "optimized");
	key_str(json_object_array_get_idx(p, 1), "ANAState", "inaccessible");
	key_str(json_object_array_get_idx(p, 1), "Name", "nvme1");
	json_object_put(o);

	c[0].ana_state = c[1].ana_state = "";
	t = CAPTURE(print_list_subsys(c, 2, OUT_NORMAL, 0));
	assert_string_equal(t, "nvme-subsys0 - NQN=nqn.x\n\\\n +- nvme0 pcie a0 live \n"
			       " +- nvme1 pcie a1 live \n");
	o = parse(CAPTURE(print_list_subsys(c, 2, OUT_JSON, 0)));
	s = json_object_array_get_idx(key(json_object_array_get_idx(o, 0), "Subsystems",
					  json_type_array), 0);
	no_key(json_object_array_get_idx(key(s, "Paths", json_type_array), 0), "ANAState");
	json_object_put(o);

	c[0].subsys = c[1].subsys = NULL;
	t = CAPTURE(print_list_subsys(c, 2, OUT_NORMAL, 0));
	assert_string_equal(t, "");
	o = parse(CAPTURE(print_list_subsys(c, 2, OUT_JSON, 0)));
	h = json_object_array_get_idx(o, 0);
	key_str(h, "HostNQN", "nqn.host");
	assert_int_equal(json_object_array_length(key(h, "Subsystems", json_type_array)), 0);
	json_object_put(o);
}

/* ---- show-regs ---- */

static void test_show_regs(void **state)
{
	static uint8_t bar[0x1000];

	(void)state;
	put_le(bar + NVME_REG_CAP, 0x0020002028010fffull | 1ull << 63, 8);
	put_le(bar + NVME_REG_VS, 0x10400, 4);
	put_le(bar + NVME_REG_CC, 0x460001, 4);
	put_le(bar + NVME_REG_CSTS, 1, 4);
	put_le(bar + NVME_REG_AQA, 0x1f001f, 4);
	put_le(bar + NVME_REG_PMRMSCL, 0x80000000, 4);
	struct json_object *o = parse(CAPTURE(print_show_regs(bar, OUT_JSON, 0)));
	assert_true(json_object_get_uint64(key(o, "cap", json_type_int)) ==
		    (0x0020002028010fffull | 1ull << 63));
	key_int(o, "vs", 0x10400);
	key_int(o, "cc", 0x460001);
	key_int(o, "pmrmscl", (int32_t)0x80000000);
	key_int(o, "asq", 0);
	json_object_put(o);
	const char *t = CAPTURE(print_show_regs(bar, OUT_NORMAL, 0));
	has_line(t, "cap     : 8020002028010fff");
	has_line(t, "version : 10400");
	has_line(t, "cmbmsc\t: 0");
	has_line(t, "pmrmscl\t: 0x80000000");
	t = CAPTURE(print_show_regs(bar, OUT_NORMAL, PRINT_HUMAN));
	has_line(t, "\tNVMe specification 1.4");
	has_line(t, "\tEnable                              (EN): Yes");
	has_line(t, "\tMaximum Queue Entries Supported    (MQES): 4096");
	has_line(t, "\tAdmin Submission Queue Size (ASQS): 32");
	t = CAPTURE(print_show_regs(bar, OUT_BINARY, 0));
	assert_int_equal(out_len, 0xe1c);
}

/*
 * show-topology: nvme-cli's tree ranked by namespace (paths in the
 * controllers' order) and by controller (the subsystem's list: reversed),
 * a namespace's missing path left out; JSON Namespaces[].Paths[] with
 * ANAState, and without a head each controller's namespaces with a
 * "Controller" array and no ANA state.
 */
static void test_topology(void **state)
{
	const struct print_ctrl c[2] = {
		{ .name = "nvme0", .transport = "pcie", .address = "a0", .state = "live" },
		{ .name = "nvme1", .transport = "tcp", .address = "a1", .state = "connecting" },
	};
	const uint32_t nsid[2] = { 2, 1 };
	const char *const ana[4] = { NULL, "optimized", "non-optimized", "inaccessible" };
	struct print_topo t = { "nqn.host", "hid", "nvme-subsys0", "nqn.x", 2, c, 2, nsid, ana };
	const char *s;

	(void)state;
	s = CAPTURE(print_topology(&t, OUT_NORMAL, TOPO_NAMESPACE));
	assert_string_equal(s, "nvme-subsys0 - NQN=nqn.x\n\\\n"
			       " +- ns 2\n \\\n  +- nvme1 tcp a1 connecting optimized\n"
			       " +- ns 1\n \\\n  +- nvme0 pcie a0 live non-optimized\n"
			       "  +- nvme1 tcp a1 connecting inaccessible\n");
	/* -o binary: the text, as nvme-cli (CAPTURE's buffer is reused: a copy) */
	char *text = strdup(s);
	assert_non_null(text);
	assert_string_equal(CAPTURE(print_topology(&t, OUT_BINARY, TOPO_NAMESPACE)), text);
	free(text);
	s = CAPTURE(print_topology(&t, OUT_NORMAL, TOPO_CTRL));
	assert_string_equal(s, "nvme-subsys0 - NQN=nqn.x\n\\\n"
			       " +- nvme1 tcp a1\n \\\n  +- ns 2 connecting optimized\n"
			       "  +- ns 1 connecting inaccessible\n"
			       " +- nvme0 pcie a0\n \\\n  +- ns 1 live non-optimized\n");

	struct json_object *o = parse(CAPTURE(print_topology(&t, OUT_JSON, TOPO_CTRL)));
	struct json_object *h = json_object_array_get_idx(o, 0);
	key_str(h, "HostNQN", "nqn.host");
	key_str(h, "HostID", "hid");
	struct json_object *sub = json_object_array_get_idx(key(h, "Subsystems", json_type_array), 0);
	key_str(sub, "Name", "nvme-subsys0");
	key_str(sub, "NQN", "nqn.x");
	struct json_object *nss = key(sub, "Namespaces", json_type_array);
	assert_int_equal(json_object_array_length(nss), 2);
	struct json_object *n1 = json_object_array_get_idx(nss, 1);
	assert_int_equal(json_object_get_int(key(n1, "NSID", json_type_int)), 1);
	struct json_object *p = key(n1, "Paths", json_type_array);
	assert_int_equal(json_object_array_length(p), 2);
	key_str(json_object_array_get_idx(p, 1), "Name", "nvme1");
	key_str(json_object_array_get_idx(p, 1), "Transport", "tcp");
	key_str(json_object_array_get_idx(p, 1), "Address", "a1");
	key_str(json_object_array_get_idx(p, 1), "State", "connecting");
	key_str(json_object_array_get_idx(p, 1), "ANAState", "inaccessible");
	assert_int_equal(json_object_array_length(key(json_object_array_get_idx(nss, 0), "Paths",
						      json_type_array)), 1);
	json_object_put(o);

	/* one controller, no head: its own namespaces */
	t.nr_ctrl = 1;
	t.ana = NULL;
	t.hostid = NULL;
	s = CAPTURE(print_topology(&t, OUT_NORMAL, TOPO_NAMESPACE));
	assert_string_equal(s, "nvme-subsys0 - NQN=nqn.x\n\\\n"
			       " +- ns 2\n \\\n  +- nvme0 pcie a0 live\n"
			       " +- ns 1\n \\\n  +- nvme0 pcie a0 live\n");
	s = CAPTURE(print_topology(&t, OUT_NORMAL, TOPO_CTRL));
	assert_string_equal(s, "nvme-subsys0 - NQN=nqn.x\n\\\n"
			       " +- nvme0 pcie a0\n \\\n  +- ns 2 live\n  +- ns 1 live\n");
	o = parse(CAPTURE(print_topology(&t, OUT_JSON, TOPO_NAMESPACE)));
	h = json_object_array_get_idx(o, 0);
	no_key(h, "HostID");
	sub = json_object_array_get_idx(key(h, "Subsystems", json_type_array), 0);
	n1 = json_object_array_get_idx(key(sub, "Namespaces", json_type_array), 1);
	no_key(n1, "Paths");
	struct json_object *ctl = json_object_array_get_idx(key(n1, "Controller", json_type_array), 0);
	key_str(ctl, "Name", "nvme0");
	key_str(ctl, "State", "live");
	no_key(ctl, "ANAState");
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_id_ctrl_json),
		cmocka_unit_test(test_id_ctrl_normal),
		cmocka_unit_test(test_id_ns),
		cmocka_unit_test(test_ns_descs),
		cmocka_unit_test(test_smart_log),
		cmocka_unit_test(test_error_log),
		cmocka_unit_test(test_effects_log),
		cmocka_unit_test(test_fw_log),
		cmocka_unit_test(test_sanitize_log),
		cmocka_unit_test(test_self_test_log),
		cmocka_unit_test(test_feature),
		cmocka_unit_test(test_get_log),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_list_subsys_paths),
		cmocka_unit_test(test_topology),
		cmocka_unit_test(test_show_regs),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	free(out);
	return r;
}
