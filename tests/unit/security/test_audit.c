/* SPDX-License-Identifier: MIT */
/*
 * The audit trail: a denied command completes with -EACCES, leaves the
 * device untouched and leaves exactly one record; allowed commands leave
 * one only where a rule asks; a denial by another module is recorded with
 * that module's name; failed writes are counted and reported, never lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/uring_cmd.h"
#include "secutil.h"
#include "security/security.h"

static const char policy[] =
	"[rule reads]\n"		/* line 1 */
	"verb = read\n"
	"action = allow\n"
	"audit = yes\n"
	"[rule flush-quietly]\n"	/* line 5 */
	"verb = flush\n"
	"action = allow\n"
	"[rule no-writes]\n"		/* line 8 */
	"verb = write\n"
	"action = deny\n";

static json_object *field(json_object *o, const char *k)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, k, &v))
		fail_msg("record lacks '%s'", k);
	return v;
}

static const char *str(json_object *o, const char *k)
{
	return json_object_get_string(field(o, k));
}

struct env {
	struct ucmd_engine *e;
	struct ucmd_ring ring;
	const char *ppath, *apath;
	int fd;
};

static void env_up(struct env *v)
{
	char err[256];

	v->ppath = sec_tmpfile(policy);
	v->apath = sec_tmpfile("");
	v->e = ucmd_engine_new();
	tp_reset();
	tp_register(v->e, "ng9n1");
	assert_int_equal(ucmd_security_setup(v->e, v->ppath, v->apath, err, sizeof(err)), 0);
	sec_ring(v->e, &v->ring, 8);
	v->fd = ucmd_open(v->e, "ng9n1", O_RDWR);
	assert_true(v->fd >= 0);
}

static void env_down(struct env *v)
{
	ucmd_queue_exit(&v->ring);
	ucmd_security_teardown(v->e);
	ucmd_engine_free(v->e);
	unlink(v->ppath);
	unlink(v->apath);
}

static void test_denied_one_record(void **state)
{
	struct env v;
	char *lines[8];
	char want[128];

	(void)state;
	env_up(&v);
	tp_prep(&v.ring, v.fd, TP_IO, TP_WRITE, 100, 8);
	assert_int_equal(sec_submit_one(&v.ring), -EACCES);
	assert_int_equal(tp_nr_exec(), 0);	/* untouched */
	assert_int_equal(sec_read_lines(v.apath, lines, 8), 1);

	json_object *o = json_tokener_parse(lines[0]);
	assert_non_null(o);
	assert_string_equal(str(o, "decision"), "deny");
	assert_int_equal(json_object_get_int(field(o, "errno")), EACCES);
	assert_string_equal(str(o, "module"), "policy");
	snprintf(want, sizeof(want), "%s:8 no-writes", v.ppath);
	assert_string_equal(str(o, "rule"), want);
	assert_string_equal(str(o, "hook"), "uring_cmd");
	assert_string_equal(str(o, "verb"), "write");
	assert_string_equal(str(o, "device"), "ng9n1");
	assert_int_equal(json_object_get_int(field(o, "pid")), getpid());
	assert_int_equal(json_object_get_int(field(o, "uid")), geteuid());
	assert_int_equal(json_object_get_int(field(o, "gid")), getegid());
	assert_int_equal(json_object_get_int(field(o, "cmd_op")), TP_IO);
	assert_int_equal(json_object_get_int(field(o, "opcode")), TP_WRITE);
	assert_int_equal(json_object_get_int(field(o, "nsid")), 1);
	json_object *r = field(o, "range");
	assert_int_equal(json_object_get_uint64(field(r, "slba")), 100);
	assert_int_equal(json_object_get_uint64(field(r, "nlb")), 8);
	assert_int_equal(json_object_get_uint64(field(r, "offset")), 100 * 512);
	assert_int_equal(json_object_get_uint64(field(r, "length")), 8 * 512);
	/* RFC 3339 with nanoseconds, UTC */
	const char *t = str(o, "time");
	assert_int_equal(strlen(t), strlen("2024-05-01T12:00:00.123456789Z"));
	assert_int_equal(t[10], 'T');
	assert_int_equal(t[29], 'Z');
	assert_true(json_object_get_uint64(field(o, "time_ns")) > 1600000000ull * 1000000000ull);
	json_object_put(o);
	sec_free_lines(lines, 1);
	env_down(&v);
}

