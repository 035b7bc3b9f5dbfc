/* SPDX-License-Identifier: MIT */
/*
 * The null device, as Linux's /dev/null: reads see end of file, writes
 * succeed whole, and uring_cmd completes at once with 0 (Linux 6.x wired
 * uring_cmd into /dev/null so the framework's own cost can be measured).
 */
#include "core/core.h"
#include "core/null.h"
#include "security/desc.h"

static int null_uring_cmd(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	(void)cmd;
	(void)issue_flags;
	return 0;
}

/* Nothing is ever pending, so polling finds nothing. */
static int null_uring_cmd_iopoll(struct io_uring_cmd *cmd)
{
	(void)cmd;
	return 0;
}

static long null_read_iter(struct ucmd_kiocb_rw *kiocb, unsigned issue_flags)
{
	(void)kiocb;
	(void)issue_flags;
	return 0;
}

static long null_write_iter(struct ucmd_kiocb_rw *kiocb, unsigned issue_flags)
{
	(void)issue_flags;
	return (long)kiocb->iter.count;
}

static int null_iopoll(struct ucmd_kiocb_rw *kiocb)
{
	(void)kiocb;
	return 0;
}

static int null_describe(const struct io_uring_cmd *cmd, struct ucmd_cmd_desc *d)
{
	ucmd_desc_init(d, "null", cmd->cmd_op, 0);
	/* /dev/null gives every command the same meaning: nothing at all */
	d->verb = UCMD_VERB_UNKNOWN;
	d->dir = UCMD_DIR_NONE;
	return 0;
}

static int null_describe_rw(const struct ucmd_kiocb_rw *kiocb, struct ucmd_cmd_desc *d)
{
	ucmd_desc_init(d, "null", 0, 0);
	d->verb = kiocb->rw == UCMD_WRITE ? UCMD_VERB_WRITE : UCMD_VERB_READ;
	d->dir = kiocb->rw == UCMD_WRITE ? UCMD_DIR_TO_DEVICE : UCMD_DIR_FROM_DEVICE;
	d->offset = kiocb->pos;
	d->length = kiocb->iter.count;
	return 0;
}

static const struct ucmd_file_ops null_fops = {
	.name = "null",
	.uring_cmd = null_uring_cmd,
	.uring_cmd_iopoll = null_uring_cmd_iopoll,
	.read_iter = null_read_iter,
	.write_iter = null_write_iter,
	.iopoll = null_iopoll,
	.describe = null_describe,
	.describe_rw = null_describe_rw,
};

int null_register(struct ucmd_engine *e)
{
	return engine_add_device(e, "null", &null_fops, NULL);
}
