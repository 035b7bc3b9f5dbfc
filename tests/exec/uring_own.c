// SPDX-License-Identifier: MIT
/*
 * One io_uring ring doing I/O on a ucmd device and on the program's own
 * descriptors, as a server or fio with several files does:
 *
 *   uring_own /dev/nvme0n1 DIR [SETUP-FLAGS]
 *
 * On one ring (liburing, nothing of ucmd's): one submission mixing an
 * O_DIRECT write to the namespace with writes to a regular file in DIR, a
 * pipe and a socketpair, then reads of each back; a RECV that waits for
 * data sent after it was submitted; a linked chain of own requests (write,
 * fsync, read: the read sees the write); a chain linking a device write to
 * a file write (ucmd: -EINVAL, -ECANCELED, nothing written; Linux would run
 * it); registered files mixing the device and own descriptors
 * (IOSQE_FIXED_FILE) with registered buffers (WRITE_FIXED/READ_FIXED);
 * OPENAT, STATX, POLL_ADD, CLOSE, NOP; an OPENAT of the device (ucmd's, as
 * through libc) and a write on what it opened. Prints one line per check, "name
 * ok" or what went wrong; exit 1 on any failure. Under old ucmd the own
 * requests completed with -EBADF.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY (1U << 16)
#endif

#define NS_OFF (4096ull * 100)	/* where on the namespace the device writes go */

static struct io_uring ring;
static int failed;

static void check(const char *name, int ok, const char *fmt, long a, long b)
{
	if (ok) {
		printf("%s ok\n", name);
		return;
	}
	printf("%s: ", name);
	printf(fmt, a, b);
	printf("\n");
	failed = 1;
}

/*
 * The ring, set up with flags. liburing before 2.5 knows no
 * IORING_SETUP_NO_SQARRAY (its init writes an index array at sq_off.array,
 * which is 0 then): such a ring is set up with the system call and mapped
 * by liburing, the array it would fill a spare one nobody reads (its
 * submit writes none: the SQE at tail & mask is the next, as Linux takes it).
 */
static int ring_init(unsigned entries, unsigned flags)
{
	static unsigned spare[64];
	struct io_uring_params p;
	int fd, ret;

	if (!(flags & IORING_SETUP_NO_SQARRAY))
		return io_uring_queue_init(entries, &ring, flags);
	memset(&p, 0, sizeof(p));
	p.flags = flags;
	fd = (int)syscall(__NR_io_uring_setup, entries, &p);
	if (fd < 0)
		return -errno;
	if (p.sq_off.array || p.sq_entries > 64)
		return -EPROTO;	/* Linux tells of no array */
	ret = io_uring_queue_mmap(fd, &p, &ring);
	if (ret)
		return ret;
	ring.sq.array = spare;
	ring.features = p.features;
	return 0;
}

/*
 * Submit what is queued (nsub SQEs), then reap n CQEs into res[user_data]
 * (user_data < 64).
 */
static void submit_reap(const char *name, unsigned nsub, unsigned n, int res[64])
{
	struct io_uring_cqe *cqe;
	int ret = io_uring_submit(&ring);

	if (ret != (int)nsub) {
		check(name, 0, "submit %ld, want %ld", ret, nsub);
		exit(1);
	}
	for (unsigned i = 0; i < n; i++) {
		ret = io_uring_wait_cqe(&ring, &cqe);
		if (ret) {
			check(name, 0, "wait %ld (%ld)", ret, i);
			exit(1);
		}
		if (cqe->user_data >= 64) {
			check(name, 0, "user_data %ld (%ld)", (long)cqe->user_data, i);
			exit(1);
		}
		res[cqe->user_data] = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
	}
}

static struct io_uring_sqe *sqe_ud(uint64_t ud)
{
	struct io_uring_sqe *s = io_uring_get_sqe(&ring);

	io_uring_sqe_set_data64(s, ud);
	return s;
}

