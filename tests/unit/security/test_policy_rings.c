/* SPDX-License-Identifier: MIT */
/*
 * Callers x commands x policies through real rings: each row runs in a
 * forked child that takes the caller's identity (setgroups/setresgid/
 * setresuid, so uid 65534 has no CAP_SYS_ADMIN), builds an engine with the
 * test provider, the null device and the security modules, and compares
 * every completion with the expected one. Children exit with their count of
 * mismatches.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/null.h"
#include "secutil.h"
#include "security/security.h"

enum caller { ROOT, NOBODY, NOBODY_DISK };

struct cmd_case {
	const char *what;
	const char *dev;	/* "ng9n1" (I/O), "nvme9" (admin), "null" */
	uint32_t cmd_op;
	uint8_t opcode, cns;
};

static const struct cmd_case cmds[] = {
	{ "read", "ng9n1", TP_IO, TP_READ, 0 },
	{ "write", "ng9n1", TP_IO, TP_WRITE, 0 },
	{ "flush", "ng9n1", TP_IO, TP_FLUSH, 0 },
	{ "io-vendor", "ng9n1", TP_IO, TP_VENDOR, 0 },
	{ "identify-ctrl", "nvme9", TP_ADMIN, TP_IDENTIFY, 1 },
	{ "identify-nslist", "nvme9", TP_ADMIN, TP_IDENTIFY, 2 },
	{ "format", "nvme9", TP_ADMIN, TP_FORMAT, 0 },
	{ "null-cmd", "null", 0, 0, 0 },
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

/* "grant or refuse single verbs": on top of Linux's rules */
static const char custom[] =
	"[policy]\n"
	"inherit = default\n"
	"[rule nobody-no-flush]\n"
	"uid = 65534\n"
	"verb = flush\n"
	"action = deny\n"
	"[rule disk-may-format]\n"
	"gid = 6\n"
	"device = nvme9\n"
	"verb = format\n"
	"action = allow\n";

/* Only reads, only for group 6, only the first 1 MiB */
static const char readonly_disk[] =
	"[rule]\n"
	"gid = 6\n"
	"device = ng9n1\n"
	"verb = read\n"
	"bytes = 0+1M\n"
	"action = allow\n";

struct row {
	const char *policy;	/* NULL: the default policy */
	enum caller who;
	int open_flags;
	int want[NCMDS];
};

#define A 0
#define D (-EACCES)
static const struct row rows[] = {
	/* Linux's rules: CAP_SYS_ADMIN may do anything */
	{ NULL, ROOT, O_RDONLY, { A, A, A, A, A, A, A, A } },
	/* unprivileged: reads, flush, the identify pages Linux allows */
	{ NULL, NOBODY, O_RDONLY, { A, D, A, D, A, D, D, A } },
	/* writes need the file open for write */
	{ NULL, NOBODY, O_RDWR, { A, A, A, D, A, D, D, A } },
	{ custom, NOBODY, O_RDWR, { A, A, D, D, A, D, D, A } },
	{ custom, NOBODY_DISK, O_RDWR, { A, A, D, D, A, D, A, A } },
	{ custom, ROOT, O_RDWR, { A, A, A, A, A, A, A, A } },
	{ readonly_disk, NOBODY_DISK, O_RDWR, { A, D, D, D, D, D, D, D } },
	{ readonly_disk, NOBODY, O_RDWR, { D, D, D, D, D, D, D, D } },
};
#undef A
#undef D

static int become(enum caller who)
{
	gid_t disk = 6;

	if (who == ROOT)
		return 0;
	if (setgroups(who == NOBODY_DISK ? 1 : 0, &disk) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return -1;
	return 0;
}

static int run_row(const struct row *r, const char *policy_path)
{
	struct ucmd_engine *e;
	struct ucmd_ring ring;
	char err[256];
	int bad = 0;

	if (become(r->who)) {
		fprintf(stderr, "cannot change identity: %s\n", strerror(errno));
		return 100;
	}
	e = ucmd_engine_new();
	tp_register(e, "ng9n1");
	tp_register(e, "nvme9");
	null_register(e);
	if (ucmd_security_setup(e, policy_path, NULL, err, sizeof(err))) {
		fprintf(stderr, "setup: %s\n", err);
		return 100;
	}
	sec_ring(e, &ring, 8);
	for (unsigned i = 0; i < NCMDS; i++) {
		int fd = ucmd_open(e, cmds[i].dev, r->open_flags);
		struct io_uring_sqe *sqe = tp_prep(&ring, fd, cmds[i].cmd_op, cmds[i].opcode, 0, 8);
		struct tp_cmd *c = (struct tp_cmd *)sqe->cmd;
		unsigned before = tp_nr_exec();
		int res;

		c->cns = cmds[i].cns;
		res = sec_submit_one(&ring);
		if (res != r->want[i]) {
			fprintf(stderr, "uid %u: %s on %s: got %d, want %d\n", geteuid(),
				cmds[i].what, cmds[i].dev, res, r->want[i]);
			bad++;
		}
		/* a denied command never reaches the device */
		if (res == -EACCES && strcmp(cmds[i].dev, "null") && tp_nr_exec() != before)
			bad++;
		ucmd_close(e, fd);
	}
	ucmd_queue_exit(&ring);
	ucmd_security_teardown(e);
	ucmd_engine_free(e);
	return bad;
}

static void test_table(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	for (unsigned i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *path = rows[i].policy ? sec_tmpfile(rows[i].policy) : NULL;
		int status;
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0)
			_exit(run_row(&rows[i], path));
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail_msg("row %u: %d mismatches", i, WEXITSTATUS(status));
		if (path)
			unlink(path);
	}
}

/*
 * Personalities: a command submitted with a personality is judged as that
 * identity, and override-creds rules decide who may use one.
 */
static int personality_child(const char *policy_path)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring ring;
	struct io_uring_sqe *sqe;
	char err[256];
	int bad = 0, fd, id, res;

	tp_register(e, "ng9n1");
	if (ucmd_security_setup(e, policy_path, NULL, err, sizeof(err)))
		return 100;
	sec_ring(e, &ring, 8);	/* owned by root */
	fd = ucmd_open(e, "ng9n1", O_RDONLY);
	/* this thread only (the raw syscall) becomes uid 65534 for a moment */
	if (syscall(SYS_setresuid, -1, 65534, -1))
		return 100;
	id = ucmd_register_personality(&ring);
	if (syscall(SYS_setresuid, -1, 0, -1) || id <= 0)
		return 100;
	/* root writes on a read-only file: CAP_SYS_ADMIN allows it */
	tp_prep(&ring, fd, TP_IO, TP_WRITE, 0, 1);
	res = sec_submit_one(&ring);
	bad += res != 0;
	/* the same as uid 65534: denied, as Linux would deny that user */
	sqe = tp_prep(&ring, fd, TP_IO, TP_WRITE, 0, 1);
	sqe->personality = (uint16_t)id;
	res = sec_submit_one(&ring);
	bad += res != (policy_path ? -EACCES : -EACCES);
	/* a read as uid 65534 is fine, unless the policy refuses the personality */
	sqe = tp_prep(&ring, fd, TP_IO, TP_READ, 0, 1);
	sqe->personality = (uint16_t)id;
	res = sec_submit_one(&ring);
	bad += res != (policy_path ? -EACCES : 0);
	if (bad)
		fprintf(stderr, "personality (%s): %d mismatches\n", policy_path ? "custom" : "default",
			bad);
	ucmd_queue_exit(&ring);
	ucmd_security_teardown(e);
	ucmd_engine_free(e);
	return bad;
}

