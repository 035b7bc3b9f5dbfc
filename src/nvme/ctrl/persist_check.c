/* SPDX-License-Identifier: MIT */
/*
 * A loaded ctrl.json is checked in full before anything of it is used: every
 * field's type and range (no silent truncation by a cast, no default for a
 * missing field, no unknown field), the checksum, and the namespace images
 * it names. The state is then either exactly what was saved or refused with
 * one line that names the file and the field, so that damage (a crash on a
 * file system that lost a block, a bad hand edit) never turns into a
 * different device: a namespace of another size over the same data, another
 * nsid, or blocks that read as zeros.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "fdp.h"

#define STATE_FILE	"ctrl.json"
/* 2^40 blocks: 512 TiB at 512 bytes, far past any store here, no overflow */
#define MAX_NSZE	(1ull << 40)
/* Identify Controller SN, MN and FR field sizes */
#define SN_LEN		20
#define MN_LEN		40
#define FR_LEN		8

struct chk {
	struct ucmd_ctrl *c;
	char where[48];		/* "" or "namespaces[3]." */
};


static int bad(struct chk *k, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(struct chk *k, const char *key, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ctrl_ctrl_why(k->c, 0, "%s/" STATE_FILE ": %s%s: %s", k->c->dir, k->where, key, msg);
	return -EINVAL;
}

static int only_keys(struct chk *k, json_object *o, const char *const *keys)
{
	json_object_object_foreach(o, key, val) {
		const char *const *p;

		(void)val;
		for (p = keys; *p && strcmp(*p, key); p++)
			;
		if (!*p)
			return bad(k, key, "unknown field");
	}
	return 0;
}

static int want(struct chk *k, json_object *o, const char *key, json_type t, json_object **v)
{
	if (!json_object_object_get_ex(o, key, v))
		return bad(k, key, "missing");
	if (!json_object_is_type(*v, t))
		return bad(k, key, "expected %s, found %s", json_type_to_name(t),
			   json_type_to_name(json_object_get_type(*v)));
	return 0;
}

static int uint_of(struct chk *k, const char *key, json_object *v, uint64_t min, uint64_t max,
		   uint64_t *out)
{
	int64_t s;

	if (!json_object_is_type(v, json_type_int))
		return bad(k, key, "expected int, found %s",
			   json_type_to_name(json_object_get_type(v)));
	/* json-c holds numbers past INT64_MAX as unsigned and clamps the signed view */
	s = json_object_get_int64(v);
	if (s < 0)
		return bad(k, key, "%" PRId64 " is out of range %" PRIu64 "..%" PRIu64, s, min, max);
	*out = json_object_get_uint64(v);
	if (*out < min || *out > max)
		return bad(k, key, "%" PRIu64 " is out of range %" PRIu64 "..%" PRIu64, *out, min,
			   max);
	return 0;
}

static int want_uint(struct chk *k, json_object *o, const char *key, uint64_t min, uint64_t max,
		     uint64_t *out)
{
	json_object *v;
	int ret = want(k, o, key, json_type_int, &v);

	return ret ? ret : uint_of(k, key, v, min, max, out);
}

/* A string without NUL; max 0: any length */
static int want_str(struct chk *k, json_object *o, const char *key, size_t max, const char **out)
{
	json_object *v;
	size_t len;
	int ret = want(k, o, key, json_type_string, &v);

	if (ret)
		return ret;
	*out = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if (strlen(*out) != len)
		return bad(k, key, "contains a NUL character");
	if (!len)
		return bad(k, key, "is empty");
	if (max && len > max)
		return bad(k, key, "%zu characters, more than the %zu of its field", len, max);
	return 0;
}

/* Identify's ASCII fields: printable ASCII, at most the field's size */
static int want_ascii(struct chk *k, json_object *o, const char *key, size_t max)
{
	const char *s;
	int ret = want_str(k, o, key, max, &s);

	for (; !ret && *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			ret = bad(k, key, "byte 0x%02x is not printable ASCII", (uint8_t)*s);
	return ret;
}

static int want_hex(struct chk *k, json_object *o, const char *key, size_t digits)
{
	const char *s;
	int ret = want_str(k, o, key, 0, &s);

	if (ret)
		return ret;
	if (strlen(s) != digits)
		return bad(k, key, "expected %zu hex digits, found %zu characters", digits,
			   strlen(s));
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return bad(k, key, "'%c' is not a hex digit", *s);
	return 0;
}

static int check_features(struct chk *k, json_object *o)
{
	static const char *const u32s[] = { "arbitration", "power_mgmt", "err_recovery", "vwc",
		"irq_coalesce", "write_atomic", "async_event", NULL };
	static const char *const keys[] = { "arbitration", "power_mgmt", "err_recovery", "vwc",
		"irq_coalesce", "write_atomic", "async_event", "tmpth_over", "tmpth_under", NULL };
	uint64_t v;
	int ret = only_keys(k, o, keys);

	for (const char *const *p = u32s; !ret && *p; p++)
		ret = want_uint(k, o, *p, 0, UINT32_MAX, &v);
	if (!ret)
		ret = want_uint(k, o, "tmpth_over", 0, UINT16_MAX, &v);
	if (!ret)
		ret = want_uint(k, o, "tmpth_under", 0, UINT16_MAX, &v);
	return ret;
}

/* controller 1's SMART counters; the others' error counts are in subsystem.errors */
static int check_smart_keys(struct chk *k, json_object *o, bool error_count)
{
	static const char *const keys[] = { "units_read_512", "units_written_512", "host_reads",
		"host_writes", "power_cycles", "unsafe_shutdowns", "power_on_seconds",
		"media_errors", "error_count", NULL };
	static const char *const sib_keys[] = { "units_read_512", "units_written_512",
		"host_reads", "host_writes", "power_cycles", "unsafe_shutdowns",
		"power_on_seconds", "media_errors", NULL };
	const char *const *want_keys = error_count ? keys : sib_keys;
	uint64_t v;
	int ret = only_keys(k, o, want_keys);

	for (const char *const *p = want_keys; !ret && *p; p++)
		ret = want_uint(k, o, *p, 0, UINT64_MAX, &v);
	return ret;
}

static int check_smart(struct chk *k, json_object *o)
{
	return check_smart_keys(k, o, true);
}

/* A boolean member */
static int want_bool(struct chk *k, json_object *o, const char *key)
{
	json_object *v;

	return want(k, o, key, json_type_boolean, &v);
}

/* An array of n unsigned integers, each within its max */
static int want_uints(struct chk *k, const char *key, json_object *a, size_t n,
		      const uint64_t *max, uint64_t *out)
{
	char sub[64];

	if (!json_object_is_type(a, json_type_array) || json_object_array_length(a) != n)
		return bad(k, key, "expected an array of %zu integers", n);
	for (size_t i = 0; i < n; i++) {
		int ret;

		snprintf(sub, sizeof(sub), "%s[%zu]", key, i);
		ret = uint_of(k, sub, json_object_array_get_idx(a, i), 0, max[i], &out[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Entries oldest first, counts increasing, the last one the SMART count */
static int check_errlog(struct chk *k, json_object *a, uint64_t count)
{
	static const uint64_t max[6] = { UINT64_MAX, UINT16_MAX, UINT16_MAX, UINT16_MAX,
					 UINT32_MAX, UINT64_MAX };
	size_t n = json_object_array_length(a);
	uint64_t prev = 0, v[6];
	char key[32];

	if (n > UCMD_ERRLOG_ENTRIES)
		return bad(k, "error_log", "%zu entries, more than the %u the log has", n,
			   UCMD_ERRLOG_ENTRIES);
	for (size_t i = 0; i < n; i++) {
		int ret;

		snprintf(key, sizeof(key), "error_log[%zu]", i);
		ret = want_uints(k, key, json_object_array_get_idx(a, i), 6, max, v);
		if (ret)
			return ret;
		if (!v[0] || v[0] <= prev || v[0] > count || count - v[0] >= UCMD_ERRLOG_ENTRIES)
			return bad(k, key, "error count %" PRIu64 " is not one of the %u newest of "
				   "%" PRIu64 ", after %" PRIu64, v[0], UCMD_ERRLOG_ENTRIES, count,
				   prev);
		prev = v[0];
	}
	return 0;
}

static int check_sanitize(struct chk *k, json_object *o)
{
	static const char *const keys[] = { "sstat", "scdw10", "ovrpat", "ause_fail", "exited",
		"progress", "start_rt_ms", NULL };
	/* pass (OWPASS at most 16), namespace slot, byte offset, bytes done */
	static const uint64_t pmax[4] = { 15, UCMD_MAX_NS + 1, UINT64_MAX, UINT64_MAX };
	uint64_t sstat, dw10, v, pr[4];
	json_object *a;
	int ret;

	if ((ret = only_keys(k, o, keys)) ||
	    (ret = want_uint(k, o, "sstat", 0, 0x1ff, &sstat)) ||
	    (ret = want_uint(k, o, "scdw10", 0, 0x3ff, &dw10)) ||
	    (ret = want_uint(k, o, "ovrpat", 0, UINT32_MAX, &v)) ||
	    (ret = want_bool(k, o, "ause_fail")) || (ret = want_bool(k, o, "exited")) ||
	    (ret = want(k, o, "progress", json_type_array, &a)) ||
	    (ret = want_uints(k, "progress", a, 4, pmax, pr)))
		return ret;
	if ((sstat & 7) != NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS && (pr[0] | pr[1] | pr[2] | pr[3]))
		return bad(k, "progress", "set, but no sanitize is in progress");
	/* optional (older states have none): the wall-clock start of a running one */
	if (json_object_object_get_ex(o, "start_rt_ms", NULL)) {
		if ((ret = want_uint(k, o, "start_rt_ms", 0, UINT64_MAX, &v)))
			return ret;
		if ((sstat & 7) != NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS)
			return bad(k, "start_rt_ms", "set, but no sanitize is in progress");
	}
	if ((sstat & 7) > NVME_SANITIZE_SSTAT_STATUS_COMPLETED_FAILED)
		return bad(k, "sstat", "status %" PRIu64 " is none of 0..3", sstat & 7);
	if ((sstat & 7) && ((dw10 & 7) < NVME_SANITIZE_SANACT_START_BLOCK_ERASE ||
			    (dw10 & 7) > NVME_SANITIZE_SANACT_START_CRYPTO_ERASE))
		return bad(k, "scdw10", "action %" PRIu64 " starts no sanitize", dw10 & 7);
	return 0;
}

static int check_selftest(struct chk *k, json_object *a)
{
	/* status: code 1 or 2 and a result 0..9; segment; VDI bits; hours; nsid */
	static const uint64_t max[5] = { 0x2f, 7, 0xf, UINT64_MAX, UINT32_MAX };
	size_t n = json_object_array_length(a);
	uint64_t v[5];
	char key[32];

	if (n > UCMD_DST_RESULTS)
		return bad(k, "self_test", "%zu results, more than the %u the log has", n,
			   UCMD_DST_RESULTS);
	for (size_t i = 0; i < n; i++) {
		int ret;

		snprintf(key, sizeof(key), "self_test[%zu]", i);
		ret = want_uints(k, key, json_object_array_get_idx(a, i), 5, max, v);
		if (ret)
			return ret;
		if ((v[0] >> 4) < NVME_ST_CODE_SHORT || (v[0] & 0xf) > NVME_ST_RESULT_ABORTED_SANITIZE)
			return bad(k, key, "status %02" PRIx64 "h is no short or extended test's "
				   "result", v[0]);
	}
	return 0;
}

static int check_fw(struct chk *k, json_object *o, const char *firmware)
{
	static const char *const keys[] = { "active", "next", "next_conv", "revisions", "flags",
		NULL };
	static const uint64_t fmax[UCMD_FW_SLOTS] = { UCMD_FW_NEEDS_CONV, UCMD_FW_NEEDS_CONV,
						      UCMD_FW_NEEDS_CONV };
	json_object *revs, *flags;
	const char *rev[UCMD_FW_SLOTS + 1] = { NULL };
	uint64_t active, next, f[UCMD_FW_SLOTS];
	int ret;

	if ((ret = only_keys(k, o, keys)) ||
	    (ret = want_uint(k, o, "active", 1, UCMD_FW_SLOTS, &active)) ||
	    (ret = want_uint(k, o, "next", 0, UCMD_FW_SLOTS, &next)) ||
	    (ret = want_bool(k, o, "next_conv")) ||
	    (ret = want(k, o, "revisions", json_type_array, &revs)) ||
	    (ret = want(k, o, "flags", json_type_array, &flags)) ||
	    (ret = want_uints(k, "flags", flags, UCMD_FW_SLOTS, fmax, f)))
		return ret;
	if (json_object_array_length(revs) != UCMD_FW_SLOTS)
		return bad(k, "revisions", "expected %u strings", UCMD_FW_SLOTS);
	for (unsigned s = 1; s <= UCMD_FW_SLOTS; s++) {
		json_object *v = json_object_array_get_idx(revs, s - 1);
		size_t len;

		if (!json_object_is_type(v, json_type_string))
			return bad(k, "revisions", "slot %u: expected a string", s);
		rev[s] = json_object_get_string(v);
		len = (size_t)json_object_get_string_len(v);
		if (strlen(rev[s]) != len || len > FR_LEN || (s == 1 && !len))
			return bad(k, "revisions", "slot %u: \"%s\" is not 1..8 characters%s", s,
				   rev[s], s == 1 ? "" : " or empty");
		for (const char *p = rev[s]; *p; p++)
			if (*p < 0x20 || *p > 0x7e)
				return bad(k, "revisions", "slot %u: byte 0x%02x is not printable "
					   "ASCII", s, (uint8_t)*p);
	}
	if (!rev[active][0] || strcmp(rev[active], firmware))
		return bad(k, "active", "slot %" PRIu64 " holds \"%s\", not the firmware \"%s\"",
			   active, rev[active], firmware);
	if (next && !rev[next][0])
		return bad(k, "next", "slot %" PRIu64 " is empty", next);
	return 0;
}

/* The members version 3 added */
static int check_v3(struct chk *k, json_object *root)
{
	/* op (0: none, 1 short, 2 extended), nsid, wall-clock start ms, duration (a day) */
	static const uint64_t run_max[4] = { 2, UINT32_MAX, UINT64_MAX, 86400000 };
	uint64_t run[4];
	json_object *o, *smart, *cnt;
	const char *s, *fw;
	uint64_t count;
	int ret;

	if ((ret = want_ascii(k, root, "subnqn", 223)) ||
	    (ret = want(k, root, "boot_id", json_type_string, &o)))
		return ret;
	s = json_object_get_string(o);
	if (strlen(s) != (size_t)json_object_get_string_len(o) || strlen(s) > 36)
		return bad(k, "boot_id", "not a boot id (at most 36 characters)");
	if ((ret = want(k, root, "current_features", json_type_object, &o)))
		return ret;
	strcpy(k->where, "current_features.");
	if ((ret = check_features(k, o)))
		return ret;
	k->where[0] = 0;
	json_object_object_get_ex(root, "smart", &smart);
	json_object_object_get_ex(smart, "error_count", &cnt);
	count = json_object_get_uint64(cnt);
	if ((ret = want(k, root, "error_log", json_type_array, &o)) ||
	    (ret = check_errlog(k, o, count)) ||
	    (ret = want(k, root, "sanitize", json_type_object, &o)))
		return ret;
	strcpy(k->where, "sanitize.");
	if ((ret = check_sanitize(k, o)))
		return ret;
	k->where[0] = 0;
	if ((ret = want(k, root, "self_test", json_type_array, &o)) ||
	    (ret = check_selftest(k, o)) ||
	    (ret = want(k, root, "self_test_run", json_type_array, &o)) ||
	    (ret = want_uints(k, "self_test_run", o, 4, run_max, run)))
		return ret;
	if (!run[0] && (run[1] || run[2] || run[3]))
		return bad(k, "self_test_run", "no test running, but the other fields are set");
	if ((ret = want(k, root, "fw_slots", json_type_object, &o)))
		return ret;
	json_object_object_get_ex(root, "firmware", &cnt);
	fw = json_object_get_string(cnt);
	strcpy(k->where, "fw_slots.");
	ret = check_fw(k, o, fw);
	k->where[0] = 0;
	return ret;
}

static int check_ranges(struct chk *k, json_object *u, uint64_t nsze)
{
	size_t n = json_object_array_length(u);
	uint64_t prev_end = 0;
	char key[48];

	if (n > UCMD_MAX_UNCOR_RANGES)
		return bad(k, "uncorrectable", "%zu ranges, more than the %u a namespace can have",
			   n, UCMD_MAX_UNCOR_RANGES);
	for (size_t i = 0; i < n; i++) {
		json_object *r = json_object_array_get_idx(u, i);
		uint64_t slba, nlb;
		int ret;

		snprintf(key, sizeof(key), "uncorrectable[%zu]", i);
		if (!json_object_is_type(r, json_type_array) || json_object_array_length(r) != 2)
			return bad(k, key, "expected an array [slba, nlb]");
		snprintf(key, sizeof(key), "uncorrectable[%zu][0]", i);
		ret = uint_of(k, key, json_object_array_get_idx(r, 0), 0, nsze - 1, &slba);
		if (ret)
			return ret;
		snprintf(key, sizeof(key), "uncorrectable[%zu][1]", i);
		ret = uint_of(k, key, json_object_array_get_idx(r, 1), 1, nsze - slba, &nlb);
		if (ret)
			return ret;
		snprintf(key, sizeof(key), "uncorrectable[%zu]", i);
		if (i && slba < prev_end)
			return bad(k, key, "starts at %" PRIu64 ", inside or before the range "
				   "before it (sorted, disjoint ranges expected)", slba);
		prev_end = slba + nlb;
	}
	return 0;
}

/* A zoned namespace's geometry: whole zones of at most the namespace, cap <= size */
static int check_zoned(struct chk *k, json_object *z, uint64_t nsze)
{
	static const char *const keys[] = { "zone_size", "zone_cap", "max_open", "max_active",
		"zasl", "zdes", "cross_read", NULL };
	uint64_t zsze, zcap, mor, mar, v;
	json_object *b;
	int ret;

	if (!json_object_is_type(z, json_type_object))
		return bad(k, "zoned", "expected object");
	if ((ret = only_keys(k, z, keys)) ||
	    (ret = want_uint(k, z, "zone_size", 1, nsze, &zsze)) ||
	    (ret = want_uint(k, z, "zone_cap", 1, zsze, &zcap)) ||
	    (ret = want_uint(k, z, "max_open", 0, UINT32_MAX, &mor)) ||
	    (ret = want_uint(k, z, "max_active", 0, UINT32_MAX, &mar)) ||
	    (ret = want_uint(k, z, "zasl", 0, 255, &v)) ||
	    (ret = want_uint(k, z, "zdes", 0, 255, &v)) ||
	    (ret = want(k, z, "cross_read", json_type_boolean, &b)))
		return ret;
	if (nsze % zsze)
		return bad(k, "zoned.zone_size", "%" PRIu64 " does not divide nsze %" PRIu64,
			   zsze, nsze);
	if (mar && mor > mar)
		return bad(k, "zoned.max_open", "%" PRIu64 " is more than max_active %" PRIu64,
			   mor, mar);
	return 0;
}

/* A placement handle list: 1 to 128 distinct reclaim unit handles */
static int check_phndl(struct chk *k, json_object *l)
{
	bool seen[128] = { false };	/* UCMD_FDP_MAX_RUH */
	size_t n;

	if (!json_object_is_type(l, json_type_array) || !(n = json_object_array_length(l)) ||
	    n > 128)
		return bad(k, "phndl", "expected an array of 1 to 128 handles");
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(l, i);
		int64_t h = json_object_get_int64(e);

		if (!json_object_is_type(e, json_type_int) || h < 0 || h >= 128 || seen[h])
			return bad(k, "phndl", "entry %zu is no handle below 128 or repeats one", i);
		seen[h] = true;
	}
	return 0;
}

/* attached_to: distinct controller numbers 1..nc, some but not all of them, of an attached one */
static int check_attached_to(struct chk *k, json_object *l, bool attached, uint64_t nc)
{
	size_t n = json_object_array_length(l);
	bool seen[UCMD_CTRL_MAX_CONTROLLERS + 1] = { false };

	if (!json_object_is_type(l, json_type_array) || !attached || !n || n >= nc)
		return bad(k, "attached_to", "expected 1 to %llu controller numbers of an attached "
			   "namespace", (unsigned long long)(nc - 1));
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(l, i);
		int64_t x = json_object_get_int64(e);

		if (!json_object_is_type(e, json_type_int) || x < 1 || (uint64_t)x > nc || seen[x])
			return bad(k, "attached_to", "entry %zu is no controller 1..%llu or repeats one",
				   i, (unsigned long long)nc);
		seen[x] = true;
	}
	return 0;
}

static int check_ns(struct chk *k, json_object *o, uint32_t *nsid_out, const bool *seen,
		    uint64_t nc)
{
	static const char *const keys[] = { "nsid", "nsze", "lbaf", "extended", "dps", "attached",
		"attached_to", "store", "path", "uuid", "uncorrectable", "zoned", "phndl", "lbstm", NULL };
	json_object *v, *u;
	const char *store, *path;
	uint64_t nsid, nsze, lbaf;
	bool ext;
	int ret;

	if ((ret = only_keys(k, o, keys)) ||
	    (ret = want_uint(k, o, "nsid", 1, UCMD_MAX_NS, &nsid)))
		return ret;
	if (seen[nsid])
		return bad(k, "nsid", "%" PRIu64 " appears twice", nsid);
	if ((ret = want_uint(k, o, "nsze", 1, MAX_NSZE, &nsze)) ||
	    (ret = want_uint(k, o, "lbaf", 0, UCMD_NR_LBAF - 1, &lbaf)) ||
	    (ret = want(k, o, "extended", json_type_boolean, &v)))
		return ret;
	ext = json_object_get_boolean(v);
	if (ext && !ctrl_lbaf_ms((uint8_t)lbaf))
		return bad(k, "extended", "true, but lbaf %" PRIu64 " has no metadata", lbaf);
	/* protection (absent: none): a type 1-3, maybe first, in metadata that holds its tuple */
	if (json_object_object_get_ex(o, "dps", &v)) {
		uint64_t dps;

		if ((ret = want_uint(k, o, "dps", 1, NVME_NS_DPS_PI_FIRST | NVME_NS_DPS_PI_TYPE3, &dps)))
			return ret;
		if (!(dps & NVME_NS_DPS_PI_MASK) || (dps & NVME_NS_DPS_PI_MASK) > NVME_NS_DPS_PI_TYPE3 ||
		    (dps & ~(uint64_t)(NVME_NS_DPS_PI_MASK | NVME_NS_DPS_PI_FIRST)))
			return bad(k, "dps", "%" PRIu64 " is no PI type 1-3 with PI first", dps);
		if (!ctrl_lbaf_pi_fits((uint8_t)lbaf))
			return bad(k, "dps", "protection, but lbaf %" PRIu64 " has no room for it", lbaf);
	}
	/* the storage tag mask (absent: 0): only over the format's storage tag bits */
	if (json_object_object_get_ex(o, "lbstm", &v)) {
		uint64_t lbstm, sts = ctrl_lbaf_sts((uint8_t)lbaf);

		if ((ret = want_uint(k, o, "lbstm", 1, sts ? (1ull << sts) - 1 : 0, &lbstm)))
			return ret;
	}
	if ((ret = want(k, o, "attached", json_type_boolean, &v)) ||
	    (ret = want_str(k, o, "store", 0, &store)) ||
	    (ret = want_hex(k, o, "uuid", 32)) ||
	    (ret = want(k, o, "uncorrectable", json_type_array, &u)) ||
	    (ret = check_ranges(k, u, nsze)))
		return ret;
	if (strcmp(store, "file") && strcmp(store, "ram") && strcmp(store, "device"))
		return bad(k, "store", "\"%s\" is none of file, ram, device", store);
	if (json_object_object_get_ex(o, "path", &v) &&
	    (ret = want_str(k, o, "path", PATH_MAX - 1, &path)))
		return ret;
	if (!strcmp(store, "device") && !json_object_object_get_ex(o, "path", &v))
		return bad(k, "path", "missing (a device namespace needs one)");
	if (json_object_object_get_ex(o, "zoned", &v) && (ret = check_zoned(k, v, nsze)))
		return ret;
	if (json_object_object_get_ex(o, "phndl", &v) && (ret = check_phndl(k, v)))
		return ret;
	if (json_object_object_get_ex(o, "attached_to", &u) &&
	    (json_object_object_get_ex(o, "attached", &v),
	     (ret = check_attached_to(k, u, json_object_get_boolean(v), nc))))
		return ret;
	*nsid_out = (uint32_t)nsid;
	return 0;
}

/* Controller 2..nc's error count and error log, each as controller 1's */
static int check_sib_errors(struct chk *k, json_object *e)
{
	static const char *const keys[] = { "error_count", "error_log", NULL };
	json_object *log;
	uint64_t count;
	int ret;

	if ((ret = only_keys(k, e, keys)) ||
	    (ret = want_uint(k, e, "error_count", 0, UINT64_MAX, &count)) ||
	    (ret = want(k, e, "error_log", json_type_array, &log)))
		return ret;
	return check_errlog(k, log, count);
}

static int check_sib_smart(struct chk *k, json_object *s)
{
	return check_smart_keys(k, s, false);
}

/*
 * o[key]: one object for each of controllers 2..nc, each checked by one as
 * controller 1's own; absent is an error only when required (files from
 * before a member's record have none).
 */
static int check_members(struct chk *k, json_object *o, const char *key, uint64_t nc,
			 bool required, int (*one)(struct chk *, json_object *))
{
	json_object *a;
	int ret;

	strcpy(k->where, "subsystem.");
	if (!required && !json_object_object_get_ex(o, key, NULL))
		return 0;
	if ((ret = want(k, o, key, json_type_array, &a)))
		return ret;
	if (json_object_array_length(a) != nc - 1)
		return bad(k, key, "%zu for controllers 2..%llu", json_object_array_length(a),
			   (unsigned long long)nc);
	for (size_t i = 0; i < nc - 1; i++) {
		json_object *e = json_object_array_get_idx(a, i);

		snprintf(k->where, sizeof(k->where), "subsystem.%s[%zu].", key, i);
		if (!json_object_is_type(e, json_type_object))
			return bad(k, "", "expected object");
		if ((ret = one(k, e)))
			return ret;
	}
	return 0;
}

/*
 * A subsystem of nc controllers: an ANA state each, the change count,
 * 2..nc's saved features and (absent in a file from before them) SMART
 * counters and error logs.
 */
static int check_subsys(struct chk *k, json_object *o, uint64_t nc)
{
	static const char *const keys[] = { "ana_states", "ana_chgcnt", "saved_features",
					    "smart", "errors", NULL };
	json_object *a;
	uint64_t v;
	int ret;

	strcpy(k->where, "subsystem.");
	if (!json_object_is_type(o, json_type_object))
		return bad(k, "", "expected object");
	if ((ret = only_keys(k, o, keys)) ||
	    (ret = want_uint(k, o, "ana_chgcnt", 0, UINT64_MAX, &v)) ||
	    (ret = want(k, o, "ana_states", json_type_array, &a)))
		return ret;
	if (json_object_array_length(a) != nc)
		return bad(k, "ana_states", "%zu states for %llu controllers",
			   json_object_array_length(a), (unsigned long long)nc);
	for (size_t i = 0; i < nc; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		int64_t st = json_object_get_int64(e);

		if (!json_object_is_type(e, json_type_int) ||
		    (st != NVME_ANA_STATE_OPTIMIZED && st != NVME_ANA_STATE_NONOPTIMIZED &&
		     st != NVME_ANA_STATE_INACCESSIBLE && st != NVME_ANA_STATE_PERSISTENT_LOSS &&
		     st != NVME_ANA_STATE_CHANGE))
			return bad(k, "ana_states", "entry %zu is no ANA state", i);
	}
	if ((ret = check_members(k, o, "saved_features", nc, true, check_features)) ||
	    (ret = check_members(k, o, "smart", nc, false, check_sib_smart)) ||
	    (ret = check_members(k, o, "errors", nc, false, check_sib_errors)))
		return ret;
	k->where[0] = 0;
	return 0;
}

/* Identity from the caller: what the loader would refuse must not be saved */
int ctrl_state_check_identity(struct ucmd_ctrl *c)
{
	const struct { const char *name, *val; size_t max; } f[] = {
		{ "serial", c->serial, SN_LEN },
		{ "model", c->model, MN_LEN },
		{ "firmware", c->firmware, FR_LEN },
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		size_t len = strlen(f[i].val);

		for (const char *p = f[i].val; *p; p++)
			if (*p < 0x20 || *p > 0x7e)
				len = SIZE_MAX;
		if (len < 1 || len > f[i].max) {
			ctrl_ctrl_why(c, 0, "%s/%s: must be 1..%zu printable ASCII characters "
					 "(the Identify field)", c->dir, f[i].name, f[i].max);
			return -EINVAL;
		}
	}
	return 0;
}

uint32_t ctrl_state_crc(json_object *root)
{
	const char *s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE);

	return crc32c(0, s, strlen(s));
}

/* Version 2 carries a checksum over its canonical text; version 1 has none. */
static int check_crc(struct chk *k, json_object *root, uint64_t version)
{
	json_object *v;
	uint32_t want, got;
	int ret;

	if (version < 2)
		return 0;
	ret = want_hex(k, root, "crc32c", 8);
	if (ret)
		return ret;
	json_object_object_get_ex(root, "crc32c", &v);
	want = (uint32_t)strtoul(json_object_get_string(v), NULL, 16);
	json_object_object_del(root, "crc32c");
	got = ctrl_state_crc(root);
	if (got != want)
		return bad(k, "crc32c", "the file says %08x, its content gives %08x "
			   "(damaged, or edited by hand)", want, got);
	return 0;
}

int ctrl_state_check(struct ucmd_ctrl *c, json_object *root)
{
	static const char *const keys_v1[] = { "version", "serial", "model", "firmware", "clean",
		"saved_features", "smart", "namespaces", NULL };
	static const char *const keys_v2[] = { "version", "generation", "crc32c", "serial",
		"model", "firmware", "clean", "saved_features", "smart", "namespaces", NULL };
	static const char *const keys_v3[] = { "version", "generation", "crc32c", "serial",
		"model", "firmware", "clean", "saved_features", "smart", "namespaces", "subnqn",
		"boot_id", "current_features", "error_log", "sanitize", "self_test", "self_test_run",
		"fw_slots", "fdp", "controllers", "subsystem", NULL };
	struct chk k = { .c = c };
	bool seen[UCMD_MAX_NS + 1] = { false };
	json_object *o, *v;
	uint64_t version, gen = 0, nc;
	size_t n = 0;
	int ret;

	if (!json_object_is_type(root, json_type_object)) {
		ctrl_ctrl_why(c, 0, "%s/" STATE_FILE ": not a JSON object", c->dir);
		return -EINVAL;
	}
	if ((ret = want_uint(&k, root, "version", 1, 4, &version)) ||
	    (ret = only_keys(&k, root, version == 1 ? keys_v1 : version == 2 ? keys_v2 : keys_v3)) ||
	    (version >= 2 && (ret = want_uint(&k, root, "generation", 0, UINT64_MAX - 1, &gen))) ||
	    (ret = want_ascii(&k, root, "serial", SN_LEN)) ||
	    (ret = want_ascii(&k, root, "model", MN_LEN)) ||
	    (ret = want_ascii(&k, root, "firmware", FR_LEN)) ||
	    (ret = want(&k, root, "clean", json_type_boolean, &o)) ||
	    (ret = want(&k, root, "saved_features", json_type_object, &o)))
		return ret;
	strcpy(k.where, "saved_features.");
	if ((ret = check_features(&k, o)))
		return ret;
	k.where[0] = 0;
	if ((ret = want(&k, root, "smart", json_type_object, &o)))
		return ret;
	strcpy(k.where, "smart.");
	if ((ret = check_smart(&k, o)))
		return ret;
	k.where[0] = 0;
	if ((ret = want(&k, root, "namespaces", json_type_array, &o)))
		return ret;
	n = json_object_array_length(o);
	/* the namespaces' attachments name controllers: how many (checked below) */
	nc = json_object_object_get_ex(root, "controllers", &v) ? json_object_get_uint64(v) : 1;
	if (nc < 1 || nc > UCMD_CTRL_MAX_CONTROLLERS)
		nc = 1;
	if (n > UCMD_MAX_NS)
		return bad(&k, "namespaces", "%zu namespaces, more than the %u a controller has",
			   n, UCMD_MAX_NS);
	for (size_t i = 0; i < n; i++) {
		json_object *ns = json_object_array_get_idx(o, i);

		snprintf(k.where, sizeof(k.where), "namespaces[%zu]", i);
		if (!json_object_is_type(ns, json_type_object))
			return bad(&k, "", "expected object, found %s",
				   json_type_to_name(json_object_get_type(ns)));
		strcat(k.where, ".");
		uint32_t nsid = 0;	/* set when check_ns succeeds */

		if ((ret = check_ns(&k, ns, &nsid, seen, nc)))
			return ret;
		seen[nsid] = true;
	}
	k.where[0] = 0;
	if (version >= 3 && (ret = check_v3(&k, root)))
		return ret;
	if (json_object_object_get_ex(root, "fdp", &o)) {
		char why[160];
		json_object *nss = NULL;

		json_object_object_get_ex(root, "namespaces", &nss);
		if ((ret = ctrl_fdp_check_json(o, nss, why, sizeof(why))))
			return bad(&k, "fdp", "%s", why);
	}
	/* the subsystem's controllers: absent in a directory of one */
	if (json_object_object_get_ex(root, "controllers", &o)) {
		if ((ret = want_uint(&k, root, "controllers", 1, UCMD_CTRL_MAX_CONTROLLERS, &nc)))
			return ret;
	}
	/* a subsystem of several has its own state; one of one has none */
	if (json_object_object_get_ex(root, "subsystem", &o)) {
		if (nc < 2)
			return bad(&k, "subsystem", "present for a subsystem of one controller");
		if ((ret = check_subsys(&k, o, nc)))
			return ret;
	}
	if ((ret = check_crc(&k, root, version)))
		return ret;
	c->journal_gen = gen;
	return 0;
}
