/* SPDX-License-Identifier: MIT */
/*
 * The interposers define libc's own names (fstat and fstat64, fcntl and
 * fcntl64 as two symbols): without this, glibc's headers would rename the
 * first of each pair to the second. On 64-bit Linux both are one ABI.
 */
#undef _FILE_OFFSET_BITS
/*
 * Catching the io_uring system calls that do not go through a libc symbol.
 * Debian's liburing.so.2 is built without libc (its own inline syscall
 * instructions for io_uring_setup/enter/register and mmap), and fio calls
 * libc's syscall(): an LD_PRELOAD symbol catches the second, nothing but
 * the kernel catches the first. So a seccomp filter returns
 * SECCOMP_RET_TRAP for:
 *
 *   io_uring_setup, io_uring_enter, io_uring_register    (every call)
 *   io_setup, io_destroy, io_submit, io_cancel,
 *   io_getevents, io_pgetevents                         (every call, aio.c)
 *   execve, execveat                                    (every call, execraw.c)
 *   mmap with offset IORING_OFF_CQ_RING or IORING_OFF_SQES (uring.c)
 *
 * and the SIGSYS handler runs the call (uring.c, aio.c) and puts its result where
 * the system call's would be. A call that is not ours (a ring fd the
 * preload did not make, an mmap of another file at those offsets) is made
 * for real through a trampoline the filter lets through: a page of code at
 * a fixed address, mapped again at the same address by every image after
 * exec, because a filter outlives exec (and the pages it names) and cannot
 * be removed.
 *
 * libc's syscall() is interposed too, so that programs calling it pay a
 * function call instead of a signal; and a program's own syscall
 * instruction, once trapped, is taken over when its layout is one
 * callsite.c knows (fio's io_uring engines, liburing's submit), so that
 * it too pays a call.
 *
 * Under ucmd exec, a program's own SIGSYS handler, or its reset to
 * SIG_DFL, is recorded by ucmd-supervise and not made (sigsys.c): ours
 * stays, so that a process whose runtime installs its own (Go's) or a
 * child that resets every handler before exec (Go's) is served rather
 * than killed by its next trapped call. What this does not cover
 * (docs/compat.md): architectures other than x86-64.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <linux/io_uring.h>

#include "preload/callsite.h"
#include "preload/preload.h"

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1	/* si_code of a SECCOMP_RET_TRAP SIGSYS (siginfo.h) */
#endif

#if defined(__x86_64__)

#define TRAMP_ADDR PL_TRAMP_ADDR
#define TRAMP_LEN PL_TRAMP_LEN

/* Marks an image whose ancestors installed the filter (it survives exec). */
#define PL_ENV_SECCOMP "UCMD_PRELOAD_SECCOMP"

typedef long (*tramp_fn)(long nr, long a0, long a1, long a2, long a3, long a4, long a5);
static tramp_fn tramp;

/*
 * long tramp(nr, a0..a5): the System V call's registers moved to the
 * system call's (rax, rdi, rsi, rdx, r10, r8, r9; a5 from the stack).
 */
static const unsigned char tramp_code[] = {
	0x48, 0x89, 0xf8,		/* mov %rdi,%rax */
	0x48, 0x89, 0xf7,		/* mov %rsi,%rdi */
	0x48, 0x89, 0xd6,		/* mov %rdx,%rsi */
	0x48, 0x89, 0xca,		/* mov %rcx,%rdx */
	0x4d, 0x89, 0xc2,		/* mov %r8,%r10 */
	0x4d, 0x89, 0xc8,		/* mov %r9,%r8 */
	0x4c, 0x8b, 0x4c, 0x24, 0x08,	/* mov 0x8(%rsp),%r9 */
	0x0f, 0x05,			/* syscall */
	0xc3,				/* ret */
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	/* TRAMP_RESTORER: the signal handler's return (rt_sigreturn), as libc's __restore_rt */
	0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00,	/* mov $15,%rax */
	0x0f, 0x05,			/* syscall */
	0x90, 0x90, 0x90, 0x90, 0x90,
	/*
	 * PL_TRAMP_OPENAT: long openat(dirfd, path, flags, mode), the only
	 * syscall instruction whose openat ucmd-supervise lets through
	 * (PL_TRAMP_OPENAT_IP is the address after it)
	 */
	0x49, 0x89, 0xca,		/* mov %rcx,%r10 */
	0xb8, 0x01, 0x01, 0x00, 0x00,	/* mov $257,%eax (__NR_openat) */
	0x0f, 0x05,			/* syscall */
	0xc3,				/* ret */
};
#define TRAMP_RESTORER 34
_Static_assert(PL_TRAMP_OPENAT == TRAMP_RESTORER + 9 + 5, "the openat stub's offset");
_Static_assert(PL_TRAMP_OPENAT_IP == PL_TRAMP_OPENAT + 10, "the address after its syscall");
_Static_assert(sizeof(tramp_code) == PL_TRAMP_OPENAT + 11, "the trampoline's length");

