/* SPDX-License-Identifier: MIT */
/*
 * The kernel backend on whatever kernel runs it: ucmd's API on a real
 * io_uring, with plain files (NOP, read/write, fixed files and buffers,
 * personality, SQPOLL, IOPOLL refusal on a file), and, given a /dev/ngXnY
 * path, an NVMe Identify through NVME_URING_CMD_ADMIN and a Read through
 * NVME_URING_CMD_IO. Prints "kernel_smoke: ok" and exits 0 when all pass.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ucmd/kernel.h"
#include "ucmd/ucmd.h"

static int failures;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
			failures++;                                          \
		}                                                            \
	} while (0)

/* Submit what is queued, wait for one completion, return its res. */
static int run1(struct ucmd_ring *ring, uint64_t *big0)
{
	struct io_uring_cqe *cqe;
	int ret = ucmd_submit_and_wait(ring, 1);

	if (ret < 0)
		return ret;
	ret = ucmd_wait_cqe(ring, &cqe);
	if (ret < 0)
		return ret;
	ret = cqe->res;
	if (big0)
		*big0 = (ring->flags & IORING_SETUP_CQE32) ? cqe->big_cqe[0] : 0;
	ucmd_cqe_seen(ring, cqe);
	return ret;
}

static void files(struct ucmd_engine *e, unsigned setup_flags)
{
	struct io_uring_params p = { .flags = setup_flags, .sq_thread_idle = 100 };
	struct ucmd_ring ring;
	char path[] = "/tmp/ucmd-ksmoke.XXXXXX";
	static char wbuf[8192], rbuf[8192];
	int ret, fd, tmp = mkstemp(path);

	CHECK(tmp >= 0, "mkstemp");
	close(tmp);
	ret = ucmd_queue_init_engine(e, 8, &ring, &p);
	CHECK(ret == 0, "queue_init flags %#x: %d", setup_flags, ret);
	if (ret)
		return;
	fd = ucmd_open(e, path, O_RDWR);
	CHECK(fd >= 0, "open %s: %d", path, fd);

	ucmd_prep_nop(ucmd_get_sqe(&ring));
	CHECK(run1(&ring, NULL) == 0, "nop");

	for (unsigned i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = (char)(i * 7 + setup_flags);
	ucmd_prep_write(ucmd_get_sqe(&ring), fd, wbuf, 4096, 0);
	CHECK((ret = run1(&ring, NULL)) == 4096, "write: %d", ret);

	/* fixed file 0 and fixed buffer 0 */
	struct iovec iov = { rbuf, sizeof(rbuf) };
	CHECK((ret = ucmd_register_files(&ring, &fd, 1)) == 0, "register_files: %d", ret);
	CHECK((ret = ucmd_register_buffers(&ring, &iov, 1)) == 0, "register_buffers: %d", ret);
	struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);
	ucmd_prep_read_fixed(sqe, 0, rbuf, 4096, 0, 0);
	ucmd_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	CHECK((ret = run1(&ring, NULL)) == 4096, "read_fixed: %d", ret);
	CHECK(!memcmp(wbuf, rbuf, 4096), "read_fixed data");

	int id = ucmd_register_personality(&ring);
	CHECK(id > 0, "register_personality: %d", id);
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_nop(sqe);
	sqe->personality = (uint16_t)id;
	CHECK(run1(&ring, NULL) == 0, "nop as personality");
	CHECK(ucmd_unregister_personality(&ring, id) == 0, "unregister_personality");
	CHECK(ucmd_unregister_buffers(&ring) == 0, "unregister_buffers");
	CHECK(ucmd_unregister_files(&ring) == 0, "unregister_files");
	CHECK(ucmd_unregister_files(&ring) == -ENXIO, "unregister_files twice");
	ucmd_close(e, fd);
	ucmd_queue_exit(&ring);
	unlink(path);
}

static void nvme(struct ucmd_engine *e, const char *dev)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct ucmd_kernel_nvme kn;
	struct ucmd_ring ring;
	static char buf[4096] __attribute__((aligned(4096)));
	struct nvme_uring_cmd cmd;
	int ret;

	ret = ucmd_kernel_nvme_open(e, dev, 0, O_RDWR, &kn);
	CHECK(ret == 0, "nvme_open %s: %d", dev, ret);
	if (ret)
		return;
	printf("kernel_smoke: %s -> ctrl %s ns %s nsid %u\n", dev, kn.ctrl_path, kn.ns_path,
	       kn.nsid);
	CHECK(ucmd_queue_init_engine(e, 8, &ring, &p) == 0, "nvme ring");

	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = 0x06;	/* Identify controller */
	cmd.cdw10 = 1;
	cmd.addr = (uint64_t)(uintptr_t)buf;
	cmd.data_len = sizeof(buf);
	ucmd_prep_nvme_cmd(ucmd_get_sqe(&ring), kn.ctrl_fd, NVME_URING_CMD_ADMIN, &cmd);
	CHECK((ret = run1(&ring, NULL)) == 0, "identify: %d", ret);
	printf("kernel_smoke: identify sn '%.20s' mn '%.40s'\n", buf + 4, buf + 24);

	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = 0x02;	/* Read 1 block at LBA 0 */
	cmd.nsid = kn.nsid;
	cmd.addr = (uint64_t)(uintptr_t)buf;
	cmd.data_len = 512;
	ucmd_prep_nvme_cmd(ucmd_get_sqe(&ring), kn.ns_fd, NVME_URING_CMD_IO, &cmd);
	CHECK((ret = run1(&ring, NULL)) == 0, "read: %d", ret);
	ucmd_queue_exit(&ring);
	ucmd_kernel_nvme_close(e, &kn);
}

int main(int argc, char **argv)
{
	struct ucmd_engine *e = ucmd_engine_new_kernel();
	const char *names[64];
	int n;

	if (!e || !ucmd_engine_is_kernel(e))
		return 1;
	CHECK(!ucmd_engine_is_kernel(ucmd_engine_default()), "default engine is not kernel");
	n = ucmd_device_names(e, names, 64);
	CHECK(n >= 1 && !strcmp(names[0], "null"), "device_names: %d", n);
	printf("kernel_smoke: devices:");
	for (int i = 0; i < n && i < 64; i++)
		printf(" %s", names[i]);
	printf("\n");
	CHECK(ucmd_open(e, "no-such-device", O_RDWR) == -ENOENT, "open missing");
	files(e, 0);
	files(e, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	files(e, IORING_SETUP_SQPOLL);
	if (argc > 1)
		nvme(e, argv[1]);
	ucmd_engine_free(e);
	printf("kernel_smoke: %s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
