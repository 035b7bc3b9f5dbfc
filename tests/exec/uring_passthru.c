/* SPDX-License-Identifier: MIT */
/*
 * An ordinary liburing program: NVMe passthrough on /dev/ngXnY and
 * /dev/nvmeX, and plain I/O on /dev/nvmeXnY, written as liburing's own
 * test programs are (one function per case, a line per failure, exit 0
 * when all pass). It knows nothing of ucmd: it is built against Debian's
 * liburing alone, and tests/system/exec_liburing.sh runs it unchanged under
 * `ucmd exec`, where it must pass as it would on a Linux machine with an
 * NVMe drive (it can: `uring_passthru /dev/ng0n1 /dev/nvme0 /dev/nvme0n1`).
 *
 * It writes: run it on a scratch namespace only.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/nvme_ioctl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define BS 4096u		/* bytes per I/O; a multiple of every LBA size we use */
#define NVME_READ 0x02
#define NVME_WRITE 0x01
#define NVME_IDENTIFY 0x06

static const char *ng_path, *ctrl_path, *blk_path;
static unsigned lba_shift;	/* from Identify Namespace */
static unsigned nsid;

#define FAIL(...) do { fprintf(stderr, "%s:%d: ", __func__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)

static void *xalloc(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len))
		return NULL;
	return p;
}

static void fill(void *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		((unsigned char *)buf)[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 9));
}

/* liburing's, never NULL here: every ring is drained before the next SQE */
static struct io_uring_sqe *get_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe) {
		fprintf(stderr, "SQ full\n");
		exit(1);
	}
	return sqe;
}

/* One NVMe Read or Write in a big SQE. */
static void prep_rw(struct io_uring_sqe *sqe, int fd, bool write, uint64_t slba, void *buf,
		    unsigned len, bool vec)
{
	struct nvme_uring_cmd *cmd = (struct nvme_uring_cmd *)sqe->cmd;

	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = vec ? NVME_URING_CMD_IO_VEC : NVME_URING_CMD_IO;
	cmd->opcode = write ? NVME_WRITE : NVME_READ;
	cmd->nsid = nsid;
	cmd->addr = (uint64_t)(uintptr_t)buf;
	cmd->data_len = vec ? 3 : len;	/* vectored: the iovec count */
	cmd->cdw10 = (uint32_t)slba;
	cmd->cdw11 = (uint32_t)(slba >> 32);
	cmd->cdw12 = (len >> lba_shift) - 1;
}

static int wait_one(struct io_uring *ring, int *res, uint64_t *ud)
{
	struct io_uring_cqe *cqe;
	int ret = io_uring_wait_cqe(ring, &cqe);

	if (ret)
		return ret;
	*res = cqe->res;
	if (ud)
		*ud = cqe->user_data;
	io_uring_cqe_seen(ring, cqe);
	return 0;
}

/* Submit one prepared SQE and return its result. */
static int run_one(struct io_uring *ring)
{
	int ret = io_uring_submit(ring), res;

	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	ret = wait_one(ring, &res, NULL);
	return ret ? ret : res;
}

/*
 * Two Reads or Writes of one block, the first linked to the second
 * (IOSQE_IO_LINK), submitted together: 0 and their results in res[0] and
 * res[1] in submission order, whatever order they complete in; else -EIO.
 */
static int run_linked(struct io_uring *ring, int fd, bool w0, uint64_t lba0, void *b0, bool w1,
		      uint64_t lba1, void *b1, int res[2])
{
	struct io_uring_sqe *sqe = get_sqe(ring);
	uint64_t ud;
	int ret;

	prep_rw(sqe, fd, w0, lba0, b0, BS, false);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 0;
	sqe = get_sqe(ring);
	prep_rw(sqe, fd, w1, lba1, b1, BS, false);
	sqe->user_data = 1;
	if (io_uring_submit(ring) != 2)
		return -EIO;
	for (int i = 0; i < 2; i++) {
		if (wait_one(ring, &ret, &ud) || ud > 1)
			return -EIO;
		res[ud] = ret;
	}
	return 0;
}
static int identify(void)
{
	int fd = open(ctrl_path, O_RDONLY);
	int nfd = open(ng_path, O_RDONLY);
	unsigned char *id = xalloc(4096);
	struct nvme_passthru_cmd cmd = { .opcode = NVME_IDENTIFY, .data_len = 4096 };
	int ret;

	if (fd < 0 || nfd < 0 || !id)
		FAIL("open %s / %s: %s", ctrl_path, ng_path, strerror(errno));
	ret = ioctl(nfd, NVME_IOCTL_ID);
	if (ret <= 0)
		FAIL("NVME_IOCTL_ID: %d (%s)", ret, strerror(errno));
	nsid = (unsigned)ret;
	cmd.nsid = nsid;
	cmd.addr = (uint64_t)(uintptr_t)id;
	cmd.cdw10 = 0;	/* CNS 0: the namespace */
	ret = ioctl(fd, NVME_IOCTL_ADMIN_CMD, &cmd);
	if (ret)
		FAIL("identify ns: %d (%s)", ret, strerror(errno));
	/* FLBAS bits 3:0 pick the LBA format; LBADS at byte 2 of its 4-byte entry */
	lba_shift = id[128 + 4 * (id[26] & 0xf) + 2];
	if (lba_shift < 9 || lba_shift > 12)
		FAIL("LBA data size 2^%u", lba_shift);
	free(id);
	close(fd);
	close(nfd);
	return 0;
}

