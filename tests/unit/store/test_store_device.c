/* SPDX-License-Identifier: MIT */
/*
 * The device store against a regular file in /var/tmp (O_DIRECT works on
 * ext4/xfs), once with O_DIRECT and once forced to the buffered fallback.
 * Setting UCMD_TEST_LOOP=1 (as root) also runs it against a loop block
 * device with 512-byte sectors, UCMD_TEST_LOOP=4096 with 4 KiB sectors; the
 * test attaches and detaches the loop device with losetup.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/device_internal.h"
#include "store_conformance.h"

struct dev_ctx {
	char path[PATH_MAX];
	char loopdev[64];
};

static unsigned open_flags;	/* 0 or UCMD_STORE_DEVICE_BUFFERED */
static unsigned loop_sector = 512;

static int make_file(const char *path, uint64_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static long long file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) ? -1 : (long long)sb.st_size;
}

static int dev_factory_open(uint64_t size, void **ctx, struct store **out)
{
	struct dev_ctx *dc = calloc(1, sizeof(*dc));
	int ret;

	if (!dc)
		return -ENOMEM;
	conf_temp_path(dc->path, sizeof(dc->path), "dev");
	ret = make_file(dc->path, size);
	if (!ret)
		ret = store_device_open_flags(dc->path, 0, open_flags, out);
	if (ret) {
		unlink(dc->path);
		free(dc);
		return ret;
	}
	*ctx = dc;
	return 0;
}

static void dev_factory_cleanup(void *ctx)
{
	struct dev_ctx *dc = ctx;

	unlink(dc->path);
	free(dc);
}

static const struct store_factory dev_factory = {
	.open = dev_factory_open,
	.cleanup = dev_factory_cleanup,
	.tracks_allocation = true,
	/* the store never extends the file it is given (docs/security.md) */
	.fixed_capacity = true,
};

/* Attach a loop device over a fresh file; NULL when not possible (not root). */
static int loop_factory_open(uint64_t size, void **ctx, struct store **out)
{
	struct dev_ctx *dc = calloc(1, sizeof(*dc));
	char cmd[PATH_MAX + 64];
	FILE *p;
	int ret;

	if (!dc)
		return -ENOMEM;
	conf_temp_path(dc->path, sizeof(dc->path), "loop");
	ret = make_file(dc->path, size);
	snprintf(cmd, sizeof(cmd), "losetup --find --show --sector-size %u '%s' 2>/dev/null",
		 loop_sector, dc->path);
	p = ret ? NULL : popen(cmd, "r");
	if (!p || !fgets(dc->loopdev, sizeof(dc->loopdev), p) || pclose(p) != 0) {
		unlink(dc->path);
		free(dc);
		return -ENODEV;
	}
	dc->loopdev[strcspn(dc->loopdev, "\n")] = 0;
	ret = store_device_open_flags(dc->loopdev, 0, open_flags, out);
	if (!ret)
		print_message("loop device %s, block %u, %s\n", dc->loopdev,
			      store_device_block(*out),
			      store_device_is_direct(*out) ? "O_DIRECT" : "buffered");
	if (ret) {
		snprintf(cmd, sizeof(cmd), "losetup -d '%s'", dc->loopdev);
		if (system(cmd) != 0)
			fprintf(stderr, "could not detach %s\n", dc->loopdev);
		unlink(dc->path);
		free(dc);
		return ret;
	}
	*ctx = dc;
	return 0;
}

static void loop_factory_cleanup(void *ctx)
{
	struct dev_ctx *dc = ctx;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "losetup -d '%s'", dc->loopdev);
	if (system(cmd) != 0)
		fprintf(stderr, "could not detach %s\n", dc->loopdev);
	unlink(dc->path);
	free(dc);
}

static const struct store_factory loop_factory = {
	.open = loop_factory_open,
	.cleanup = loop_factory_cleanup,
	.tracks_allocation = false,	/* a block device reports its whole size */
	.fixed_capacity = true,
};

static int path_setup(void **state)
{
	char *path = malloc(PATH_MAX);

	if (!path)
		return -1;
	conf_temp_path(path, PATH_MAX, "dev");
	*state = path;
	return 0;
}

static int path_teardown(void **state)
{
	unlink(*state);
	free(*state);
	return 0;
}

static void test_reports_mode(void **state)
{
	struct store *st;

	assert_int_equal(make_file(*state, 1 << 20), 0);
	assert_int_equal(store_device_open(*state, 0, &st), 0);
	assert_string_equal(st->ops->name, "device");
	print_message("device store on %s: %s, block %u\n", (const char *)*state,
		      store_device_is_direct(st) ? "O_DIRECT" : "buffered (fallback)",
		      store_device_block(st));
	assert_true(store_device_block(st) >= 1);
	store_close(st);

	assert_int_equal(store_device_open_flags(*state, 0, UCMD_STORE_DEVICE_BUFFERED, &st),
			 0);
	assert_false(store_device_is_direct(st));
	assert_int_equal(store_device_block(st), 1);
	store_close(st);
}

