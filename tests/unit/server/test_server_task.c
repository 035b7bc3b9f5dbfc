/* SPDX-License-Identifier: MIT */
/*
 * A client's SQE, as it wrote it, on an engine ring of the client's task:
 * every opcode class runs or fails with the errno the client's CQE
 * carries; fds, addresses and registered buffers are the client's,
 * resolved by the engine in its task's file table and memory.
 * The SQEs run on the fixture's own engine ring, given the client's task
 * (its memory through /proc/self/mem here) as ucmdd gives its rings, to
 * see the data arrive.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <nvme/types.h>

#include "srv_fixture.h"

struct xt {
	struct sfx s;
	/* 128-byte SQEs, as bytes: the compiler sees their real size */
	_Alignas(64) unsigned char cb[128];
	struct io_uring_sqe *c;
};

static int setup(void **state)
{
	struct xt *t = calloc(1, sizeof(*t));

	sfx_setup(&t->s, NULL);
	t->c = (struct io_uring_sqe *)(void *)t->cb;
	io_ring_set_task(&t->s.fx.ring, &t->s.c.task);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct xt *t = *state;

	sfx_teardown(&t->s);
	free(t);
	return 0;
}

/* Run the client's SQE on the fixture's engine ring; its CQE's res. */
static int run(struct xt *t)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(&t->s.fx.ring);
	struct io_uring_cqe *cqe;
	int res;

	assert_non_null(sqe);
	memcpy(sqe, t->cb, sizeof(t->cb));
	sqe->user_data = 42;
	assert_int_equal(ucmd_submit_and_wait(&t->s.fx.ring, 1), 1);
	assert_int_equal(ucmd_wait_cqe(&t->s.fx.ring, &cqe), 0);
	assert_int_equal(cqe->user_data, 42);
	res = cqe->res;
	ucmd_cqe_seen(&t->s.fx.ring, cqe);
	return res;
}

/* Run the client SQE as it stands again. */
static int run_again(struct xt *t)
{
	return run(t);
}

static void nvme_sqe(struct xt *t, int fd, uint32_t op, const struct nvme_uring_cmd *u)
{
	memset(t->cb, 0, sizeof(t->cb));
	ucmd_prep_nvme_cmd(t->c, fd, op, u);
	t->c->user_data = 7;
}

static void test_nvme_rw(void **state)
{
	struct xt *t = *state;
	size_t len = 8 * t->s.fx.lbs;
	char *w = fx_alloc(len), *r = fx_alloc(len);
	struct nvme_uring_cmd u;

	fx_fill(w, len, 5);
	fx_rw_cmd(&u, 0x01, t->s.fx.nsid, 16, 8, w, (uint32_t)len);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO, &u);
	/* the client's fd and buffer, resolved in its task's table and memory */
	assert_int_equal(run(t), 0);
	assert_int_equal(atomic_load(&t->s.c.bounce_bytes), 0);

	fx_rw_cmd(&u, 0x02, t->s.fx.nsid, 16, 8, r, (uint32_t)len);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO, &u);
	assert_int_equal(run(t), 0);
	assert_memory_equal(r, w, len);

	/* a failed read copies nothing back: a wrong nsid is the driver's -EINVAL */
	memset(r, 0x33, len);
	fx_rw_cmd(&u, 0x02, t->s.fx.nsid + 7, 16, 8, r, (uint32_t)len);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO, &u);
	assert_int_equal(run(t), -EINVAL);
	for (size_t i = 0; i < len; i++)
		assert_int_equal((uint8_t)r[i], 0x33);
	free(w);
	free(r);
}

static void test_nvme_vec_and_admin(void **state)
{
	struct xt *t = *state;
	unsigned lbs = t->s.fx.lbs;
	char *w = fx_alloc(2 * lbs), *a = fx_alloc(lbs), *b = fx_alloc(lbs), *id = fx_alloc(4096);
	struct iovec iov[2] = { { a, lbs }, { b, lbs } };
	struct nvme_uring_cmd u;

	fx_fill(w, 2 * lbs, 9);
	fx_rw_cmd(&u, 0x01, t->s.fx.nsid, 40, 2, w, 2 * lbs);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO, &u);
	assert_int_equal(run(t), 0);
	/* _VEC: addr is the iovec array, data_len the count */
	fx_rw_cmd(&u, 0x02, t->s.fx.nsid, 40, 2, iov, 2);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO_VEC, &u);
	assert_int_equal(run(t), 0);
	assert_memory_equal(a, w, lbs);
	assert_memory_equal(b, w + lbs, lbs);

	/* admin on the controller: Identify Controller carries the serial */
	memset(&u, 0, sizeof(u));
	u.opcode = 0x06;
	u.addr = (uint64_t)(uintptr_t)id;
	u.data_len = 4096;
	u.cdw10 = 1;
	nvme_sqe(t, t->s.dev, NVME_URING_CMD_ADMIN, &u);
	assert_int_equal(run(t), 0);
	assert_memory_equal(id + 4, "HOSTTEST01", 10);
	free(w);
	free(a);
	free(b);
	free(id);
}

