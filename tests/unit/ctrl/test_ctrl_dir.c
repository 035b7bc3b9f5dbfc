/* SPDX-License-Identifier: MIT */
/*
 * The controller directory (docs/security.md, "The controller directory"): what is in
 * the directory is never followed, taken over, resized or deleted implicitly;
 * ownership and modes are checked; one writer or many readers; a read-only
 * controller writes nothing; a full disk is Capacity Exceeded; new files are
 * private.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <nvme/types.h>

#include "host_sim.h"

#define SC(sct, sc) ((sct) << 8 | (sc))
#define DNR 0x4000
#define NSZE 2048u		/* blocks of 512: a 1 MiB image */
#define IMG_BYTES (NSZE * 512u)

struct fx {
	char dir[64];
	char path[128];		/* scratch for file names */
	char err[512];
};

static const char *at(struct fx *f, const char *name)
{
	snprintf(f->path, sizeof(f->path), "%s/%s", f->dir, name);
	return f->path;
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/ucmd-ctrl-dir-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s.target'", f->dir, f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

static void params(struct fx *f, struct ucmd_ctrl_params *p, bool ro)
{
	host_default_params(p);
	p->dir = f->dir;
	p->read_only = ro;
	p->errbuf = f->err;
	p->errbuf_len = sizeof(f->err);
}

/* A controller with one 1 MiB file namespace holding a pattern at LBA 0..7. */
static void make_ctrl(struct fx *f)
{
	struct ucmd_ns_params nsp = { .nsze = NSZE, .store = UCMD_NS_STORE_FILE, .attach = true };
	struct ucmd_ctrl_params p;
	struct host h;
	uint8_t *w;

	params(f, &p, false);
	assert_int_equal(host_open_ns(&h, &p, &nsp), 1);
	w = host_alloc(&h, 4096);
	fill_pattern(w, 4096, 7);
	assert_int_equal(host_io(&h, nvme_cmd_write, 1, 0, 8, w, 4096, NULL, 0), 0);
	host_close(&h);
}

static int try_open(struct fx *f, bool ro, struct ucmd_ctrl **c)
{
	struct ucmd_ctrl_params p;

	params(f, &p, ro);
	*c = NULL;
	return ucmd_ctrl_create(&p, c);
}

static void expect_refused(struct fx *f, bool ro, int err, const char *why)
{
	struct ucmd_ctrl *c;

	assert_int_equal(try_open(f, ro, &c), err);
	assert_null(c);
	if (!strstr(f->err, why))
		fail_msg("reason '%s' does not say '%s'", f->err, why);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void expect_file(const char *path, const char *text)
{
	size_t len;
	char *got = slurp(path, &len);

	assert_int_equal(len, strlen(text));
	assert_memory_equal(got, text, len);
	free(got);
}

static long long size_of(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) ? -1 : (long long)sb.st_size;
}

/* Class 1: ns1.img replaced by a symlink to someone else's file. */
static void test_symlinked_image(void **state)
{
	struct fx *f = *state;
	char target[96], img[128];

	make_ctrl(f);
	snprintf(target, sizeof(target), "%s.target", f->dir);
	write_file(target, "precious", 0600);
	snprintf(img, sizeof(img), "%s", at(f, "ns1.img"));
	assert_int_equal(unlink(img), 0);
	assert_int_equal(symlink(target, img), 0);
	expect_refused(f, false, -ELOOP, "ns1.img is a symbolic link");
	expect_refused(f, true, -ELOOP, "ns1.img is a symbolic link");
	expect_file(target, "precious");
}

/* Class 1: an image of the wrong size is refused, never resized to fit. */
static void test_image_size_mismatch(void **state)
{
	struct fx *f = *state;

	make_ctrl(f);
	assert_int_equal(truncate(at(f, "ns1.img"), 4096), 0);
	expect_refused(f, false, -EUCLEAN, "refusing to resize it");
	assert_int_equal(size_of(at(f, "ns1.img")), 4096);
	assert_int_equal(truncate(at(f, "ns1.img"), 2 * IMG_BYTES), 0);
	expect_refused(f, false, -EUCLEAN, "refusing to resize it");
	assert_int_equal(size_of(at(f, "ns1.img")), 2 * IMG_BYTES);
}

/* A state file naming one device namespace of nsze blocks at path (and nothing else). */
static void device_state_n(struct fx *f, const char *path, unsigned nsze)
{
	char json[1536];

	/* version 1 (no checksum): a hand-written state the loader checks field by field */
	snprintf(json, sizeof(json),
		 "{ \"version\": 1, \"serial\": \"S\", \"model\": \"M\", \"firmware\": \"F\","
		 " \"clean\": true,"
		 " \"saved_features\": { \"arbitration\": 0, \"power_mgmt\": 0, \"err_recovery\": 0,"
		 " \"vwc\": 1, \"irq_coalesce\": 0, \"write_atomic\": 0, \"async_event\": 0,"
		 " \"tmpth_over\": 0, \"tmpth_under\": 0 },"
		 " \"smart\": { \"units_read_512\": 0, \"units_written_512\": 0, \"host_reads\": 0,"
		 " \"host_writes\": 0, \"power_cycles\": 0, \"unsafe_shutdowns\": 0,"
		 " \"power_on_seconds\": 0, \"media_errors\": 0, \"error_count\": 0 },"
		 " \"namespaces\": [ { \"nsid\": 1, \"nsze\": %u, \"lbaf\": 0, \"extended\": false,"
		 " \"attached\": true, \"store\": \"device\", \"path\": \"%s\","
		 " \"uuid\": \"00112233445566778899aabbccddeeff\", \"uncorrectable\": [] } ] }",
		 nsze, path);
	write_file(at(f, "ctrl.json"), json, 0600);
}

static void device_state(struct fx *f, const char *path)
{
	device_state_n(f, path, NSZE);
}

/* Both ways: a writer and a read-only controller (which opens O_RDONLY). */
static void expect_device_refused(struct fx *f, int err, const char *why)
{
	expect_refused(f, false, err, why);
	expect_refused(f, true, err, why);
}

/*
 * Class 1: a device path in ctrl.json is checked on every open, and names a
 * block device: never a regular file, even one owned like the directory
 * (root's, as ucmdd's are), which could be any root file.
 */
static void test_device_path_from_state(void **state)
{
	struct fx *f = *state;
	char target[96], sym[160], rel[160];
	struct stat sb;

	snprintf(target, sizeof(target), "%s.target", f->dir);
	write_file(target, "precious", 0600);
	assert_int_equal(truncate(target, IMG_BYTES), 0);
	/* owned by the directory's owner and big enough: still not a device */
	device_state(f, target);
	expect_device_refused(f, -ENOTBLK, "not a block device");
	assert_int_equal(size_of(target), IMG_BYTES);
	/* the probe's case: root's directory, root's /etc/shadow, a namespace it fits */
	if (!stat("/etc/shadow", &sb) && sb.st_size >= 512) {
		device_state_n(f, "/etc/shadow", 1);
		expect_device_refused(f, -ENOTBLK, "not a block device");
	}

	snprintf(sym, sizeof(sym), "%s/sym", f->dir);
	assert_int_equal(symlink(target, sym), 0);
	device_state(f, sym);
	expect_device_refused(f, -ELOOP, "symbolic link");
	assert_int_equal(unlink(sym), 0);
	assert_int_equal(symlink("/etc/shadow", sym), 0);
	device_state_n(f, sym, 1);
	expect_device_refused(f, -ELOOP, "symbolic link");
	snprintf(rel, sizeof(rel), "%s/../%s", f->dir, strrchr(target, '/') + 1);
	device_state(f, rel);
	expect_refused(f, false, -EINVAL, "not absolute and canonical");
	device_state(f, "ns1.img");
	expect_refused(f, false, -EINVAL, "not absolute and canonical");
	device_state(f, "/dev/null");
	expect_device_refused(f, -ENOTBLK, "not a block device");
}

/*
 * A FIFO in an image's or a device's place is refused at once, never waited
 * on: a read-only open of a FIFO blocks until a writer comes. The alarm
 * kills the test if anything blocks.
 */
static void test_fifo_never_blocks(void **state)
{
	struct fx *f = *state;
	char fifo[96];

	alarm(10);
	make_ctrl(f);
	assert_int_equal(unlink(at(f, "ns1.img")), 0);
	assert_int_equal(mkfifo(at(f, "ns1.img"), 0600), 0);
	expect_refused(f, true, -EPERM, "ns1.img is not a regular file");
	expect_refused(f, false, -EPERM, "ns1.img is not a regular file");

	snprintf(fifo, sizeof(fifo), "%s.target", f->dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	device_state(f, fifo);
	expect_device_refused(f, -ENOTBLK, "not a block device");
	alarm(0);
}

/* A loop device over a fresh file of len bytes (root only); 0 or -errno. */
static int loop_attach(const char *file, size_t len, char *dev, size_t dev_len)
{
	char cmd[256];
	FILE *p;
	int fd;

	if (geteuid() != 0)
		return -EPERM;
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) < 0) {
		close(fd);
		return -errno;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "losetup --find --show '%s' 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	if (!fgets(dev, (int)dev_len, p)) {
		pclose(p);
		return -ENODEV;
	}
	if (pclose(p) != 0)
		return -ENODEV;
	dev[strcspn(dev, "\n")] = 0;
	return 0;
}

