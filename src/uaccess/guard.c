/* SPDX-License-Identifier: MIT */
/*
 * In-process user memory access that never faults: the kernel's exception
 * table in user space.
 *
 * A guarded access records, in a thread-local slot, a recovery point
 * (sigsetjmp) and the user range it is about to touch, then runs a plain
 * memcpy/memset/probe. The SIGSEGV/SIGBUS handler, installed once for the
 * process, jumps back to the recovery point only when the faulting thread is
 * inside a guarded access AND the fault address lies inside that access's
 * user range; any other fault goes to the handler that was there before
 * (ASan's, the application's, or the default action), so a bug in ucmd or
 * in the application still crashes where it happened.
 *
 * On x86-64 (without ASan/TSan) it is the exception table proper: see
 * UA_EXTABLE below; no setjmp at all.
 *
 * Why this and not process_vm_readv/writev on our own pid: a guarded 4 KiB
 * copy costs what memcpy does (33.8 vs 33.6 ns, bench/uaccess_cost), the
 * sigsetjmp form about 90 instructions more (savemask 0: no system call);
 * process_vm_writev costs a system call per copy, about 1.7 us for 4 KiB here
 * (docs/performance.md, "User memory"), several times the whole per-read
 * budget at the randread target. The remote backend (remote.c) stays the daemon's way into another
 * process and the reference the guard is tested against.
 *
 * Signal details: SA_NODEFER, so leaving the handler by siglongjmp needs no
 * mask restore (and sigsetjmp need not save one); SA_ONSTACK, harmless
 * without an alternate stack; the handler touches only initial-exec TLS and
 * calls only async-signal-safe functions. A guarded access made from a
 * signal handler that interrupted another one saves and restores the outer
 * slot. Under ASan a range that overlaps ASan's shadow memory is refused up
 * front (its interceptors would report it before any fault could happen);
 * everything else under ASan keeps ASan's checks on the user buffer.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "ucmd/ucmd.h"		/* ucmd_uaccess_init() is public: exported */
#include "uaccess/uaccess.h"

#if defined(__SANITIZE_ADDRESS__)
#define UCMD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UCMD_ASAN 1
#endif
#endif
#ifdef UCMD_ASAN
#include <sanitizer/asan_interface.h>
#endif

#if defined(__SANITIZE_THREAD__)
#define UCMD_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UCMD_TSAN 1
#endif
#endif

/*
 * x86-64 without a sanitizer: the exception table proper. The accesses are
 * single instructions (rep movsb, rep stosb, a load, a locked or) at known
 * addresses; the handler moves a fault at one of them to its fixup, which
 * returns what is left, so a guarded access costs a call and no setjmp.
 * Elsewhere, and under ASan/TSan (whose memcpy interceptors must see user
 * buffers), the portable sigsetjmp guard below.
 */
#if defined(__x86_64__) && !defined(UCMD_ASAN) && !defined(UCMD_TSAN)
#define UA_EXTABLE 1
#endif

#define UA_PAGE 4096u

#ifdef UA_EXTABLE
#include <ucontext.h>

/* rdi = dst, rsi = src, rdx = n; returns the bytes not copied (rcx). */
size_t ua_copy(void *dst, const void *src, size_t n);
/* rdi = dst, rsi = n; returns the bytes not cleared. */
size_t ua_clear(void *dst, size_t n);
/* rdi = addr, rsi = n (> 0); returns 0, or 1 at a fault. */
size_t ua_probe_read(uintptr_t addr, size_t n);
size_t ua_probe_write(uintptr_t addr, size_t n);
extern const char ua_copy_insn[], ua_copy_fixup[];
extern const char ua_clear_insn[], ua_clear_fixup[];
extern const char ua_probe_r_insn[], ua_probe_w_insn[], ua_probe_fixup[];

