/* SPDX-License-Identifier: MIT */
/*
 * daemon_client SUBCOMMAND [options]: a client of ucmdd for the system tests.
 *
 *   rw            write a pattern over [slba, slba + nlb*count), flush, read it
 *                 back and verify (--verify-only: read and verify; --read-only:
 *                 read, only the results checked)
 *   expect-errno  one write, read or format (the word after the subcommand);
 *                 prints OK, the errno name or NVME_0x<status>; --want X: exit 1
 *                 unless that is the answer
 *   race          reads while a thread flips each SQE's NVMe opcode to Write in
 *                 the shared SQ (dc_race.c); prints flipped-writes-executed N
 *   hold          keep I/O in flight (and a long TIMEOUT) until killed;
 *                 --until-error: synchronous reads until a call fails, print
 *                 the errno name and exit 0
 *   flood         submit without reaping until the daemon pushes back (dc_flood.c)
 *   garbage       random ring contents and protocol messages (dc_garbage.c)
 *   hostile WHAT  a client using what the protocol gives it against the daemon:
 *                 eventfds held full, idle rings, quotas (dc_hostile.c)
 *   rr            4 KiB random reads at --qd for --seconds; prints iops N
 *   link-rw       --count pairs of a Read linked (IOSQE_IO_LINK) to a Write on
 *                 one plain buffer: block slba+i copied to slba+count+i
 *                 through the buffer; the Write must send what the Read
 *                 brought (--buf alloc: a shared region instead; --fixed:
 *                 the buffer registered, pair i's Read and Write through it
 *                 as fixed-fixed, fixed-plain, plain-fixed by i % 3)
 *
 * Options: --daemon PATH (default $UCMD_DAEMON) --ns ng0n1 --ctrl nvme0
 *   --slba N --nlb N --count N --seed N --iters N --seconds S --qd N
 *   --entries N --buf alloc|malloc --fixed --want NAME --stall-ms N --limit N
 *   --verify-only --read-only --no-reap --until-error
 *
 * Exit 0 when every check passed; 1 with a line on stderr saying what failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dc.h"

void dc_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "daemon_client: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

double dc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *dc_res_name(int res, char *buf, size_t len)
{
	static const struct { int e; const char *n; } names[] = {
		{ EACCES, "EACCES" }, { EPERM, "EPERM" }, { ENOTCONN, "ENOTCONN" },
		{ ECONNRESET, "ECONNRESET" }, { EPIPE, "EPIPE" }, { EBADF, "EBADF" },
		{ EINVAL, "EINVAL" }, { EFAULT, "EFAULT" }, { ENOTTY, "ENOTTY" },
		{ ENOENT, "ENOENT" }, { EIO, "EIO" }, { ECANCELED, "ECANCELED" },
		{ ETIME, "ETIME" }, { EBUSY, "EBUSY" }, { ENOMEM, "ENOMEM" },
		{ EAGAIN, "EAGAIN" }, { EOPNOTSUPP, "EOPNOTSUPP" }, { EROFS, "EROFS" },
		{ EDQUOT, "EDQUOT" }, { EUSERS, "EUSERS" }, { ENFILE, "ENFILE" }, { EMFILE, "EMFILE" },
	};

	if (res == 0)
		return "OK";
	if (res > 0) {
		snprintf(buf, len, "NVME_0x%x", (unsigned)res);
		return buf;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == -res)
			return names[i].n;
	snprintf(buf, len, "E%d", -res);
	return buf;
}

/* ---- patterns ---- */

void dc_pattern(void *buf, uint32_t lba_size, uint64_t seed, uint64_t lba)
{
	uint64_t *w = buf, s = seed * 0x100000001b3ull ^ lba;

	for (uint32_t i = 0; i < lba_size / 8; i++)
		w[i] = dc_rand(&s);
	/* the block says what it is, for a human reading a dump */
	w[0] = lba;
	w[1] = seed;
}

void dc_marker(void *buf, uint32_t lba_size)
{
	memset(buf, 0xf1, lba_size);
	memcpy(buf, "FLIPPED-WRITE", 13);
}

bool dc_is_marker(const void *buf, uint32_t lba_size)
{
	return memcmp(buf, "FLIPPED-WRITE", 13) == 0 && ((const uint8_t *)buf)[lba_size - 1] == 0xf1;
}

/* ---- the connection ---- */