int main(int argc, char **argv)
{
	char path[4096], path2[4096], in[6][4096], *dbuf, *dbuf2, *fbuf;
	int dev, file, p[2], sv[2], res[64], ret;
	struct iovec iov[2];
	struct statx stx;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s /dev/nvme0n1 DIR [SETUP-FLAGS]\n", argv[0]);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/own.dat", argv[2]);
	snprintf(path2, sizeof(path2), "%s/opened.dat", argv[2]);
	dev = open(argv[1], O_RDWR | O_DIRECT);
	file = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (dev < 0 || file < 0 || pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) ||
	    posix_memalign((void **)&dbuf, 4096, 4096) || posix_memalign((void **)&dbuf2, 4096, 4096) ||
	    posix_memalign((void **)&fbuf, 4096, 8192) || ring_init(32, argc == 4 ? (unsigned)strtoul(argv[3], NULL, 0) : 0)) {
		perror("setup");
		return 1;
	}

	/* 1. one submission: the device, a file, a pipe, a socket */
	memset(dbuf, 0xd1, 4096);
	io_uring_prep_write(sqe_ud(1), dev, dbuf, 4096, NS_OFF);
	io_uring_prep_write(sqe_ud(2), file, "file-data", 9, 0);
	io_uring_prep_write(sqe_ud(3), p[1], "pipe-data", 9, 0);
	io_uring_prep_send(sqe_ud(4), sv[0], "sock-data", 9, 0);
	io_uring_prep_nop(sqe_ud(5));
	memset(res, 0x7f, sizeof(res));
	submit_reap("mixed_submit", 5, 5, res);
	check("mixed_dev_write", res[1] == 4096, "res %ld want %ld", res[1], 4096);
	check("mixed_file_write", res[2] == 9, "res %ld want %ld", res[2], 9);
	check("mixed_pipe_write", res[3] == 9, "res %ld want %ld", res[3], 9);
	check("mixed_sock_send", res[4] == 9, "res %ld want %ld", res[4], 9);
	check("mixed_nop", res[5] == 0, "res %ld want %ld", res[5], 0);

	memset(in, 0, sizeof(in));
	memset(dbuf2, 0, 4096);
	io_uring_prep_read(sqe_ud(6), dev, dbuf2, 4096, NS_OFF);
	io_uring_prep_read(sqe_ud(7), file, in[0], sizeof(in[0]), 0);
	io_uring_prep_read(sqe_ud(8), p[0], in[1], sizeof(in[1]), 0);
	io_uring_prep_recv(sqe_ud(9), sv[1], in[2], sizeof(in[2]), 0);
	submit_reap("mixed_read_submit", 4, 4, res);
	check("mixed_dev_read", res[6] == 4096 && !memcmp(dbuf, dbuf2, 4096), "res %ld want %ld",
	      res[6], 4096);
	check("mixed_file_read", res[7] == 9 && !memcmp(in[0], "file-data", 9), "res %ld want %ld",
	      res[7], 9);
	check("mixed_pipe_read", res[8] == 9 && !memcmp(in[1], "pipe-data", 9), "res %ld want %ld",
	      res[8], 9);
	check("mixed_sock_recv", res[9] == 9 && !memcmp(in[2], "sock-data", 9), "res %ld want %ld",
	      res[9], 9);

	/* 2. a RECV that waits: its CQE comes while the program waits in enter */
	{
		struct io_uring_cqe *cqe;

		memset(in[3], 0, sizeof(in[3]));
		io_uring_prep_recv(sqe_ud(10), sv[1], in[3], sizeof(in[3]), 0);
		ret = io_uring_submit(&ring);
		if (ret != 1 || write(sv[0], "late", 4) != 4) {
			check("waiting_recv", 0, "submit %ld (%ld)", ret, errno);
		} else {
			ret = io_uring_wait_cqe(&ring, &cqe);
			check("waiting_recv",
			      !ret && cqe->user_data == 10 && cqe->res == 4 && !memcmp(in[3], "late", 4),
			      "wait %ld res %ld", ret, ret ? 0 : cqe->res);
			if (!ret)
				io_uring_cqe_seen(&ring, cqe);
		}
	}

	/* 3. a chain of own requests keeps its order: write, fsync, read */
	{
		struct io_uring_sqe *s;

		memset(in[4], 0, sizeof(in[4]));
		s = sqe_ud(11);
		io_uring_prep_write(s, file, "chained!", 8, 100);
		s->flags |= IOSQE_IO_LINK;
		s = sqe_ud(12);
		io_uring_prep_fsync(s, file, 0);
		s->flags |= IOSQE_IO_LINK;
		io_uring_prep_read(sqe_ud(13), file, in[4], 8, 100);
		submit_reap("own_chain_submit", 3, 3, res);
		check("own_chain",
		      res[11] == 8 && res[12] == 0 && res[13] == 8 && !memcmp(in[4], "chained!", 8),
		      "write %ld read %ld", res[11], res[13]);
	}

	/* 4. a chain linking the device and a file: refused whole (docs/compat.md) */
	{
		struct io_uring_sqe *s;
		struct stat st;

		memset(dbuf, 0xe2, 4096);
		s = sqe_ud(14);
		io_uring_prep_write(s, dev, dbuf, 4096, NS_OFF + 4096);
		s->flags |= IOSQE_IO_LINK;
		io_uring_prep_write(sqe_ud(15), file, "never", 5, 4096);
		submit_reap("mixed_chain_submit", 2, 2, res);
		check("mixed_chain", res[14] == -EINVAL && res[15] == -ECANCELED, "res %ld, %ld", res[14],
		      res[15]);
		check("mixed_chain_not_run", !fstat(file, &st) && st.st_size < 4096, "size %ld %ld",
		      (long)st.st_size, 0);
	}

	/* 5. registered files (device, file, pipe) and registered buffers */
	{
		int fds[3] = { dev, file, p[1] };
		struct io_uring_sqe *s;

		memset(dbuf, 0xf3, 4096);
		memset(fbuf, 'R', 4096);
		memset(fbuf + 4096, 0, 4096);
		iov[0] = (struct iovec){ dbuf, 4096 };
		iov[1] = (struct iovec){ fbuf, 8192 };
		ret = io_uring_register_files(&ring, fds, 3);
		check("register_files", ret == 0, "ret %ld %ld", ret, 0);
		ret = io_uring_register_buffers(&ring, iov, 2);
		check("register_buffers", ret == 0, "ret %ld %ld", ret, 0);
		s = sqe_ud(16);
		io_uring_prep_write_fixed(s, 0, dbuf, 4096, NS_OFF + 8192, 0);
		s->flags |= IOSQE_FIXED_FILE;
		s = sqe_ud(17);
		io_uring_prep_write_fixed(s, 1, fbuf, 4096, 8192, 1);
		s->flags |= IOSQE_FIXED_FILE;
		s = sqe_ud(18);
		io_uring_prep_write(s, 2, "fixed-pipe", 10, 0);
		s->flags |= IOSQE_FIXED_FILE;
		submit_reap("fixed_submit", 3, 3, res);
		check("fixed_dev_write", res[16] == 4096, "res %ld want %ld", res[16], 4096);
		check("fixed_file_write_fixed", res[17] == 4096, "res %ld want %ld", res[17], 4096);
		check("fixed_pipe_write", res[18] == 10, "res %ld want %ld", res[18], 10);
		memset(dbuf2, 0, 4096);
		io_uring_prep_read(sqe_ud(19), dev, dbuf2, 4096, NS_OFF + 8192);
		s = sqe_ud(20);
		io_uring_prep_read_fixed(s, 1, fbuf + 4096, 4096, 8192, 1);
		s->flags |= IOSQE_FIXED_FILE;
		memset(in[5], 0, sizeof(in[5]));
		io_uring_prep_read(sqe_ud(21), p[0], in[5], sizeof(in[5]), 0);
		submit_reap("fixed_read_submit", 3, 3, res);
		check("fixed_dev_data", res[19] == 4096 && !memcmp(dbuf, dbuf2, 4096),
		      "res %ld want %ld", res[19], 4096);
		check("fixed_file_read_fixed", res[20] == 4096 && !memcmp(fbuf, fbuf + 4096, 4096),
		      "res %ld want %ld", res[20], 4096);
		check("fixed_pipe_data", res[21] == 10 && !memcmp(in[5], "fixed-pipe", 10),
		      "res %ld want %ld", res[21], 10);
	}

	/* 6. OPENAT, STATX, POLL_ADD, CLOSE */
	{
		struct io_uring_sqe *s;
		int nfd;

		io_uring_prep_openat(sqe_ud(22), AT_FDCWD, path2, O_RDWR | O_CREAT | O_TRUNC, 0600);
		memset(&stx, 0, sizeof(stx));
		io_uring_prep_statx(sqe_ud(23), AT_FDCWD, path, 0, STATX_SIZE, &stx);
		submit_reap("open_statx_submit", 2, 2, res);
		io_uring_prep_poll_add(sqe_ud(24), sv[1], POLLIN);
		if (io_uring_submit(&ring) != 1)
			check("poll_submit", 0, "%ld %ld", 0, 0);
		check("openat", res[22] >= 0, "res %ld %ld", res[22], 0);
		check("statx", res[23] == 0 && stx.stx_size == 8192 + 4096,
		      "res %ld size %ld", res[23], (long)stx.stx_size);
		nfd = res[22];
		/* the poll waits for data */
		if (write(sv[0], "x", 1) != 1)
			check("poll_write", 0, "errno %ld %ld", errno, 0);
		s = sqe_ud(25);
		io_uring_prep_write(s, nfd, "opened", 6, 0);
		s->flags |= IOSQE_IO_LINK;
		io_uring_prep_close(sqe_ud(26), nfd);
		submit_reap("close_submit", 2, 3, res);
		check("poll_add", res[24] > 0 && (res[24] & POLLIN), "res %ld %ld", res[24], 0);
		check("opened_write", res[25] == 6, "res %ld %ld", res[25], 6);
		check("close", res[26] == 0 && fcntl(nfd, F_GETFD) < 0, "res %ld %ld", res[26], 0);
	}
	/* 7. OPENAT of the device names ucmd's, as open(2) through libc does */
	{
		int dfd;

		io_uring_prep_openat(sqe_ud(27), AT_FDCWD, argv[1], O_RDWR | O_DIRECT, 0);
		submit_reap("open_dev_submit", 1, 1, res);
		check("openat_dev", res[27] >= 0, "res %ld %ld", res[27], 0);
		dfd = res[27];
		memset(dbuf, 0xa7, 4096);
		io_uring_prep_write(sqe_ud(28), dfd, dbuf, 4096, NS_OFF + 3 * 4096);
		submit_reap("opened_dev_write_submit", 1, 1, res);
		check("opened_dev_write", res[28] == 4096, "res %ld %ld", res[28], 4096);
		io_uring_prep_close(sqe_ud(29), dfd);
		submit_reap("close_dev_submit", 1, 1, res);
		check("close_dev", res[29] == 0, "res %ld %ld", res[29], 0);
	}
	io_uring_queue_exit(&ring);
	printf("%s\n", failed ? "FAILED" : "all ok");
	return failed;
}
