/* SPDX-License-Identifier: MIT */
/*
 * A controller directory of ctrl.json version 3 holds its protection tuples
 * as they read; version 4 stores them complemented (docs/store.md). Loading
 * a version 3 directory converts a PI namespace once, and a crash at any
 * point of the conversion leaves a directory that the next load finishes
 * with the same result. A version 4 directory is never converted; a
 * read-only controller reads a version 3 one as it is.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <nvme/types.h>

#include "host_sim.h"
#include "nvme/ctrl/ctrl_int.h"
#include "nvme/ctrl/pi.h"

#define PRCHK_ALL (NVME_IO_PRINFO_PRCHK_GUARD | NVME_IO_PRINFO_PRCHK_APP | NVME_IO_PRINFO_PRCHK_REF)
#define NSZE	64
#define LBAF	2	/* 512 + 16 */
#define MS	16
#define TUPLE	8	/* type 1, 16b guard, first in the metadata */

/* the blocks written: at the start, in the middle, at the end */
static const uint64_t written_at[] = { 0, 10, 60 };
#define RUN	4

#define IMG_LEN	(NSZE * (512 + MS))

struct fixture {
	char dir[64], json[96], img[96], rec[96];
	char loop_file[96];	/* the device variant: a loop device over it, at img */
	bool no_device;		/* no loop device here (not root): the test skips */
	char err[512];
	uint8_t md[NSZE * MS];	/* every block's metadata as it must read */
	char *old_json;		/* the version 3 directory, as the old code left it */
	size_t old_json_len;
	uint8_t old_img[IMG_LEN];
};

static uint16_t format_pi(struct host *h, uint32_t nsid)
{
	struct ucmd_nvme_sqe f = { .opcode = nvme_admin_format_nvm, .nsid = nsid };

	f.cdw10 = LBAF | 1u << 5 | 1u << 8;	/* PI type 1, first */
	return host_cmd(h, 0, &f, NULL);
}

static uint16_t io(struct host *h, uint8_t op, uint64_t slba, uint32_t nlb, void *buf,
		   void *meta, uint16_t control, uint32_t ilbrt)
{
	struct ucmd_nvme_sqe s = { .opcode = op, .nsid = 1 };

	host_set_prp(h, &s, buf, (size_t)nlb * 512);
	s.mptr = (uintptr_t)meta;
	s.cdw10 = (uint32_t)slba;
	s.cdw12 = (nlb - 1) | (uint32_t)control << 16;
	s.cdw14 = ilbrt;
	s.cdw15 = 0x77 | 0xffffu << 16;
	return host_cmd(h, 1, &s, NULL);
}

static void put(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

/* The namespace's store: nsN.img or the block device, IMG_LEN bytes */
static void img_io(struct fixture *f, void *buf, bool write)
{
	int fd = open(f->img, write ? O_WRONLY : O_RDONLY);

	assert_true(fd >= 0);
	if (write) {
		assert_int_equal(pwrite(fd, buf, IMG_LEN, 0), IMG_LEN);
		assert_int_equal(fsync(fd), 0);
	} else {
		assert_int_equal(pread(fd, buf, IMG_LEN, 0), IMG_LEN);
	}
	assert_int_equal(close(fd), 0);
}

/* A loop device over a fresh file (root only); false when there is none */
static bool loop_attach(struct fixture *f)
{
	char cmd[160];
	FILE *p;
	int fd;

	if (geteuid() != 0)
		return false;
	snprintf(f->loop_file, sizeof(f->loop_file), "%s.loop", f->dir);
	fd = open(f->loop_file, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1 << 20), 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "losetup --find --show '%s' 2>/dev/null", f->loop_file);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (!fgets(f->img, sizeof(f->img), p) || pclose(p) != 0)
		return false;
	f->img[strcspn(f->img, "\n")] = 0;
	return true;
}