static void test_unknown_cmd_op(void **state)
{
	struct xt *t = *state;
	struct nvme_uring_cmd u = { .opcode = 0x02 };

	/* the driver's -ENOTTY: the daemon passes the command, the driver judges it */
	nvme_sqe(t, t->s.ng, 0x12345, &u);
	assert_int_equal(run(t), -ENOTTY);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_ADMIN, &u);
	assert_int_equal(run(t), -ENOTTY);
	nvme_sqe(t, t->s.dev, NVME_URING_CMD_IO, &u);
	assert_int_equal(run(t), -ENOTTY);
	/* the null device takes any command and no memory: passed as it is */
	u.addr = 0xdead000;
	u.data_len = 4096;
	nvme_sqe(t, t->s.null, 77, &u);
	assert_int_equal(run(t), 0);
	/* uring_cmd flags other than FIXED: the engine's -EINVAL; buf_index without it is ignored */
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO, &u);
	t->c->uring_cmd_flags = 2;
	assert_int_equal(run(t), -EINVAL);
	nvme_sqe(t, t->s.null, 77, &u);
	t->c->buf_index = 1;
	assert_int_equal(run(t), 0);
}

static void test_bad_address(void **state)
{
	struct xt *t = *state;
	struct nvme_uring_cmd u;
	char *buf = fx_alloc(4096);
	int ret;

	/*
	 * The client's addresses are the engine's to judge, when it issues:
	 * a write's data is read then (-EFAULT before the device sees it)
	 */
	fx_rw_cmd(&u, 0x01, t->s.fx.nsid, 0, 1, (void *)0x1000, t->s.fx.lbs);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO, &u);
	assert_int_equal(run(t), -EFAULT);
	/* past the user address space */
	fx_rw_cmd(&u, 0x01, t->s.fx.nsid, 0, 1, (void *)(uintptr_t)(UCMD_TASK_SIZE - 8),
		  t->s.fx.lbs);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO, &u);
	assert_int_equal(run(t), -EFAULT);
	/* a read into a bad address: the device read, the copy back fails */
	fx_rw_cmd(&u, 0x02, t->s.fx.nsid, 0, 1, (void *)0x1000, t->s.fx.lbs);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO, &u);
	ret = run(t);
	assert_int_equal(ret, -EFAULT);
	assert_int_equal(ret, -EFAULT);
	assert_int_equal(atomic_load(&t->s.c.bounce_bytes), 0);
	/* an iovec array that is not there */
	memset(t->cb, 0, sizeof(t->cb));
	ucmd_prep_readv(t->c, t->s.bdev, (void *)0x3000, 2, 0);
	assert_int_equal(run(t), -EFAULT);
	/* the engine's bounces count against the client's limit: -ENOMEM past it */
	atomic_store(&t->s.c.bounce_bytes, SRV_MAX_BOUNCE - 100);
	fx_rw_cmd(&u, 0x01, t->s.fx.nsid, 0, 1, buf, t->s.fx.lbs);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO, &u);
	assert_int_equal(run(t), -ENOMEM);
	assert_int_equal(atomic_load(&t->s.c.bounce_bytes), SRV_MAX_BOUNCE - 100);
	atomic_store(&t->s.c.bounce_bytes, 0);
	assert_int_equal(run_again(t), 0);
	assert_int_equal(atomic_load(&t->s.c.bounce_bytes), 0);
	free(buf);
}

