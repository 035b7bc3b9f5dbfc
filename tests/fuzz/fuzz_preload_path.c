/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the path strings libucmd-preload judges for every
 * open(), stat() and opendir() of the program it is loaded into
 * (src/preload/pathname.c), on any bytes a program may pass.
 *
 * Invariants: the folded path is absolute, holds no "//" and no "/./" and
 * does not end in "/."; it is never longer than the input; folding again
 * changes nothing; a name pl_path_dev_name() accepts is one component
 * starting with nvme or ng and a digit; pl_path_under() agrees with a
 * plain prefix-and-boundary comparison. The device-number classifiers
 * (hostnvme.c's /proc/devices text, /sys/dev/block link, test majors)
 * take the input as their text and answer without a fault; a link they
 * call NVMe has "nvme" in it.
 *
 * Input: a path (NUL-terminated here), an optional second path after the
 * first NUL for pl_path_under(). Seeds: corpus/preload_path/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preload/preload.h"

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "invariant broken: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 2), *out, *again, *dir;
	size_t first;

	if (!in)
		return 0;
	/* the path as a program passes it: absolute, as paths.c folds only those */
	in[0] = '/';
	memcpy(in + 1, data, size);
	in[size + 1] = '\0';
	first = strlen(in);
	out = malloc(first + 2);
	again = malloc(first + 2);
	if (!out || !again)
		abort();
	pl_path_fold(out, in);
	check(out[0] == '/', "absolute");
	check(strlen(out) <= first, "no longer than the input");
	check(!strstr(out, "//"), "no //");
	check(!strstr(out, "/./"), "no /./");
	check(strlen(out) < 2 || strcmp(out + strlen(out) - 2, "/."), "no trailing /.");
	pl_path_fold(again, out);
	check(!strcmp(out, again), "idempotent");

	if (pl_path_dev_name(out + 1)) {
		const char *n = out + 1;

		check(!strchr(n, '/'), "a device name is one component");
		check((!strncmp(n, "nvme", 4) && n[4] >= '0' && n[4] <= '9') ||
		      (!strncmp(n, "ng", 2) && n[2] >= '0' && n[2] <= '9'), "nvme<digit> or ng<digit>");
	}

	/* the second path, if any, as a directory */
	dir = in + first + 1 <= in + size + 1 ? in + first + 1 : NULL;
	if (dir && *dir) {
		size_t n = strlen(dir);
		int expect = !strncmp(out, dir, n) && (out[n] == '\0' || out[n] == '/');

		check(pl_path_under(out, dir) == expect, "under agrees with prefix + boundary");
	}
	check(pl_path_under(out, out), "a path is under itself");

	/* the input as /proc/devices, a sysfs link, a test list */
	for (unsigned m = 0; m < 512; m += 37) {
		(void)pl_proc_devices_nvme(in + 1, m & 1, m);
		(void)pl_test_majors_has(in + 1, m & 1, m);
	}
	if (pl_sysfs_block_nvme(in + 1))
		check(strstr(in + 1, "nvme") != NULL, "an NVMe link names nvme");
	free(in);
	free(out);
	free(again);
	return 0;
}