static void set_version(struct fixture *f, int version)
{
	json_object *root = json_object_from_file(f->json);
	char crc[9];

	assert_non_null(root);
	json_object_object_add(root, "version", json_object_new_int(version));
	json_object_object_del(root, "crc32c");
	snprintf(crc, sizeof(crc), "%08x", ctrl_state_crc(root));
	json_object_object_add(root, "crc32c", json_object_new_string(crc));
	assert_int_equal(json_object_to_file_ext(f->json, root, JSON_C_TO_STRING_PRETTY), 0);
	json_object_put(root);
}

static int version_of(struct fixture *f)
{
	json_object *root = json_object_from_file(f->json), *v;
	int ver;

	assert_non_null(root);
	assert_true(json_object_object_get_ex(root, "version", &v));
	ver = json_object_get_int(v);
	json_object_put(root);
	return ver;
}

/*
 * A PI namespace written by this code (version 4), then turned by hand into
 * what the code before version 4 wrote: the same ctrl.json saying version 3,
 * and the written blocks' tuples stored as they read (unwritten ones zeros).
 */
static int setup_on(void **state, bool device)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = NSZE, .lbaf = LBAF, .store = UCMD_NS_STORE_FILE,
				      .attach = true };
	struct pi_fmt pf = { .type = 1, .pif = PI_PIF_16B, .first = true, .ms = MS, .lbads = 512 };
	struct host h;
	int fd;

	snprintf(f->dir, sizeof(f->dir), "%s/ucmd-pi-mig-XXXXXX",
		 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->json, sizeof(f->json), "%s/ctrl.json", f->dir);
	snprintf(f->img, sizeof(f->img), "%s/ns1.img", f->dir);
	snprintf(f->rec, sizeof(f->rec), "%s/ns1.pimig", f->dir);
	*state = f;
	if (device) {
		if (!loop_attach(f)) {
			f->no_device = true;
			return 0;
		}
		nsp.store = UCMD_NS_STORE_DEVICE;
		nsp.path = f->img;
	}
	host_default_params(&p);
	p.dir = f->dir;
	assert_int_equal(host_open_ns(&h, &p, &nsp), 1);
	assert_int_equal(format_pi(&h, 1), 0);
	uint8_t *d = host_alloc(&h, RUN * 512), *m = host_alloc(&h, RUN * MS);

	for (unsigned r = 0; r < 3; r++) {
		struct pi_cmd c = { .ilbrt = written_at[r], .slba = written_at[r], .lbat = 0x77 };

		fill_pattern(d, RUN * 512, r + 1);
		memset(m, 0x5a + r, RUN * MS);
		for (unsigned i = 0; i < RUN; i++)
			pi_generate(&pf, &c, i, d + i * 512, m + i * MS);
		assert_int_equal(io(&h, nvme_cmd_write, written_at[r], RUN, d, m, PRCHK_ALL,
				    (uint32_t)written_at[r]), 0);
		memcpy(f->md + written_at[r] * MS, m, RUN * MS);
	}
	host_close(&h);
	assert_int_equal(version_of(f), 4);
	set_version(f, 3);
	fd = open(f->img, O_RDWR);
	assert_true(fd >= 0);	/* buffered: fsync'd, and the controller's direct I/O sees it */
	for (unsigned r = 0; r < 3; r++)
		for (unsigned i = 0; i < RUN; i++) {
			off_t off = NSZE * 512 + (off_t)(written_at[r] + i) * MS;
			uint8_t t[TUPLE];

			assert_int_equal(pread(fd, t, TUPLE, off), TUPLE);
			for (unsigned b = 0; b < TUPLE; b++)
				t[b] ^= 0xff;
			assert_memory_equal(t, f->md + (written_at[r] + i) * MS, TUPLE);
			assert_int_equal(pwrite(fd, t, TUPLE, off), TUPLE);
		}
	assert_int_equal(fsync(fd), 0);
	assert_int_equal(close(fd), 0);
	f->old_json = slurp(f->json, &f->old_json_len);
	img_io(f, f->old_img, false);
	return 0;
}

static int setup(void **state)
{
	return setup_on(state, false);
}

