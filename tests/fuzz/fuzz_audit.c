/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the audit module's JSON-lines writer
 * (src/security/audit.c) on arbitrary decisions. A module of ours sits
 * before "audit" on the hook chain and, for every input, notes a rule
 * string, a command description and an audit flag of the input's choosing
 * and returns the input's verdict; the chain then hands the decision to the
 * audit module as it would for a real command. Descriptions are hostile:
 * device names filling all 32 bytes without a terminator, or holding
 * control characters and bytes that are not UTF-8; verbs and directions
 * out of range; any range, uid, gid, pid and verdict.
 *
 * Each decision that must be recorded (a denial, or an allow a rule wants
 * audited) must leave exactly one line that is one JSON object, valid
 * strict, UTF-8 JSON, with the fields of that decision; any other decision
 * must leave nothing.
 *
 * Input: a 78-byte header (flags, verdict, credentials, description
 * numbers), 32 bytes of device name, then the rule text.
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "security/desc.h"
#include "security/hooks.h"
#include "security/security.h"
#include "ucmd/ucmd.h"

#define HDR	78

static struct ucmd_engine *engine;
static int out_fd = -1;

/* What the fuzz module notes and returns for the current input */
static struct {
	int ret;
	bool audit, with_desc;
	char rule[256];
	struct ucmd_cmd_desc desc;
} cur;

static void note(void)
{
	security_note(cur.rule, cur.audit, cur.with_desc ? &cur.desc : NULL);
}

static int fz_sqpoll(void *priv, const struct ucmd_cred *cred)
{
	(void)priv;
	(void)cred;
	note();
	return cur.ret;
}

static int fz_override(void *priv, const struct ucmd_cred *c, const struct ucmd_cred *n)
{
	(void)priv;
	(void)c;
	(void)n;
	note();
	return cur.ret;
}

static const struct ucmd_security_ops fz_ops = {
	.name = "fuzz",
	.uring_sqpoll = fz_sqpoll,
	.uring_override_creds = fz_override,
};

static void setup(void)
{
	struct ucmd_audit *a;

	engine = ucmd_engine_new();
	out_fd = memfd_create("audit", MFD_CLOEXEC);
	if (!engine || out_fd < 0 || security_register(engine, &fz_ops, NULL))
		abort();
	a = ucmd_audit_open_fd(out_fd, false);
	if (!a || ucmd_audit_register(engine, a))
		abort();
	/* a lives as long as the engine: the process */
}

static json_object *field(json_object *o, const char *k)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, k, &v))
		abort();
	return v;
}

static void want_u64(json_object *o, const char *k, uint64_t v)
{
	json_object *f = field(o, k);

	if (!json_object_is_type(f, json_type_int) || json_object_get_uint64(f) != v)
		abort();
}

static void want_i64(json_object *o, const char *k, int64_t v)
{
	json_object *f = field(o, k);

	if (!json_object_is_type(f, json_type_int) || json_object_get_int64(f) != v)
		abort();
}

static void want_str(json_object *o, const char *k, const char *v)
{
	json_object *f = field(o, k);

	if (!json_object_is_type(f, json_type_string) || strcmp(json_object_get_string(f), v))
		abort();
}

static void want_bool(json_object *o, const char *k, bool v)
{
	json_object *f = field(o, k);

	if (!json_object_is_type(f, json_type_boolean) || json_object_get_boolean(f) != v)
		abort();
}

/*
 * Whether s renders raw: the same ASCII bytes in the same order (bytes that
 * are not valid UTF-8 may be replaced, valid characters kept; the parser
 * has already checked that s is UTF-8).
 */
static bool same_text(const char *s, const char *raw, size_t rawlen)
{
	size_t i = 0;

	for (;; s++) {
		while (i < rawlen && (unsigned char)raw[i] >= 0x80)
			i++;
		while (*s && (unsigned char)*s >= 0x80)
			s++;
		if (!*s || i == rawlen)
			return !*s && i == rawlen;
		if (*s != raw[i++])
			return false;
	}
}

