/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: NVMe passthrough command decoding through the real
 * path — ring, uring_cmd, the host driver's validation and request builder,
 * PRP/SGL mapping, the emulated controller's decoding and status codes — on
 * a 1 MiB RAM namespace.
 *
 * Input: 1 byte selecting cmd_op (IO, IO_VEC, ADMIN, ADMIN_VEC, or the next
 * 4 bytes raw), then a struct nvme_uring_cmd (72 bytes, zero padded), then
 * bytes for an iovec table. Pointers are never taken from the input as
 * they are (the engine runs in this process and trusts mapped memory, like
 * any library): addr/metadata become offsets into the fuzzer's own buffers,
 * or NULL, or an address outside user space, chosen by their top bits.
 * Commands that would never complete or would take the driver's own queues
 * away (Async Event Request, queue creation and deletion) are skipped: a
 * root caller can do that to Linux too, and it is not decoding.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "nvme/ctrl/ctrl.h"
#include "ucmd/nvme.h"
#include "ucmd/ucmd.h"

#define BUF_SIZE (64u * 1024)

static struct ucmd_engine *engine;
static struct ucmd_ctrl *ctrl;
static struct ucmd_nvme_host *host;
static struct ucmd_ring ring;
static int ng_fd, ctrl_fd;
static uint8_t *data_buf, *meta_buf;
static struct iovec iovs[64];

static void setup(void)
{
	/* RAM namespaces that Namespace Management makes stay within the fuzzer's memory */
	struct ucmd_ctrl_params cp = { .mdts = 5, .ram_capacity = 64u << 20 };
	struct ucmd_ns_params np = { .nsze = 2048, .lbaf = 1, .store = UCMD_NS_STORE_RAM,
				     .attach = true };
	struct ucmd_nvme_host_opts ho = { 0 };
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };

	engine = ucmd_engine_new();
	data_buf = aligned_alloc(4096, BUF_SIZE);
	meta_buf = aligned_alloc(4096, BUF_SIZE);
	if (!engine || !data_buf || !meta_buf || ucmd_ctrl_create(&cp, &ctrl) ||
	    ucmd_ctrl_ns_create(ctrl, &np) < 0 || ucmd_nvme_attach(engine, ctrl, &ho, &host) ||
	    ucmd_queue_init_engine(engine, 8, &ring, &p))
		abort();
	ng_fd = ucmd_open(engine, "ng0n1", O_RDWR);
	ctrl_fd = ucmd_open(engine, "nvme0", O_RDWR);
	if (ng_fd < 0 || ctrl_fd < 0)
		abort();
}

/* An address field from the input: mostly inside our buffers, sometimes not. */
static uint64_t fuzz_addr(uint64_t v, uint8_t *base)
{
	switch (v >> 62) {
	case 0:
		return (uint64_t)(uintptr_t)(base + (v % BUF_SIZE));
	case 1:
		return 0;
	case 2:
		return 0xffff800000000000ull | (v & 0xffff);	/* kernel half */
	default:
		return (uint64_t)(uintptr_t)base;
	}
}

static bool skipped_admin(uint8_t opcode)
{
	return opcode == nvme_admin_async_event || opcode == nvme_admin_create_sq ||
	       opcode == nvme_admin_create_cq || opcode == nvme_admin_delete_sq ||
	       opcode == nvme_admin_delete_cq;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	static const uint32_t ops[] = { NVME_URING_CMD_IO, NVME_URING_CMD_IO_VEC,
					NVME_URING_CMD_ADMIN, NVME_URING_CMD_ADMIN_VEC };
	struct nvme_uring_cmd c;
	uint32_t cmd_op;
	bool admin, vec;

	if (!engine)
		setup();
	if (size < 1)
		return 0;
	uint8_t sel = in[0];
	in++;
	size--;
	if ((sel & 7) < 4) {
		cmd_op = ops[sel & 3];
	} else {
		cmd_op = 0;
		if (size >= 4) {
			memcpy(&cmd_op, in, 4);
			in += 4;
			size -= 4;
		}
	}
	memset(&c, 0, sizeof(c));
	memcpy(&c, in, size < sizeof(c) ? size : sizeof(c));
	in += size < sizeof(c) ? size : sizeof(c);
	size -= size < sizeof(c) ? size : sizeof(c);
	admin = cmd_op == NVME_URING_CMD_ADMIN || cmd_op == NVME_URING_CMD_ADMIN_VEC;
	vec = cmd_op == NVME_URING_CMD_IO_VEC || cmd_op == NVME_URING_CMD_ADMIN_VEC;
	if (admin && skipped_admin(c.opcode))
		return 0;
	c.timeout_ms = 0;
	c.metadata = fuzz_addr(c.metadata, meta_buf);
	if (c.metadata >= (uint64_t)(uintptr_t)meta_buf &&
	    c.metadata < (uint64_t)(uintptr_t)meta_buf + BUF_SIZE)
		c.metadata_len %= (uint32_t)(BUF_SIZE - (c.metadata - (uint64_t)(uintptr_t)meta_buf)) + 1;
	if (vec) {
		/* data_len counts iovecs; the table is ours, its entries from the input */
		unsigned n = c.data_len % 80;	/* some above the 64 we own: -EINVAL path */
		for (unsigned i = 0; i < 64; i++) {
			uint32_t off = 0, len = 0;
			if (size >= 8) {
				memcpy(&off, in, 4);
				memcpy(&len, in + 4, 4);
				in += 8;
				size -= 8;
			}
			off %= BUF_SIZE;
			len %= BUF_SIZE - off + 1;
			iovs[i].iov_base = data_buf + off;
			iovs[i].iov_len = len;
		}
		c.data_len = n > 64 ? n + 1000 : n;
		c.addr = (c.addr >> 62) == 1 ? 0 : (uint64_t)(uintptr_t)iovs;
	} else {
		c.addr = fuzz_addr(c.addr, data_buf);
		if (c.addr >= (uint64_t)(uintptr_t)data_buf &&
		    c.addr < (uint64_t)(uintptr_t)data_buf + BUF_SIZE)
			c.data_len %= (uint32_t)(BUF_SIZE - (c.addr - (uint64_t)(uintptr_t)data_buf)) + 1;
	}

	struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);
	ucmd_prep_nvme_cmd(sqe, admin ? ctrl_fd : ng_fd, cmd_op, &c);
	sqe->user_data = 0x5eed;
	if (ucmd_submit_and_wait(&ring, 1) != 1)
		abort();
	struct io_uring_cqe *cqe;
	if (ucmd_wait_cqe(&ring, &cqe) || cqe->user_data != 0x5eed)
		abort();
	/* res: 0, a negative errno, or an NVMe status field (15 bits) */
	if (cqe->res < -4095 || cqe->res > 0x7fff)
		abort();
	ucmd_cqe_seen(&ring, cqe);
	return 0;
}