static int test_fstat(void)
{
	struct stat st;

	if (stat(ng_path, &st) || !S_ISCHR(st.st_mode))
		FAIL("%s is not a char device", ng_path);
	if (stat(ctrl_path, &st) || !S_ISCHR(st.st_mode))
		FAIL("%s is not a char device", ctrl_path);
	if (stat(blk_path, &st) || !S_ISBLK(st.st_mode))
		FAIL("%s is not a block device", blk_path);
	return 0;
}

/* Write, read back, compare: the basic case. */
static int test_rw(unsigned flags)
{
	struct io_uring ring;
	void *w = xalloc(BS), *r = xalloc(BS);
	int fd = open(ng_path, O_RDWR), ret;

	if (fd < 0 || !w || !r)
		FAIL("open: %s", strerror(errno));
	ret = io_uring_queue_init(8, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32 | flags);
	if (ret)
		FAIL("queue_init(%#x): %d", flags, ret);
	fill(w, BS, 1 + flags);
	prep_rw(get_sqe(&ring), fd, true, 8, w, BS, false);
	ret = run_one(&ring);
	if (ret)
		FAIL("write (%#x): %d", flags, ret);
	memset(r, 0, BS);
	prep_rw(get_sqe(&ring), fd, false, 8, r, BS, false);
	ret = run_one(&ring);
	if (ret)
		FAIL("read (%#x): %d", flags, ret);
	if (memcmp(w, r, BS))
		FAIL("read back differs (%#x)", flags);
	io_uring_queue_exit(&ring);
	close(fd);
	free(w);
	free(r);
	return 0;
}

static int test_vectored(void)
{
	struct io_uring ring;
	unsigned char *w = xalloc(3 * BS), *r = xalloc(3 * BS);
	struct iovec wv[3], rv[3];
	int fd = open(ng_path, O_RDWR), ret;

	if (fd < 0 || !w || !r)
		FAIL("open: %s", strerror(errno));
	if (io_uring_queue_init(8, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32))
		FAIL("queue_init");
	fill(w, 3 * BS, 5);
	memset(r, 0, 3 * BS);
	/* out of order in memory: the device must follow the iovec, not the addresses */
	for (int i = 0; i < 3; i++) {
		wv[i] = (struct iovec){ w + (2 - i) * BS, BS };
		rv[i] = (struct iovec){ r + (2 - i) * BS, BS };
	}
	prep_rw(get_sqe(&ring), fd, true, 64, wv, 3 * BS, true);
	ret = run_one(&ring);
	if (ret)
		FAIL("writev: %d", ret);
	prep_rw(get_sqe(&ring), fd, false, 64, rv, 3 * BS, true);
	ret = run_one(&ring);
	if (ret)
		FAIL("readv: %d", ret);
	if (memcmp(w, r, 3 * BS))
		FAIL("vectored read back differs");
	io_uring_queue_exit(&ring);
	close(fd);
	return 0;
}

