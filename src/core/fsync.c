/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_FSYNC (the kernel's io_uring/sync.c): the file's ->fsync, which
 * may block, so it always runs from an io-wq worker, as in Linux. A file
 * without one fails with -EINVAL, as vfs_fsync() does on a character device
 * (/dev/null, /dev/ngXnY); the NVMe block device flushes the volatile write
 * cache (an NVMe Flush), as blkdev_fsync() does.
 */
#include <errno.h>

#include "core/core.h"

int io_fsync_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe)
{
	/* Linux: no address, buffer or file index */
	if (sqe->addr || sqe->buf_index || sqe->file_index)
		return -EINVAL;
	req->fsync.flags = sqe->fsync_flags;
	if (req->fsync.flags & ~IORING_FSYNC_DATASYNC)
		return -EINVAL;
	return 0;
}

int io_fsync(struct ucmd_kiocb *req, unsigned issue_flags)
{
	const struct ucmd_file_ops *ops = req->file->ops;

	if (!ops->fsync) {
		io_req_set_res(req, -EINVAL, 0);
		return 0;
	}
	/* fsync always blocks: punt to the worker */
	if (issue_flags & IO_URING_F_NONBLOCK)
		return -EAGAIN;
	io_req_set_res(req, ops->fsync(req->file, req->fsync.flags & IORING_FSYNC_DATASYNC), 0);
	return 0;
}
