/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store_conformance.h"

#define BLK		4096u
#define CRASH_BLOCKS	4096u	/* 16 MiB: far more than the child gets to write */
#define CRASH_KILL_AT	200u	/* acknowledgements seen before the SIGKILL */

static int file_factory_open(uint64_t size, void **ctx, struct store **out)
{
	char *path = malloc(PATH_MAX);
	int ret;

	if (!path)
		return -ENOMEM;
	conf_temp_path(path, PATH_MAX, "file");
	ret = store_file_open(path, size, UCMD_STORE_CREATE, out);
	if (ret) {
		free(path);
		return ret;
	}
	*ctx = path;
	return 0;
}

static void file_factory_cleanup(void *ctx)
{
	unlink(ctx);
	free(ctx);
}

static const struct store_factory file_factory = {
	.open = file_factory_open,
	.cleanup = file_factory_cleanup,
	.tracks_allocation = true,
};

/* Per-test temporary path, removed by the teardown. */
static int path_setup(void **state)
{
	char *path = malloc(PATH_MAX);

	if (!path)
		return -1;
	conf_temp_path(path, PATH_MAX, "file");
	*state = path;
	return 0;
}

static int path_teardown(void **state)
{
	unlink(*state);
	free(*state);
	return 0;
}

static void test_persistence(void **state)
{
	const char *path = *state;
	struct store *st;
	unsigned char buf[10000];

	assert_int_equal(store_file_open(path, 8 << 20, UCMD_STORE_CREATE, &st), 0);
	conf_fill(buf, sizeof(buf), 1);
	assert_int_equal(store_write(st, buf, sizeof(buf), 3 << 20, false), 0);
	conf_fill(buf, sizeof(buf), 2);
	assert_int_equal(store_write(st, buf, sizeof(buf), (8 << 20) - sizeof(buf), true), 0);
	store_close(st);

	/* size 0: take the file's size */
	assert_int_equal(store_file_open(path, 0, 0, &st), 0);
	assert_int_equal(st->size, 8 << 20);
	assert_int_equal(store_read(st, buf, sizeof(buf), 3 << 20), 0);
	assert_int_equal(conf_check(buf, sizeof(buf), 1), -1);
	assert_int_equal(store_read(st, buf, sizeof(buf), (8 << 20) - sizeof(buf)), 0);
	assert_int_equal(conf_check(buf, sizeof(buf), 2), -1);
	store_close(st);
}

static void test_open_flags(void **state)
{
	const char *path = *state;
	struct store *st = NULL;
	unsigned char b = 1;

	assert_int_equal(store_file_open(path, 1 << 20, 0, &st), -ENOENT);
	assert_int_equal(store_file_open(path, 1 << 20, UCMD_STORE_CREATE | UCMD_STORE_RDONLY,
					 &st), -EINVAL);
	assert_int_equal(store_file_open(path, 1 << 20, 1u << 7, &st), -EINVAL);
	assert_int_equal(store_file_open(NULL, 1 << 20, 0, &st), -EINVAL);
	assert_null(st);
	assert_int_equal(store_file_open(path, 1 << 20, UCMD_STORE_CREATE, &st), 0);
	assert_int_equal(store_write(st, &b, 1, 77, false), 0);
	store_close(st);

	assert_int_equal(store_file_open(path, 2 << 20, UCMD_STORE_RDONLY, &st), -EINVAL);
	assert_int_equal(store_file_open(path, 0, UCMD_STORE_RDONLY, &st), 0);
	b = 0;
	assert_int_equal(store_read(st, &b, 1, 77), 0);
	assert_int_equal(b, 1);
	assert_int_equal(store_write(st, &b, 1, 0, false), -EROFS);
	assert_int_equal(st->ops->deallocate(st, 0, 4096), -EROFS);
	assert_int_equal(st->ops->write_zeroes(st, 0, 4096), -EROFS);
	assert_int_equal(st->ops->resize(st, 4096), -EROFS);
	assert_int_equal(st->ops->flush(st), 0);
	store_close(st);
}