void *dc_buf(struct dc *c, size_t len)
{
	void *p;

	if (c->o->buf_alloc)
		return ucmd_buf_alloc(c->e, len);
	if (posix_memalign(&p, 4096, len))
		return NULL;
	return p;
}

void dc_buf_free(struct dc *c, void *p)
{
	if (c->o->buf_alloc)
		ucmd_buf_free(c->e, p);
	else
		free(p);
}

void dc_prep_io(struct dc *c, struct io_uring_sqe *sqe, uint8_t opcode, uint64_t slba,
		uint32_t nlb, void *buf)
{
	struct nvme_uring_cmd cmd = {
		.opcode = opcode,
		.nsid = c->nsid,
		.addr = (uint64_t)(uintptr_t)buf,
		.data_len = buf ? nlb * c->lba : 0,
		.cdw10 = (uint32_t)slba,
		.cdw11 = (uint32_t)(slba >> 32),
		.cdw12 = nlb ? nlb - 1 : 0,
	};

	ucmd_prep_nvme_cmd(sqe, c->ns_fd, NVME_URING_CMD_IO, &cmd);
}

void dc_prep_admin(struct dc *c, struct io_uring_sqe *sqe, uint8_t opcode, uint32_t cdw10,
		   void *buf, uint32_t len)
{
	struct nvme_uring_cmd cmd = {
		.opcode = opcode,
		.nsid = c->nsid,
		.addr = (uint64_t)(uintptr_t)buf,
		.data_len = len,
		.cdw10 = cdw10,
	};

	ucmd_prep_nvme_cmd(sqe, c->ctrl_fd, NVME_URING_CMD_ADMIN, &cmd);
}

int dc_submit_one(struct dc *c)
{
	struct io_uring_cqe *cqe;
	int ret = ucmd_submit_and_wait(&c->ring, 1);

	if (ret < 0)
		return ret;
	ret = ucmd_wait_cqe(&c->ring, &cqe);
	if (ret < 0)
		return ret;
	ret = cqe->res;
	ucmd_cqe_seen(&c->ring, cqe);
	return ret;
}

static int open_dev(struct dc *c, const char *name)
{
	int fd = ucmd_open(c->e, name, O_RDWR);

	/* a user the daemon lets open read-only still reads */
	if (fd == -EACCES || fd == -EPERM)
		fd = ucmd_open(c->e, name, O_RDONLY);
	return fd;
}

static int identify(struct dc *c)
{
	uint8_t *id = dc_buf(c, 4096);
	struct io_uring_sqe *sqe;
	int ret;

	if (!id)
		return -ENOMEM;
	memset(id, 0, 4096);
	sqe = ucmd_get_sqe(&c->ring);
	dc_prep_admin(c, sqe, NVME_ADM_IDENTIFY, 0 /* CNS 00h: namespace */, id, 4096);
	ret = dc_submit_one(c);
	if (ret == 0) {
		/* struct nvme_id_ns: nsze at 0, flbas at 26, lbaf[] (4 bytes each) at 128 */
		uint8_t flbas = id[26];
		unsigned idx = (flbas & 0xf) | (((flbas >> 5) & 3u) << 4);
		memcpy(&c->nsze, id, 8);
		c->lba = 1u << id[128 + 4 * idx + 2];
		if (!c->nsze || c->lba < 512 || c->lba > 65536)
			ret = -ENXIO;
	}
	dc_buf_free(c, id);
	return ret;
}

int dc_open(struct dc *c, const struct dc_opts *o, unsigned entries)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	int ret;

	memset(c, 0, sizeof(*c));
	c->o = o;
	c->ns_fd = c->ctrl_fd = -1;
	c->nsid = 1;
	ret = ucmd_engine_connect(o->daemon, &c->e);
	if (ret)
		return ret;
	c->ctrl_fd = open_dev(c, o->ctrl);
	if (c->ctrl_fd < 0)
		return c->ctrl_fd;
	c->ns_fd = open_dev(c, o->ns);
	if (c->ns_fd < 0)
		return c->ns_fd;
	ret = ucmd_queue_init_engine(c->e, entries, &c->ring, &p);
	if (ret)
		return ret;
	return identify(c);
}

void dc_close(struct dc *c)
{
	if (c->ring.ops)
		ucmd_queue_exit(&c->ring);
	if (c->ns_fd >= 0)
		ucmd_close(c->e, c->ns_fd);
	if (c->ctrl_fd >= 0)
		ucmd_close(c->e, c->ctrl_fd);
	if (c->e)
		ucmd_engine_free(c->e);
	memset(c, 0, sizeof(*c));
	c->ns_fd = c->ctrl_fd = -1;
}

