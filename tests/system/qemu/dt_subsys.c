/* SPDX-License-Identifier: MIT */
/*
 * The multipath sequence: one NVM subsystem of two controllers sharing
 * namespace 1 (QEMU's nvme-subsys under Linux's native multipath, or ucmd's
 * directory made by create-ctrl --controllers 2 under its own multipath
 * host). What each controller says of itself and of the shared namespace
 * (CMIC, NMIC), then data written through the head's generic device read
 * back through the head and through each controller alone.
 *
 * Through each controller alone: Linux gives a path no generic device of
 * its own, so the guest sends the read with NVME_IOCTL_IO_CMD on the
 * controller's /dev/nvmeX (nvme_dev_user_cmd, its only namespace); ucmd's
 * engine has no such ioctl, so the emulated side attaches that controller
 * by itself once the head is gone (dt_subsys_emulated.c) and reads its
 * ng0n1. Either way the command reaches that one controller.
 */
#include <endian.h>
#include <nvme/types.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "dt_subsys.h"

enum { OP_WRITE = 0x01, OP_READ = 0x02 };

static uint8_t buf[4096] __attribute__((aligned(4096)));
static uint8_t wbuf[8192] __attribute__((aligned(4096)));
static uint8_t rbuf[8192] __attribute__((aligned(4096)));

static int admin(struct dt_mp *m, int fd, uint32_t nsid, uint32_t cns, uint32_t *result)
{
	struct nvme_passthru_cmd64 c;
	int ret;

	memset(&c, 0, sizeof(c));
	memset(buf, 0, sizeof(buf));
	c.opcode = nvme_admin_identify;
	c.nsid = nsid;
	c.cdw10 = cns;
	c.addr = (uint64_t)(uintptr_t)buf;
	c.data_len = sizeof(buf);
	ret = ucmd_ioctl(m->e, fd, NVME_IOCTL_ADMIN64_CMD, &c);
	*result = (uint32_t)c.result;
	return ret;
}

#define U(name, v) dt_field(name, "0x%llx", (unsigned long long)(v))

static void identify(struct dt_mp *m)
{
	char subnqn[2][NVME_NQN_LENGTH];
	unsigned cntlid[2];
	uint32_t result;
	char name[64];
	int res;

	for (unsigned i = 0; i < DT_MP_PATHS; i++) {
		struct nvme_id_ctrl *id = (void *)buf;
		struct nvme_id_ns *ns = (void *)buf;

		res = admin(m, m->ctrl_fd[i], 0, NVME_IDENTIFY_CNS_CTRL, &result);
		snprintf(name, sizeof(name), "mp.id-ctrl.c%u", i);
		dt_line(name, res, result, NULL, 0);
		snprintf(name, sizeof(name), "mp.id-ctrl.c%u.cmic", i);
		U(name, id->cmic);
		snprintf(name, sizeof(name), "mp.id-ctrl.c%u.nn", i);
		U(name, le32toh(id->nn));
		cntlid[i] = le16toh(id->cntlid);
		memcpy(subnqn[i], id->subnqn, sizeof(subnqn[i]));

		res = admin(m, m->ctrl_fd[i], m->nsid, NVME_IDENTIFY_CNS_NS, &result);
		snprintf(name, sizeof(name), "mp.id-ns.c%u", i);
		dt_line(name, res, result, NULL, 0);
		snprintf(name, sizeof(name), "mp.id-ns.c%u.nmic", i);
		U(name, ns->nmic);
		snprintf(name, sizeof(name), "mp.id-ns.c%u.nsze", i);
		U(name, le64toh(ns->nsze));
		snprintf(name, sizeof(name), "mp.id-ns.c%u.flbas", i);
		U(name, ns->flbas);
	}
	/* controller IDs are the subsystem's to choose: only that they differ, and by how much */
	dt_field("mp.id-ctrl.cntlid", "%u", cntlid[0]);
	dt_field("mp.id-ctrl.cntlid-step", "%d", (int)cntlid[1] - (int)cntlid[0]);
	dt_field("mp.id-ctrl.subnqn-same", "%d", !strncmp(subnqn[0], subnqn[1], NVME_NQN_LENGTH));

	/* an admin command on the head's device goes to one of its paths */
	res = admin(m, m->head_fd, m->nsid, NVME_IDENTIFY_CNS_NS, &result);
	dt_line("mp.id-ns.head", res, result, NULL, 0);
	U("mp.id-ns.head.nmic", ((struct nvme_id_ns *)buf)->nmic);
}