static void test_sparse_tib(void **state)
{
	const char *path = *state;
	struct store *st;
	struct stat sb;
	unsigned char buf[4096];

	assert_int_equal(store_file_open(path, 1ull << 40, UCMD_STORE_CREATE, &st), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_true((uint64_t)sb.st_size == 1ull << 40);
	conf_fill(buf, sizeof(buf), 4);
	assert_int_equal(store_write(st, buf, sizeof(buf), (1ull << 40) - 4096, true), 0);
	assert_true(st->ops->allocated(st) < (1u << 20));
	assert_int_equal(store_read(st, buf, sizeof(buf), 1ull << 39), 0);
	assert_int_equal(conf_check_byte(buf, sizeof(buf), 0), -1);
	store_close(st);
}

/* Only the first `size` bytes of a longer file belong to the store. */
static void test_store_smaller_than_file(void **state)
{
	const char *path = *state;
	struct store *st;
	unsigned char *buf = malloc(1 << 20);

	assert_non_null(buf);
	assert_int_equal(store_file_open(path, 1 << 20, UCMD_STORE_CREATE, &st), 0);
	memset(buf, 0xab, 1 << 20);
	assert_int_equal(store_write(st, buf, 1 << 20, 0, false), 0);
	store_close(st);

	assert_int_equal(store_file_open(path, 65536, 0, &st), 0);
	assert_int_equal(st->size, 65536);
	assert_int_equal(store_write(st, buf, 2, 65535, false), -ERANGE);
	assert_int_equal(st->ops->write_zeroes(st, 65000, 536), 0);
	/* growing shows zeros, not the file's old bytes past the store's end */
	assert_int_equal(st->ops->resize(st, 1 << 20), 0);
	assert_int_equal(store_read(st, buf, 1 << 20, 0), 0);
	assert_int_equal(conf_check_byte(buf, 65000, 0xab), -1);
	assert_int_equal(conf_check_byte(buf + 65000, (1 << 20) - 65000, 0), -1);
	store_close(st);
	free(buf);
}

/* Someone truncated the file under the store: the missing tail reads as zeros. */
static void test_short_file_reads_zero(void **state)
{
	const char *path = *state;
	struct store *st;
	unsigned char buf[8192];

	assert_int_equal(store_file_open(path, 1 << 20, UCMD_STORE_CREATE, &st), 0);
	memset(buf, 0xcd, sizeof(buf));
	assert_int_equal(store_write(st, buf, sizeof(buf), 0, false), 0);
	assert_int_equal(truncate(path, 4096), 0);
	memset(buf, 0x11, sizeof(buf));
	assert_int_equal(store_read(st, buf, sizeof(buf), 0), 0);
	assert_int_equal(conf_check_byte(buf, 4096, 0xcd), -1);
	assert_int_equal(conf_check_byte(buf + 4096, 4096, 0), -1);
	store_close(st);
}

/*
 * docs/security.md, "The controller directory": the store never follows a symlink at its path, never takes over
 * an existing file when asked to create one, never extends an existing file
 * on open, and creates its file 0600.
 */
static void test_no_follow_no_takeover(void **state)
{
	const char *path = *state;
	char target[PATH_MAX];
	struct store *st = NULL;
	struct stat sb;
	int fd;

	snprintf(target, sizeof(target), "%s.target", path);
	fd = open(target, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "precious", 8), 8);
	close(fd);
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(store_file_open(path, 1 << 20, 0, &st), -ELOOP);
	assert_int_equal(store_file_open(path, 1 << 20, UCMD_STORE_CREATE, &st), -EEXIST);
	assert_int_equal(store_file_open(path, 0, UCMD_STORE_RDONLY, &st), -ELOOP);
	assert_null(st);
	assert_int_equal(unlink(path), 0);

	/* an existing regular file: CREATE refuses it, a plain open never extends it */
	assert_int_equal(store_file_open(target, 1 << 20, UCMD_STORE_CREATE, &st), -EEXIST);
	assert_int_equal(store_file_open(target, 1 << 20, 0, &st), -EINVAL);
	assert_null(st);
	assert_int_equal(stat(target, &sb), 0);
	assert_int_equal(sb.st_size, 8);
	unlink(target);

	assert_int_equal(store_file_open(path, 1 << 20, UCMD_STORE_CREATE, &st), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 077, 0);
	store_close(st);
}

enum crash_mode { CRASH_FUA, CRASH_FLUSH };