static void test_allowed_records_where_asked(void **state)
{
	struct env v;
	char *lines[8];
	unsigned n;

	(void)state;
	env_up(&v);
	tp_prep(&v.ring, v.fd, TP_IO, TP_FLUSH, 0, 0);
	assert_int_equal(sec_submit_one(&v.ring), 0);
	assert_int_equal(sec_read_lines(v.apath, lines, 8), 0);
	tp_prep(&v.ring, v.fd, TP_IO, TP_READ, 5, 1);
	assert_int_equal(sec_submit_one(&v.ring), 0);
	n = sec_read_lines(v.apath, lines, 8);
	assert_int_equal(n, 1);
	json_object *o = json_tokener_parse(lines[0]);
	assert_string_equal(str(o, "decision"), "allow");
	assert_string_equal(str(o, "module"), "policy");
	assert_non_null(strstr(str(o, "rule"), ":1 reads"));
	json_object_put(o);
	sec_free_lines(lines, n);
	/* the default (deny) is recorded too */
	tp_prep(&v.ring, v.fd, TP_IO, TP_VENDOR, 0, 0);
	assert_int_equal(sec_submit_one(&v.ring), -EACCES);
	n = sec_read_lines(v.apath, lines, 8);
	assert_int_equal(n, 2);
	o = json_tokener_parse(lines[1]);
	assert_non_null(strstr(str(o, "rule"), ": default"));
	assert_string_equal(str(o, "verb"), "vendor");
	json_object_put(o);
	sec_free_lines(lines, n);
	env_down(&v);
}

/* A module after the policy denies cmd_op 7: the trail names it. */
static int other_cmd(void *priv, const struct io_uring_cmd *cmd)
{
	(void)priv;
	return cmd->cmd_op == 7 ? -EPERM : 0;
}

static const struct ucmd_security_ops other = { .name = "other", .uring_cmd = other_cmd };

static void test_other_module_denial(void **state)
{
	struct env v;
	char *lines[8];
	struct io_uring_sqe *sqe;

	(void)state;
	env_up(&v);
	assert_int_equal(security_register(v.e, &other, NULL), 0);
	sqe = tp_prep(&v.ring, v.fd, TP_IO, TP_READ, 0, 1);
	sqe->cmd_op = 7;
	assert_int_equal(sec_submit_one(&v.ring), -EPERM);
	assert_int_equal(tp_nr_exec(), 0);
	/* one record: the final decision, not the policy's allow before it */
	assert_int_equal(sec_read_lines(v.apath, lines, 8), 1);
	json_object *o = json_tokener_parse(lines[0]);
	assert_string_equal(str(o, "decision"), "deny");
	assert_string_equal(str(o, "module"), "other");
	assert_string_equal(str(o, "rule"), "");
	assert_int_equal(json_object_get_int(field(o, "errno")), EPERM);
	assert_string_equal(str(o, "verb"), "read");
	json_object_put(o);
	sec_free_lines(lines, 1);
	security_unregister(v.e, "other");
	env_down(&v);
}

/* Writes that fail are counted; the next record that lands says how many. */
static void test_lost_records(void **state)
{
	const char *ppath = sec_tmpfile(policy), *apath = sec_tmpfile("");
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_policy *p;
	struct ucmd_audit *a;
	struct ucmd_ring ring;
	char err[256], *lines[8];
	int full = open("/dev/full", O_WRONLY), file = open(apath, O_WRONLY | O_APPEND);
	int fd, afd;

	(void)state;
	assert_true(full >= 0 && file >= 0);
	afd = dup(full);
	tp_reset();
	tp_register(e, "ng9n1");
	assert_int_equal(ucmd_policy_load_file(ppath, &p, err, sizeof(err)), 0);
	/* the engine's own policy module, with this policy in force */
	policy_module_set(security_engine_policy(e), p);
	a = ucmd_audit_open_fd(afd, true);
	assert_int_equal(ucmd_audit_register(e, a), 0);
	sec_ring(e, &ring, 8);
	fd = ucmd_open(e, "ng9n1", O_RDWR);
	for (int i = 0; i < 3; i++) {
		tp_prep(&ring, fd, TP_IO, TP_WRITE, (uint64_t)i, 1);
		assert_int_equal(sec_submit_one(&ring), -EACCES);
	}
	assert_int_equal(ucmd_audit_lost(a), 3);
	assert_int_equal(ucmd_audit_written(a), 0);
	/* the disk has room again */
	assert_int_equal(dup2(file, afd), afd);
	tp_prep(&ring, fd, TP_IO, TP_WRITE, 9, 1);
	assert_int_equal(sec_submit_one(&ring), -EACCES);
	assert_int_equal(ucmd_audit_lost(a), 0);
	assert_int_equal(sec_read_lines(apath, lines, 8), 1);
	json_object *o = json_tokener_parse(lines[0]);
	assert_int_equal(json_object_get_int(field(o, "lost")), 3);
	json_object_put(o);
	sec_free_lines(lines, 1);
	/* a dedicated record when nothing else comes */
	assert_int_equal(dup2(full, afd), afd);
	tp_prep(&ring, fd, TP_IO, TP_WRITE, 10, 1);
	assert_int_equal(sec_submit_one(&ring), -EACCES);
	assert_int_equal(dup2(file, afd), afd);
	assert_int_equal(ucmd_audit_flush_lost(a), 0);
	assert_int_equal(sec_read_lines(apath, lines, 8), 2);
	o = json_tokener_parse(lines[1]);
	assert_string_equal(str(o, "record"), "lost");
	assert_int_equal(json_object_get_int(field(o, "lost")), 1);
	json_object_put(o);
	sec_free_lines(lines, 2);

	ucmd_queue_exit(&ring);
	security_unregister(e, "audit");
	ucmd_engine_free(e);
	ucmd_audit_free(a);
	close(full);
	close(file);
	unlink(ppath);
	unlink(apath);
}