static void loop_detach(const char *dev)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "losetup -d '%s'", dev);
	if (system(cmd) != 0)
		fprintf(stderr, "could not detach %s\n", dev);
}

/*
 * Class 1: a device namespace the caller names is honoured, and reopens; a
 * regular file is refused at creation as on reopening.
 */
static void test_device_namespace_roundtrip(void **state)
{
	struct fx *f = *state;
	struct ucmd_ns_params nsp = { .nsze = NSZE, .store = UCMD_NS_STORE_DEVICE, .attach = true };
	struct ucmd_ctrl_params p;
	char target[96], link[160], dev[64];
	int created = -1, rw = -1, ro = -1, rw_count = -1, ro_count = -1;
	struct ucmd_ctrl *c;
	struct host h;

	snprintf(target, sizeof(target), "%s.target", f->dir);
	write_file(target, "", 0600);
	assert_int_equal(truncate(target, IMG_BYTES), 0);
	nsp.path = target;
	params(f, &p, false);
	assert_int_equal(ucmd_ctrl_create(&p, &c), 0);
	assert_int_equal(ucmd_ctrl_ns_create(c, &nsp), -ENOTBLK);
	assert_non_null(strstr(f->err, "not a block device"));
	assert_int_equal(ucmd_ctrl_ns_count(c), 0);
	ucmd_ctrl_destroy(c);
	assert_int_equal(unlink(target), 0);

	if (loop_attach(target, IMG_BYTES, dev, sizeof(dev)))
		skip();	/* a block device of its own needs root and loop devices */
	/* the caller's path may go through a symlink: it is resolved at creation */
	snprintf(link, sizeof(link), "%s.link", f->dir);
	rw = symlink(dev, link);
	if (!rw) {
		nsp.path = link;
		created = host_open_ns(&h, &p, &nsp);
		if (created == 1)
			host_close(&h);
		unlink(link);
		rw = try_open(f, false, &c);
		if (!rw) {
			rw_count = ucmd_ctrl_ns_count(c);
			ucmd_ctrl_destroy(c);
		}
		ro = try_open(f, true, &c);
		if (!ro) {
			ro_count = ucmd_ctrl_ns_count(c);
			ucmd_ctrl_destroy(c);
		}
	}
	loop_detach(dev);	/* first: a failed assertion must not leave it attached */
	assert_int_equal(created, 1);
	assert_int_equal(rw, 0);
	assert_int_equal(rw_count, 1);
	assert_int_equal(ro, 0);
	assert_int_equal(ro_count, 1);
	assert_int_equal(size_of(target), IMG_BYTES);
}