/* Registered buffers (IORING_URING_CMD_FIXED) and registered files (IOSQE_FIXED_FILE). */
static int test_fixed(void)
{
	struct io_uring ring;
	struct iovec iov[3], seg[3];
	unsigned char *big, *flat = xalloc(3 * BS);
	int fd = open(ng_path, O_RDWR), ret;
	struct io_uring_sqe *sqe;

	if (fd < 0)
		FAIL("open: %s", strerror(errno));
	iov[0] = (struct iovec){ xalloc(BS), BS };
	iov[1] = (struct iovec){ xalloc(BS), BS };
	iov[2] = (struct iovec){ xalloc(4 * BS), 4 * BS };
	big = iov[2].iov_base;
	if (io_uring_queue_init(8, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32))
		FAIL("queue_init");
	ret = io_uring_register_buffers(&ring, iov, 3);
	if (ret)
		FAIL("register_buffers: %d", ret);
	ret = io_uring_register_files(&ring, &fd, 1);
	if (ret)
		FAIL("register_files: %d", ret);
	fill(iov[0].iov_base, BS, 9);
	memset(iov[1].iov_base, 0, BS);
	sqe = get_sqe(&ring);
	prep_rw(sqe, 0, true, 128, iov[0].iov_base, BS, false);
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
	sqe->buf_index = 0;
	ret = run_one(&ring);
	if (ret)
		FAIL("fixed write: %d", ret);
	sqe = get_sqe(&ring);
	prep_rw(sqe, 0, false, 128, iov[1].iov_base, BS, false);
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
	sqe->buf_index = 1;
	ret = run_one(&ring);
	if (ret)
		FAIL("fixed read: %d", ret);
	if (memcmp(iov[0].iov_base, iov[1].iov_base, BS))
		FAIL("fixed read back differs");
	/* a buffer index past the table is refused */
	sqe = get_sqe(&ring);
	prep_rw(sqe, 0, false, 128, iov[1].iov_base, BS, false);
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
	sqe->buf_index = 7;
	ret = run_one(&ring);
	if (ret != -EFAULT)
		FAIL("buf_index 7: %d, want -EFAULT", ret);
	/* vectored fixed buffers (Linux 6.15): segments of registered buffer 2 */
	fill(big, 4 * BS, 21);
	seg[0] = (struct iovec){ big + 2 * BS, BS };
	seg[1] = (struct iovec){ big, BS };
	seg[2] = (struct iovec){ big + 3 * BS, BS };
	sqe = get_sqe(&ring);
	prep_rw(sqe, 0, true, 256, seg, 3 * BS, true);
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
	sqe->buf_index = 2;
	ret = run_one(&ring);
	if (ret)
		FAIL("vectored fixed write: %d", ret);
	sqe = get_sqe(&ring);
	prep_rw(sqe, fd, false, 256, flat, 3 * BS, false);
	ret = run_one(&ring);
	if (ret)
		FAIL("read after the vectored fixed write: %d", ret);
	if (memcmp(flat, big + 2 * BS, BS) || memcmp(flat + BS, big, BS) ||
	    memcmp(flat + 2 * BS, big + 3 * BS, BS))
		FAIL("vectored fixed write: the segments did not reach the namespace in order");
	memset(big, 0, 4 * BS);
	sqe = get_sqe(&ring);
	prep_rw(sqe, 0, false, 256, seg, 3 * BS, true);
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
	sqe->buf_index = 2;
	ret = run_one(&ring);
	if (ret)
		FAIL("vectored fixed read: %d", ret);
	if (memcmp(flat, big + 2 * BS, BS) || memcmp(flat + BS, big, BS) ||
	    memcmp(flat + 2 * BS, big + 3 * BS, BS))
		FAIL("vectored fixed read: the segments differ");
	/* a segment outside the registered buffer: -EFAULT, as io_import_reg_vec */
	seg[1] = (struct iovec){ flat, BS };
	sqe = get_sqe(&ring);
	prep_rw(sqe, 0, false, 256, seg, 3 * BS, true);
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
	sqe->buf_index = 2;
	ret = run_one(&ring);
	if (ret != -EFAULT)
		FAIL("a vectored fixed segment outside the buffer: %d, want -EFAULT", ret);
	io_uring_queue_exit(&ring);
	close(fd);
	return 0;
}