static void test_rw_family_and_fds(void **state)
{
	struct xt *t = *state;
	char *w = fx_alloc(4096), *a = fx_alloc(2048), *b = fx_alloc(2048);
	struct iovec iov[2] = { { a, 2048 }, { b, 2048 } };

	fx_fill(w, 4096, 3);
	memset(t->cb, 0, sizeof(t->cb));
	ucmd_prep_write(t->c, t->s.bdev, w, 4096, 8192);
	assert_int_equal(run(t), 4096);
	memset(t->cb, 0, sizeof(t->cb));
	ucmd_prep_readv(t->c, t->s.bdev, iov, 2, 8192);
	assert_int_equal(run(t), 4096);
	assert_memory_equal(a, w, 2048);
	assert_memory_equal(b, w + 2048, 2048);
	/* a read copies back only what the device returned: null reads nothing */
	memset(a, 0x44, 2048);
	memset(t->cb, 0, sizeof(t->cb));
	ucmd_prep_read(t->c, t->s.null, a, 2048, 0);
	assert_int_equal(run(t), 0);
	assert_int_equal((uint8_t)a[0], 0x44);
	/* fds: the client's numbers, the engine's to resolve in the client's table alone */
	memset(t->cb, 0, sizeof(t->cb));
	ucmd_prep_fsync(t->c, 40, 0);
	assert_int_equal(run(t), -EBADF);
	ucmd_prep_fsync(t->c, t->s.fx.ng, 0);	/* the engine's own number: not the client's */
	assert_int_equal(run(t), -EBADF);
	ucmd_prep_fsync(t->c, -1, 0);
	assert_int_equal(run(t), -EBADF);
	ucmd_prep_fsync(t->c, t->s.bdev, 0);
	assert_int_equal(run(t), 0);
	/* fixed files: the index is kept (the engine ring's table is the client's) */
	ucmd_prep_fsync(t->c, 1, 0);
	t->c->flags = IOSQE_FIXED_FILE;
	assert_int_equal(run(t), -EBADF);	/* the fixture's ring registered none */
	free(w);
	free(a);
	free(b);
}

/*
 * Registered buffers are the client's memory, registered on the engine ring
 * as the client named them and reached through its task when a request is
 * issued: what the client's buffer holds then is what the device gets.
 */
static void test_fixed_buffers(void **state)
{
	struct xt *t = *state;
	unsigned lbs = t->s.fx.lbs;
	char *cbuf = fx_alloc(4 * lbs), *want = fx_alloc(lbs);
	struct nvme_uring_cmd u;

	assert_int_equal(ucmd_register_buffers(&t->s.fx.ring,
					       &(struct iovec){ cbuf, 4 * lbs }, 1), 0);
	/* written after the registration: the engine reads it when it issues */
	fx_fill(cbuf, 4 * lbs, 11);
	memset(t->cb, 0, sizeof(t->cb));
	ucmd_prep_write_fixed(t->c, t->s.bdev, cbuf + lbs, lbs, 0, 0);
	assert_int_equal(run(t), (int)lbs);
	memset(t->cb, 0, sizeof(t->cb));
	ucmd_prep_read(t->c, t->s.bdev, want, lbs, 0);
	assert_int_equal(run(t), (int)lbs);
	assert_memory_equal(want, cbuf + lbs, lbs);
	/* outside the buffer, or another index: the engine's -EFAULT */
	ucmd_prep_write_fixed(t->c, t->s.bdev, cbuf + 3 * lbs, 2 * lbs, 0, 0);
	assert_int_equal(run(t), -EFAULT);
	ucmd_prep_write_fixed(t->c, t->s.bdev, cbuf, lbs, 0, 1);
	assert_int_equal(run(t), -EFAULT);
	/* a fixed uring_cmd: written from the client's range, read back into another */
	fx_rw_cmd(&u, 0x01, t->s.fx.nsid, 100, 1, cbuf + lbs, lbs);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO, &u);
	t->c->uring_cmd_flags = IORING_URING_CMD_FIXED;
	assert_int_equal(run(t), 0);
	memset(cbuf + 2 * lbs, 0, lbs);
	fx_rw_cmd(&u, 0x02, t->s.fx.nsid, 100, 1, cbuf + 2 * lbs, lbs);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO, &u);
	t->c->uring_cmd_flags = IORING_URING_CMD_FIXED;
	assert_int_equal(run(t), 0);
	assert_memory_equal(cbuf + 2 * lbs, cbuf + lbs, lbs);
	assert_int_equal(atomic_load(&t->s.c.bounce_bytes), 0);
	/*
	 * fixed and vectored (Linux 6.15): two segments of the registered
	 * buffer, the engine's to check (a segment past the buffer: -EFAULT).
	 */
	struct iovec cv[2] = { { cbuf + 3 * lbs, lbs / 2 }, { cbuf, lbs / 2 } };

	memcpy(want, cbuf + lbs, lbs);	/* block 100 holds this (written above) */
	memset(cbuf, 0, lbs);
	memset(cbuf + 3 * lbs, 0, lbs);
	fx_rw_cmd(&u, 0x02, t->s.fx.nsid, 100, 1, cv, 2);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO_VEC, &u);
	t->c->uring_cmd_flags = IORING_URING_CMD_FIXED;
	assert_int_equal(run(t), 0);
	assert_memory_equal(cbuf + 3 * lbs, want, lbs / 2);
	assert_memory_equal(cbuf, want + lbs / 2, lbs / 2);
	cv[1] = (struct iovec){ cbuf + 4 * lbs - 8, lbs / 2 };
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO_VEC, &u);
	t->c->uring_cmd_flags = IORING_URING_CMD_FIXED;
	assert_int_equal(run(t), -EFAULT);
	cv[1] = (struct iovec){ want, lbs / 2 };
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO_VEC, &u);
	t->c->uring_cmd_flags = IORING_URING_CMD_FIXED;
	assert_int_equal(run(t), -EFAULT);
	/* a range the client's memory does not have cannot be registered */
	assert_int_equal(ucmd_unregister_buffers(&t->s.fx.ring), 0);
	assert_int_equal(ucmd_register_buffers(&t->s.fx.ring,
					       &(struct iovec){ (void *)0x1000, 4096 }, 1), -EFAULT);
	free(want);
	free(cbuf);
}

