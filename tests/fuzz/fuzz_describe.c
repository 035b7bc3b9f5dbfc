/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: providers' describe(). The input is a cmd_op (4 bytes,
 * little endian) and an 80-byte command area (short inputs are zero
 * padded), handed to describe() of every device of a private engine (the
 * null device, and the NVMe driver's controller and namespace devices over
 * an emulated controller) as the engine would: through the io_uring_cmd of
 * a request on an SQE128 ring, whose sqe is a 128-byte snapshot. The
 * description must be sane (a known verb and direction, a NUL-terminated
 * device name) and is then judged by the default policy.
 */
#include <fcntl.h>
#include <sys/uio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ucmd/ucmd.h"
#include "ucmd/nvme.h"
#include "core/core.h"
#include "core/null.h"
#include "core/uring_cmd.h"
#include "nvme/ctrl/ctrl.h"
#include "security/security.h"

static struct ucmd_engine *engine;
static struct ucmd_policy *policy;
static int fds[4];
static unsigned nfds;
static struct ucmd_ctrl *ctrl;
static struct ucmd_nvme_host *host;
/* describe() reads the ring's flags through the request that holds cmd */
static struct ucmd_ctx ring_ctx = { .task = &init_task,
				      .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
static struct ucmd_kiocb req = { .ctx = &ring_ctx };

static void setup(void)
{
	static const char *const names[] = { "null", "nvme0", "ng0n1", "nvme0n1" };
	struct ucmd_ctrl_params cp = { 0 };
	struct ucmd_ns_params np = { .nsze = 1024, .lbaf = 5, .store = UCMD_NS_STORE_RAM,
				     .attach = true };
	struct ucmd_nvme_host_opts ho = { 0 };
	char err[256];

	engine = ucmd_engine_new();
	if (!engine || ucmd_policy_load_default(&policy, err, sizeof(err)))
		abort();
	/* an engine may come with the null device already (-EEXIST) */
	null_register(engine);
	if (ucmd_ctrl_create(&cp, &ctrl) || ucmd_ctrl_ns_create(ctrl, &np) < 0 ||
	    ucmd_nvme_attach(engine, ctrl, &ho, &host))
		abort();
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int fd = ucmd_open(engine, names[i], O_RDWR);
		if (fd >= 0)
			fds[nfds++] = fd;
	}
}

/*
 * Copy's and DSM's describe() reads the range list from the data buffer: a
 * fuzzed address would be a wild pointer into this process (the engine's
 * user-memory accessor is not this target's subject), so the data pointer
 * is the input itself, flat or as a one-entry iovec array.
 */
static void point_data_at_list(struct nvme_uring_cmd *u, uint32_t cmd_op, const uint8_t *data,
			       size_t size)
{
	static uint8_t buf[16384];
	static struct iovec iov;
	size_t n = size < sizeof(buf) ? size : sizeof(buf);

	memset(buf, 0, sizeof(buf));
	memcpy(buf, data, n);
	if (u->data_len > sizeof(buf))
		u->data_len = sizeof(buf);
	if (cmd_op == NVME_URING_CMD_IO_VEC || cmd_op == NVME_URING_CMD_ADMIN_VEC) {
		iov.iov_base = buf;
		iov.iov_len = u->data_len;
		u->addr = (uint64_t)(uintptr_t)&iov;
		u->data_len = 1;
	} else {
		u->addr = (uint64_t)(uintptr_t)buf;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct io_uring_sqe sqe[2];
	struct io_uring_cmd *cmdp = &req.cmd;
	uint32_t cmd_op = 0;

	if (!engine)
		setup();
	memset(sqe, 0, sizeof(sqe));
	if (size >= 4) {
		memcpy(&cmd_op, data, 4);
		data += 4;
		size -= 4;
	}
	memcpy(sqe[0].cmd, data, size < 80 ? size : 80);
	sqe[0].opcode = IORING_OP_URING_CMD;
	sqe[0].cmd_op = cmd_op;
	point_data_at_list((struct nvme_uring_cmd *)(void *)sqe[0].cmd, cmd_op, data, size);
	for (unsigned i = 0; i < nfds; i++) {
		struct ucmd_file *f = fget(engine, fds[i]);
		struct ucmd_cmd_desc d;
		struct ucmd_cred c = { .uid = 1000, .euid = 1000 };
		struct ucmd_policy_subject s = { .hook = UCMD_HOOK_URING_CMD, .cred = &c,
						 .f_mode = FMODE_READ, .desc = &d };
		struct ucmd_policy_verdict v;

		if (!f)
			abort();
		memset(cmdp, 0, sizeof(*cmdp));
		cmdp->file = f;
		cmdp->sqe = sqe;
		cmdp->cmd_op = cmd_op;
		ucmd_desc_init(&d, "", cmd_op, 0);
		if (f->ops->describe && f->ops->describe(cmdp, &d) == 0) {
			if ((unsigned)d.verb >= UCMD_VERB_NR || (unsigned)d.dir > UCMD_DIR_BIDIRECTIONAL ||
			    !memchr(d.device, 0, sizeof(d.device)))
				abort();
			/* a range list is described whole, or the range is unknown */
			if (d.nr_ranges && (!d.ranges || !d.has_range || d.range_unknown))
				abort();
			policy_eval(policy, &s, &v);
		}
		/* what describe() fetched belongs to the request: freed with it */
		io_uring_cmd_snap_release(&req);
		fput(f);
	}
	return 0;
}