static void must_open(struct dc *c, const struct dc_opts *o, unsigned entries)
{
	char nb[32];
	int ret = dc_open(c, o, entries);

	if (ret)
		dc_die("connecting to %s: %s (%s)", o->daemon ? o->daemon : "$UCMD_DAEMON",
		       dc_res_name(ret, nb, sizeof(nb)), strerror(ret < 0 ? -ret : ret));
}

/* ---- rw ---- */

static int cmd_rw(const struct dc_opts *o)
{
	struct dc c;
	char nb[32];
	uint8_t *buf, *want;
	uint64_t bad = 0;
	int ret;

	must_open(&c, o, 8);
	size_t len = (size_t)o->nlb * c.lba;
	buf = dc_buf(&c, len);
	want = malloc(len);
	if (!buf || !want)
		dc_die("rw: out of memory");
	if (o->slba + (uint64_t)o->nlb * o->count > c.nsze)
		dc_die("rw: blocks %llu+%llu past the namespace's %llu",
		       (unsigned long long)o->slba,
		       (unsigned long long)o->nlb * o->count, (unsigned long long)c.nsze);
	if (!o->verify_only && !o->read_only) {
		for (uint32_t i = 0; i < o->count; i++) {
			uint64_t slba = o->slba + (uint64_t)i * o->nlb;
			for (uint32_t b = 0; b < o->nlb; b++)
				dc_pattern(buf + (size_t)b * c.lba, c.lba, o->seed, slba + b);
			dc_prep_io(&c, ucmd_get_sqe(&c.ring), NVME_OP_WRITE, slba, o->nlb, buf);
			ret = dc_submit_one(&c);
			if (ret)
				dc_die("rw: write at %llu: %s", (unsigned long long)slba,
				       dc_res_name(ret, nb, sizeof(nb)));
		}
		dc_prep_io(&c, ucmd_get_sqe(&c.ring), NVME_OP_FLUSH, 0, 0, NULL);
		ret = dc_submit_one(&c);
		if (ret)
			dc_die("rw: flush: %s", dc_res_name(ret, nb, sizeof(nb)));
		/* acknowledged and flushed: the crash test kills the daemon after this line */
		printf("rw: flushed %llu blocks\n", (unsigned long long)o->nlb * o->count);
		fflush(stdout);
	}
	for (uint32_t i = 0; i < o->count; i++) {
		uint64_t slba = o->slba + (uint64_t)i * o->nlb;
		memset(buf, 0xa5, len);
		dc_prep_io(&c, ucmd_get_sqe(&c.ring), NVME_OP_READ, slba, o->nlb, buf);
		ret = dc_submit_one(&c);
		if (ret)
			dc_die("rw: read at %llu: %s", (unsigned long long)slba,
			       dc_res_name(ret, nb, sizeof(nb)));
		if (o->read_only)
			continue;
		for (uint32_t b = 0; b < o->nlb; b++) {
			dc_pattern(want + (size_t)b * c.lba, c.lba, o->seed, slba + b);
			if (memcmp(want + (size_t)b * c.lba, buf + (size_t)b * c.lba, c.lba)) {
				if (!bad)
					fprintf(stderr, "rw: block %llu differs\n",
						(unsigned long long)(slba + b));
				bad++;
			}
		}
	}
	free(want);
	dc_buf_free(&c, buf);
	dc_close(&c);
	if (bad)
		dc_die("rw: %llu of %llu blocks differ", (unsigned long long)bad,
		       (unsigned long long)o->nlb * o->count);
	printf("rw: ok %llu blocks%s\n", (unsigned long long)o->nlb * o->count,
	       o->read_only ? " read" : " verified");
	return 0;
}

/* ---- link-rw ---- */

/*
 * As liburing's link-cp: the Write is linked behind the Read into the same
 * buffer, so it must run after the Read and send the data the Read put
 * there, never what the buffer held when both were submitted.
 */