__asm__(
	"	.text\n"
	"	.p2align 4\n"
	"	.globl ua_copy\n"
	"	.hidden ua_copy\n"
	"	.type ua_copy, @function\n"
	"ua_copy:\n"
	"	mov %rdx, %rcx\n"
	"	.globl ua_copy_insn\n"
	"	.hidden ua_copy_insn\n"
	"ua_copy_insn:\n"
	"	rep movsb\n"
	"	.globl ua_copy_fixup\n"
	"	.hidden ua_copy_fixup\n"
	"ua_copy_fixup:\n"
	"	mov %rcx, %rax\n"
	"	ret\n"
	"	.size ua_copy, .-ua_copy\n"
	"	.p2align 4\n"
	"	.globl ua_clear\n"
	"	.hidden ua_clear\n"
	"	.type ua_clear, @function\n"
	"ua_clear:\n"
	"	mov %rsi, %rcx\n"
	"	xor %eax, %eax\n"
	"	.globl ua_clear_insn\n"
	"	.hidden ua_clear_insn\n"
	"ua_clear_insn:\n"
	"	rep stosb\n"
	"	.globl ua_clear_fixup\n"
	"	.hidden ua_clear_fixup\n"
	"ua_clear_fixup:\n"
	"	mov %rcx, %rax\n"
	"	ret\n"
	"	.size ua_clear, .-ua_clear\n"
	"	.p2align 4\n"
	"	.globl ua_probe_read\n"
	"	.hidden ua_probe_read\n"
	"	.type ua_probe_read, @function\n"
	"ua_probe_read:\n"
	"	lea (%rdi,%rsi), %rdx\n"
	"1:\n"
	"	.globl ua_probe_r_insn\n"
	"	.hidden ua_probe_r_insn\n"
	"ua_probe_r_insn:\n"
	"	movzbl (%rdi), %eax\n"
	"	and $-4096, %rdi\n"
	"	add $4096, %rdi\n"
	"	cmp %rdx, %rdi\n"
	"	jb 1b\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	"	.size ua_probe_read, .-ua_probe_read\n"
	"	.p2align 4\n"
	"	.globl ua_probe_write\n"
	"	.hidden ua_probe_write\n"
	"	.type ua_probe_write, @function\n"
	"ua_probe_write:\n"
	"	lea (%rdi,%rsi), %rdx\n"
	"2:\n"
	"	.globl ua_probe_w_insn\n"
	"	.hidden ua_probe_w_insn\n"
	"ua_probe_w_insn:\n"
	"	lock orb $0, (%rdi)\n"
	"	and $-4096, %rdi\n"
	"	add $4096, %rdi\n"
	"	cmp %rdx, %rdi\n"
	"	jb 2b\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	"	.globl ua_probe_fixup\n"
	"	.hidden ua_probe_fixup\n"
	"ua_probe_fixup:\n"
	"	mov $1, %eax\n"
	"	ret\n"
	"	.size ua_probe_write, .-ua_probe_write\n"
);

/* The exception table: a fault at insn resumes at fixup. */
static bool ua_fixup(void *uc)
{
	greg_t *ip = &((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	uintptr_t at = (uintptr_t)*ip;

	if (at == (uintptr_t)ua_copy_insn)
		*ip = (greg_t)(uintptr_t)ua_copy_fixup;
	else if (at == (uintptr_t)ua_clear_insn)
		*ip = (greg_t)(uintptr_t)ua_clear_fixup;
	else if (at == (uintptr_t)ua_probe_r_insn || at == (uintptr_t)ua_probe_w_insn)
		*ip = (greg_t)(uintptr_t)ua_probe_fixup;
	else
		return false;
	return true;
}
#endif

struct uaccess_guard {
	sigjmp_buf *env;	/* NULL: not inside a guarded access */
	uintptr_t lo;		/* the user range of that access */
	size_t len;
};

static __thread struct uaccess_guard ua_guard __attribute__((tls_model("initial-exec")));

static struct sigaction prev_segv, prev_bus;
static atomic_bool ua_installed;

static void ua_chain(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *p = sig == SIGBUS ? &prev_bus : &prev_segv;
	struct sigaction dfl;

	if (p->sa_flags & SA_SIGINFO) {
		p->sa_sigaction(sig, si, uc);
		return;
	}
	if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
		p->sa_handler(sig);
		return;
	}
	/* The default action: a fault re-executes and kills with the right core. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
	if (si->si_code <= 0)	/* sent, not a fault: it will not come back by itself */
		raise(sig);
}

static void ua_fault(int sig, siginfo_t *si, void *uc)
{
	struct uaccess_guard *g = &ua_guard;

	/* si_code > 0: raised by the kernel for this access, not sent by kill(2). */
#ifdef UA_EXTABLE
	if (si->si_code > 0 && ua_fixup(uc))
		return;
#endif
	if (g->env && si->si_code > 0 && (uintptr_t)si->si_addr - g->lo < g->len)
		siglongjmp(*g->env, 1);
	ua_chain(sig, si, uc);
}

static pthread_mutex_t ua_install_lock = PTHREAD_MUTEX_INITIALIZER;

/* Put ua_fault in front of whatever handles sig now, unless it already is. */
static int ua_install_one(int sig, struct sigaction *prev)
{
	struct sigaction sa, cur;

	if (sigaction(sig, NULL, &cur))
		return -errno;
	if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == ua_fault)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = ua_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	*prev = cur;
	if (sigaction(sig, &sa, NULL))
		return -errno;
	return 0;
}

