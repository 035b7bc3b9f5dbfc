/* SPDX-License-Identifier: MIT */
/*
 * ucmdd's kept ANA states (src/server/ana_keep.c): what is saved loads
 * back; no file is no state; every way a file can be wrong is refused,
 * saying where, and leaves no state behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "server/ana_keep.h"

struct fx {
	char dir[64];
	int dfd;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/ucmd-anakeep-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->dfd = open(f->dir, O_RDONLY | O_DIRECTORY);
	assert_true(f->dfd >= 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	unlinkat(f->dfd, ANA_KEEP_FILE, 0);
	unlinkat(f->dfd, ".ucmdd-ports.json.tmp", 0);
	close(f->dfd);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void put(struct fx *f, const char *text, mode_t mode)
{
	int fd;

	unlinkat(f->dfd, ANA_KEEP_FILE, 0);
	fd = openat(f->dfd, ANA_KEEP_FILE, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void test_round_trip(void **state)
{
	struct fx *f = *state;
	uint8_t st[ANA_KEEP_MAX_PORTS][ANA_KEEP_GRPS], back[ANA_KEEP_MAX_PORTS][ANA_KEEP_GRPS];
	char err[256] = "";

	/* no file: no state */
	memset(back, 0xee, sizeof(back));
	assert_int_equal(ana_keep_load(f->dfd, back, err, sizeof(err)), 0);
	for (unsigned p = 0; p < ANA_KEEP_MAX_PORTS; p++)
		assert_int_equal(back[p][0], 0);
	memset(st, 0, sizeof(st));
	st[0][0] = 1;
	st[1][0] = 3;
	st[2][0] = 15;
	assert_int_equal(ana_keep_save(f->dfd, st, 3), 0);
	assert_int_equal(ana_keep_load(f->dfd, back, err, sizeof(err)), 0);
	assert_memory_equal(st, back, sizeof(st));
	/* the file is the daemon's alone */
	struct stat sb;
	assert_int_equal(fstatat(f->dfd, ANA_KEEP_FILE, &sb, 0), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	/* a change replaces it whole */
	st[1][0] = 2;
	assert_int_equal(ana_keep_save(f->dfd, st, 2), 0);
	assert_int_equal(ana_keep_load(f->dfd, back, err, sizeof(err)), 0);
	assert_int_equal(back[1][0], 2);
	assert_int_equal(back[2][0], 0);
	assert_int_equal(faccessat(f->dfd, ".ucmdd-ports.json.tmp", F_OK, 0), -1);
}

static void test_bad_files(void **state)
{
	struct fx *f = *state;
	static const struct { const char *text, *why; } bad[] = {
		{ "{", "not JSON" },
		{ "[]", "not a JSON object" },
		{ "{\"version\":2,\"ports\":[]}", "version: missing or not 1" },
		{ "{\"ports\":[]}", "version: missing or not 1" },
		{ "{\"version\":1}", "ports: missing or not an array" },
		{ "{\"version\":1,\"ports\":[],\"x\":0}", "x: unknown member" },
		{ "{\"version\":1,\"ports\":[7]}", "ports[0]: not an object" },
		{ "{\"version\":1,\"ports\":[{\"port\":0,\"ana_states\":[1]}]}",
		  "ports[0].port: missing or not 1..16" },
		{ "{\"version\":1,\"ports\":[{\"port\":17,\"ana_states\":[1]}]}",
		  "ports[0].port: missing or not 1..16" },
		{ "{\"version\":1,\"ports\":[{\"port\":\"1\",\"ana_states\":[1]}]}",
		  "ports[0].port: missing or not 1..16" },
		{ "{\"version\":1,\"ports\":[{\"port\":1,\"ana_states\":[1]},"
		  "{\"port\":1,\"ana_states\":[3]}]}", "ports[1].port: port 1 given twice" },
		{ "{\"version\":1,\"ports\":[{\"port\":1,\"ana_states\":[5]}]}",
		  "ports[0].ana_states[0]: no ANA state" },
		{ "{\"version\":1,\"ports\":[{\"port\":1,\"ana_states\":[0]}]}",
		  "ports[0].ana_states[0]: no ANA state" },
		{ "{\"version\":1,\"ports\":[{\"port\":1,\"ana_states\":[1,1]}]}",
		  "ports[0].ana_states: missing or not 1 state" },
		{ "{\"version\":1,\"ports\":[{\"port\":1}]}",
		  "ports[0].ana_states: missing or not 1 state" },
		{ "{\"version\":1,\"ports\":[{\"port\":1,\"ana_states\":[1],\"y\":1}]}",
		  "ports[0].y: unknown member" },
	};
	uint8_t st[ANA_KEEP_MAX_PORTS][ANA_KEEP_GRPS];
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(f, bad[i].text, 0600);
		err[0] = 0;
		memset(st, 0xee, sizeof(st));
		assert_int_equal(ana_keep_load(f->dfd, st, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].why))
			fail_msg("%s: \"%s\", want \"%s\"", bad[i].text, err, bad[i].why);
		for (unsigned p = 0; p < ANA_KEEP_MAX_PORTS; p++)
			assert_int_equal(st[p][0], 0);
	}
	/* 17 ports */
	char many[2048] = "{\"version\":1,\"ports\":[";
	for (int p = 1; p <= 17; p++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many),
			 "%s{\"port\":%d,\"ana_states\":[1]}", p > 1 ? "," : "", p);
	strcat(many, "]}");
	put(f, many, 0600);
	assert_int_equal(ana_keep_load(f->dfd, st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ports: 17 entries, at most 16"));
	/* too big to be ucmdd's */
	char *big = malloc(ANA_KEEP_MAX_BYTES + 2);
	memset(big, ' ', ANA_KEEP_MAX_BYTES + 1);
	big[ANA_KEEP_MAX_BYTES + 1] = 0;
	put(f, big, 0600);
	free(big);
	assert_int_equal(ana_keep_load(f->dfd, st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "at most 65536"));
	/* writable by others */
	put(f, "{\"version\":1,\"ports\":[]}", 0622);
	assert_int_equal(ana_keep_load(f->dfd, st, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "writable by no one else"));
	/* a symbolic link is never followed */
	unlinkat(f->dfd, ANA_KEEP_FILE, 0);
	assert_int_equal(symlinkat("/etc/passwd", f->dfd, ANA_KEEP_FILE), 0);
	assert_int_equal(ana_keep_load(f->dfd, st, err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "symbolic link"));
	/* nor written through: the save replaces the link */
	uint8_t one[1][ANA_KEEP_GRPS] = { { 3 } };
	assert_int_equal(ana_keep_save(f->dfd, one, 1), 0);
	struct stat sb;
	assert_int_equal(fstatat(f->dfd, ANA_KEEP_FILE, &sb, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(ana_keep_load(f->dfd, st, err, sizeof(err)), 0);
	assert_int_equal(st[0][0], 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_files, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