static int cmd_link_rw(const struct dc_opts *o)
{
	struct dc c;
	char nb[32], nb2[32];
	uint8_t *buf, *want;
	uint64_t bad = 0;
	int ret;

	must_open(&c, o, 8);
	size_t len = (size_t)o->nlb * c.lba;
	uint64_t dst0 = o->slba + (uint64_t)o->nlb * o->count;

	buf = dc_buf(&c, len);
	want = malloc(len);
	if (!buf || !want)
		dc_die("link-rw: out of memory");
	if (dst0 + (uint64_t)o->nlb * o->count > c.nsze)
		dc_die("link-rw: blocks past the namespace's end");
	if (o->fixed) {
		ret = ucmd_register_buffers(&c.ring, &(struct iovec){ buf, len }, 1);
		if (ret)
			dc_die("link-rw: register buffers: %s", dc_res_name(ret, nb, sizeof(nb)));
	}
	for (uint32_t i = 0; i < o->count; i++) {
		uint64_t src = o->slba + (uint64_t)i * o->nlb, dst = dst0 + (uint64_t)i * o->nlb;
		struct io_uring_cqe *cqe;
		int res[2] = { 1, 1 };
		struct io_uring_sqe *sqe;

		for (uint32_t b = 0; b < o->nlb; b++)
			dc_pattern(buf + (size_t)b * c.lba, c.lba, o->seed, src + b);
		dc_prep_io(&c, ucmd_get_sqe(&c.ring), NVME_OP_WRITE, src, o->nlb, buf);
		ret = dc_submit_one(&c);
		if (ret)
			dc_die("link-rw: write at %llu: %s", (unsigned long long)src,
			       dc_res_name(ret, nb, sizeof(nb)));
		/* what the Write would send if it read the buffer at submission */
		memset(buf, 0x5a, len);
		sqe = ucmd_get_sqe(&c.ring);
		dc_prep_io(&c, sqe, NVME_OP_READ, src, o->nlb, buf);
		sqe->flags |= IOSQE_IO_LINK;
		sqe->user_data = 0;
		if (o->fixed && i % 3 != 2)
			sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;	/* buf_index 0 */
		sqe = ucmd_get_sqe(&c.ring);
		dc_prep_io(&c, sqe, NVME_OP_WRITE, dst, o->nlb, buf);
		sqe->user_data = 1;
		if (o->fixed && i % 3 != 1)
			sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
		ret = ucmd_submit_and_wait(&c.ring, 2);
		if (ret < 0)
			dc_die("link-rw: submit: %s", dc_res_name(ret, nb, sizeof(nb)));
		for (int k = 0; k < 2; k++) {
			ret = ucmd_wait_cqe(&c.ring, &cqe);
			if (ret < 0)
				dc_die("link-rw: wait: %s", dc_res_name(ret, nb, sizeof(nb)));
			if (cqe->user_data < 2)
				res[cqe->user_data] = cqe->res;
			ucmd_cqe_seen(&c.ring, cqe);
		}
		if (res[0] || res[1])
			dc_die("link-rw: pair %u: read %s, write %s", i,
			       dc_res_name(res[0], nb, sizeof(nb)), dc_res_name(res[1], nb2, sizeof(nb2)));
		memset(buf, 0, len);
		dc_prep_io(&c, ucmd_get_sqe(&c.ring), NVME_OP_READ, dst, o->nlb, buf);
		ret = dc_submit_one(&c);
		if (ret)
			dc_die("link-rw: read at %llu: %s", (unsigned long long)dst,
			       dc_res_name(ret, nb, sizeof(nb)));
		for (uint32_t b = 0; b < o->nlb; b++)
			dc_pattern(want + (size_t)b * c.lba, c.lba, o->seed, src + b);
		if (memcmp(want, buf, len))
			bad++;
	}
	free(want);
	dc_buf_free(&c, buf);
	dc_close(&c);
	if (bad)
		dc_die("link-rw: %llu of %u pairs wrote other data than their read brought",
		       (unsigned long long)bad, o->count);
	printf("link-rw: ok %u pairs\n", o->count);
	return 0;
}

/* ---- expect-errno ---- */

