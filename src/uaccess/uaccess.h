/* SPDX-License-Identifier: MIT */
/*
 * User memory access: the one way the engine, the host driver, the emulated
 * controller's DMA and the stores read or write memory that the application
 * handed over (data and metadata buffers, iovec arrays, ioctl arguments,
 * registered buffers). Linux's copy_from_user()/copy_to_user() family: a bad
 * address is -EFAULT, never a crash of the process.
 *
 * Two backends sit behind one small ops table (struct user_mm_ops), an
 * address space in Linux's terms:
 *
 *   user_mm_self    this process's own memory. A plain memcpy run under a
 *                   fault guard: a SIGSEGV/SIGBUS inside the guarded copy,
 *                   at an address inside the user range being copied, jumps
 *                   back to the copy's recovery point (the kernel's exception
 *                   table, done in user space with sigsetjmp/siglongjmp).
 *                   No system call per copy.
 *   remote          another process's memory (the daemon's case), through
 *                   its /proc/PID/mem, opened once and bound to that
 *                   address space: it never reaches the image an exec
 *                   loads, and reads 0 bytes once the space is gone
 *                   (user_mm_gone). Two system calls per copy (the
 *                   mapping's protection, then the copy); one inside a
 *                   batch once the mapping's protection is known.
 *
 * The raw entry points return the number of bytes NOT copied (0 on
 * success), as the kernel's raw_copy_*_user do; on a fault the destination's
 * contents are unspecified and the count is the whole length. The
 * convenience forms return 0 or -EFAULT.
 */
#ifndef UCMD_UACCESS_H
#define UCMD_UACCESS_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* End of the x86-64 / arm64 user address space with 4-level paging. */
#define UCMD_TASK_SIZE 0x00007ffffffff000ull

struct user_mm;

struct user_mm_ops {
	const char *name;
	size_t (*copy_from)(const struct user_mm *mm, void *dst, uint64_t usrc, size_t n);
	size_t (*copy_to)(const struct user_mm *mm, uint64_t udst, const void *src, size_t n);
	size_t (*clear)(const struct user_mm *mm, uint64_t udst, size_t n);
	/*
	 * Fault the pages of [uaddr, uaddr + n) in, readable or writeable,
	 * without changing a byte: Linux's fault_in_readable/writeable(),
	 * what "pinning" a user buffer amounts to here.
	 */
	size_t (*fault_in_readable)(const struct user_mm *mm, uint64_t uaddr, size_t n);
	size_t (*fault_in_writeable)(const struct user_mm *mm, uint64_t uaddr, size_t n);
	/*
	 * Optional: where [uaddr, uaddr + n) is also mapped in this process
	 * (memory the owner shared), that address, else NULL. A driver hands
	 * such a range to its device as it is, bouncing only the rest.
	 */
	void *(*map_local)(const struct user_mm *mm, uint64_t uaddr, size_t n);
	/*
	 * Optional: account n bytes of bounce buffer held for this address
	 * space's owner (0, or -ENOMEM past its limit), and give them back.
	 * Linux charges pinned pages to the owner's RLIMIT_MEMLOCK alike.
	 */
	int (*bounce_charge)(const struct user_mm *mm, size_t n);
	void (*bounce_uncharge)(const struct user_mm *mm, size_t n);
	/*
	 * Optional: a read's bounce in memory the owner shares with us, so
	 * that the owner copies the data out itself. share_alloc: n bytes
	 * (not zeroed: the caller zeroes what its device will not write, and
	 * the memory holds nothing but the owner's own earlier data) at
	 * uaddr's offset in its page, for a read into
	 * [uaddr, uaddr + n), or NULL (none free, or the range is not
	 * writeable: the caller bounces as before); *area names the shared
	 * area, for the others. share_owns: p lies in area's memory.
	 * share_post: at completion, before the CQE, the data is handed over
	 * (the owner copies it before it sees the CQE): 0, or -ENOSPC, and
	 * the caller copies it itself and puts it back. share_put: give
	 * unposted memory back.
	 */
	void *(*share_alloc)(const struct user_mm *mm, uint64_t uaddr, size_t n, void **area);
	bool (*share_owns)(void *area, const void *p);
	int (*share_post)(void *area, const void *p, uint64_t uaddr, size_t n);
	void (*share_put)(void *area, const void *p);
};

struct user_mm {
	const struct user_mm_ops *ops;
	/* remote only: */
	pid_t pid;		/* the process it was opened on (for messages) */
	int mem_fd;		/* /proc/PID/mem */
	int maps_fd;		/* /proc/PID/maps (PROCMAP_QUERY), or -1 */
	atomic_bool gone;	/* the address space was found gone: exec or exit */
	atomic_ulong queries;	/* protection queries made (PROCMAP_QUERY), for tests */
};

