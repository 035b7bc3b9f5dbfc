/* SPDX-License-Identifier: MIT */
#include "host_fixture.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

int fx_setup(struct fx *f, const struct fx_opts *o)
{
	struct fx_opts dflt = { .mode = UCMD_CTRL_INLINE };
	struct ucmd_ctrl_params p = { 0 };
	struct ucmd_ns_params nsp = { 0 };
	struct ucmd_nvme_host_opts ho = { 0 };
	struct io_uring_params up = { 0 };
	int ret, flags;

	if (!o)
		o = &dflt;
	memset(f, 0, sizeof(*f));
	f->ng = f->dev = f->bdev = -1;
	f->e = ucmd_engine_new();
	if (!f->e)
		return -ENOMEM;
	p.mode = o->mode;
	p.max_io_queues = 8;
	p.mqes = 1023;
	p.serial = "HOSTTEST01";
	ret = ucmd_ctrl_create(&p, &f->ctrl);
	if (ret)
		return ret;
	nsp.nsze = o->nsze ? o->nsze : 4096;
	nsp.lbaf = o->lbaf;
	nsp.extended = o->extended;
	nsp.store = UCMD_NS_STORE_RAM;
	nsp.attach = true;
	nsp.zoned.zone_size = o->zone_size;
	nsp.zoned.max_open = o->max_open;
	nsp.zoned.max_active = o->max_active;
	ret = ucmd_ctrl_ns_create(f->ctrl, &nsp);
	if (ret <= 0)
		return ret ? ret : -EINVAL;
	f->nsid = (uint32_t)ret;
	f->lbs = o->lbaf >= 4 ? 4096 : 512;
	ho.instance = 0;
	ho.nr_io_queues = o->nr_io_queues ? o->nr_io_queues : 2;
	ho.nr_poll_queues = o->nr_poll_queues;
	ho.queue_depth = 64;
	ret = ucmd_nvme_attach(f->e, f->ctrl, &ho, &f->host);
	if (ret)
		return ret;
	flags = o->rdonly ? O_RDONLY : o->open_flags ? o->open_flags : O_RDWR;
	f->ng = ucmd_open(f->e, "ng0n1", flags);
	f->dev = ucmd_open(f->e, "nvme0", flags);
	f->bdev = o->no_bdev ? -1 : ucmd_open(f->e, "nvme0n1", flags);
	if (f->ng < 0 || f->dev < 0 || (!o->no_bdev && f->bdev < 0))
		return -ENOENT;
	up.flags = o->ring_flags_set || o->ring_flags ? o->ring_flags
						       : IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
	return ucmd_queue_init_engine(f->e, o->entries ? o->entries : 64, &f->ring, &up);
}

void fx_teardown(struct fx *f)
{
	if (f->ring.ops)
		ucmd_queue_exit(&f->ring);
	if (f->ng >= 0)
		ucmd_close(f->e, f->ng);
	if (f->dev >= 0)
		ucmd_close(f->e, f->dev);
	if (f->bdev >= 0)
		ucmd_close(f->e, f->bdev);
	ucmd_nvme_detach(f->host);
	if (f->ctrl)
		ucmd_ctrl_destroy(f->ctrl);
	if (f->e)
		ucmd_engine_free(f->e);
	memset(f, 0, sizeof(*f));
}

int fx_nvme_ex(struct fx *f, int fd, uint32_t cmd_op, const struct nvme_uring_cmd *cmd,
	       unsigned uring_cmd_flags, unsigned buf_index, uint64_t *res2)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(&f->ring);
	struct io_uring_cqe *cqe;
	int ret;

	assert_non_null(sqe);
	ucmd_prep_uring_cmd(sqe, (int)cmd_op, fd);
	if (f->ring.flags & IORING_SETUP_SQE128) {
		memset(sqe->cmd, 0, 80);
		memcpy(sqe->cmd, cmd, sizeof(*cmd));
	} else {
		memcpy(sqe->cmd, cmd, 16);
	}
	sqe->uring_cmd_flags = uring_cmd_flags;
	sqe->buf_index = (uint16_t)buf_index;
	sqe->user_data = 0x1234;
	ret = ucmd_submit_and_wait(&f->ring, 1);
	assert_int_equal(ret, 1);
	ret = ucmd_wait_cqe(&f->ring, &cqe);
	assert_int_equal(ret, 0);
	assert_int_equal(cqe->user_data, 0x1234);
	ret = cqe->res;
	if (res2)
		*res2 = (f->ring.flags & IORING_SETUP_CQE32) ? cqe->big_cqe[0] : 0;
	ucmd_cqe_seen(&f->ring, cqe);
	return ret;
}

int fx_nvme(struct fx *f, int fd, uint32_t cmd_op, const struct nvme_uring_cmd *cmd,
	    uint64_t *res2)
{
	return fx_nvme_ex(f, fd, cmd_op, cmd, 0, 0, res2);
}

void fx_rw_cmd(struct nvme_uring_cmd *c, uint8_t opcode, uint32_t nsid, uint64_t slba,
	       uint32_t nlb, void *buf, uint32_t len)
{
	memset(c, 0, sizeof(*c));
	c->opcode = opcode;
	c->nsid = nsid;
	c->addr = (uint64_t)(uintptr_t)buf;
	c->data_len = len;
	c->cdw10 = (uint32_t)slba;
	c->cdw11 = (uint32_t)(slba >> 32);
	c->cdw12 = nlb - 1;
}

void fx_fill(void *buf, size_t len, unsigned seed)
{
	uint8_t *b = buf;

	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
}

void *fx_alloc(size_t len)
{
	void *p = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);

	assert_non_null(p);
	memset(p, 0, len);
	return p;
}
