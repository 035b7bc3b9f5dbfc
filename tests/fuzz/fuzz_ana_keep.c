/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: ucmdd's ucmdd-ports.json loader (src/server/ana_keep.c)
 * on any file content.
 *
 * Invariants: the answer is 0 or -EINVAL (a file this user owns, 0600,
 * is never refused for another reason); refused, every state is 0 and the
 * reason is said; accepted, every state is 0 or an ANA state (1, 2, 3, 4,
 * 15), and saving those ports and loading again gives them back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/ana_keep.h"

static int dfd = -1;

static void check(int ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t st[ANA_KEEP_MAX_PORTS][ANA_KEEP_GRPS], back[ANA_KEEP_MAX_PORTS][ANA_KEEP_GRPS];
	char err[256] = "";
	int fd, ret;

	if (dfd < 0) {
		char dir[] = "/tmp/fuzz-ana-keep-XXXXXX";

		check(mkdtemp(dir) != NULL);
		dfd = open(dir, O_RDONLY | O_DIRECTORY);
		check(dfd >= 0);
	}
	unlinkat(dfd, ANA_KEEP_FILE, 0);
	fd = openat(dfd, ANA_KEEP_FILE, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	check(fd >= 0);
	check(write(fd, data, size) == (ssize_t)size);
	close(fd);
	ret = ana_keep_load(dfd, st, err, sizeof(err));
	check(ret == 0 || ret == -EINVAL);
	for (unsigned p = 0; p < ANA_KEEP_MAX_PORTS; p++) {
		uint8_t s = st[p][0];

		check(ret ? s == 0 : (s == 0 || s == 1 || s == 2 || s == 3 || s == 4 || s == 15));
	}
	if (ret) {
		check(err[0] != 0);
		return 0;
	}
	/* the round trip: every port up to the last one the file set */
	unsigned nr = 0;
	for (unsigned p = 0; p < ANA_KEEP_MAX_PORTS; p++)
		if (st[p][0])
			nr = p + 1;
	for (unsigned p = 0; p < nr; p++)
		if (!st[p][0])
			st[p][0] = 1;	/* a port the file left out is saved optimized */
	check(ana_keep_save(dfd, st, nr) == 0);
	check(ana_keep_load(dfd, back, err, sizeof(err)) == 0);
	check(!memcmp(st, back, nr * sizeof(st[0])));
	return 0;
}
