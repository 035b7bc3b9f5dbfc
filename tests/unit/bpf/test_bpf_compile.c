// SPDX-License-Identifier: MIT
/*
 * The policy compiler of the BPF LSM enforcer (src/bpf/compile.c), on the
 * host: what each rule becomes in the program's maps, which rules are left
 * out, and every policy it refuses whole with a reason. (The program itself
 * runs in the QEMU guest: tests/system/bpf_lsm.sh.)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <cmocka.h>

#include "ucmd_bpf.h"
#include "ucmd_lsm.h"

static const struct ucmd_bpf_dev devs[] = {
	{ .name = "ng0n1", .kind = UL_DEV_NG, .nsid = 1 },
	{ .name = "nvme0", .kind = UL_DEV_CTRL },
	{ .name = "nvme0n1", .kind = UL_DEV_BLK, .blk = true, .nsid = 1 },
	{ .name = "ng1n1", .kind = UL_DEV_NG, .nsid = 1, .ctrl = 1 },
};

static char path[64];

static const char *write_policy(const char *text)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/test_bpf_compile.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static int compile(const char *text, struct ucmd_bpf_image *img, char *err, size_t len)
{
	int ret = bpf_lsm_compile(write_policy(text), devs, 4, img, err, len);

	unlink(path);
	return ret;
}

static void test_rules(void **state)
{
	struct ucmd_bpf_image img;
	const struct ul_rule *r;
	char err[256] = "", want[128];

	(void)state;
	assert_int_equal(compile("[policy]\ndefault = allow\n"
				 "[rule plain]\nhook = rw\naction = deny\n"
				 "[rule tcp]\nhostnqn = nqn.x:*\naction = deny\n"
				 "[rule c]\nuid = 1000, 2000-2010\ndevice = ng*, nvme0\n"
				 "verb = read, write\nopcode = 1-2\nselect = 0x100, 5\n"
				 "lba = 0-99\nmode = rw\ncap-sys-admin = no\naction = allow\naudit = yes\n"
				 "[rule d]\ngid = 5\nnsid = 2\naction = deny\n",
				 &img, err, sizeof(err)), 0);
	/* rw and hostnqn rules cannot match a command on Linux's path */
	assert_int_equal(img.nrules, 2);
	assert_true(img.default_allow);
	r = &img.rules[0];
	assert_int_equal(r->index, 2);
	assert_int_equal(r->nuid, 2);
	assert_int_equal(r->uid[1].lo, 2000);
	assert_int_equal(r->uid[1].hi, 2010);
	assert_true(r->has_dev);
	assert_int_equal(r->devmask, 1u << 0 | 1u << 1 | 1u << 3);	/* ng0n1, nvme0, ng1n1 */
	assert_int_equal(r->verbs, 1u << UL_VERB_READ | 1u << UL_VERB_WRITE);
	assert_true(r->has_opcode);
	assert_int_equal(r->opcodes[0], 6);
	/* 0x100 is no 8-bit selector: only 5 can match */
	assert_true(r->has_select);
	assert_int_equal(r->selects[0], 1u << 5);
	assert_int_equal(r->selects[1] | r->selects[2] | r->selects[3], 0);
	assert_true(r->has_lba);
	assert_int_equal(r->lba.hi, 99);
	assert_int_equal(r->modes, 4);
	assert_int_equal(r->cap, 0);
	assert_int_equal(r->destructive, -1);
	assert_true(r->allow && r->audit);
	r = &img.rules[1];
	assert_int_equal(r->ngid, 1);
	assert_int_equal(r->nnsid, 1);
	assert_false(r->has_dev);
	assert_false(r->allow);
	snprintf(want, sizeof(want), "%s:9 c", path);
	assert_string_equal(img.labels[0], want);
	snprintf(want, sizeof(want), "%s: default", path);
	assert_string_equal(img.labels[UL_MAX_RULES], want);
	bpf_lsm_image_free(&img);
}

static void test_refusals(void **state)
{
	struct ucmd_bpf_image img;
	char err[256] = "", *big;
	size_t len = 0;

	(void)state;
	/* what the engine refuses, with its file:line reason */
	assert_int_equal(compile("[rule]\nverb = writ\naction = allow\n", &img, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, ":2: bad value 'writ' for 'verb'"));
	/* more values than the program holds in a key */
	assert_int_equal(compile("[rule many]\nuid = 1,2,3,4,5,6,7,8,9\naction = deny\n",
				 &img, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "9 values in uid; the BPF program holds 8"));
	assert_int_equal(compile("[rule many]\nnsid = 1,2,3,4,5,6,7,8,9\naction = deny\n",
				 &img, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "nsid"));
	/* more command rules than a set holds */
	big = malloc(64 * (UL_MAX_RULES + 2));
	assert_non_null(big);
	for (unsigned i = 0; i <= UL_MAX_RULES; i++)
		len += (size_t)sprintf(big + len, "[rule r%u]\nuid = %u\naction = deny\n", i, i);
	assert_int_equal(compile(big, &img, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "more than 128 rules"));
	free(big);
	/* more devices than the mask has bits */
	assert_int_equal(bpf_lsm_compile("/nonexistent", devs, UL_MAX_DEVS + 1, &img, err,
					  sizeof(err)), -E2BIG);
	/* a file that is not there */
	assert_int_not_equal(bpf_lsm_compile("/nonexistent.ini", devs, 4, &img, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "nonexistent.ini"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