static int cmd_expect(const struct dc_opts *o, const char *what)
{
	struct dc c;
	char nb[32];
	const char *name;
	void *buf;
	int ret;

	must_open(&c, o, 8);
	buf = dc_buf(&c, (size_t)o->nlb * c.lba);
	if (!buf)
		dc_die("expect-errno: out of memory");
	memset(buf, 0x3c, (size_t)o->nlb * c.lba);
	/* exactly one command: the audit test counts one record per denial */
	if (!strcmp(what, "write"))
		dc_prep_io(&c, ucmd_get_sqe(&c.ring), NVME_OP_WRITE, o->slba, o->nlb, buf);
	else if (!strcmp(what, "read"))
		dc_prep_io(&c, ucmd_get_sqe(&c.ring), NVME_OP_READ, o->slba, o->nlb, buf);
	else if (!strcmp(what, "format"))
		/* Format NVM, LBA format 0, no secure erase */
		dc_prep_admin(&c, ucmd_get_sqe(&c.ring), NVME_ADM_FORMAT, 0, NULL, 0);
	else
		dc_die("expect-errno: write, read or format, not '%s'", what);
	ret = dc_submit_one(&c);
	name = dc_res_name(ret, nb, sizeof(nb));
	printf("%s\n", name);
	dc_buf_free(&c, buf);
	dc_close(&c);
	if (o->want && strcmp(o->want, name))
		dc_die("expect-errno: %s gave %s, wanted %s", what, name, o->want);
	return 0;
}

/* ---- hold ---- */

/* Synchronous reads until a call fails; print what it failed with. */
static int hold_until_error(struct dc *c)
{
	char nb[32];
	void *buf = dc_buf(c, c->lba);
	uint64_t n = 0;

	if (!buf)
		dc_die("hold: out of memory");
	printf("hold: ready\n");
	fflush(stdout);
	for (;;) {
		struct io_uring_sqe *sqe = ucmd_get_sqe(&c->ring);
		if (!sqe)
			dc_die("hold: SQ full");
		dc_prep_io(c, sqe, NVME_OP_READ, n % 1024, 1, buf);
		int ret = ucmd_submit_and_wait(&c->ring, 1);
		if (ret >= 0) {
			struct io_uring_cqe *cqe;
			ret = ucmd_wait_cqe(&c->ring, &cqe);
			if (ret == 0) {
				int res = cqe->res;
				ucmd_cqe_seen(&c->ring, cqe);
				/* a command the daemon took is completed, never failed */
				if (res)
					dc_die("hold: read %llu: %s", (unsigned long long)n,
					       dc_res_name(res, nb, sizeof(nb)));
			}
		}
		if (ret < 0) {
			printf("%s\n", dc_res_name(ret, nb, sizeof(nb)));
			fflush(stdout);
			_exit(0);	/* the daemon is gone: no clean-up call may block */
		}
		n++;
	}
}

/*
 * Reads at QD qd on two rings (one with plain buffers the daemon bounces,
 * one with ucmd_buf_alloc() memory registered as fixed buffers), and a
 * TIMEOUT of an hour that is always in flight, re-armed forever: when the
 * test kills this process, the daemon holds its requests.
 */
static int cmd_hold(const struct dc_opts *o)
{
	struct dc c;
	struct ucmd_ring r2;
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct __kernel_timespec ts = { .tv_sec = 3600 };
	unsigned qd = o->qd > 32 ? 32 : o->qd;
	void *b1[32], *b2[32];
	struct iovec iov[32];
	double end;
	char nb[32];
	int ret;

	must_open(&c, o, 64);
	if (o->until_error)
		return hold_until_error(&c);
	ret = ucmd_queue_init_engine(c.e, 64, &r2, &p);
	if (ret)
		dc_die("hold: second ring: %s", dc_res_name(ret, nb, sizeof(nb)));
	/* one shared buffer sliced: the daemon bounds the regions a client has */
	uint8_t *shared = ucmd_buf_alloc(c.e, (size_t)qd * c.lba);
	if (!shared)
		dc_die("hold: ucmd_buf_alloc failed");
	for (unsigned i = 0; i < qd; i++) {
		if (posix_memalign(&b1[i], 4096, c.lba))
			dc_die("hold: out of memory");
		b2[i] = shared + (size_t)i * c.lba;
		iov[i] = (struct iovec){ b2[i], c.lba };
	}
	ret = ucmd_register_buffers(&r2, iov, qd);
	if (ret)
		dc_die("hold: register buffers: %s", dc_res_name(ret, nb, sizeof(nb)));
	ucmd_prep_timeout(ucmd_get_sqe(&c.ring), &ts, 0, 0);
	for (unsigned i = 0; i < qd; i++) {
		dc_prep_io(&c, ucmd_get_sqe(&c.ring), NVME_OP_READ, i, 1, b1[i]);
		struct io_uring_sqe *sqe = ucmd_get_sqe(&r2);
		dc_prep_io(&c, sqe, NVME_OP_READ, i, 1, b2[i]);
		sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
		sqe->buf_index = (uint16_t)i;
		sqe->user_data = i;
	}
	ucmd_submit(&c.ring);
	ucmd_submit(&r2);
	printf("hold: ready\n");
	fflush(stdout);
	end = dc_now() + (o->seconds > 0 ? o->seconds : 3600);
	while (dc_now() < end) {
		struct ucmd_ring *rings[2] = { &c.ring, &r2 };
		for (unsigned r = 0; r < 2; r++) {
			struct io_uring_cqe *cqe;
			while (ucmd_peek_cqe(rings[r], &cqe) == 0) {
				unsigned i = (unsigned)(cqe->user_data % qd);
				/* re-arm: reads again, the timeout if it ever fires */
				struct io_uring_sqe *sqe = ucmd_get_sqe(rings[r]);
				if (sqe && r == 0 && cqe->res == -ETIME)
					ucmd_prep_timeout(sqe, &ts, 0, 0);
				else if (sqe) {
					dc_prep_io(&c, sqe, NVME_OP_READ, i, 1, r ? b2[i] : b1[i]);
					if (r) {
						sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
						sqe->buf_index = (uint16_t)i;
					}
					sqe->user_data = i;
				}
				ucmd_cqe_seen(rings[r], cqe);
			}
			ucmd_submit(rings[r]);
		}
		usleep(1000);
	}
	return 0;
}