static void test_personality(void **state)
{
	const char *path = sec_tmpfile("[policy]\ninherit = default\n"
				       "[rule]\nhook = override-creds\ntarget-uid = 65534\n"
				       "action = deny\n");
	const char *paths[2] = { NULL, path };

	(void)state;
	if (geteuid() != 0)
		skip();
	for (int i = 0; i < 2; i++) {
		int status;
		pid_t pid = fork();
		if (pid == 0)
			_exit(personality_child(paths[i]));
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	unlink(path);
}

/* Who may start a polling thread: root yes, uid 65534 no, by policy. */
static int sqpoll_child(const char *policy_path, enum caller who, int want)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring ring;
	struct io_uring_params p;
	char err[256];
	int ret;

	if (ucmd_security_setup(e, policy_path, NULL, err, sizeof(err)) || become(who))
		return 100;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL;
	ret = ucmd_queue_init_engine(e, 8, &ring, &p);
	if (!ret)
		ucmd_queue_exit(&ring);
	ucmd_security_teardown(e);
	ucmd_engine_free(e);
	if (ret != want)
		fprintf(stderr, "sqpoll as %d: got %d want %d\n", who, ret, want);
	return ret != want;
}

static void test_sqpoll(void **state)
{
	const char *path = sec_tmpfile("[policy]\ninherit = default\n"
				       "[rule]\nhook = sqpoll\ncap-sys-admin = no\naction = deny\n");
	struct { const char *p; enum caller who; int want; } cases[] = {
		{ NULL, NOBODY, 0 }, { path, ROOT, 0 }, { path, NOBODY, -EACCES },
	};

	(void)state;
	if (geteuid() != 0)
		skip();
	for (unsigned i = 0; i < 3; i++) {
		int status;
		pid_t pid = fork();
		if (pid == 0)
			_exit(sqpoll_child(cases[i].p, cases[i].who, cases[i].want));
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_personality),
		cmocka_unit_test(test_sqpoll),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
