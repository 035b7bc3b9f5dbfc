/* SPDX-License-Identifier: MIT */
/*
 * Reads and writes of a block namespace that are not whole blocks, and
 * BLKDISCARD/BLKSECDISCARD/BLKZEROOUT, made by a program linked statically
 * or dynamically (tests/system/exec_blk_partial.sh builds it both ways and
 * runs it on a loop device too, where Linux answers):
 *
 *   blk_partial BLK OFF SEED IMAGE [CHR]
 *
 * On the 32 KiB at byte OFF (a multiple of 4096): whole blocks of the
 * pattern of SEED, then over them pwrite of 100 bytes at +1000 from an odd
 * address, pwritev of segments of 7, 5000 and 13 bytes at +8191, write of 3
 * bytes at the position +20001 (lseek), pwritev2 at the position; each
 * read back with pread, readv and preadv2 at odd offsets and lengths and
 * compared with what Linux's buffered block device would hold; the whole
 * 32 KiB read from an odd address. O_DIRECT: an odd offset, length or
 * address is EINVAL, whole blocks are served. A read-only fd: writes EBADF.
 * Then BLKZEROOUT and BLKDISCARD of the last two 4 KiB (zeroes read back:
 * the namespaces here read zeroes where deallocated) and their refusals:
 * read-only fd, empty, unaligned, past the end; BLKSECDISCARD. With CHR (a
 * generic node ngXnY): read and write on it, EBADF for the open's mode
 * before EINVAL for a device that has neither. One line per
 * check, "NAME RESULT" (an errno name or a count), so that two runs compare
 * line for line; the 32 KiB as they should be written to IMAGE; exit 0.
 * Exit 1 with a line on stderr when a read back differs.
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

#define LEN 32768u

static unsigned char want[LEN];	/* what the 32 KiB should hold */

static const char *err_name(int e)
{
	switch (e) {
	case EINVAL: return "EINVAL";
	case EBADF: return "EBADF";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOSPC: return "ENOSPC";
	case EFAULT: return "EFAULT";
	case ENOTTY: return "ENOTTY";
	default: return strerror(e);
	}
}

static void show(const char *what, long ret)
{
	if (ret < 0)
		printf("%s %s\n", what, err_name(errno));
	else
		printf("%s %ld\n", what, ret);
}

static void pattern(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 9));
}

static void same(const char *what, const unsigned char *got, size_t at, size_t n)
{
	if (memcmp(got, want + at, n)) {
		fprintf(stderr, "%s: read back differs\n", what);
		exit(1);
	}
}

static long range_ioctl(int fd, unsigned long req, uint64_t start, uint64_t len)
{
	uint64_t r[2] = { start, len };

	return ioctl(fd, req, r);
}