static void test_timeout_cancel_nop_unknown(void **state)
{
	struct xt *t = *state;
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 1000000 };

	memset(t->cb, 0, sizeof(t->cb));
	ucmd_prep_timeout(t->c, &ts, 0, 0);
	/* the timespec is read by the engine, from the client's memory */
	assert_int_equal(run(t), -ETIME);
	ucmd_prep_timeout(t->c, (void *)0x1000, 0, 0);
	assert_int_equal(run(t), -EFAULT);
	ucmd_prep_timeout(t->c, &ts, 0, 0);
	t->c->len = 2;
	assert_int_equal(run(t), -EINVAL);

	/* cancel by the client's user_data: the engine knows it as the client wrote it */
	ucmd_prep_cancel64(t->c, 0xabd, 0);
	assert_int_equal(run(t), -ENOENT);
	ucmd_prep_cancel_fd(t->c, 40, 0);
	/* the client's number: none in its table */
	assert_int_equal(run(t), -EBADF);

	ucmd_prep_nop(t->c);
	t->c->fd = t->s.ng;
	assert_int_equal(run(t), 0);
	/* opcodes: past Linux's table, known to Linux only, buffer select, bad flags */
	t->c->opcode = IORING_OP_LAST;
	assert_int_equal(run(t), -EINVAL);
	t->c->opcode = 0xff;
	assert_int_equal(run(t), -EINVAL);
	t->c->opcode = IORING_OP_SENDMSG;
	t->c->fd = -1;
	assert_int_equal(run(t), -EOPNOTSUPP);
	t->c->opcode = IORING_OP_OPENAT;
	assert_int_equal(run(t), -EOPNOTSUPP);
	t->c->opcode = IORING_OP_READ;
	t->c->flags = IOSQE_BUFFER_SELECT;
	assert_int_equal(run(t), -EOPNOTSUPP);
	t->c->flags = 0x80;
	assert_int_equal(run(t), -EINVAL);
}

/* Two pages of a sealed memfd, mapped here and shared with the daemon as a region. */
static char *region_map(struct xt *t, size_t len)
{
	int fd = memfd_create("region", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	char *p;

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)len), 0);
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(srv_region_add(&t->s.c, fd, (uint64_t)(uintptr_t)p, len), 0);
	close(fd);
	return p;
}

/*
 * A request wholly inside memory the client shares (ucmd_buf_alloc's
 * regions) reaches the device as it is: nothing is bounced or held for
 * it, so the client's bounce limit never refuses it (seen here with the
 * limit already passed). Anything partly outside, or in a region given
 * back, bounces as before and is refused then.
 */
