/* SPDX-License-Identifier: MIT */
/*
 * Copies of a device the program opened through libc (the preload's
 * descriptor), made with the program's own dup system call (no interposer
 * sees it: Go's syscall.Dup). Built against Debian's liburing alone.
 *
 *   rawdup_libc blk BLKPATH
 *     BLKPATH (/dev/nvmeXnY) opened O_RDWR through libc. For each call of
 *     the list, a new copy made with the program's own dup, and the call
 *     through libc as the copy's first: write, pwrite, writev, pwritev,
 *     sendfile (from a memfd), splice (from a pipe) of pattern B at block
 *     B (4096-byte blocks, B = 20..25; write, writev and sendfile at the
 *     position set by lseek through the original), fallocate
 *     (FALLOC_FL_ZERO_RANGE of block 26, written with pattern 26 first),
 *     then read, pread, readv, preadv of blocks 20..23 ("same" when they
 *     hold what was written), mmap, ftruncate, copy_file_range (to a
 *     memfd), fsync, fstat and statx(AT_EMPTY_PATH) ("block" when they
 *     say S_IFBLK), F_GETFL
 *     ("rdwr" when it says O_RDWR). Prints "NAME RES [what]" each.
 *     Then the same calls made with the program's own instruction, on the
 *     original and on a copy: "raw NAME RES" (an errno's name for each).
 *   rawdup_libc ng NGPATH BLKPATH
 *     NGPATH and BLKPATH opened O_RDWR through libc, a copy of each made
 *     with the program's own dup, and an SQE naming the copy submitted
 *     before any call on it through libc: an NVMe Write of pattern 30 at
 *     block 30 (IORING_OP_URING_CMD, "ng sqe RES"), an IORING_OP_WRITE of
 *     pattern 31 at block 31 ("blk sqe RES"). Then read through libc on a
 *     copy of NGPATH ("ng read RES": EINVAL as a char device).
 *   rawdup_libc aio BLKPATH
 *     BLKPATH opened O_RDWR | O_DIRECT through libc, and native aio
 *     (io_setup, io_submit, io_getevents through libc's syscall(), as
 *     libaio calls them) on copies made with the program's own dup, each
 *     iocb the first call on its copy: a PWRITE of pattern 34 at block 34
 *     ("aio write RES"), a PREAD of it ("aio read RES same|differs"), an
 *     FSYNC ("aio fsync RES").
 *   rawdup_libc pattern N
 *     Writes pattern N's 4096 bytes to stdout (what dd reads back).
 *
 * RES is ok, "positive" for a size, or the errno's name. Exit 0 either
 * way (1 on bad usage).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <linux/aio_abi.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rawdev.h"

#define BS 4096

static unsigned char buf[BS] __attribute__((aligned(4096)));
static unsigned char back[BS] __attribute__((aligned(4096)));

static void pattern(unsigned n)
{
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * (2 * n + 5) + 13 * n + 1);
}

/* a libc call's result as a name: its errno's, or ok (0) / positive */
static const char *res_of(long ret)
{
	return ret < 0 ? strerrorname_np(errno) : ret ? "positive" : "ok";
}

/* a raw call's result (-errno) as a name */
static const char *raw_res(long ret)
{
	return ret < 0 ? strerrorname_np((int)-ret) : ret ? "positive" : "ok";
}

static int copy_of(int fd)
{
	return (int)insn3(SYS_dup, fd, 0, 0);
}

/* a memfd holding pattern n's block, its position at 0 */
static int memfd_with(unsigned n)
{
	int m = memfd_create("rawdup_libc", 0);

	pattern(n);
	if (m < 0 || write(m, buf, BS) != BS || lseek(m, 0, SEEK_SET))
		return -1;
	return m;
}

static void writes(int fd)
{
	struct iovec iov = { buf, BS };
	int p[2], m;
	off_t at;
	long r;

	pattern(20);
	lseek(fd, 20 * BS, SEEK_SET);
	printf("write %s\n", res_of(write(copy_of(fd), buf, BS)));
	pattern(21);
	printf("pwrite %s\n", res_of(pwrite(copy_of(fd), buf, BS, 21 * BS)));
	pattern(22);
	lseek(fd, 22 * BS, SEEK_SET);
	printf("writev %s\n", res_of(writev(copy_of(fd), &iov, 1)));
	pattern(23);
	printf("pwritev %s\n", res_of(pwritev(copy_of(fd), &iov, 1, 23 * BS)));
	m = memfd_with(24);
	lseek(fd, 24 * BS, SEEK_SET);
	printf("sendfile %s\n", res_of(m < 0 ? -1 : sendfile(copy_of(fd), m, NULL, BS)));
	pattern(25);
	at = 25 * BS;
	if (pipe(p) || write(p[1], buf, BS) != BS)
		r = -1;
	else
		r = splice(p[0], NULL, copy_of(fd), &at, BS, 0);
	printf("splice %s\n", res_of(r));
	pattern(26);
	if (pwrite(fd, buf, BS, 26 * BS) != BS)
		printf("pwrite 26: %s\n", strerrorname_np(errno));
	r = fallocate(copy_of(fd), FALLOC_FL_ZERO_RANGE, 26 * BS, BS);
	memset(back, 0xa5, BS);
	if (pread(fd, back, BS, 26 * BS) != BS)
		printf("pread 26: %s\n", strerrorname_np(errno));
	memset(buf, 0, BS);
	printf("fallocate %s %s\n", res_of(r), memcmp(buf, back, BS) ? "kept" : "zeroes");
}