/* A file whose size is not a multiple of the block size, sized from the file. */
static void test_odd_sized_file(void **state)
{
	const char *path = *state;
	struct store *st;
	unsigned char buf[300];

	assert_int_equal(make_file(path, 10000), 0);
	assert_int_equal(store_device_open(path, 0, &st), 0);
	assert_int_equal(st->size, 10000);
	conf_fill(buf, sizeof(buf), 7);
	assert_int_equal(store_write(st, buf, sizeof(buf), 10000 - sizeof(buf), true), 0);
	assert_int_equal(store_write(st, buf, 1, 10000, false), -ERANGE);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(store_read(st, buf, sizeof(buf), 10000 - sizeof(buf)), 0);
	assert_int_equal(conf_check(buf, sizeof(buf), 7), -1);
	assert_int_equal(st->ops->flush(st), 0);
	store_close(st);

	/* reopen: the data is there */
	assert_int_equal(store_device_open(path, 10000, &st), 0);
	assert_int_equal(store_read(st, buf, sizeof(buf), 10000 - sizeof(buf)), 0);
	assert_int_equal(conf_check(buf, sizeof(buf), 7), -1);
	store_close(st);
}

static void test_open_errors(void **state)
{
	struct store *st = NULL;

	assert_int_equal(store_device_open(*state, 0, &st), -ENOENT);
	assert_int_equal(store_device_open("/dev/null", 0, &st), -ENOTBLK);
	assert_int_equal(store_device_open(NULL, 0, &st), -EINVAL);
	assert_int_equal(store_device_open_flags(*state, 0, 1u << 9, &st), -EINVAL);
	assert_null(st);
	/* a size larger than the file is refused, and the file is not extended */
	assert_int_equal(make_file(*state, 4096), 0);
	assert_int_equal(store_device_open(*state, 1 << 20, &st), -ENOSPC);
	assert_null(st);
	assert_int_equal(file_size(*state), 4096);
}

/*
 * docs/store.md: the device store never truncates or extends. Shrinking keeps
 * the file's bytes past the new end; a size that is not a whole number of
 * direct-I/O blocks on a file that ends there never pads the file.
 */
static void test_never_resizes_file(void **state)
{
	const char *path = *state;
	struct store *st;
	unsigned char buf[512];

	assert_int_equal(make_file(path, 1 << 20), 0);
	assert_int_equal(store_device_open(path, 0, &st), 0);
	assert_int_equal(st->ops->resize(st, 4096), 0);
	assert_int_equal(file_size(path), 1 << 20);
	assert_int_equal(st->ops->resize(st, 2 << 20), -ENOSPC);
	assert_int_equal(file_size(path), 1 << 20);
	store_close(st);
	unlink(path);

	assert_int_equal(make_file(path, 10000), 0);
	assert_int_equal(store_device_open(path, 10000, &st), 0);
	conf_fill(buf, sizeof(buf), 9);
	assert_int_equal(store_write(st, buf, sizeof(buf), 10000 - sizeof(buf), true), 0);
	assert_int_equal(st->ops->resize(st, 9999), 0);
	assert_int_equal(st->ops->resize(st, 10000), 0);
	store_close(st);
	assert_int_equal(file_size(path), 10000);
}

/* A descriptor opened read-only: every change is -EROFS, reads work. */
static void test_open_fd_rdonly(void **state)
{
	const char *path = *state;
	struct store *st;
	unsigned char b = 0;
	int fd;

	assert_int_equal(make_file(path, 1 << 20), 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(store_device_open_fd(fd, 0, 1u << 0, &st), -EINVAL);
	assert_int_equal(store_device_open_fd(fd, 0, UCMD_STORE_RDONLY, &st), 0);
	assert_int_equal(store_read(st, &b, 1, 4096), 0);
	assert_int_equal(store_write(st, &b, 1, 0, false), -EROFS);
	assert_int_equal(st->ops->write_zeroes(st, 0, 4096), -EROFS);
	assert_int_equal(st->ops->deallocate(st, 0, 4096), -EROFS);
	assert_int_equal(st->ops->resize(st, 4096), -EROFS);
	assert_int_equal(st->ops->flush(st), 0);
	store_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reports_mode, path_setup, path_teardown),
		cmocka_unit_test_setup_teardown(test_odd_sized_file, path_setup, path_teardown),
		cmocka_unit_test_setup_teardown(test_open_errors, path_setup, path_teardown),
		cmocka_unit_test_setup_teardown(test_never_resizes_file, path_setup, path_teardown),
		cmocka_unit_test_setup_teardown(test_open_fd_rdonly, path_setup, path_teardown),
	};
	const char *loop = getenv("UCMD_TEST_LOOP");
	int failed;

	conf_factory = &dev_factory;
	open_flags = 0;
	failed = conf_run("store_device_conformance");
	open_flags = UCMD_STORE_DEVICE_BUFFERED;
	failed += conf_run("store_device_buffered_conformance");
	if (loop && (!strcmp(loop, "1") || !strcmp(loop, "4096"))) {
		loop_sector = strcmp(loop, "1") ? 4096 : 512;
		conf_factory = &loop_factory;
		open_flags = 0;
		failed += conf_run("store_device_loop_conformance");
	}
	failed += cmocka_run_group_tests_name("store_device", tests, NULL, NULL);
	return failed;
}