/*
 * A client's read whose command asks for more than its buffer holds (NLB
 * for four pages, data_len two): with PRPs the controller, in this
 * process, would take PRP2 for a list and walk the buffer's second page
 * (the client's own bytes, here the address of daemon memory) as PRP
 * entries, writing there. The data is an SGL of the buffer's length for
 * a client's command, which the controller refuses: SGL Data Length
 * Invalid, and nothing written.
 */
static void test_short_buffer_no_prp_walk(void **state)
{
	struct xt *t = *state;
	unsigned lbs = t->s.fx.lbs;
	char *reg = region_map(t, 2 * 4096);
	uint8_t *canary = aligned_alloc(4096, 4096);
	uint64_t *fake_list = (uint64_t *)(void *)(reg + 4096);
	struct nvme_uring_cmd u;

	assert_non_null(canary);
	memset(canary, 0x77, 4096);
	memset(reg, 0, 2 * 4096);
	for (unsigned i = 0; i < 8; i++)
		fake_list[i] = (uint64_t)(uintptr_t)canary;
	fx_rw_cmd(&u, 0x02, t->s.fx.nsid, 8, 4 * 4096 / lbs, reg, 2 * 4096);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO, &u);
	assert_int_equal(run(t), NVME_SC_SGL_INVALID_DATA | NVME_SC_DNR);
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal(canary[i], 0x77);
	free(canary);
}

/*
 * The admin queue's counterpart: an admin command's data is PRPs over PCIe
 * (no SGL states its length), so what stops the controller walking a
 * client's page as a PRP list is the host's DMA window (ctrl_set_dma_window):
 * Get Log Page whose NUMD asks for four pages of a two-page buffer whose
 * second page holds the address of daemon memory is a Data Transfer Error,
 * and nothing outside the client's buffer is written. Then a 512-byte
 * data_len with NUMD for two pages (its page is the limit, as an IOMMU's),
 * a bounced (plain memory) one, and a Create I/O Completion Queue the
 * client's buffer would back: queue memory must outlive the command.
 */
static void test_admin_short_buffer_no_prp_walk(void **state)
{
	struct xt *t = *state;
	char *reg = region_map(t, 2 * 4096);
	uint8_t *canary = aligned_alloc(4096, 4096), *plain = aligned_alloc(4096, 2 * 4096);
	uint64_t *fake_list = (uint64_t *)(void *)(reg + 4096);
	struct nvme_uring_cmd u;

	assert_non_null(canary);
	assert_non_null(plain);
	memset(canary, 0x77, 4096);
	memset(reg, 0, 2 * 4096);
	for (unsigned i = 0; i < 8; i++)
		fake_list[i] = (uint64_t)(uintptr_t)canary;
	/* Get Log Page, SMART (02h), NUMD for 16 KiB (past the log: zeros) */
	memset(&u, 0, sizeof(u));
	u.opcode = 0x02;
	u.nsid = 0xffffffff;
	u.addr = (uint64_t)(uintptr_t)reg;
	u.data_len = 2 * 4096;
	u.cdw10 = (4 * 4096 / 4 - 1) << 16 | 0x02;
	nvme_sqe(t, t->s.dev, NVME_URING_CMD_ADMIN, &u);
	assert_int_equal(run(t), NVME_SC_DATA_XFER_ERROR | NVME_SC_DNR);
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal(canary[i], 0x77);
	/* within the buffer it is served: NUMD for the two pages */
	u.cdw10 = (2 * 4096 / 4 - 1) << 16 | 0x02;
	nvme_sqe(t, t->s.dev, NVME_URING_CMD_ADMIN, &u);
	assert_int_equal(run(t), 0);

	/* a 512-byte buffer, NUMD for 8 KiB: its page (as Linux's PRPs), never the next */
	memset(reg, 0x5a, 2 * 4096);
	u.data_len = 512;
	u.cdw10 = (2 * 4096 / 4 - 1) << 16 | 0x02;
	nvme_sqe(t, t->s.dev, NVME_URING_CMD_ADMIN, &u);
	assert_int_equal(run(t), NVME_SC_DATA_XFER_ERROR | NVME_SC_DNR);
	for (unsigned i = 4096; i < 2 * 4096; i++)
		assert_int_equal((uint8_t)reg[i], 0x5a);

	/* plain memory (bounced): the same */
	memset(plain, 0x5a, 2 * 4096);
	u.addr = (uint64_t)(uintptr_t)plain;
	u.data_len = 4096;
	u.cdw10 = (3 * 4096 / 4 - 1) << 16 | 0x02;
	nvme_sqe(t, t->s.dev, NVME_URING_CMD_ADMIN, &u);
	assert_int_equal(run(t), NVME_SC_DATA_XFER_ERROR | NVME_SC_DNR);
	for (unsigned i = 0; i < 2 * 4096; i++)
		assert_int_equal(plain[i], 0x5a);

	/* Create I/O Completion Queue 9 in the client's (bounced) buffer */
	memset(&u, 0, sizeof(u));
	u.opcode = 0x05;
	u.addr = (uint64_t)(uintptr_t)plain;
	u.data_len = 4096;
	u.cdw10 = (2 - 1) << 16 | 9;
	u.cdw11 = 1;	/* physically contiguous, no interrupts */
	nvme_sqe(t, t->s.dev, NVME_URING_CMD_ADMIN, &u);
	assert_int_equal(run(t), NVME_SC_DATA_XFER_ERROR | NVME_SC_DNR);
	munmap(reg, 2 * 4096);
	free(canary);
	free(plain);
}