static struct nvme_uring_cmd rw(uint8_t op, uint32_t nsid, uint64_t slba, uint32_t nlb, void *p)
{
	struct nvme_uring_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = op;
	c.nsid = nsid;
	c.addr = (uint64_t)(uintptr_t)p;
	c.data_len = nlb * 512;
	c.cdw10 = (uint32_t)slba;
	c.cdw11 = (uint32_t)(slba >> 32);
	c.cdw12 = nlb - 1;
	return c;
}

static void fill(uint8_t *b, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(seed * 29 + i * 3 + (i >> 9));
}

static void head_io(struct dt_mp *m, struct dt *d)
{
	struct nvme_uring_cmd c;
	struct nvme_passthru_cmd64 p;
	uint64_t dw0;
	int res;

	fill(wbuf, sizeof(wbuf), 1);
	c = rw(OP_WRITE, m->nsid, 8, 16, wbuf);
	res = dt_cmd(d, &d->ring, m->head_fd, NVME_URING_CMD_IO, &c, 0, 0, 0, &dw0);
	dt_line("mp.head.write", res, dw0, NULL, 0);
	memset(rbuf, 0xee, sizeof(rbuf));
	c = rw(OP_READ, m->nsid, 8, 16, rbuf);
	res = dt_cmd(d, &d->ring, m->head_fd, NVME_URING_CMD_IO, &c, 0, 0, 0, &dw0);
	dt_line("mp.head.read", res, dw0, rbuf, sizeof(rbuf));
	dt_line("mp.head.read-matches", !memcmp(rbuf, wbuf, sizeof(rbuf)), 0, NULL, 0);

	/* the head's ioctl path too */
	memset(rbuf, 0xee, sizeof(rbuf));
	c = rw(OP_READ, m->nsid, 8, 16, rbuf);
	memset(&p, 0, sizeof(p));
	p.opcode = c.opcode;
	p.nsid = c.nsid;
	p.addr = c.addr;
	p.data_len = c.data_len;
	p.cdw10 = c.cdw10;
	p.cdw11 = c.cdw11;
	p.cdw12 = c.cdw12;
	res = ucmd_ioctl(m->e, m->head_fd, NVME_IOCTL_IO64_CMD, &p);
	dt_line("mp.head.ioctl-read", res, p.result, rbuf, sizeof(rbuf));

	/* out of range on the head: the status is the caller's, not retried elsewhere */
	c = rw(OP_READ, m->nsid, DT_MP_BLOCKS, 1, rbuf);
	res = dt_cmd(d, &d->ring, m->head_fd, NVME_URING_CMD_IO, &c, 0, 0, 0, &dw0);
	dt_line("mp.head.lba-out-of-range", res, dw0, NULL, 0);
}

static void path_io(struct dt_mp *m)
{
	char name[64];
	uint32_t result;
	int res;

	for (unsigned i = 0; i < DT_MP_PATHS; i++) {
		struct nvme_passthru_cmd c;

		memset(rbuf, 0xee, sizeof(rbuf));
		memset(&c, 0, sizeof(c));
		c.opcode = OP_READ;
		c.nsid = m->nsid;
		c.addr = (uint64_t)(uintptr_t)rbuf;
		c.data_len = sizeof(rbuf);
		c.cdw10 = 8;
		c.cdw12 = 15;
		res = m->path_io(m, i, &c, &result);
		snprintf(name, sizeof(name), "mp.path%u.read", i);
		dt_line(name, res, result, rbuf, sizeof(rbuf));
		snprintf(name, sizeof(name), "mp.path%u.read-matches", i);
		dt_line(name, !memcmp(rbuf, wbuf, sizeof(rbuf)), 0, NULL, 0);
	}
}

int dt_run_mp(struct dt_mp *m)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct dt d = { .t = NULL };
	int ret = ucmd_queue_init_engine(m->e, 8, &d.ring, &p);

	if (ret) {
		printf("mp.setup res=%d\n", ret);
		return 1;
	}
	identify(m);
	head_io(m, &d);
	ucmd_queue_exit(&d.ring);
	/* last: on ucmd's side this takes the head down (see the top of this file) */
	path_io(m);
	return d.failed;
}