/* ---- rr ---- */

static int cmd_rr(const struct dc_opts *o)
{
	struct dc c;
	unsigned qd = o->qd ? o->qd : 32, nfree = 0;
	uint32_t bs = 4096, nlb;
	void **bufs;
	unsigned *freel;
	uint64_t rng = o->seed | 1, done = 0, blocks;
	double start, end;
	char nb[32];
	int ret;

	must_open(&c, o, qd);
	if (c.lba > bs)
		dc_die("rr: LBA size %u over 4 KiB", c.lba);
	nlb = bs / c.lba;
	blocks = c.nsze / nlb;
	bufs = calloc(qd, sizeof(*bufs));
	freel = calloc(qd, sizeof(*freel));
	if (!bufs || !freel)
		dc_die("rr: out of memory");
	uint8_t *mem = dc_buf(&c, (size_t)qd * bs);	/* one region, sliced */
	if (!mem)
		dc_die("rr: out of memory");
	for (unsigned i = 0; i < qd; i++) {
		bufs[i] = mem + (size_t)i * bs;
		freel[nfree++] = i;
	}
	if (o->fixed) {
		struct iovec *iov = calloc(qd, sizeof(*iov));
		if (!iov)
			dc_die("rr: out of memory");
		for (unsigned i = 0; i < qd; i++)
			iov[i] = (struct iovec){ bufs[i], bs };
		ret = ucmd_register_buffers(&c.ring, iov, qd);
		free(iov);
		if (ret)
			dc_die("rr: register buffers: %s", dc_res_name(ret, nb, sizeof(nb)));
	}
	start = dc_now();
	end = start + (o->seconds > 0 ? o->seconds : 1);
	for (;;) {
		/* keep qd reads in flight until the time is up, then drain */
		while (nfree && dc_now() < end) {
			struct io_uring_sqe *sqe = ucmd_get_sqe(&c.ring);
			if (!sqe)
				break;
			unsigned i = freel[--nfree];
			dc_prep_io(&c, sqe, NVME_OP_READ, (dc_rand(&rng) % blocks) * nlb, nlb,
				   bufs[i]);
			if (o->fixed) {
				sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
				sqe->buf_index = (uint16_t)i;
			}
			sqe->user_data = i;
		}
		if (nfree == qd)
			break;
		ret = ucmd_submit_and_wait(&c.ring, 1);
		if (ret < 0)
			dc_die("rr: submit: %s", dc_res_name(ret, nb, sizeof(nb)));
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;
		ucmd_for_each_cqe(&c.ring, head, cqe) {
			if (cqe->res)
				dc_die("rr: read: %s", dc_res_name(cqe->res, nb, sizeof(nb)));
			if (cqe->user_data >= qd || nfree >= qd)
				dc_die("rr: CQE with user_data %llu not in flight",
				       (unsigned long long)cqe->user_data);
			freel[nfree++] = (unsigned)cqe->user_data;
			n++;
		}
		ucmd_cq_advance(&c.ring, n);
		done += n;
	}
	double el = dc_now() - start;
	printf("iops %.0f\n", el > 0 ? (double)done / el : 0);
	dc_buf_free(&c, mem);
	dc_close(&c);
	free(bufs);
	free(freel);
	return 0;
}