int ucmd_uaccess_init(void)
{
	int ret;

	pthread_mutex_lock(&ua_install_lock);
	ret = ua_install_one(SIGSEGV, &prev_segv);
	if (!ret)
		ret = ua_install_one(SIGBUS, &prev_bus);
	if (!ret)
		atomic_store_explicit(&ua_installed, true, memory_order_release);
	pthread_mutex_unlock(&ua_install_lock);
	return ret;
}

/*
 * Ranges no guarded access may even try: the NULL page, a wrap, beyond the
 * user address space (a non-canonical address faults with no address), and
 * under ASan its shadow memory.
 */
static bool ua_bad_range(uintptr_t lo, size_t n)
{
	/* The NULL page is never memory (and memcpy(NULL) is undefined even if it were). */
	if (lo < UA_PAGE || lo + n < lo || lo + n > UCMD_TASK_SIZE)
		return true;
#ifdef UCMD_ASAN
	{
		size_t scale, off;

		__asan_get_shadow_mapping(&scale, &off);
		uintptr_t s_lo = off, s_hi = (UCMD_TASK_SIZE >> scale) + off;

		if (lo < s_hi && lo + n > s_lo)
			return true;
	}
#endif
	return false;
}

enum ua_op { UA_COPY, UA_CLEAR, UA_PROBE_READ, UA_PROBE_WRITE };

struct ua_args {
	enum ua_op op;
	void *dst;
	const void *src;
	size_t n;
	uintptr_t user;
};

#ifndef UA_EXTABLE
/* Out of line: nothing of its frame has to survive the jump back. */
static __attribute__((noinline)) void ua_probe(uintptr_t lo, size_t n, bool write)
{
	uintptr_t end = lo + n;

	for (uintptr_t p = lo; p < end; p = (p & ~(uintptr_t)(UA_PAGE - 1)) + UA_PAGE) {
		if (write)	/* a locked or of 0: writeable, and no byte changes */
			__atomic_fetch_or((unsigned char *)p, 0, __ATOMIC_RELAXED);
		else
			(void)*(volatile const unsigned char *)p;
	}
}

static void ua_do(const struct ua_args *a)
{
	switch (a->op) {
	case UA_COPY:
		memcpy(a->dst, a->src, a->n);
		break;
	case UA_CLEAR:
		memset(a->dst, 0, a->n);
		break;
	case UA_PROBE_READ:
	case UA_PROBE_WRITE:
		ua_probe(a->user, a->n, a->op == UA_PROBE_WRITE);
		break;
	}
}
#endif

/*
 * With the exception table, each entry below gets its own copy of this,
 * with its op known: no switch at run time and no frame of its own (a
 * device's read makes three of these calls). A function that calls
 * sigsetjmp cannot be inlined, so the portable guard stays one function.
 */
#ifdef UA_EXTABLE
#define UA_GUARDED_INLINE inline __attribute__((always_inline))
#else
#define UA_GUARDED_INLINE
#endif