static void test_region_no_bounce(void **state)
{
	struct xt *t = *state;
	unsigned lbs = t->s.fx.lbs;
	char *reg = region_map(t, 2 * 4096), *plain = fx_alloc(lbs), *w = fx_alloc(lbs);
	struct iovec iov[2] = { { reg + 4096, lbs }, { plain, lbs } };
	struct nvme_uring_cmd u;

	fx_fill(reg, lbs, 21);
	atomic_store(&t->s.c.bounce_bytes, SRV_MAX_BOUNCE + 1);
	fx_rw_cmd(&u, 0x01, t->s.fx.nsid, 8, 1, reg, lbs);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO, &u);
	assert_int_equal(run(t), 0);
	memset(reg + 4096, 0x5a, lbs);
	fx_rw_cmd(&u, 0x02, t->s.fx.nsid, 8, 1, reg + 4096, lbs);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO, &u);
	assert_int_equal(run(t), 0);
	assert_memory_equal(reg + 4096, reg, lbs);
	/* nothing was held: the count is as the test left it */
	assert_int_equal(atomic_load(&t->s.c.bounce_bytes), SRV_MAX_BOUNCE + 1);

	/* one segment in the region, one in plain memory: bounced, so refused */
	fx_rw_cmd(&u, 0x02, t->s.fx.nsid, 8, 2, iov, 2);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO_VEC, &u);
	assert_int_equal(run(t), -ENOMEM);
	atomic_store(&t->s.c.bounce_bytes, 0);
	fx_fill(w, lbs, 22);
	fx_rw_cmd(&u, 0x01, t->s.fx.nsid, 9, 1, w, lbs);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO, &u);
	assert_int_equal(run(t), 0);
	memset(reg + 4096, 0, lbs);
	fx_rw_cmd(&u, 0x02, t->s.fx.nsid, 8, 2, iov, 2);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO_VEC, &u);
	assert_int_equal(run(t), 0);
	assert_memory_equal(reg + 4096, reg, lbs);
	assert_memory_equal(plain, w, lbs);
	assert_int_equal(atomic_load(&t->s.c.bounce_bytes), 0);

	/* a region given back is plain memory again: bounced (and refused past the limit) */
	assert_int_equal(srv_region_del(&t->s.c, (uint64_t)(uintptr_t)reg), 0);
	atomic_store(&t->s.c.bounce_bytes, SRV_MAX_BOUNCE + 1);
	fx_rw_cmd(&u, 0x02, t->s.fx.nsid, 9, 1, reg + 4096, lbs);
	nvme_sqe(t, t->s.ng, NVME_URING_CMD_IO, &u);
	assert_int_equal(run(t), -ENOMEM);
	atomic_store(&t->s.c.bounce_bytes, 0);
	assert_int_equal(run_again(t), 0);
	assert_memory_equal(reg + 4096, w, lbs);
	munmap(reg, 2 * 4096);
	free(plain);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nvme_rw, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvme_vec_and_admin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_cmd_op, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_address, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rw_family_and_fds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fixed_buffers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_cancel_nop_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_region_no_bounce, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_buffer_no_prp_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admin_short_buffer_no_prp_walk, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
