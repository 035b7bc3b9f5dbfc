/* SPDX-License-Identifier: MIT */
/*
 * Namespace backing stores. A store is a flat array of bytes of a fixed size;
 * the emulated controller maps LBAs (data and metadata) onto it. Every call is
 * synchronous and returns 0 or a negative errno; the controller turns errors
 * into NVMe status codes. Stores are used from one controller context at a
 * time (the controller serialises per namespace), but must tolerate calls from
 * different threads over their lifetime.
 */
#ifndef UCMD_STORE_H
#define UCMD_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

struct store;

struct store_ops {
	const char *name;	/* "ram", "file", "device" */
	/* Scatter/gather transfer of the byte range [off, off + total iov len). */
	int (*readv)(struct store *st, const struct iovec *iov, int iovcnt, uint64_t off);
	int (*writev)(struct store *st, const struct iovec *iov, int iovcnt, uint64_t off,
		      bool fua);
	/* Make every acknowledged write durable (no-op for ram). */
	int (*flush)(struct store *st);
	/* Deallocate: the range reads back as zeros and, where possible, frees space. */
	int (*deallocate)(struct store *st, uint64_t off, uint64_t len);
	/* Write zeroes over the range (may deallocate when that reads back as zeros). */
	int (*write_zeroes)(struct store *st, uint64_t off, uint64_t len);
	/* Change the size (namespace format / resize); new space reads as zeros. */
	int (*resize)(struct store *st, uint64_t size);
	/*
	 * Optional hint: [off, off + len) will be read soon. Never fails,
	 * never blocks.
	 */
	void (*prefetch)(struct store *st, uint64_t off, uint64_t len);
	/* Bytes actually allocated (for NUSE / capacity reporting). */
	uint64_t (*allocated)(struct store *st);
	void (*close)(struct store *st);
};

struct store {
	const struct store_ops *ops;
	uint64_t size;		/* bytes */
};

/* Open flags for the file store */
#define UCMD_STORE_CREATE	(1u << 0)	/* a new file (O_EXCL), sized sparse */
#define UCMD_STORE_RDONLY	(1u << 1)	/* writes fail with -EROFS */

/* Sparse in-memory store: costs nothing until written. */
int store_ram_open(uint64_t size, struct store **out);
/*
 * Sparse file; Flush and FUA are durable (fdatasync). The path's last
 * component is never followed if it is a symlink (-ELOOP). With
 * UCMD_STORE_CREATE the file must not exist (-EEXIST) and is created 0600
 * with the given size; otherwise it must be at least `size` bytes long
 * (-EINVAL): an existing file is never extended or truncated on open.
 */
int store_file_open(const char *path, uint64_t size, unsigned flags, struct store **out);
/* The same over a regular file the caller opened (O_RDWR, or O_RDONLY with
 * UCMD_STORE_RDONLY); the store owns fd on success only. UCMD_STORE_CREATE
 * says the file is new and may be sized. */
int store_file_open_fd(int fd, uint64_t size, unsigned flags, struct store **out);
/*
 * Real block device or regular file opened O_DIRECT, driven through the
 * kernel's io_uring. size 0 means "the device's size". The store never
 * creates, truncates or extends anything: a size beyond the device or file
 * is -ENOSPC.
 */
int store_device_open(const char *path, uint64_t size, struct store **out);
/* The same over a block device or regular file the caller opened (O_RDWR,
 * or O_RDONLY with UCMD_STORE_RDONLY, the only flag); owns fd on success. */
int store_device_open_fd(int fd, uint64_t size, unsigned flags, struct store **out);

static inline int store_read(struct store *st, void *buf, uint64_t len, uint64_t off)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	return st->ops->readv(st, &iov, 1, off);
}

static inline int store_write(struct store *st, const void *buf, uint64_t len,
			      uint64_t off, bool fua)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	return st->ops->writev(st, &iov, 1, off, fua);
}

static inline void store_close(struct store *st)
{
	if (st)
		st->ops->close(st);
}

#endif /* UCMD_STORE_H */