/* Class 2: no ctrl.json but an image: refuse, change nothing, say how to recover. */
static void test_missing_state_keeps_images(void **state)
{
	struct fx *f = *state;
	struct ucmd_ns_params nsp = { .nsze = NSZE, .store = UCMD_NS_STORE_FILE, .attach = true };
	size_t len, len2;
	char *before, *after;
	struct ucmd_ctrl *c;

	make_ctrl(f);
	before = slurp(at(f, "ns1.img"), &len);
	assert_int_equal(unlink(at(f, "ctrl.json")), 0);
	expect_refused(f, false, -EUCLEAN, "restore ctrl.json");
	expect_refused(f, true, -EUCLEAN, "remove the images");
	after = slurp(at(f, "ns1.img"), &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(before, after, len);
	free(after);
	assert_int_equal(size_of(at(f, "ctrl.json")), -1);

	/* a new controller (after the user moved the image away) never takes over a file */
	char img[128], saved[128];

	snprintf(img, sizeof(img), "%s", at(f, "ns1.img"));
	snprintf(saved, sizeof(saved), "%s", at(f, "saved.img"));
	assert_int_equal(rename(img, saved), 0);
	assert_int_equal(try_open(f, false, &c), 0);
	assert_int_equal(rename(saved, img), 0);
	assert_int_equal(ucmd_ctrl_ns_create(c, &nsp), -EEXIST);
	assert_int_equal(ucmd_ctrl_ns_count(c), 0);
	ucmd_ctrl_destroy(c);
	after = slurp(at(f, "ns1.img"), &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(before, after, len);
	free(after);
	free(before);
}

/* Class 7: one writer; readers share; the refusal names the holder. */
static void test_lock(void **state)
{
	struct fx *f = *state;
	struct ucmd_ctrl *w, *r1, *r2, *c;
	char pid[32];

	make_ctrl(f);
	assert_int_equal(try_open(f, false, &w), 0);
	snprintf(pid, sizeof(pid), "in use by pid %ld", (long)getpid());
	expect_refused(f, false, -EBUSY, pid);
	expect_refused(f, true, -EBUSY, "in use");
	ucmd_ctrl_destroy(w);
	assert_int_equal(size_of(at(f, "ctrl.pid")), -1);
	assert_int_equal(try_open(f, true, &r1), 0);
	assert_int_equal(try_open(f, true, &r2), 0);
	expect_refused(f, false, -EBUSY, "in use");
	ucmd_ctrl_destroy(r1);
	ucmd_ctrl_destroy(r2);
	assert_int_equal(try_open(f, false, &c), 0);
	ucmd_ctrl_destroy(c);
	/* a killed writer's temp files go; nothing else does */
	write_file(at(f, ".ctrl.json.tmp.abcd1234"), "x", 0600);
	write_file(at(f, "notes.txt"), "x", 0600);
	assert_int_equal(try_open(f, false, &c), 0);
	ucmd_ctrl_destroy(c);
	assert_int_equal(size_of(at(f, ".ctrl.json.tmp.abcd1234")), -1);
	assert_int_equal(size_of(at(f, "notes.txt")), 1);
}

/* Class 10: read-only opens read, refuse changes, and write nothing. */
static void test_read_only(void **state)
{
	struct fx *f = *state;
	struct ucmd_ns_params nsp = { .nsze = 64, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct ucmd_ctrl_params p;
	struct host h;
	size_t len, len2;
	char *before, *after;
	uint8_t *r, e[4096];

	make_ctrl(f);
	before = slurp(at(f, "ctrl.json"), &len);
	params(f, &p, true);
	assert_int_equal(host_open(&h, &p), 0);
	assert_int_equal(host_create_io_queue(&h, 1, 16, true, 1), 0);
	r = host_alloc(&h, 4096);
	assert_int_equal(host_io(&h, nvme_cmd_read, 1, 0, 8, r, 4096, NULL, 0), 0);
	fill_pattern(e, sizeof(e), 7);
	assert_memory_equal(r, e, sizeof(e));
	assert_int_equal(host_io(&h, nvme_cmd_write, 1, 0, 8, r, 4096, NULL, 0), SC(0, 0x20) | DNR);
	assert_int_equal(host_io(&h, nvme_cmd_write_zeroes, 1, 0, 8, NULL, 0, NULL, 0),
			 SC(0, 0x20) | DNR);
	assert_int_equal(host_io(&h, nvme_cmd_write_uncor, 1, 0, 8, NULL, 0, NULL, 0),
			 SC(0, 0x20) | DNR);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_ARBITRATION, 1, true, NULL),
			 SC(0, 0x20) | DNR);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_ARBITRATION, 1, false, NULL), 0);
	assert_int_equal(host_io(&h, nvme_cmd_flush, 1, 0, 0, NULL, 0, NULL, 0), 0);
	assert_int_equal(ucmd_ctrl_ns_create(h.ctrl, &nsp), -EROFS);
	host_close(&h);
	after = slurp(at(f, "ctrl.json"), &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(before, after, len);
	free(before);
	free(after);
	/* nothing was left behind either: ctrl.json and ns1.img only */
	assert_int_equal(size_of(at(f, "ctrl.pid")), -1);
	/* no state at all: nothing to open read-only */
	assert_int_equal(unlink(at(f, "ctrl.json")), 0);
	assert_int_equal(unlink(at(f, "ns1.img")), 0);
	expect_refused(f, true, -ENOENT, "no ctrl.json");
}