static int tramp_map(void)
{
	void *p = mmap((void *)TRAMP_ADDR, TRAMP_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	if (p != (void *)TRAMP_ADDR) {
		/* a kernel without MAP_FIXED_NOREPLACE treats it as a hint */
		munmap(p, TRAMP_LEN);
		return -EEXIST;
	}
	memcpy(p, tramp_code, sizeof(tramp_code));
	if (mprotect(p, TRAMP_LEN, PROT_READ | PROT_EXEC)) {
		munmap(p, TRAMP_LEN);
		return -errno;
	}
	tramp = (tramp_fn)p;
	return 0;
}

/*
 * An open the preload has judged (paths.c): through the one instruction
 * whose openat ucmd-supervise lets through, so that it costs a system call
 * rather than a user notification; without a trampoline, libc's (which the
 * supervisor, if any, makes itself). The fd or -errno.
 */
long pl_open_judged(int dirfd, const char *path, int flags, mode_t mode)
{
	if (tramp) {
		long (*stub)(long, long, long, long) =
			(long (*)(long, long, long, long))(TRAMP_ADDR + PL_TRAMP_OPENAT);

		return stub(dirfd, (long)path, flags, mode);
	}
	long ret = syscall(__NR_openat, dirfd, path, flags, mode);

	return ret < 0 ? -errno : ret;
}

bool pl_seccomp_on(void)
{
	return tramp != NULL;
}

long pl_raw_syscall(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	if (tramp)
		return tramp(nr, a0, a1, a2, a3, a4, a5);
	/* no filter, no trampoline: the kernel's answer is the plain one */
	long ret = syscall(nr, a0, a1, a2, a3, a4, a5);

	return ret < 0 ? -errno : ret;
}

/*
 * The system calls the filter always traps: io_uring's and native aio's,
 * exec, and what changes the process's root or mounts (view.c: from then
 * on a path's /dev or /sys is looked at, whose it is).
 */
static const int trapped[] = {
	__NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
	__NR_io_setup, __NR_io_destroy, __NR_io_submit, __NR_io_cancel,
	__NR_io_getevents, __NR_io_pgetevents,
	__NR_execve, __NR_execveat,
	__NR_chroot, __NR_pivot_root, __NR_unshare, __NR_setns,
};
#define NR_TRAPPED (sizeof(trapped) / sizeof(trapped[0]))

static bool is_trapped(long nr)
{
	for (unsigned i = 0; i < NR_TRAPPED; i++)
		if (nr == trapped[i])
			return true;
	return false;
}

/* the writes pl_seccomp_trap_std_writes traps on 1 and 2 */
static const int std_writes[] = {
	__NR_write, __NR_pwrite64, __NR_writev, __NR_pwritev, __NR_pwritev2,
};
#define NR_STD_WRITES (sizeof(std_writes) / sizeof(std_writes[0]))

static bool is_std_write(long nr, long fd)
{
	for (unsigned i = 0; i < NR_STD_WRITES; i++)
		if (nr == std_writes[i])
			return (unsigned)fd == 1 || (unsigned)fd == 2;
	return false;
}

/* this thread took a trapped write on 1 or 2: the filter is there (std_trapped) */
static __thread bool std_write_seen;

static bool is_uring_off(long off)
{
	return off == (long)IORING_OFF_CQ_RING || off == (long)IORING_OFF_SQES;
}

/*
 * One intercepted call: *handled says whether it was ours; the result is
 * the raw system call's (-errno on failure).
 */
static long dispatch(long nr, const long a[6], bool *handled)
{
	*handled = true;
	switch (nr) {
	case __NR_io_uring_setup:
		return pl_io_uring_setup((unsigned)a[0], (struct io_uring_params *)a[1]);
	case __NR_io_uring_enter:
		if (!pl_uring_is_ring((int)a[0]) && !(a[3] & IORING_ENTER_REGISTERED_RING))
			break;
		return pl_io_uring_enter((int)a[0], (unsigned)a[1], (unsigned)a[2], (unsigned)a[3],
					 (const void *)a[4], (size_t)a[5]);
	case __NR_io_uring_register:
		if (!pl_uring_is_ring((int)a[0]))
			break;
		return pl_io_uring_register((int)a[0], (unsigned)a[1], (void *)a[2],
					    (unsigned)a[3]);
	case __NR_io_setup:
		return pl_io_setup((unsigned)a[0], (unsigned long *)a[1]);
	case __NR_io_destroy:
		if (!pl_aio_is_ctx((unsigned long)a[0]))
			break;
		return pl_io_destroy((unsigned long)a[0]);
	case __NR_io_submit:
		if (!pl_aio_is_ctx((unsigned long)a[0]))
			break;
		return pl_io_submit((unsigned long)a[0], a[1], (void *)a[2]);
	case __NR_io_cancel:
		if (!pl_aio_is_ctx((unsigned long)a[0]))
			break;
		return pl_io_cancel((unsigned long)a[0], (void *)a[1], (void *)a[2]);
	case __NR_io_getevents:
	case __NR_io_pgetevents:
		if (!pl_aio_is_ctx((unsigned long)a[0]))
			break;
		return pl_io_getevents((unsigned long)a[0], a[1], a[2], (void *)a[3], (void *)a[4],
				       (const void *)a[5], nr == __NR_io_pgetevents);
	case __NR_getdents64:	/* from syscall() only */
	case __NR_getdents: {
		long ret;
		bool ours = nr == __NR_getdents ?
			    pl_dir_getdents((int)a[0], (void *)a[1], (size_t)a[2], &ret) :
			    pl_dir_getdents64((int)a[0], (void *)a[1], (size_t)a[2], &ret);

		if (!ours)
			break;
		return ret;
	}
	case __NR_execve:
	case __NR_execveat:
		return pl_exec_syscall(nr, a);
	case __NR_chroot:
	case __NR_pivot_root:
	case __NR_unshare:
	case __NR_setns:
		pl_view_moved();	/* before: another thread may look meanwhile */
		return pl_raw_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	case __NR_mmap:
		if (!is_uring_off(a[5]) || !pl_uring_is_ring((int)a[4]))
			break;
		return pl_uring_mmap((void *)a[0], (size_t)a[1], (int)a[2], (int)a[3], (int)a[4],
				     (off_t)a[5]);
	default:
		break;
	}
	*handled = false;
	return pl_raw_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/*
 * What a taken-over call site's stub calls (callsite.h): the same calls,
 * the same checks as the trap's; what the filter lets through is made for
 * real through the trampoline, as the kernel would have.
 */
static long callsite_handler(long nr, const long a[6])
{
	int saved = errno;
	bool handled;
	long ret;

	if (is_trapped(nr) || (nr == __NR_mmap && is_uring_off(a[5])))
		ret = dispatch(nr, a, &handled);
	else
		ret = pl_raw_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	errno = saved;
	return ret;
}

static void sigsys(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *g = uc->uc_mcontext.gregs;
	long a[6] = { g[REG_RDI], g[REG_RSI], g[REG_RDX], g[REG_R10], g[REG_R8], g[REG_R9] };
	int saved = errno;
	bool handled;

	/* a SIGSYS of someone else's (kill, another filter's trap): the program's disposition */
	if (si->si_code != SYS_SECCOMP ||
	    !(is_trapped(si->si_syscall) || si->si_syscall == __NR_mmap ||
	      is_std_write(si->si_syscall, a[0]))) {
		pl_sigsys_chain(sig, si, ctx);
		errno = saved;
		return;
	}
	if (is_std_write(si->si_syscall, a[0])) {
		std_write_seen = true;
		g[REG_RAX] = pl_attrw_trapped(si->si_syscall, a);
		errno = saved;
		return;
	}
	g[REG_RAX] = dispatch(si->si_syscall, a, &handled);
	if (!handled && si->si_syscall != __NR_mmap)
		pl_trace("system call %d on fd %ld: not a ucmd ring, made for real",
			 si->si_syscall, a[0]);
	/* the program's own syscall instruction: next time, a call instead of a signal */
	if (is_trapped(si->si_syscall)) {
		int ret = pl_cs_take_over((uintptr_t)g[REG_RIP], si->si_syscall);

		if (ret != -EALREADY)
			pl_trace("system call %d at %#lx: %s", si->si_syscall,
				 (unsigned long)g[REG_RIP] - 2,
				 ret ? strerror(-ret) : "call site taken over");
	}
	errno = saved;
}

PL_EXPORT long syscall(long nr, ...)
{
	long a[6], ret;
	bool handled;
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	/* getdents64 and getdents are not trapped (dirs_raw.c says why), but served through syscall() */
	if (is_trapped(nr) || nr == __NR_getdents64 || nr == __NR_getdents ||
	    (nr == __NR_mmap && is_uring_off(a[5]))) {
		ret = dispatch(nr, a, &handled);
	} else if (pl_syscall_fd(nr, a, &ret)) {
		return ret;
	} else {
		static long (*next)(long, ...);

		/* _exit's own call: a forked child's relayed requests post their CQEs first */
		if (nr == __NR_exit_group)
			pl_relay_exit();

		if (!next)
			next = pl_next("syscall");
		return next(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

#define LD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define JEQ(k, t, f) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))
#define JGE(k, t, f) BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (k), (t), (f))
#define RET(k) BPF_STMT(BPF_RET | BPF_K, (k))
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))
#define ARG_HI(n) (ARG_LO(n) + 4)
#define IP_LO offsetof(struct seccomp_data, instruction_pointer)
#define IP_HI (IP_LO + 4)

/*
 * Instructions 0-7 of each filter: another architecture's calls and the
 * trampoline's own go to allow (the preload's real calls), anything else
 * loads the call's number at nr (7) for what follows.
 */
#define FILTER_PROLOGUE(l_nr, allow)						\
	LD(offsetof(struct seccomp_data, arch)),				\
	JEQ(AUDIT_ARCH_X86_64, 0, (allow) - 2),					\
	LD(IP_HI),								\
	JEQ((uint32_t)(TRAMP_ADDR >> 32), 0, (l_nr) - 4),				\
	LD(IP_LO),								\
	JGE((uint32_t)TRAMP_ADDR + (uint32_t)TRAMP_LEN, (l_nr) - 6, 0),		\
	JGE((uint32_t)TRAMP_ADDR, (allow) - 7, 0),				\
	LD(offsetof(struct seccomp_data, nr))

static int filter_install(void)
{
	/* labels: where the jumps go (offsets are counted from the next instruction) */
	enum {
		L_NR = 7,				/* load the call's number */
		L_TRAPS = L_NR + 1,			/* one JEQ per trapped call */
		L_MMAP = L_TRAPS + NR_TRAPPED,
		L_TRAP = L_MMAP + 6,
		L_ALLOW = L_TRAP + 1,
		L_LEN = L_ALLOW + 1,
	};
	struct sock_filter f[L_LEN] = {
		FILTER_PROLOGUE(L_NR, L_ALLOW),
	};
	_Static_assert(L_NR == 7, "FILTER_PROLOGUE is instructions 0-7");

	for (unsigned i = 0; i < NR_TRAPPED; i++)
		f[L_TRAPS + i] = (struct sock_filter)JEQ((uint32_t)trapped[i],
							 L_TRAP - (L_TRAPS + i + 1), 0);
	/* mmap: only at the two offsets no file of a real program has */
	f[L_MMAP] = (struct sock_filter)JEQ(__NR_mmap, 0, L_ALLOW - (L_MMAP + 1));
	f[L_MMAP + 1] = (struct sock_filter)LD(ARG_LO(5));
	f[L_MMAP + 2] = (struct sock_filter)JEQ(IORING_OFF_CQ_RING, 1, 0);
	f[L_MMAP + 3] = (struct sock_filter)JEQ(IORING_OFF_SQES, 0, L_ALLOW - (L_MMAP + 4));
	f[L_MMAP + 4] = (struct sock_filter)LD(ARG_HI(5));
	f[L_MMAP + 5] = (struct sock_filter)JEQ(0, 0, 1);
	f[L_TRAP] = (struct sock_filter)RET(SECCOMP_RET_TRAP);
	f[L_ALLOW] = (struct sock_filter)RET(SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	/* an unprivileged filter needs no_new_privs: setuid programs lose their power (compat.md) */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
		return -errno;
	return 0;
}

/*
 * Whether the writes on 1 and 2 trap already (a filter of this process's,
 * or of the image before exec): a write on 1 through libc's syscall() is
 * seen by the SIGSYS handler if so; its buffer is no user address, so the
 * kernel refuses it (EFAULT, or EBADF) before anything is written.
 */
static bool std_trapped(void)
{
	static long (*next)(long, ...);

	if (!next)
		next = pl_next("syscall");
	std_write_seen = false;
	next(__NR_write, 1L, -1L, 1L);
	return std_write_seen;
}

int pl_seccomp_trap_std_writes(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static bool done;
	enum {
		L_NR = 7,
		L_NRS = L_NR + 1,			/* one JEQ per write call */
		L_FD = L_NRS + NR_STD_WRITES,
		L_TRAP = L_FD + 3,
		L_ALLOW = L_TRAP + 1,
		L_LEN = L_ALLOW + 1,
	};
	struct sock_filter f[L_LEN] = {
		/* the trampoline's own calls go through: the handler's real write */
		FILTER_PROLOGUE(L_NR, L_ALLOW),
	};
	_Static_assert(L_NR == 7, "FILTER_PROLOGUE is instructions 0-7");
	struct sock_fprog prog = { .len = L_LEN, .filter = f };
	int ret = 0;

	if (!tramp)
		return -EOPNOTSUPP;	/* no filter of ours: such a write stays EBADF */
	for (unsigned i = 0; i < NR_STD_WRITES; i++)
		f[L_NRS + i] = (struct sock_filter)JEQ((uint32_t)std_writes[i],
						       L_FD - (L_NRS + i + 1), 0);
	f[L_NRS + NR_STD_WRITES - 1].jf = L_ALLOW - L_FD;
	/* the kernel takes the descriptor as an int: the low word */
	f[L_FD] = (struct sock_filter)LD(ARG_LO(0));
	f[L_FD + 1] = (struct sock_filter)JEQ(1, L_TRAP - (L_FD + 2), 0);
	f[L_FD + 2] = (struct sock_filter)JEQ(2, L_TRAP - (L_FD + 3), L_ALLOW - (L_FD + 3));
	f[L_TRAP] = (struct sock_filter)RET(SECCOMP_RET_TRAP);
	f[L_ALLOW] = (struct sock_filter)RET(SECCOMP_RET_ALLOW);
	pthread_mutex_lock(&lock);
	if (!done && !std_trapped()) {
		/* every thread's: the one that writes may not be the one that opened */
		if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC,
			    &prog) &&
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
			ret = -errno;
		else
			pl_trace("writes on 1 and 2 trap from now on: an attribute's are judged");
	}
	done = !ret;
	pthread_mutex_unlock(&lock);
	return ret;
}

int pl_seccomp_install(void)
{
	int ret;

	ret = tramp_map();
	if (ret) {
		pl_trace("no trampoline at %#lx: %s", TRAMP_ADDR, strerror(-ret));
		return ret;
	}
	ret = pl_sigsys_install(sigsys, (void *)(TRAMP_ADDR + TRAMP_RESTORER));
	if (ret)
		return ret;
	ret = pl_cs_init(callsite_handler);
	if (ret)
		pl_trace("call sites stay on the trap: %s", strerror(-ret));
	/* the filter of an ancestor image is still there after exec: one is enough */
	if (!getenv(PL_ENV_SECCOMP) || prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 2) {
		ret = filter_install();
		if (ret)
			return ret;
		setenv(PL_ENV_SECCOMP, "1", 1);
	}
	pl_exec_init();
	return 0;
}

#else /* !__x86_64__ */

long pl_open_judged(int dirfd, const char *path, int flags, mode_t mode)
{
	long ret = syscall(__NR_openat, dirfd, path, flags, mode);

	return ret < 0 ? -errno : ret;
}

long pl_raw_syscall(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	long ret = syscall(nr, a0, a1, a2, a3, a4, a5);

	return ret < 0 ? -errno : ret;
}

int pl_seccomp_install(void)
{
	return -EOPNOTSUPP;
}

int pl_seccomp_trap_std_writes(void)
{
	return -EOPNOTSUPP;
}

bool pl_seccomp_on(void)
{
	return false;
}

#endif