/*
 * One guarded access. Whatever is read after the jump back lives in memory
 * (the arguments in a, the outer slot), so no register copy of it can be
 * stale there.
 */
static UA_GUARDED_INLINE size_t ua_guarded(enum ua_op op, void *dst, const void *src, size_t n, uintptr_t user)
{
#ifndef UA_EXTABLE
	struct ua_args a = { .op = op, .dst = dst, .src = src, .n = n, .user = user };
	struct uaccess_guard outer;
	sigjmp_buf env;
#endif

	if (!n)
		return 0;
	if (ua_bad_range(user, n))
		return n;
	if (__builtin_expect(!atomic_load_explicit(&ua_installed, memory_order_acquire), 0) &&
	    ucmd_uaccess_init())
		return n;	/* no handler, no guard: refuse rather than risk a crash */
#ifdef UA_EXTABLE
	switch (op) {
	case UA_COPY:
		return ua_copy(dst, src, n);
	case UA_CLEAR:
		return ua_clear(dst, n);
	case UA_PROBE_READ:
		return ua_probe_read(user, n) ? n : 0;
	case UA_PROBE_WRITE:
		return ua_probe_write(user, n) ? n : 0;
	}
	return n;
#else
	outer = ua_guard;
	ua_guard.lo = user;
	ua_guard.len = n;
	if (sigsetjmp(env, 0)) {
		atomic_signal_fence(memory_order_seq_cst);
		ua_guard = outer;
		return a.n;
	}
	atomic_signal_fence(memory_order_seq_cst);
	ua_guard.env = &env;
	atomic_signal_fence(memory_order_seq_cst);
	ua_do(&a);
	atomic_signal_fence(memory_order_seq_cst);
	ua_guard = outer;
	return 0;
#endif
}

size_t raw_copy_from_user(void *dst, const void *usrc, size_t n)
{
	return ua_guarded(UA_COPY, dst, usrc, n, (uintptr_t)usrc);
}

size_t raw_copy_to_user(void *udst, const void *src, size_t n)
{
	return ua_guarded(UA_COPY, udst, src, n, (uintptr_t)udst);
}

size_t raw_clear_user(void *udst, size_t n)
{
	return ua_guarded(UA_CLEAR, udst, NULL, n, (uintptr_t)udst);
}

size_t raw_fault_in_readable(const void *uaddr, size_t n)
{
	return ua_guarded(UA_PROBE_READ, NULL, NULL, n, (uintptr_t)uaddr);
}

size_t raw_fault_in_writeable(void *uaddr, size_t n)
{
	return ua_guarded(UA_PROBE_WRITE, NULL, NULL, n, (uintptr_t)uaddr);
}

/* ---- user_mm_self ---- */

static size_t self_copy_from(const struct user_mm *mm, void *dst, uint64_t usrc, size_t n)
{
	(void)mm;
	return raw_copy_from_user(dst, (const void *)(uintptr_t)usrc, n);
}

static size_t self_copy_to(const struct user_mm *mm, uint64_t udst, const void *src, size_t n)
{
	(void)mm;
	return raw_copy_to_user((void *)(uintptr_t)udst, src, n);
}

static size_t self_clear(const struct user_mm *mm, uint64_t udst, size_t n)
{
	(void)mm;
	return raw_clear_user((void *)(uintptr_t)udst, n);
}

static size_t self_fault_in_readable(const struct user_mm *mm, uint64_t uaddr, size_t n)
{
	(void)mm;
	return raw_fault_in_readable((const void *)(uintptr_t)uaddr, n);
}

static size_t self_fault_in_writeable(const struct user_mm *mm, uint64_t uaddr, size_t n)
{
	(void)mm;
	return raw_fault_in_writeable((void *)(uintptr_t)uaddr, n);
}

static const struct user_mm_ops self_ops = {
	.name = "guard",
	.copy_from = self_copy_from,
	.copy_to = self_copy_to,
	.clear = self_clear,
	.fault_in_readable = self_fault_in_readable,
	.fault_in_writeable = self_fault_in_writeable,
};

const struct user_mm user_mm_self = { .ops = &self_ops };
