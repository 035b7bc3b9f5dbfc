/* SPDX-License-Identifier: MIT */
/*
 * src/preload/fdpath.c and fdname.c: which paths name a descriptor (/dev/fd/N,
 * /proc/self/fd/N, /proc/thread-self/fd/N, /proc/<own pid>/fd/N,
 * /dev/stdin...), and that only a device descriptor's is taken (its
 * device; ENOTDIR for a path below it). The fd table is stubbed: fd 3
 * and 0 are devices, 7 a device copied without libc (adopted), the rest
 * none.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "preload/preload.h"

static const struct pl_devinfo dev = { 0 };
static struct pl_file file = { .dev = &dev };
static int adopted;

struct pl_file *pl_fd(int fd)
{
	return fd == 3 || fd == 0 ? &file : NULL;
}

struct pl_file *pl_fd_adopt(int fd, int err)
{
	assert_int_equal(err, 0);
	adopted++;
	return fd == 7 ? &file : NULL;
}

static int named(const char *path, const struct pl_devinfo **d)
{
	*d = (const void *)1;
	return pl_fd_path_dev(path, d);
}

static void test_device_fds(void **state)
{
	const struct pl_devinfo *d;
	char own[64];

	(void)state;
	snprintf(own, sizeof(own), "/proc/%d/fd/3", (int)getpid());
	const char *yes[] = { "/dev/fd/3", "/proc/self/fd/3", "/proc/thread-self/fd/3", own,
			      "/dev/stdin", "/dev/fd/0", "/dev/fd/7" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		assert_int_equal(named(yes[i], &d), 0);
		assert_ptr_equal(d, &dev);
	}
	assert_int_equal(named("/dev/fd/3/", &d), -ENOTDIR);
	assert_int_equal(named("/proc/self/fd/3/x", &d), -ENOTDIR);
	assert_int_equal(named("/dev/stdin/", &d), -ENOTDIR);
}

static void test_not_device(void **state)
{
	const struct pl_devinfo *d;
	const char *no[] = { "/dev/fd/4", "/dev/stdout", "/dev/fd/03", "/dev/fd/3x", "/dev/fd/",
			     "/dev/fd/-3", "/dev/fd/99999999999999999999", "/proc/1/fd/3",
			     "/proc/self/fdinfo/3", "/proc/selfx/fd/3", "/dev/fdx/3", "dev/fd/3",
			     "/dev/stdinx", "/dev/stdout/", "/proc/self/fd/4/x", "" };

	(void)state;
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		assert_int_equal(named(no[i], &d), 0);
		assert_null(d);
	}
}

/*
 * The same descriptor paths in the other spellings the kernel walks to
 * the same components: "//" and "/./" anywhere, a thread's directory
 * (task/<tid>, /proc/<tid>). Before, these reached the placeholder
 * (EISDIR for an open to write).
 */
static void test_spellings(void **state)
{
	const struct pl_devinfo *d;
	char own[6][80];
	int pid = (int)getpid();

	(void)state;
	snprintf(own[0], sizeof(own[0]), "/proc/self/task/%d/fd/3", pid);
	snprintf(own[1], sizeof(own[1]), "/proc/%d/task/%d/fd/3", pid, pid);
	snprintf(own[2], sizeof(own[2]), "/proc//%d/./fd//3", pid);
	snprintf(own[3], sizeof(own[3]), "/proc/self/task/%d/fd/3/", pid);
	snprintf(own[4], sizeof(own[4]), "/proc/self/task/0%d/fd/3", pid);
	snprintf(own[5], sizeof(own[5]), "/proc/thread-self/task/%d/fd/3", pid);
	const char *yes[] = { "/dev//fd/3", "/dev/fd//3", "/dev/./fd/3", "//dev/fd/3",
			      "/proc/self//fd/3", "/proc/self/fd/./3", "/proc/./self/fd/3",
			      "/dev/./stdin", "/dev//stdin", own[0], own[1], own[2] };
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		assert_int_equal(named(yes[i], &d), 0);
		assert_ptr_equal(d, &dev);
	}
	const char *below[] = { "/dev/fd/3/.", "/dev/fd/3//", "/dev/stdin/.", own[3] };
	for (size_t i = 0; i < sizeof(below) / sizeof(below[0]); i++)
		assert_int_equal(named(below[i], &d), -ENOTDIR);
	/* not ours: another process's task, a leading zero, thread-self has no task */
	const char *no[] = { "/proc/self/task/1/fd/3", own[4], own[5], "/dev/fd/./03",
			     "/proc/self/task/fd/3", "/dev/../dev/fd/3x" };
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		assert_int_equal(named(no[i], &d), 0);
		assert_null(d);
	}
}

static void test_adopt_only_when_unknown(void **state)
{
	const struct pl_devinfo *d;

	(void)state;
	adopted = 0;
	named("/dev/fd/3", &d);
	named("/dev/null", &d);
	assert_int_equal(adopted, 0);
	named("/dev/fd/5", &d);
	assert_int_equal(adopted, 1);
}

/*
 * fdname.c for another process (ucmd-supervise reads the program's
 * paths): its pid names its table, /proc/self too; ours does not.
 */
static void test_named_for_another_process(void **state)
{
	char path[64];
	const char *rest;
	pid_t child = fork();

	(void)state;
	if (!child) {
		pause();
		_exit(0);
	}
	assert_true(child > 0);
	snprintf(path, sizeof(path), "/proc/%d/fd/5", (int)child);
	assert_int_equal(pl_fd_named(path, child, &rest), 5);
	assert_string_equal(rest, "");
	assert_int_equal(pl_fd_named(path, getpid(), &rest), -1);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/fd/9/x", (int)child, (int)child);
	assert_int_equal(pl_fd_named(path, child, &rest), 9);
	assert_string_equal(rest, "/x");
	snprintf(path, sizeof(path), "/proc/%d/fd/5", (int)getpid());
	assert_int_equal(pl_fd_named(path, child, &rest), -1);
	assert_int_equal(pl_fd_named("/proc/self/fd/4", child, &rest), 4);
	assert_int_equal(pl_fd_named("/dev/stdin", child, &rest), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_fds),
		cmocka_unit_test(test_not_device),
		cmocka_unit_test(test_spellings),
		cmocka_unit_test(test_adopt_only_when_unknown),
		cmocka_unit_test(test_named_for_another_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