/* A linked write then read; a failing link cancels what follows it. */
static int test_linked(void)
{
	struct io_uring ring;
	void *w = xalloc(BS), *r = xalloc(BS);
	int fd = open(ng_path, O_RDWR), res[2];

	if (fd < 0 || io_uring_queue_init(8, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32))
		FAIL("setup");
	fill(w, BS, 11);
	memset(r, 0, BS);
	if (run_linked(&ring, fd, true, 256, w, false, 256, r, res))
		FAIL("submit and wait for a linked pair");
	if (res[0] || res[1] || memcmp(w, r, BS))
		FAIL("linked write/read: %d %d", res[0], res[1]);
	/*
	 * A Read linked to a Write on one buffer (liburing's link-cp): the
	 * Write runs after the Read and sends what the Read brought there,
	 * never what the buffer held at submission.
	 */
	fill(w, BS, 12);
	if ((prep_rw(get_sqe(&ring), fd, true, 260, w, BS, false), run_one(&ring)) != 0)
		FAIL("write LBA 260");
	memset(r, 0x5a, BS);
	if (run_linked(&ring, fd, false, 260, r, true, 264, r, res))
		FAIL("submit and wait for a linked pair");
	if (res[0] || res[1])
		FAIL("linked read/write: %d %d", res[0], res[1]);
	memset(r, 0, BS);
	if ((prep_rw(get_sqe(&ring), fd, false, 264, r, BS, false), run_one(&ring)) != 0)
		FAIL("read LBA 264");
	if (memcmp(w, r, BS))
		FAIL("the linked write sent what the buffer held before its read");
	/*
	 * An NVMe error is a positive status in res and, as on Linux, does not
	 * break the link (io_uring fails a request on res < 0 only): a Read
	 * past the namespace's end (LBA Out of Range), then its partner runs.
	 */
	if (run_linked(&ring, fd, false, ~0ull >> 1, r, false, 256, r, res))
		FAIL("submit and wait for a linked pair");
	if ((res[0] & 0x7ff) != 0x80 || res[1] != 0)
		FAIL("status link: %#x %d (want status 0x80, 0)", res[0], res[1]);
	/*
	 * A request that fails (-EFAULT: a Write from a buffer nobody mapped)
	 * cancels its partner. (A Read into such a buffer is EFAULT too, but
	 * through ucmdd only once the data comes back: docs/compat.md.)
	 */
	if (run_linked(&ring, fd, true, 256, (void *)(uintptr_t)4096, false, 256, r, res))
		FAIL("submit and wait for a linked pair");
	if (res[0] != -EFAULT || res[1] != -ECANCELED)
		FAIL("failed link: %d %d (want -EFAULT, -ECANCELED)", res[0], res[1]);
	io_uring_queue_exit(&ring);
	close(fd);
	return 0;
}

/* NVME_URING_CMD_ADMIN on the controller: Identify Controller. */
static int test_admin(void)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct nvme_uring_cmd *cmd;
	unsigned char *id = xalloc(4096);
	int fd = open(ctrl_path, O_RDONLY), ret;

	if (fd < 0 || io_uring_queue_init(4, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32))
		FAIL("setup: %s", strerror(errno));
	memset(id, 0, 4096);
	sqe = get_sqe(&ring);
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = NVME_URING_CMD_ADMIN;
	cmd = (struct nvme_uring_cmd *)sqe->cmd;
	cmd->opcode = NVME_IDENTIFY;
	cmd->addr = (uint64_t)(uintptr_t)id;
	cmd->data_len = 4096;
	cmd->cdw10 = 1;	/* CNS 1: the controller */
	ret = run_one(&ring);
	if (ret)
		FAIL("identify controller: %d", ret);
	/* VID and the serial number's first byte: something the controller filled */
	if (!id[4] || id[4] == ' ')
		FAIL("identify controller: empty serial number");
	io_uring_queue_exit(&ring);
	close(fd);
	return 0;
}