static int setup_device(void **state)
{
	return setup_on(state, true);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	ctrl_pi_migrate_stop = 0;
	ctrl_pi_migrate_chunk = 1ull << 20;
	if (f->loop_file[0]) {
		char cmd[128];

		if (!f->no_device) {
			snprintf(cmd, sizeof(cmd), "losetup -d '%s'", f->img);
			assert_int_equal(system(cmd), 0);
		}
		unlink(f->loop_file);
	}
	assert_int_equal(host_rmdir(f->dir), 0);
	free(f->old_json);
	free(f);
	return 0;
}

/* Back to the version 3 directory, no conversion started */
static void restore(struct fixture *f)
{
	put(f->json, f->old_json, f->old_json_len);
	img_io(f, f->old_img, true);
	unlink(f->rec);
}

static int try_open(struct fixture *f, bool read_only)
{
	struct ucmd_ctrl_params p = { .dir = f->dir, .errbuf = f->err, .errbuf_len = sizeof(f->err),
				      .read_only = read_only };
	struct ucmd_ctrl *c;
	int ret;

	f->err[0] = 0;
	ret = ucmd_ctrl_create(&p, &c);
	if (!ret)
		ucmd_ctrl_destroy(c);
	return ret;
}

/* Every block's metadata reads as written (unwritten: as the old code kept it), checks pass */
static void assert_reads_back(struct fixture *f, bool read_only)
{
	struct ucmd_ctrl_params p;
	struct host h;

	host_default_params(&p);
	p.dir = f->dir;
	p.read_only = read_only;
	assert_int_equal(host_open(&h, &p), 0);
	assert_int_equal(host_create_io_queue(&h, 1, 64, true, 1), 0);
	uint8_t *d = host_alloc(&h, NSZE * 512), *m = host_alloc(&h, NSZE * MS);

	assert_int_equal(io(&h, nvme_cmd_read, 0, NSZE, d, m, 0, 0), 0);
	assert_memory_equal(m, f->md, NSZE * MS);
	for (unsigned r = 0; r < 3; r++)
		assert_int_equal(io(&h, nvme_cmd_read, written_at[r], RUN, d, m, PRCHK_ALL,
				    (uint32_t)written_at[r]), 0);
	host_close(&h);
}

static void test_v3_converted(void **state)
{
	struct fixture *f = *state;

	if (f->no_device)
		skip();	/* a block device of its own needs root and loop devices */
	assert_reads_back(f, false);
	assert_int_equal(version_of(f), 4);
	assert_int_equal(access(f->rec, F_OK), -1);
	/* converted once: the next open reads the same */
	assert_reads_back(f, false);
	assert_int_equal(version_of(f), 4);
}

/* A version 4 directory is read as it is: no conversion, no record read */
static void test_v4_not_converted(void **state)
{
	struct fixture *f = *state;
	static uint8_t before[IMG_LEN], after[IMG_LEN];

	assert_int_equal(try_open(f, false), 0);
	assert_int_equal(version_of(f), 4);
	/* one a crash after the version 4 save would have left: ignored, removed */
	put(f->rec, "not a record", 12);
	img_io(f, before, false);
	assert_int_equal(try_open(f, false), 0);
	img_io(f, after, false);
	assert_memory_equal(before, after, IMG_LEN);
	assert_int_equal(access(f->rec, F_OK), -1);
	assert_reads_back(f, false);
}

/*
 * Versions 1 and 2 predate protection: a PI namespace in one is a hand edit
 * of a version 4 state (docs/store.md: version 1 has no checksum), whose
 * tuples are stored complemented already, and are not converted again.
 */
