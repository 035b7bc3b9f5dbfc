/* SPDX-License-Identifier: MIT */
/*
 * Another process's memory through its /proc/PID/mem: the daemon's way into
 * its clients. The file is bound to the address space it was opened on
 * (Linux's proc_mem_open takes the mm, not the pid): a later exec gives the
 * process a new mm that this file never reaches, and once the old one is
 * gone -- exec, exit -- every read or write returns 0 bytes. That is
 * recorded (user_mm_gone) so the owner can cut the client off. Whether the
 * file may be opened at all is the kernel's ptrace check, made with the
 * opener's credentials: the caller decides whose they are (the daemon acts
 * as its client, src/server/peer_mm.c).
 *
 * /proc/PID/mem accesses with FOLL_FORCE: it would write through a
 * read-only mapping and read a PROT_NONE one. What the application asked
 * (process_vm_readv/writev's answer, a copy_to_user's) is EFAULT for those,
 * so each copy first asks /proc/PID/maps (PROCMAP_QUERY, Linux 6.11; bound
 * to the same mm) for the mapping's protection and stops where it is not
 * readable, or writeable, as the copy needs. On an older kernel the check
 * is skipped: a forced access to the client's own memory is then the
 * client's own business, never another process's.
 *
 * Inside a batch (user_mm_batch_begin/end: ucmdd's ring thread brackets
 * each pass over a ring with it) a mapping's protection is asked once and
 * holds for every further copy into that mapping until the batch ends, as
 * Linux checks a buffer's protection when it pins the pages at issue and
 * moves the data later whatever the owner did to the mapping meanwhile. A
 * query is a system call as dear as the copy itself here (docs/
 * performance.md), and a pass copies many buffers of one mapping. The
 * answer is this thread's alone and dropped at the batch's end, so a
 * change the owner makes is seen by the next pass; what a stale answer can
 * reach is the owner's own memory, as above.
 *
 * A bad address is EFAULT; a transfer stops at the first byte it may not
 * reach, and the bytes left are returned, as the kernel's raw copies do.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "uaccess/uaccess.h"

#define RM_PAGE 4096u
#define RM_ZEROS 4096u

/* <linux/fs.h> of Linux 6.11, absent from older headers */
struct rm_procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
#define RM_PROCMAP_QUERY _IOWR('f', 17, struct rm_procmap_query)
#define RM_VMA_READABLE 0x01
#define RM_VMA_WRITABLE 0x02

static const unsigned char rm_zeros[RM_ZEROS];

/*
 * The protection answer of the current batch (user_mm_batch_begin/end), this
 * thread's alone: one query per mapping per batch instead of one per copy.
 */
struct rm_batch {
	unsigned depth;
	const struct user_mm *mm;	/* whose answer below, NULL: none */
	uint64_t start, end, flags;
};
static __thread struct rm_batch rm_batch;

void user_mm_batch_begin(void)
{
	rm_batch.depth++;
}

void user_mm_batch_end(void)
{
	if (rm_batch.depth && !--rm_batch.depth)
		rm_batch.mm = NULL;
}

static void rm_mark_gone(const struct user_mm *mm)
{
	/* the struct is the caller's own, never a const object: only the ops see it const */
	atomic_store(&((struct user_mm *)mm)->gone, true);
}

/*
 * How many bytes from addr (at most n) lie in one mapping the access is
 * allowed on: 0 when none (unmapped, or not readable/writeable).
 */
static size_t rm_allowed(const struct user_mm *mm, uint64_t addr, size_t n, bool write)
{
	struct rm_procmap_query q = { .size = sizeof(q), .query_addr = addr };
	uint64_t need = write ? RM_VMA_WRITABLE : RM_VMA_READABLE;

	if (mm->maps_fd < 0)
		return n;
	if (rm_batch.mm == mm && addr >= rm_batch.start && addr < rm_batch.end) {
		q.vma_start = rm_batch.start;
		q.vma_end = rm_batch.end;
		q.vma_flags = rm_batch.flags;
	} else {
		atomic_fetch_add_explicit(&((struct user_mm *)mm)->queries, 1,
					  memory_order_relaxed);
		if (ioctl(mm->maps_fd, RM_PROCMAP_QUERY, &q)) {
			if (errno == ESRCH)
				rm_mark_gone(mm);
			return 0;
		}
		if (rm_batch.depth)
			rm_batch = (struct rm_batch){ rm_batch.depth, mm, q.vma_start, q.vma_end,
						      q.vma_flags };
	}
	if (!(q.vma_flags & need) || q.vma_end <= addr)
		return 0;
	return q.vma_end - addr < n ? (size_t)(q.vma_end - addr) : n;
}

