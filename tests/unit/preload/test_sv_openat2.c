/* SPDX-License-Identifier: MIT */
/*
 * The tree's scoped lookups (src/preload/sv_openat2.c): a link that climbs
 * by ".." (the tree's "class/nvme/nvme0" -> "../../devices/...") opened
 * beneath the tree's /sys while another thread renames a file in an
 * unrelated directory; the kernel's openat2 alone answers EAGAIN for some
 * of those walks (fs/namei.c handle_dots), ours answers every one. Also:
 * what the scope refuses is still refused (EXDEV), a missing name ENOENT.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "preload/sv_openat2.h"

/* renames the walks must survive; enough that walks overlap many of them however the threads are scheduled */
#define RENAMES 20000

static char dir[64];
static atomic_int renames;
static atomic_bool stop;

static void put(const char *rel, const char *text)
{
	char p[128];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void mk(const char *rel)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static int setup(void **state)
{
	char p[128], q[128];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ucmd_openat2_XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	mk("sys");
	mk("sys/devices");
	mk("sys/devices/nvme0");
	mk("sys/class");
	mk("sys/class/nvme");
	mk("other");
	put("sys/devices/nvme0/model", "QEMU\n");
	put("other/a", "");
	put("secret", "");
	snprintf(p, sizeof(p), "%s/sys/class/nvme/nvme0", dir);
	if (symlink("../../devices/nvme0", p))
		return -1;
	snprintf(q, sizeof(q), "%s/sys/class/nvme/out", dir);
	return symlink("../../../secret", q);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static int sys_fd(void)
{
	char p[128];
	int fd;

	snprintf(p, sizeof(p), "%s/sys", dir);
	fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

static const struct open_how beneath = {
	.flags = O_PATH | O_CLOEXEC,
	.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
};

static void *renamer(void *arg)
{
	char a[128], b[128];

	(void)arg;
	snprintf(a, sizeof(a), "%s/other/a", dir);
	snprintf(b, sizeof(b), "%s/other/b", dir);
	while (!atomic_load(&stop)) {
		if (rename(a, b) || rename(b, a))
			break;
		atomic_fetch_add(&renames, 2);
	}
	return NULL;
}

/*
 * every walk through the ".." link answered while the renames run, none
 * EAGAIN; the path climbs a directory back and forth many times before
 * the link, each ".." a step the kernel checks against the renames since
 * the walk began, so that walks overlap renames even when the two threads
 * share one busy CPU
 */
static void test_dotdot_link_during_renames(void **state)
{
	char path[3072];
	int dfd = sys_fd(), bad = 0, walks = 0;
	size_t n = 0;
	pthread_t t;

	(void)state;
	n += (size_t)snprintf(path + n, sizeof(path) - n, "devices/nvme0");
	while (n + 48 < sizeof(path))
		n += (size_t)snprintf(path + n, sizeof(path) - n, "/../nvme0");
	snprintf(path + n, sizeof(path) - n, "/../../class/nvme/nvme0/model");
	atomic_store(&renames, 0);
	atomic_store(&stop, false);
	assert_int_equal(pthread_create(&t, NULL, renamer, NULL), 0);
	while (atomic_load(&renames) < RENAMES || walks < RENAMES) {
		int fd = sv_openat2(dfd, path, &beneath);

		walks++;
		if (fd < 0) {
			if (!bad)
				fprintf(stderr, "walk %d: %s\n", walks, strerror(-fd));
			bad++;
		} else {
			close(fd);
		}
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	close(dfd);
	fprintf(stderr, "%d walks during %d renames, %d failed\n", walks, RENAMES, bad);
	assert_int_equal(bad, 0);
}

/* the scope still holds: out of /sys is EXDEV, a name not there ENOENT */
static void test_scope_kept(void **state)
{
	int dfd = sys_fd(), fd;

	(void)state;
	assert_int_equal(sv_openat2(dfd, "class/nvme/out", &beneath), -EXDEV);
	assert_int_equal(sv_openat2(dfd, "../secret", &beneath), -EXDEV);
	assert_int_equal(sv_openat2(dfd, "class/nvme/nvme1/model", &beneath), -ENOENT);
	fd = sv_openat2(dfd, "class/nvme/nvme0/model", &beneath);
	assert_true(fd >= 0);
	close(fd);
	close(dfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scope_kept),
		cmocka_unit_test(test_dotdot_link_during_renames),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