static void test_v1_hand_edit(void **state)
{
	static const char *const v3_members[] = { "subnqn", "boot_id", "current_features",
		"error_log", "sanitize", "self_test", "self_test_run", "fw_slots", "crc32c",
		"generation", NULL };
	struct fixture *f = *state;
	char journal[128];
	json_object *root;

	assert_int_equal(try_open(f, false), 0);
	root = json_object_from_file(f->json);
	assert_non_null(root);
	for (const char *const *k = v3_members; *k; k++)
		json_object_object_del(root, *k);
	json_object_object_add(root, "version", json_object_new_int(1));
	assert_int_equal(json_object_to_file_ext(f->json, root, JSON_C_TO_STRING_PRETTY), 0);
	json_object_put(root);
	snprintf(journal, sizeof(journal), "%s/ctrl.journal", f->dir);
	assert_int_equal(unlink(journal), 0);
	assert_reads_back(f, false);
	assert_int_equal(version_of(f), 4);
}

/*
 * A crash after every durable step of the conversion (a record written, a
 * chunk converted), then another crash two steps into the resumed one: the
 * next open finishes with the right tuples.
 */
static void test_crash_mid_conversion(void **state)
{
	struct fixture *f = *state;
	/* 4 blocks a chunk: 16 chunks, two steps each */
	unsigned steps = 2 * NSZE / 4;

	if (f->no_device)
		skip();
	ctrl_pi_migrate_chunk = 4 * MS;
	for (unsigned k = 1; k <= steps; k++) {
		restore(f);
		ctrl_pi_migrate_stop = k;
		assert_int_equal(try_open(f, false), -EINTR);
		assert_non_null(strstr(f->err, "converting namespace 1's protection tuples"));
		assert_int_equal(version_of(f), 3);
		assert_int_equal(access(f->rec, F_OK), 0);
		/* the resumed one redoes the recorded chunk (a step), then goes on */
		if (k + 1 < steps) {
			ctrl_pi_migrate_stop = 2;
			assert_int_equal(try_open(f, false), -EINTR);
			assert_int_equal(version_of(f), 3);
		}
		ctrl_pi_migrate_stop = 0;
		assert_reads_back(f, false);
		assert_int_equal(version_of(f), 4);
		assert_int_equal(access(f->rec, F_OK), -1);
	}
}

/* Read-only: the old encoding read as it is, nothing written; not half converted */
static void test_read_only(void **state)
{
	struct fixture *f = *state;
	static uint8_t img[IMG_LEN];

	assert_reads_back(f, true);
	assert_int_equal(version_of(f), 3);
	img_io(f, img, false);
	assert_memory_equal(img, f->old_img, IMG_LEN);
	ctrl_pi_migrate_chunk = 4 * MS;
	ctrl_pi_migrate_stop = 5;
	assert_int_equal(try_open(f, false), -EINTR);
	ctrl_pi_migrate_stop = 0;
	assert_int_equal(try_open(f, true), -EUCLEAN);
	assert_non_null(strstr(f->err, "ns1.pimig: the conversion of namespace 1's protection "
				"tuples to version 4 was interrupted"));
	assert_reads_back(f, false);
}

/* A damaged record is refused, never applied */
static void test_damaged_record(void **state)
{
	struct fixture *f = *state;
	static uint8_t img[IMG_LEN], after[IMG_LEN];
	char *rec;
	size_t n;

	ctrl_pi_migrate_chunk = 4 * MS;
	ctrl_pi_migrate_stop = 3;
	assert_int_equal(try_open(f, false), -EINTR);
	ctrl_pi_migrate_stop = 0;
	rec = slurp(f->rec, &n);
	rec[n - 1] ^= 1;
	put(f->rec, rec, n);
	img_io(f, img, false);
	assert_int_equal(try_open(f, false), -EUCLEAN);
	assert_non_null(strstr(f->err, "ns1.pimig: damaged (checksum or range)"));
	img_io(f, after, false);
	assert_memory_equal(after, img, IMG_LEN);
	free(rec);
	assert_int_equal(version_of(f), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_v3_converted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v4_not_converted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v1_hand_edit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_mid_conversion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_record, setup, teardown),
		/* a block device namespace: converted in place the same way */
		cmocka_unit_test_setup_teardown(test_v3_converted, setup_device, teardown),
		cmocka_unit_test_setup_teardown(test_crash_mid_conversion, setup_device, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