static void check(const char *name, long r, unsigned n)
{
	pattern(n);
	printf("%s %s %s\n", name, res_of(r), memcmp(buf, back, BS) ? "differs" : "same");
	memset(back, 0, BS);
}

static void reads(int fd)
{
	struct iovec iov = { back, BS };
	struct statx stx;
	struct stat st;
	void *map;
	long r;
	int m, fl;

	lseek(fd, 20 * BS, SEEK_SET);
	check("read", read(copy_of(fd), back, BS), 20);
	check("pread", pread(copy_of(fd), back, BS, 21 * BS), 21);
	lseek(fd, 22 * BS, SEEK_SET);
	check("readv", readv(copy_of(fd), &iov, 1), 22);
	check("preadv", preadv(copy_of(fd), &iov, 1, 23 * BS), 23);
	map = mmap(NULL, BS, PROT_READ, MAP_SHARED, copy_of(fd), 0);
	printf("mmap %s\n", map == MAP_FAILED ? strerrorname_np(errno) : "ok");
	printf("ftruncate %s\n", res_of(ftruncate(copy_of(fd), 0)));
	m = memfd_create("rawdup_libc", 0);
	r = copy_file_range(copy_of(fd), NULL, m, NULL, BS, 0);
	printf("copy_file_range %s\n", res_of(r));
	printf("fsync %s\n", res_of(fsync(copy_of(fd))));
	r = fstat(copy_of(fd), &st);
	printf("fstat %s %s\n", res_of(r), S_ISBLK(st.st_mode) ? "block" : "other");
	r = statx(copy_of(fd), "", AT_EMPTY_PATH, STATX_TYPE, &stx);
	printf("statx %s %s\n", res_of(r), S_ISBLK(stx.stx_mode) ? "block" : "other");
	fl = fcntl(copy_of(fd), F_GETFL);
	printf("F_GETFL %s %s\n", res_of(fl < 0 ? -1 : 0),
	       (fl & O_ACCMODE) == O_RDWR ? "rdwr" : "other");
}

/* the same calls with the program's own instruction on fd: each must fail */
static void raws(int fd)
{
	struct iovec iov = { buf, BS };
	int p[2], m = memfd_with(40);
	long r;

	printf("raw read %s\n", raw_res(insn3(SYS_read, fd, (long)back, BS)));
	printf("raw write %s\n", raw_res(insn3(SYS_write, fd, (long)buf, BS)));
	printf("raw pread64 %s\n", raw_res(insn4(SYS_pread64, fd, (long)back, BS, 0)));
	printf("raw pwrite64 %s\n", raw_res(insn4(SYS_pwrite64, fd, (long)buf, BS, 0)));
	printf("raw readv %s\n", raw_res(insn3(SYS_readv, fd, (long)&iov, 1)));
	printf("raw writev %s\n", raw_res(insn3(SYS_writev, fd, (long)&iov, 1)));
	r = insn6(SYS_mmap, 0, BS, PROT_READ, MAP_SHARED, fd, 0);
	printf("raw mmap %s\n", r < 0 && r > -4096 ? raw_res(r) : "ok");
	printf("raw fallocate %s\n", raw_res(insn4(SYS_fallocate, fd, 0, 0, BS)));
	printf("raw ftruncate %s\n", raw_res(insn3(SYS_ftruncate, fd, BS, 0)));
	printf("raw sendfile-in %s\n", raw_res(insn4(SYS_sendfile, m, fd, 0, BS)));
	printf("raw sendfile-out %s\n", raw_res(insn4(SYS_sendfile, fd, m, 0, BS)));
	if (pipe(p))
		return;
	printf("raw splice-in %s\n", raw_res(insn6(SYS_splice, fd, 0, p[1], 0, BS, 0)));
	if (write(p[1], buf, BS) != BS)
		return;
	printf("raw splice-out %s\n", raw_res(insn6(SYS_splice, p[0], 0, fd, 0, BS, 0)));
	printf("raw copy_file_range %s\n",
	       raw_res(insn6(SYS_copy_file_range, fd, 0, m, 0, BS, 0)));
	close(p[0]);
	close(p[1]);
	close(m);
}