/* This process, through the fault guard. */
extern const struct user_mm user_mm_self;
/* What user_mm_init_remote installs: for owners that wrap it (ucmdd's regions). */
extern const struct user_mm_ops user_mm_remote_ops;
/*
 * Another process (or this one by its pid), through /proc/PID/mem opened now
 * with the calling thread's credentials: the kernel's ptrace access check
 * (PTRACE_MODE_ATTACH_FSCREDS) decides. 0, or -errno from the open
 * (-EACCES/-EPERM: not this caller's to reach; -ENOENT: no such process).
 */
int user_mm_init_remote(struct user_mm *mm, pid_t pid);
/*
 * A batch of copies on the calling thread (nestable): between begin and end
 * a remote mm's protection answer for a mapping is asked once and reused
 * for every further copy into that mapping (remote.c). The engine's ring
 * owner brackets each pass with it.
 */
void user_mm_batch_begin(void);
void user_mm_batch_end(void);
/*
 * Whether [addr, addr + n) of a remote mm lies in writeable mappings, as a
 * copy_to would find it (inside a batch, from the batch's answer).
 */
bool user_mm_remote_writeable(const struct user_mm *mm, uint64_t addr, size_t n);
/* Close what user_mm_init_remote opened (nothing for user_mm_self). */
void user_mm_release(struct user_mm *mm);
/* NULL stands for this process too (an iov_iter that never named an mm). */
static inline bool user_mm_is_self(const struct user_mm *mm)
{
	return !mm || mm == &user_mm_self;
}

/* The address space behind a remote mm ended (exec, exit): every copy now fails. */
static inline bool user_mm_gone(const struct user_mm *mm)
{
	return atomic_load(&mm->gone);
}

/* ---- the guarded in-process copies (user_mm_self's ops, callable directly) ---- */
size_t raw_copy_from_user(void *dst, const void *usrc, size_t n);
size_t raw_copy_to_user(void *udst, const void *src, size_t n);
size_t raw_clear_user(void *udst, size_t n);
size_t raw_fault_in_readable(const void *uaddr, size_t n);
size_t raw_fault_in_writeable(void *uaddr, size_t n);

static inline int copy_from_user(void *dst, const void *usrc, size_t n)
{
	return raw_copy_from_user(dst, usrc, n) ? -EFAULT : 0;
}

static inline int copy_to_user(void *udst, const void *src, size_t n)
{
	return raw_copy_to_user(udst, src, n) ? -EFAULT : 0;
}

static inline int clear_user(void *udst, size_t n)
{
	return raw_clear_user(udst, n) ? -EFAULT : 0;
}

static inline int fault_in_readable(const void *uaddr, size_t n)
{
	return raw_fault_in_readable(uaddr, n) ? -EFAULT : 0;
}

static inline int fault_in_writeable(void *uaddr, size_t n)
{
	return raw_fault_in_writeable(uaddr, n) ? -EFAULT : 0;
}

/* The same through any address space's ops: 0 or -EFAULT. */
static inline int user_mm_copy_from(const struct user_mm *mm, void *dst, uint64_t usrc, size_t n)
{
	return mm->ops->copy_from(mm, dst, usrc, n) ? -EFAULT : 0;
}

static inline int user_mm_copy_to(const struct user_mm *mm, uint64_t udst, const void *src,
				  size_t n)
{
	return mm->ops->copy_to(mm, udst, src, n) ? -EFAULT : 0;
}

/*
 * Fault [uaddr, uaddr + n) of mm in (NULL: this process), readable, or
 * writeable when writeable: 0 or -EFAULT.
 */
static inline int user_mm_fault_in(const struct user_mm *mm, uint64_t uaddr, size_t n,
				   bool writeable)
{
	if (user_mm_is_self(mm))
		return writeable ? fault_in_writeable((void *)(uintptr_t)uaddr, n)
				 : fault_in_readable((const void *)(uintptr_t)uaddr, n);
	return (writeable ? mm->ops->fault_in_writeable(mm, uaddr, n)
			  : mm->ops->fault_in_readable(mm, uaddr, n)) ? -EFAULT : 0;
}

/*
 * Install the fault handler now (it is otherwise installed on the first
 * guarded access), in front of the SIGSEGV/SIGBUS handlers in place, to
 * which it passes every fault that is not a guarded access's. Returns 0 or
 * -errno from sigaction. A handler the application installs afterwards
 * displaces ucmd's, and guarded accesses then fault as plain ones would:
 * call this again after installing one (a test harness that sets its own
 * handlers around each test, as cmocka does, is such a case).
 */
int ucmd_uaccess_init(void);

#endif /* UCMD_UACCESS_H */