/* Class 10: a full file system is Capacity Exceeded (EFBIG from RLIMIT_FSIZE here). */
static void test_full_is_capacity_exceeded(void **state)
{
	struct fx *f = *state;
	struct ucmd_ctrl_params p;
	struct rlimit old, lim = { .rlim_cur = 64 * 1024, .rlim_max = RLIM_INFINITY };
	struct host h;
	uint8_t *w;

	make_ctrl(f);
	params(f, &p, false);
	assert_int_equal(host_open(&h, &p), 0);
	assert_int_equal(host_create_io_queue(&h, 1, 16, true, 1), 0);
	w = host_alloc(&h, 4096);
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim.rlim_max = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	assert_int_equal(host_io(&h, nvme_cmd_write, 1, 1024, 8, w, 4096, NULL, 0), SC(0, 0x81));
	assert_int_equal(host_io(&h, nvme_cmd_write, 1, 0, 8, w, 4096, NULL, 0), 0);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	host_close(&h);
}

/* Class 11 and the owner rule: private files; group/world-writable refused. */
static void test_modes(void **state)
{
	struct fx *f = *state;
	struct stat sb;
	mode_t um = umask(022);

	assert_int_equal(rmdir(f->dir), 0);	/* the controller creates it */
	make_ctrl(f);
	assert_int_equal(stat(f->dir, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	assert_int_equal(stat(at(f, "ctrl.json"), &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(stat(at(f, "ns1.img"), &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	umask(um);

	assert_int_equal(chmod(f->dir, 0770), 0);
	expect_refused(f, false, -EPERM, "writable by group or others");
	assert_int_equal(chmod(f->dir, 0755), 0);	/* readable by others: allowed */
	assert_int_equal(chmod(at(f, "ns1.img"), 0666), 0);
	expect_refused(f, false, -EPERM, "ns1.img is writable by group or others");
	assert_int_equal(chmod(at(f, "ns1.img"), 0600), 0);
	assert_int_equal(chmod(at(f, "ctrl.json"), 0620), 0);
	expect_refused(f, true, -EPERM, "ctrl.json is writable by group or others");
	assert_int_equal(chmod(at(f, "ctrl.json"), 0600), 0);
	if (geteuid() == 0) {
		/* root in another user's directory: the confused deputy */
		assert_int_equal(chown(f->dir, 65534, 65534), 0);
		expect_refused(f, false, -EPERM, "owned by uid 65534");
		assert_int_equal(chown(f->dir, 0, 0), 0);
		assert_int_equal(chown(at(f, "ns1.img"), 65534, 65534), 0);
		expect_refused(f, false, -EPERM, "ns1.img is owned by uid 65534");
		assert_int_equal(chown(at(f, "ns1.img"), 0, 0), 0);
	}
	/* the directory itself as a symlink */
	char link[96];
	struct ucmd_ctrl_params p;
	struct ucmd_ctrl *c = NULL;

	snprintf(link, sizeof(link), "%s.target", f->dir);
	assert_int_equal(symlink(f->dir, link), 0);
	params(f, &p, false);
	p.dir = link;
	assert_int_equal(ucmd_ctrl_create(&p, &c), -ELOOP);
	assert_non_null(strstr(f->err, "symbolic link"));
	assert_int_equal(unlink(link), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_symlinked_image, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_image_size_mismatch, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_device_path_from_state, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fifo_never_blocks, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_device_namespace_roundtrip, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_missing_state_keeps_images, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_lock, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_read_only, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_full_is_capacity_exceeded, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_modes, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