int main(int argc, char **argv)
{
	unsigned char *w, *r, *dbuf;
	uint64_t size;
	off_t off;
	unsigned seed;
	int fd, ro, dfd, lbs;
	FILE *img;

	if (argc < 5) {
		fprintf(stderr, "usage: blk_partial BLK OFF SEED IMAGE [CHR]\n");
		return 1;
	}
	off = (off_t)strtoull(argv[2], NULL, 0);
	seed = (unsigned)strtoul(argv[3], NULL, 0);
	fd = open(argv[1], O_RDWR);
	ro = open(argv[1], O_RDONLY);
	if (fd < 0 || ro < 0 || ioctl(fd, BLKGETSIZE64, &size) || ioctl(fd, BLKSSZGET, &lbs)) {
		perror(argv[1]);
		return 1;
	}
	if (posix_memalign((void **)&w, 4096, LEN + 64) || posix_memalign((void **)&r, 4096, LEN + 64) ||
	    posix_memalign((void **)&dbuf, 4096, LEN))
		return 1;

	/* whole blocks first: the bytes a partial write must keep around it */
	pattern(want, LEN, seed);
	memcpy(w, want, LEN);
	show("pwrite-whole", pwrite(fd, w, LEN, off));

	pattern(w, 128, seed + 1);
	memcpy(want + 1000, w + 3, 100);
	show("pwrite-odd", pwrite(fd, w + 3, 100, off + 1000));

	pattern(w, 5020, seed + 2);
	memcpy(want + 8191, w, 5020);
	struct iovec wv[3] = { { w, 7 }, { w + 7, 5000 }, { w + 5007, 13 } };
	show("pwritev-odd", pwritev(fd, wv, 3, off + 8191));

	show("lseek", lseek(fd, off + 20001, SEEK_SET) - off);
	memcpy(want + 20001, "abc", 3);
	show("write-odd", write(fd, "abc", 3));
	show("position", lseek(fd, 0, SEEK_CUR) - off);
	pattern(w, 700, seed + 3);
	memcpy(want + 20004, w, 700);
	struct iovec w2[1] = { { w, 700 } };
	show("pwritev2-position", pwritev2(fd, w2, 1, -1, RWF_DSYNC));
	show("position", lseek(fd, 0, SEEK_CUR) - off);

	memset(r, 0, LEN + 64);
	show("pread-odd", pread(fd, r, 102, off + 999));
	same("pread-odd", r, 999, 102);
	struct iovec rv[3] = { { r, 1 }, { r + 1, 4095 }, { r + 4096, 1030 } };
	show("lseek", lseek(fd, off + 8190, SEEK_SET) - off);
	show("readv-odd", readv(fd, rv, 3));
	same("readv-odd", r, 8190, 5126);
	show("position", lseek(fd, 0, SEEK_CUR) - off);
	struct iovec r2[1] = { { r, 710 } };
	show("preadv2-odd", preadv2(fd, r2, 1, off + 19999, 0));
	same("preadv2-odd", r, 19999, 710);
	show("pread-all-odd-address", pread(fd, r + 1, LEN, off));
	same("pread-all-odd-address", r + 1, 0, LEN);
	/* across the end: short, a partial last block */
	show("pread-across-end", pread(fd, r, 100, (off_t)size - 10));
	show("pwrite-across-end", pwrite(fd, r, 100, (off_t)size - 10));
	show("pwrite-odd-at-end", pwrite(fd, r, 1, (off_t)size));

	dfd = open(argv[1], O_RDWR | O_DIRECT);
	if (dfd < 0) {
		perror("O_DIRECT");
		return 1;
	}
	show("direct-pread-odd-offset", pread(dfd, dbuf, (size_t)lbs, off + 1));
	show("direct-pread-odd-length", pread(dfd, dbuf, 100, off));
	/* NVMe's DMA alignment is a dword; a loop device of Linux 6.18 takes any address */
	long n = pwrite(dfd, w + 1, (size_t)lbs, off);

	show("direct-pwrite-odd-address", n);
	if (n == lbs)
		memcpy(want, w + 1, (size_t)lbs);
	show("direct-pread", pread(dfd, dbuf, (size_t)lbs, off) == lbs);
	same("direct-pread", dbuf, 0, (size_t)lbs);
	close(dfd);

	show("ro-pwrite-odd", pwrite(ro, w, 10, off + 5));
	show("ro-pread-odd", pread(ro, r, 10, off + 5));
	same("ro-pread-odd", r, 5, 10);

	/* zeroes over the last 8 KiB of the 32 KiB: BLKZEROOUT then BLKDISCARD */
	uint64_t zo = (uint64_t)off + LEN - 8192, dc = (uint64_t)off + LEN - 4096;

	show("zeroout-ro", range_ioctl(ro, BLKZEROOUT, zo, 4096));
	show("zeroout-empty", range_ioctl(fd, BLKZEROOUT, zo, 0));
	show("zeroout-odd", range_ioctl(fd, BLKZEROOUT, (lbs > 512 ? zo + 512 : zo + 1), 4096));
	show("zeroout-odd-length", range_ioctl(fd, BLKZEROOUT, zo, 100));
	show("zeroout-past-end", range_ioctl(fd, BLKZEROOUT, size - 4096, 8192));
	show("zeroout", range_ioctl(fd, BLKZEROOUT, zo, 4096));
	memset(want + LEN - 8192, 0, 4096);
	show("discard-ro", range_ioctl(ro, BLKDISCARD, dc, 4096));
	show("discard-empty", range_ioctl(fd, BLKDISCARD, dc, 0));
	show("discard-odd", range_ioctl(fd, BLKDISCARD, (lbs > 512 ? dc + 512 : dc + 1), 4096));
	show("discard-past-end", range_ioctl(fd, BLKDISCARD, size - 4096, 8192));
	show("discard", range_ioctl(fd, BLKDISCARD, dc, 4096));
	memset(want + LEN - 4096, 0, 4096);
	show("secdiscard-ro", range_ioctl(ro, BLKSECDISCARD, dc, 4096));
	show("secdiscard", range_ioctl(fd, BLKSECDISCARD, dc, 4096));
	show("pread-after", pread(fd, r, LEN, off));
	same("pread-after", r, 0, LEN);

	/* a char device (ngXnY) has no read or write: but the open's mode is judged first */
	if (argc > 5) {
		int cr = open(argv[5], O_RDONLY), cw = open(argv[5], O_WRONLY), crw = open(argv[5], O_RDWR);

		if (cr < 0 || cw < 0 || crw < 0) {
			perror(argv[5]);
			return 1;
		}
		show("chr-ro-write", write(cr, w, 512));
		show("chr-wo-read", read(cw, r, 512));
		show("chr-read", read(crw, r, 512));
		show("chr-pwrite", pwrite(crw, w, 512, 0));
	}

	img = fopen(argv[4], "wb");
	if (!img || fwrite(want, 1, LEN, img) != LEN || fclose(img)) {
		perror(argv[4]);
		return 1;
	}
	printf("ok\n");
	return 0;
}