bool user_mm_remote_writeable(const struct user_mm *mm, uint64_t addr, size_t n)
{
	if (addr + n < addr || addr + n > UCMD_TASK_SIZE || atomic_load(&mm->gone))
		return false;
	for (size_t done = 0; done < n;) {
		size_t k = rm_allowed(mm, addr + done, n - done, true);

		if (!k)
			return false;
		done += k;
	}
	return true;
}

/* Move n bytes between local and remote; returns the bytes not moved. */
static size_t rm_xfer(const struct user_mm *mm, void *local, uint64_t remote, size_t n,
		      bool write)
{
	size_t done = 0;

	if (remote + n < remote || remote + n > UCMD_TASK_SIZE)
		return n;
	if (atomic_load(&mm->gone))
		return n;
	while (done < n) {
		size_t k = rm_allowed(mm, remote + done, n - done, write);
		ssize_t got;

		if (!k)
			break;
		got = write ? pwrite(mm->mem_fd, (char *)local + done, k, (off_t)(remote + done))
			    : pread(mm->mem_fd, (char *)local + done, k, (off_t)(remote + done));
		if (got < 0 && errno == EINTR)
			continue;
		if (got == 0)
			rm_mark_gone(mm);	/* the address space is gone: exec or exit */
		if (got <= 0)
			break;		/* EIO: nothing mapped there */
		done += (size_t)got;
	}
	return n - done;
}

static size_t rm_copy_from(const struct user_mm *mm, void *dst, uint64_t usrc, size_t n)
{
	return rm_xfer(mm, dst, usrc, n, false);
}

static size_t rm_copy_to(const struct user_mm *mm, uint64_t udst, const void *src, size_t n)
{
	return rm_xfer(mm, (void *)(uintptr_t)src, udst, n, true);
}

static size_t rm_clear(const struct user_mm *mm, uint64_t udst, size_t n)
{
	for (size_t done = 0; done < n;) {
		size_t k = n - done < RM_ZEROS ? n - done : RM_ZEROS;
		size_t left = rm_xfer(mm, (void *)rm_zeros, udst + done, k, true);

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

		if (rm_xfer(mm, &b, p, 1, false) || (write && rm_xfer(mm, &b, p, 1, true)))
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

const struct user_mm_ops user_mm_remote_ops = {
	.name = "proc_mem",
	.copy_from = rm_copy_from,
	.copy_to = rm_copy_to,
	.clear = rm_clear,
	.fault_in_readable = rm_fault_in_readable,
	.fault_in_writeable = rm_fault_in_writeable,
};

int user_mm_init_remote(struct user_mm *mm, pid_t pid)
{
	char path[64];
	struct rm_procmap_query q = { .size = sizeof(q), .query_addr = 0 };

	mm->ops = &user_mm_remote_ops;
	mm->pid = pid;
	atomic_init(&mm->gone, false);
	atomic_init(&mm->queries, 0);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	mm->mem_fd = open(path, O_RDWR | O_CLOEXEC);
	if (mm->mem_fd < 0)
		return -errno;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	mm->maps_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (mm->maps_fd < 0) {
		int ret = -errno;

		close(mm->mem_fd);
		mm->mem_fd = -1;
		return ret;
	}
	/* a kernel without PROCMAP_QUERY answers ENOTTY: the check is skipped (above) */
	if (ioctl(mm->maps_fd, RM_PROCMAP_QUERY, &q) && errno == ENOTTY) {
		close(mm->maps_fd);
		mm->maps_fd = -1;
	}
	return 0;
}

void user_mm_release(struct user_mm *mm)
{
	if (mm->ops != &user_mm_remote_ops)
		return;
	if (mm->mem_fd >= 0)
		close(mm->mem_fd);
	if (mm->maps_fd >= 0)
		close(mm->maps_fd);
	mm->mem_fd = mm->maps_fd = -1;
}
