/* SPDX-License-Identifier: MIT */
/*
 * Another process's memory through process_vm_readv/writev(2): the daemon's
 * way into its clients (it needs ptrace access to them, as root has), and a
 * non-faulting reference for the in-process guard. A bad address is EFAULT
 * from the kernel; a transfer stops at the first page it cannot reach, and
 * the bytes left are returned, as the kernel's raw copies do.
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/uio.h>

#include "uaccess/uaccess.h"

#define RM_PAGE 4096u
#define RM_ZEROS 4096u

static const unsigned char rm_zeros[RM_ZEROS];

/* Move n bytes between local and remote; returns the bytes not moved. */
static size_t rm_xfer(pid_t pid, void *local, uint64_t remote, size_t n, bool write)
{
	size_t done = 0;

	if (remote + n < remote || remote + n > UCMD_TASK_SIZE)
		return n;
	while (done < n) {
		struct iovec l = { .iov_base = (char *)local + done, .iov_len = n - done };
		struct iovec r = { .iov_base = (void *)(uintptr_t)(remote + done),
				   .iov_len = n - done };
		ssize_t got = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
				    : process_vm_readv(pid, &l, 1, &r, 1, 0);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		done += (size_t)got;
	}
	return n - done;
}

static size_t rm_copy_from(const struct user_mm *mm, void *dst, uint64_t usrc, size_t n)
{
	return rm_xfer(mm->pid, dst, usrc, n, false);
}

static size_t rm_copy_to(const struct user_mm *mm, uint64_t udst, const void *src, size_t n)
{
	return rm_xfer(mm->pid, (void *)(uintptr_t)src, udst, n, true);
}

static size_t rm_clear(const struct user_mm *mm, uint64_t udst, size_t n)
{
	for (size_t done = 0; done < n;) {
		size_t k = n - done < RM_ZEROS ? n - done : RM_ZEROS;
		size_t left = rm_xfer(mm->pid, (void *)rm_zeros, udst + done, k, true);

		if (left)
			return n - done - (k - left);
		done += k;
	}
	return 0;
}

/*
 * One byte of every page. Writeable: the byte is read and written back,
 * which races only with the owner writing that byte of a buffer it has
 * handed over for a read, a race it already has with the read itself.
 */
static size_t rm_fault_in(const struct user_mm *mm, uint64_t uaddr, size_t n, bool write)
{
	uint64_t end = uaddr + n;

	if (!n)
		return 0;
	if (end < uaddr || end > UCMD_TASK_SIZE)
		return n;
	for (uint64_t p = uaddr; p < end; p = (p & ~(uint64_t)(RM_PAGE - 1)) + RM_PAGE) {
		unsigned char b;

		if (rm_xfer(mm->pid, &b, p, 1, false) || (write && rm_xfer(mm->pid, &b, p, 1, true)))
			return (size_t)(end - p);
	}
	return 0;
}

static size_t rm_fault_in_readable(const struct user_mm *mm, uint64_t uaddr, size_t n)
{
	return rm_fault_in(mm, uaddr, n, false);
}

static size_t rm_fault_in_writeable(const struct user_mm *mm, uint64_t uaddr, size_t n)
{
	return rm_fault_in(mm, uaddr, n, true);
}

static const struct user_mm_ops remote_ops = {
	.name = "process_vm",
	.copy_from = rm_copy_from,
	.copy_to = rm_copy_to,
	.clear = rm_clear,
	.fault_in_readable = rm_fault_in_readable,
	.fault_in_writeable = rm_fault_in_writeable,
};

void user_mm_init_remote(struct user_mm *mm, pid_t pid)
{
	mm->ops = &remote_ops;
	mm->pid = pid;
}