static int blk(const char *path)
{
	int fd = open(path, O_RDWR);

	if (fd < 0) {
		printf("open: %s\n", strerrorname_np(errno));
		return 0;
	}
	writes(fd);
	reads(fd);
	raws(fd);
	raws(copy_of(fd));
	return 0;
}

/* an SQE naming a copy before any call on it through libc */
static int ng(const char *ngpath, const char *blkpath)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int fd = open(ngpath, O_RDWR), bfd = open(blkpath, O_RDWR), res;
	unsigned lbsz = 512;
	long nsid;

	if (fd < 0 || bfd < 0) {
		printf("open: %s\n", strerrorname_np(errno));
		return 0;
	}
	if ((nsid = rawdev_nsid(fd)) < 0 || rawdev_ring(&ring, NULL))
		return 0;
	/* the LBA size: a read of 8 LBAs of 512 at 0 fails on a namespace of 4096 */
	if (!rawdev_sqe(&ring, fd, 0x02, (uint32_t)nsid, buf, BS, 0, BS / 512) ||
	    io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe))
		return 0;
	if (cqe->res)
		lbsz = 4096;
	io_uring_cqe_seen(&ring, cqe);
	pattern(30);
	sqe = rawdev_sqe(&ring, copy_of(fd), 0x01, (uint32_t)nsid, buf, BS, 30 * BS / lbsz,
			 BS / lbsz);
	res = !sqe || io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe) ? -EIO
										    : cqe->res;
	if (sqe)
		io_uring_cqe_seen(&ring, cqe);
	printf("ng sqe %s\n", res < 0 ? strerrorname_np(-res) : res ? "positive" : "ok");
	pattern(31);
	sqe = io_uring_get_sqe(&ring);
	if (sqe)
		io_uring_prep_write(sqe, copy_of(bfd), buf, BS, 31 * BS);
	res = !sqe || io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe) ? -EIO
										    : cqe->res;
	if (sqe)
		io_uring_cqe_seen(&ring, cqe);
	printf("blk sqe %s\n", res == BS ? "ok" : res < 0 ? strerrorname_np(-res) : "short");
	io_uring_queue_exit(&ring);
	printf("ng read %s\n", res_of(read(copy_of(fd), back, BS)));
	return 0;
}

/* one iocb on a fresh raw copy of fd, submitted and waited for: its event's res, or -errno */
static long aio_one(aio_context_t ctx, int fd, unsigned op, void *b)
{
	struct iocb cb = { .aio_fildes = (uint32_t)copy_of(fd), .aio_lio_opcode = (uint16_t)op,
			   .aio_buf = (uint64_t)(uintptr_t)b, .aio_nbytes = b ? BS : 0,
			   .aio_offset = b ? 34 * BS : 0, .aio_data = 34 };
	struct iocb *list[1] = { &cb };
	struct io_event ev;

	if (syscall(SYS_io_submit, ctx, 1, list) != 1 ||
	    syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1)
		return -errno;
	return ev.data == 34 ? ev.res : -EIO;
}

static int aio(const char *blkpath)
{
	aio_context_t ctx = 0;
	int fd = open(blkpath, O_RDWR | O_DIRECT);
	long res;

	if (fd < 0 || syscall(SYS_io_setup, 4, &ctx)) {
		printf("setup: %s\n", strerrorname_np(errno));
		return 0;
	}
	pattern(34);
	res = aio_one(ctx, fd, IOCB_CMD_PWRITE, buf);
	printf("aio write %s\n", raw_res(res == BS ? 0 : res < 0 ? res : -EIO));
	memset(back, 0, sizeof(back));
	res = aio_one(ctx, fd, IOCB_CMD_PREAD, back);
	printf("aio read %s %s\n", raw_res(res == BS ? 0 : res < 0 ? res : -EIO),
	       memcmp(buf, back, BS) ? "differs" : "same");
	printf("aio fsync %s\n", raw_res(aio_one(ctx, fd, IOCB_CMD_FSYNC, NULL)));
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "blk"))
		return blk(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "aio"))
		return aio(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "ng"))
		return ng(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "pattern")) {
		pattern((unsigned)atoi(argv[2]));
		return fwrite(buf, BS, 1, stdout) == 1 ? 0 : 1;
	}
	fprintf(stderr, "usage: rawdup_libc blk BLKPATH | ng NGPATH BLKPATH | aio BLKPATH | pattern N\n");
	return 1;
}