/* ---- main ---- */

static void usage(void)
{
	fprintf(stderr, "usage: daemon_client rw|expect-errno WHAT|hostile WHAT|race|hold|flood|garbage|rr|link-rw "
			"[options]\n  (see the comment at the top of daemon_client.c)\n");
	exit(2);
}

static uint64_t num(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || end == s)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "daemon", required_argument, NULL, 'd' },
		{ "ns", required_argument, NULL, 'n' },
		{ "ctrl", required_argument, NULL, 'c' },
		{ "slba", required_argument, NULL, 's' },
		{ "nlb", required_argument, NULL, 'b' },
		{ "count", required_argument, NULL, 'N' },
		{ "seed", required_argument, NULL, 'S' },
		{ "iters", required_argument, NULL, 'i' },
		{ "seconds", required_argument, NULL, 't' },
		{ "qd", required_argument, NULL, 'q' },
		{ "entries", required_argument, NULL, 'e' },
		{ "buf", required_argument, NULL, 'B' },
		{ "fixed", no_argument, NULL, 'F' },
		{ "want", required_argument, NULL, 'w' },
		{ "stall-ms", required_argument, NULL, 'm' },
		{ "limit", required_argument, NULL, 'l' },
		{ "verify-only", no_argument, NULL, 'V' },
		{ "read-only", no_argument, NULL, 'R' },
		{ "no-reap", no_argument, NULL, 'X' },
		{ "until-error", no_argument, NULL, 'U' },
		{ NULL, 0, NULL, 0 },
	};
	struct dc_opts o = {
		.ns = "ng0n1", .ctrl = "nvme0", .nlb = 8, .count = 16, .seed = 1,
		.iters = 200, .seconds = 0, .qd = 32, .entries = 64, .stall_ms = 2000,
		.limit = 65536,
	};
	const char *sub, *what = NULL;
	int ch;

	if (argc < 2)
		usage();
	sub = argv[1];
	if (!strcmp(sub, "expect-errno") || !strcmp(sub, "hostile")) {
		if (argc < 3)
			usage();
		what = argv[2];
		optind = 3;
	} else {
		optind = 2;
	}
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'd': o.daemon = optarg; break;
		case 'n': o.ns = optarg; break;
		case 'c': o.ctrl = optarg; break;
		case 's': o.slba = num(optarg); break;
		case 'b': o.nlb = (uint32_t)num(optarg); break;
		case 'N': o.count = (uint32_t)num(optarg); break;
		case 'S': o.seed = num(optarg); break;
		case 'i': o.iters = num(optarg); break;
		case 't': o.seconds = strtod(optarg, NULL); break;
		case 'q': o.qd = (unsigned)num(optarg); break;
		case 'e': o.entries = (unsigned)num(optarg); break;
		case 'B':
			if (strcmp(optarg, "alloc") && strcmp(optarg, "malloc"))
				usage();
			o.buf_alloc = !strcmp(optarg, "alloc");
			break;
		case 'F': o.fixed = true; break;
		case 'w': o.want = optarg; break;
		case 'm': o.stall_ms = (unsigned)num(optarg); break;
		case 'l': o.limit = num(optarg); break;
		case 'V': o.verify_only = true; break;
		case 'R': o.read_only = true; break;
		case 'X': o.no_reap = true; break;
		case 'U': o.until_error = true; break;
		default: usage();
		}
	}
	if (optind != argc || !o.nlb || !o.count || !o.qd || !o.entries)
		usage();
	if (!strcmp(sub, "rw"))
		return cmd_rw(&o);
	if (what && !strcmp(sub, "hostile"))
		return dc_hostile(&o, what);
	if (what)
		return cmd_expect(&o, what);
	if (!strcmp(sub, "race"))
		return dc_race(&o);
	if (!strcmp(sub, "hold"))
		return cmd_hold(&o);
	if (!strcmp(sub, "flood"))
		return dc_flood(&o);
	if (!strcmp(sub, "garbage"))
		return dc_garbage(&o);
	if (!strcmp(sub, "rr"))
		return cmd_rr(&o);
	if (!strcmp(sub, "link-rw"))
		return cmd_link_rw(&o);
	usage();
}