static void check_record(const char *line, size_t len, bool override,
			 const struct ucmd_cred *cred, const struct ucmd_cred *ncred)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *o;

	if (!tok)
		abort();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, line, (int)len);
	/* one complete object, nothing after it */
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len || !json_object_is_type(o, json_type_object))
		abort();
	json_tokener_free(tok);

	field(o, "time");
	field(o, "time_ns");
	want_str(o, "hook", override ? "uring_override_creds" : "uring_sqpoll");
	want_u64(o, "pid", (uint64_t)cred->pid);
	want_u64(o, "uid", cred->euid);
	want_u64(o, "gid", cred->egid);
	want_bool(o, "cap_sys_admin", cred->cap_sys_admin);
	if (override) {
		want_u64(o, "target_uid", ncred->euid);
		want_u64(o, "target_gid", ncred->egid);
	}
	want_str(o, "decision", cur.ret ? "deny" : "allow");
	if (cur.ret)
		want_i64(o, "errno", -(int64_t)cur.ret);
	want_str(o, "module", "fuzz");
	/* the chain keeps the rule truncated to UCMD_SECURITY_RULE_MAX - 1 bytes */
	size_t rl = strnlen(cur.rule, UCMD_SECURITY_RULE_MAX - 1);
	if (!json_object_is_type(field(o, "rule"), json_type_string) ||
	    !same_text(json_object_get_string(field(o, "rule")), cur.rule, rl))
		abort();
	if (cur.with_desc) {
		const struct ucmd_cmd_desc *d = &cur.desc;

		if (!json_object_is_type(field(o, "device"), json_type_string) ||
		    !same_text(json_object_get_string(field(o, "device")), d->device,
			       strnlen(d->device, sizeof(d->device))))
			abort();
		want_u64(o, "cmd_op", d->cmd_op);
		want_u64(o, "opcode", d->opcode);
		want_str(o, "verb", desc_verb_name(d->verb));
		want_str(o, "dir", desc_dir_name(d->dir));
		want_bool(o, "admin_cmd", d->admin);
		want_u64(o, "nsid", d->nsid);
		want_bool(o, "destructive", d->destructive);
		if (d->has_range || d->length) {
			json_object *r = field(o, "range");

			want_u64(r, "offset", d->offset);
			want_u64(r, "length", d->length);
			if (d->has_range) {
				want_u64(r, "slba", d->slba);
				want_u64(r, "nlb", d->nlb);
			}
		}
	}
	json_object_put(o);
}

static uint64_t rd(const uint8_t **p, unsigned n)
{
	uint64_t v = 0;

	memcpy(&v, *p, n);
	*p += n;
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	struct ucmd_cred cred, ncred;
	const uint8_t *p = in;
	bool override;
	uint16_t flags;

	if (!engine)
		setup();
	if (size < HDR + 32)
		return 0;
	memset(&cur, 0, sizeof(cur));
	memset(&cred, 0, sizeof(cred));
	memset(&ncred, 0, sizeof(ncred));
	flags = (uint16_t)rd(&p, 2);
	cur.ret = (int)(uint32_t)rd(&p, 4);
	override = flags & 1;
	cur.audit = flags & 2;
	cur.with_desc = flags & 4;
	cred.cap_sys_admin = flags & 8;
	cur.desc.admin = flags & 16;
	cur.desc.has_range = flags & 32;
	cur.desc.destructive = flags & 64;
	cur.desc.has_select = flags & 128;
	cur.desc.intrusive = flags & 256;
	if (!(flags & 512))	/* mostly errno-like verdicts, sometimes any int */
		cur.ret = cur.ret > 0 ? -(cur.ret % 4096) : cur.ret % 4096;
	cred.pid = (pid_t)rd(&p, 4);
	cred.uid = cred.euid = (uid_t)rd(&p, 4);
	cred.gid = cred.egid = (gid_t)rd(&p, 4);
	ncred.uid = ncred.euid = (uid_t)rd(&p, 4);
	ncred.gid = ncred.egid = (gid_t)rd(&p, 4);
	cur.desc.cmd_op = (uint32_t)rd(&p, 4);
	cur.desc.opcode = (uint8_t)rd(&p, 1);
	cur.desc.verb = (enum ucmd_verb)(int)(uint32_t)rd(&p, 4);
	cur.desc.dir = (enum ucmd_dir)(int)(uint32_t)rd(&p, 4);
	cur.desc.nsid = (uint32_t)rd(&p, 4);
	cur.desc.select = (uint32_t)rd(&p, 3);
	cur.desc.offset = rd(&p, 8);
	cur.desc.length = rd(&p, 8);
	cur.desc.slba = rd(&p, 8);
	cur.desc.nlb = rd(&p, 8);
	/* all 32 bytes: a name with no terminator is fair game */
	memcpy(cur.desc.device, p, sizeof(cur.desc.device));
	p += sizeof(cur.desc.device);
	size -= (size_t)(p - in);
	memcpy(cur.rule, p, size < sizeof(cur.rule) - 1 ? size : sizeof(cur.rule) - 1);

	if (override)
		security_uring_override_creds(engine, &cred, &ncred);
	else
		security_uring_sqpoll(engine, &cred);

	struct stat st;
	if (fstat(out_fd, &st))
		abort();
	size_t len = (size_t)st.st_size;
	if (!cur.ret && !cur.audit) {
		if (len)
			abort();	/* a quiet allow leaves nothing */
		return 0;
	}
	char *buf = malloc(len + 1);
	if (!buf || pread(out_fd, buf, len, 0) != (ssize_t)len)
		abort();
	buf[len] = 0;
	/* exactly one line */
	if (!len || buf[len - 1] != '\n' || memchr(buf, '\n', len - 1))
		abort();
	check_record(buf, len - 1, override, &cred, &ncred);
	free(buf);
	if (ftruncate(out_fd, 0) || lseek(out_fd, 0, SEEK_SET))
		abort();
	return 0;
}