/* Plain reads and writes on the block device, O_DIRECT. */
static int test_block(void)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct iovec iov[2];
	unsigned char *w = xalloc(2 * BS), *r = xalloc(2 * BS);
	int fd = open(blk_path, O_RDWR | O_DIRECT), ret;

	if (fd < 0 || io_uring_queue_init(8, &ring, 0))
		FAIL("setup: %s", strerror(errno));
	fill(w, 2 * BS, 21);
	memset(r, 0, 2 * BS);
	sqe = get_sqe(&ring);
	io_uring_prep_write(sqe, fd, w, BS, 512 * BS);
	if ((ret = run_one(&ring)) != (int)BS)
		FAIL("write: %d", ret);
	sqe = get_sqe(&ring);
	io_uring_prep_read(sqe, fd, r, BS, 512 * BS);
	if ((ret = run_one(&ring)) != (int)BS || memcmp(w, r, BS))
		FAIL("read: %d", ret);
	iov[0] = (struct iovec){ w, BS };
	iov[1] = (struct iovec){ w + BS, BS };
	sqe = get_sqe(&ring);
	io_uring_prep_writev(sqe, fd, iov, 2, 520 * BS);
	if ((ret = run_one(&ring)) != (int)(2 * BS))
		FAIL("writev: %d", ret);
	iov[0] = (struct iovec){ r, BS };
	iov[1] = (struct iovec){ r + BS, BS };
	memset(r, 0, 2 * BS);
	sqe = get_sqe(&ring);
	io_uring_prep_readv(sqe, fd, iov, 2, 520 * BS);
	if ((ret = run_one(&ring)) != (int)(2 * BS) || memcmp(w, r, 2 * BS))
		FAIL("readv: %d", ret);
	/* READ_FIXED / WRITE_FIXED */
	iov[0] = (struct iovec){ w, 2 * BS };
	iov[1] = (struct iovec){ r, 2 * BS };
	if ((ret = io_uring_register_buffers(&ring, iov, 2)))
		FAIL("register_buffers: %d", ret);
	fill(w, 2 * BS, 23);
	sqe = get_sqe(&ring);
	io_uring_prep_write_fixed(sqe, fd, w, 2 * BS, 530 * BS, 0);
	if ((ret = run_one(&ring)) != (int)(2 * BS))
		FAIL("write_fixed: %d", ret);
	memset(r, 0, 2 * BS);
	sqe = get_sqe(&ring);
	io_uring_prep_read_fixed(sqe, fd, r, 2 * BS, 530 * BS, 1);
	if ((ret = run_one(&ring)) != (int)(2 * BS) || memcmp(w, r, 2 * BS))
		FAIL("read_fixed: %d", ret);
	/* O_DIRECT rules: a misaligned offset is -EINVAL */
	sqe = get_sqe(&ring);
	io_uring_prep_read(sqe, fd, r, BS, 512 * BS + 100);
	if ((ret = run_one(&ring)) != -EINVAL)
		FAIL("misaligned read: %d, want -EINVAL", ret);
	io_uring_queue_exit(&ring);
	close(fd);
	return 0;
}

/* Errors a program meets on Linux, met the same way. */
static int test_errors(void)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	char buf[64];
	int fd = open(ng_path, O_RDWR), ret;

	if (fd < 0)
		FAIL("open");
	/* a uring_cmd on a ring without big SQEs and CQEs: 6.1's nvme_uring_cmd_checks() */
	if (io_uring_queue_init(4, &ring, 0))
		FAIL("queue_init");
	sqe = get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = NVME_URING_CMD_IO;
	ret = run_one(&ring);
	if (ret != -EOPNOTSUPP)
		FAIL("uring_cmd without SQE128: %d, want -EOPNOTSUPP", ret);
	/* a descriptor that is not open */
	sqe = get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = 999;
	ret = run_one(&ring);
	if (ret != -EBADF)
		FAIL("bad fd: %d, want -EBADF", ret);
	io_uring_queue_exit(&ring);
	/* read(2) on the generic char device: it has no read */
	if (read(fd, buf, sizeof(buf)) != -1 || errno != EINVAL)
		FAIL("read() on %s: want EINVAL, got %s", ng_path, strerror(errno));
	/* an ioctl the device does not have */
	if (ioctl(fd, _IO('N', 0x7f)) != -1 || errno != ENOTTY)
		FAIL("unknown ioctl: want ENOTTY, got %s", strerror(errno));
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct { const char *name; int (*fn)(void); } tests[] = {
		{ "fstat", test_fstat }, { "vectored", test_vectored },
		{ "fixed", test_fixed }, { "linked", test_linked }, { "admin", test_admin },
		{ "block", test_block }, { "errors", test_errors },
	};
	static const unsigned ring_flags[] = { 0, IORING_SETUP_SQPOLL, IORING_SETUP_IOPOLL };
	int failed = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: %s /dev/ngXnY /dev/nvmeX /dev/nvmeXnY\n", argv[0]);
		return 2;
	}
	ng_path = argv[1];
	ctrl_path = argv[2];
	blk_path = argv[3];
	if (identify())
		return 1;
	for (unsigned i = 0; i < sizeof(ring_flags) / sizeof(ring_flags[0]); i++) {
		int ret = test_rw(ring_flags[i]);

		printf("rw (ring flags %#x): %s\n", ring_flags[i], ret ? "FAIL" : "ok");
		failed |= ret;
	}
	for (unsigned i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		int ret = tests[i].fn();

		printf("%s: %s\n", tests[i].name, ret ? "FAIL" : "ok");
		failed |= ret;
	}
	return failed;
}
