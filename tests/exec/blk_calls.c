/* SPDX-License-Identifier: MIT */
/*
 * The calls a program makes on a block namespace besides read and write,
 * made by a program linked statically or dynamically
 * (tests/system/exec_static_calls.sh builds it both ways):
 *
 *   blk_calls BLK OFF SEED
 *
 * At byte OFF: writev of two segments (4 KiB each, the pattern of SEED),
 * preadv back and compared; pwritev2 at the file position (offset -1,
 * RWF_DSYNC) of the pattern of SEED + 1 at OFF + 8 KiB after an lseek
 * there, then preadv2 at an explicit offset and compared, the position
 * checked to have moved by 8 KiB; readv at the position after lseek back;
 * fsync and fdatasync; lseek(0, SEEK_END) equal to BLKGETSIZE64; BLKSSZGET,
 * BLKPBSZGET, BLKGETSIZE printed. A read at the end gives 0 and a write
 * there ENOSPC. Prints "ok size N lbs L pbs P" and exit 0; exit 1 with a
 * line on stderr naming the call that failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#define SEG 4096u

static int die(const char *what)
{
	fprintf(stderr, "%s: %s\n", what, strerror(errno));
	exit(1);
}

static void pattern(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 9));
}

int main(int argc, char **argv)
{
	unsigned char *w, *r;
	uint64_t size;
	unsigned long sectors;
	int fd, lbs, pbs;
	off_t off, end;
	unsigned seed;

	if (argc < 4) {
		fprintf(stderr, "usage: blk_calls BLK OFF SEED\n");
		return 1;
	}
	off = (off_t)strtoull(argv[2], NULL, 0);
	seed = (unsigned)strtoul(argv[3], NULL, 0);
	fd = open(argv[1], O_RDWR);
	if (fd < 0)
		die(argv[1]);
	if (posix_memalign((void **)&w, 4096, 2 * SEG) || posix_memalign((void **)&r, 4096, 2 * SEG))
		return 1;

	struct iovec wv[2] = { { w, SEG }, { w + SEG, SEG } }, rv[2] = { { r, SEG }, { r + SEG, SEG } };

	pattern(w, 2 * SEG, seed);
	if (lseek(fd, off, SEEK_SET) != off)
		die("lseek SEEK_SET");
	if (writev(fd, wv, 2) != 2 * SEG)
		die("writev");
	if (lseek(fd, 0, SEEK_CUR) != off + 2 * SEG)
		die("writev did not move the position");
	memset(r, 0, 2 * SEG);
	if (preadv(fd, rv, 2, off) != 2 * SEG || memcmp(w, r, 2 * SEG))
		die("preadv");
	memset(r, 0, 2 * SEG);
	if (lseek(fd, off, SEEK_SET) != off || readv(fd, rv, 2) != 2 * SEG || memcmp(w, r, 2 * SEG))
		die("readv");

	pattern(w, 2 * SEG, seed + 1);
	if (pwritev2(fd, wv, 2, -1, RWF_DSYNC) != 2 * SEG)
		die("pwritev2 at the position");
	if (lseek(fd, 0, SEEK_CUR) != off + 4 * SEG)
		die("pwritev2(-1) did not move the position");
	memset(r, 0, 2 * SEG);
	if (preadv2(fd, rv, 2, off + 2 * SEG, 0) != 2 * SEG || memcmp(w, r, 2 * SEG))
		die("preadv2");
	if (lseek(fd, 0, SEEK_CUR) != off + 4 * SEG)
		die("preadv2 at an offset moved the position");
	if (pwritev(fd, wv, 1, off + 4 * SEG) != SEG)
		die("pwritev");
	if (fsync(fd))
		die("fsync");
	if (fdatasync(fd))
		die("fdatasync");

	if (ioctl(fd, BLKGETSIZE64, &size))
		die("BLKGETSIZE64");
	if (ioctl(fd, BLKGETSIZE, &sectors) || sectors != size >> 9)
		die("BLKGETSIZE");
	if (ioctl(fd, BLKSSZGET, &lbs) || ioctl(fd, BLKPBSZGET, &pbs))
		die("BLKSSZGET/BLKPBSZGET");
	if (ioctl(fd, BLKFLSBUF, 0))
		die("BLKFLSBUF");
	end = lseek(fd, 0, SEEK_END);
	if (end < 0 || (uint64_t)end != size)
		die("lseek SEEK_END is not BLKGETSIZE64");
	if (lseek(fd, 1, SEEK_END) != -1 || errno != EINVAL)
		die("lseek past the end did not fail with EINVAL");
	if (lseek(fd, -(off_t)SEG, SEEK_END) != end - (off_t)SEG)
		die("lseek SEEK_END - 4096");
	if (pread(fd, r, SEG, end) != 0)
		die("pread at the end is not 0");
	errno = 0;
	if (pwrite(fd, w, SEG, end) != -1 || errno != ENOSPC)
		die("pwrite at the end is not ENOSPC");
	/* across the end: short */
	if (pread(fd, r, 2 * SEG, end - SEG) != SEG)
		die("pread across the end is not short");
	printf("ok size %llu lbs %d pbs %d\n", (unsigned long long)size, lbs, pbs);
	close(fd);
	return 0;
}