/* Child: write blocks, report each one only once it is durable, until killed. */
static void __attribute__((noreturn)) crash_child(const char *path, int ack_fd, enum crash_mode m)
{
	struct store *st;
	unsigned char buf[BLK];
	uint32_t pending = 0;

	if (store_file_open(path, 0, 0, &st))
		_exit(2);
	for (uint32_t i = 0; i < CRASH_BLOCKS; i++) {
		conf_fill(buf, sizeof(buf), 1000 + i);
		if (store_write(st, buf, sizeof(buf), (uint64_t)i * BLK, m == CRASH_FUA))
			_exit(3);
		if (m == CRASH_FLUSH && (i % 8 != 7))
			continue;
		if (m == CRASH_FLUSH && st->ops->flush(st))
			_exit(4);
		for (; pending <= i; pending++) {
			if (write(ack_fd, &pending, sizeof(pending)) != sizeof(pending))
				_exit(5);
		}
	}
	_exit(0);
}

static void crash_run(const char *path, enum crash_mode m)
{
	struct store *st;
	unsigned char buf[BLK];
	static bool acked[CRASH_BLOCKS];
	uint32_t id, nacked = 0;
	int fds[2], status;
	pid_t pid;

	memset(acked, 0, sizeof(acked));
	assert_int_equal(store_file_open(path, (uint64_t)CRASH_BLOCKS * BLK,
					 UCMD_STORE_CREATE, &st), 0);
	store_close(st);
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		crash_child(path, fds[1], m);
	}
	close(fds[1]);
	while (nacked < CRASH_KILL_AT && read(fds[0], &id, sizeof(id)) == sizeof(id)) {
		assert_true(id < CRASH_BLOCKS);
		acked[id] = true;
		nacked++;
	}
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	/* acknowledgements already in the pipe count too */
	while (read(fds[0], &id, sizeof(id)) == sizeof(id)) {
		assert_true(id < CRASH_BLOCKS);
		acked[id] = true;
		nacked++;
	}
	close(fds[0]);
	assert_true(nacked >= CRASH_KILL_AT || (WIFEXITED(status) && WEXITSTATUS(status) == 0));
	print_message("crash test: %u blocks acknowledged, child %s\n", nacked,
		      WIFSIGNALED(status) ? "killed mid-way" : "finished before the kill");

	assert_int_equal(store_file_open(path, 0, 0, &st), 0);
	for (uint32_t i = 0; i < CRASH_BLOCKS; i++) {
		if (!acked[i])
			continue;
		assert_int_equal(store_read(st, buf, sizeof(buf), (uint64_t)i * BLK), 0);
		assert_int_equal(conf_check(buf, sizeof(buf), 1000 + i), -1);
	}
	store_close(st);
}

/* A FIFO in the file's place is refused at once: a read-only open of one would wait for a writer. */
static void test_fifo_refused(void **state)
{
	const char *path = *state;
	struct store *st = NULL;

	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(10);	/* a blocked open kills the test */
	assert_int_equal(store_file_open(path, 0, UCMD_STORE_RDONLY, &st), -EINVAL);
	assert_int_equal(store_file_open(path, 1 << 20, 0, &st), -EINVAL);
	alarm(0);
	assert_null(st);
	assert_int_equal(unlink(path), 0);
}

static void test_crash_fua(void **state)
{
	crash_run(*state, CRASH_FUA);
}

static void test_crash_flush(void **state)
{
	crash_run(*state, CRASH_FLUSH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_persistence, path_setup, path_teardown),
		cmocka_unit_test_setup_teardown(test_open_flags, path_setup, path_teardown),
		cmocka_unit_test_setup_teardown(test_sparse_tib, path_setup, path_teardown),
		cmocka_unit_test_setup_teardown(test_store_smaller_than_file, path_setup,
						path_teardown),
		cmocka_unit_test_setup_teardown(test_short_file_reads_zero, path_setup,
						path_teardown),
		cmocka_unit_test_setup_teardown(test_no_follow_no_takeover, path_setup, path_teardown),
		cmocka_unit_test_setup_teardown(test_fifo_refused, path_setup, path_teardown),
		cmocka_unit_test_setup_teardown(test_crash_fua, path_setup, path_teardown),
		cmocka_unit_test_setup_teardown(test_crash_flush, path_setup, path_teardown),
	};
	int failed;

	conf_factory = &file_factory;
	failed = conf_run("store_file_conformance");
	failed += cmocka_run_group_tests_name("store_file", tests, NULL, NULL);
	return failed;
}