/*
 * A module may hand the audit writer anything: a device name filling its
 * field without a terminator, bytes that are not UTF-8, a verdict of
 * INT_MIN. The record must still be one line of strict JSON (UTF-8, as RFC
 * 8259 requires of JSON text) holding the device name's 32 bytes and no
 * more, and the verdict's errno.
 */
static struct ucmd_cmd_desc hostile_desc;
static const char hostile_rule[] = "pol\xff\xc3(icy:1 \xed\xa0\x80 caf\xc3\xa9";

static int hostile_sqpoll(void *priv, const struct ucmd_cred *cred)
{
	(void)priv;
	(void)cred;
	security_note(hostile_rule, false, &hostile_desc);
	return INT_MIN;
}

static const struct ucmd_security_ops hostile = { .name = "hostile",
						  .uring_sqpoll = hostile_sqpoll };

static void test_hostile_description(void **state)
{
	const char *apath = sec_tmpfile("");
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_audit *a = ucmd_audit_open(apath, NULL, 0);
	struct ucmd_cred cred = { .pid = 1, .euid = 65534, .egid = 65534 };
	struct json_tokener *tok = json_tokener_new();
	char *lines[8];

	(void)state;
	ucmd_desc_init(&hostile_desc, "", 0, 0);
	/* the name fills the field; the bytes after it are the next fields */
	memset(hostile_desc.device, 'n', sizeof(hostile_desc.device));
	hostile_desc.cmd_op = 0x41414141;
	hostile_desc.verb = (enum ucmd_verb)1000;
	/* an NVMe/TCP host's NQN is any bytes it sent, unterminated here */
	memset(cred.hostnqn, 0xff, sizeof(cred.hostnqn));
	snprintf(cred.hostid, sizeof(cred.hostid), "5d0a1f3e-0000-4000-8000-0000c0ffee01");
	assert_non_null(a);
	assert_int_equal(security_register(e, &hostile, NULL), 0);
	assert_int_equal(ucmd_audit_register(e, a), 0);
	assert_int_equal(security_uring_sqpoll(e, &cred), INT_MIN);
	assert_int_equal(sec_read_lines(apath, lines, 8), 1);

	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	json_object *o = json_tokener_parse_ex(tok, lines[0], (int)strlen(lines[0]));
	assert_int_equal(json_tokener_get_error(tok), json_tokener_success);
	assert_non_null(o);
	assert_int_equal(strlen(str(o, "device")), 32);
	assert_string_equal(str(o, "verb"), "unknown");
	assert_string_equal(str(o, "rule"),
			    "pol\xef\xbf\xbd\xef\xbf\xbd(icy:1 \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd caf\xc3\xa9");
	assert_int_equal(json_object_get_int64(field(o, "errno")), 2147483648ll);
	/* every byte of the field, none past it, each a replacement character */
	assert_int_equal(strlen(str(o, "hostnqn")), 3 * sizeof(cred.hostnqn));
	assert_memory_equal(str(o, "hostnqn"), "\xef\xbf\xbd", 3);
	assert_string_equal(str(o, "hostid"), "5d0a1f3e-0000-4000-8000-0000c0ffee01");
	json_object_put(o);
	json_tokener_free(tok);
	sec_free_lines(lines, 1);
	security_unregister(e, "audit");
	security_unregister(e, "hostile");
	ucmd_engine_free(e);
	ucmd_audit_free(a);
	unlink(apath);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_denied_one_record),
		cmocka_unit_test(test_allowed_records_where_asked),
		cmocka_unit_test(test_other_module_denial),
		cmocka_unit_test(test_lost_records),
		cmocka_unit_test(test_hostile_description),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
