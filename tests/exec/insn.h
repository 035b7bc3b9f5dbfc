/* SPDX-License-Identifier: MIT */
/*
 * System calls made with the test program's own `syscall` instruction
 * (x86-64), as Go's runtime and assembly make them: no libc, so no preload
 * sees them. -errno or the result; -ENOSYS on another architecture.
 */
#ifndef UCMD_TESTS_EXEC_INSN_H
#define UCMD_TESTS_EXEC_INSN_H

#include <errno.h>

static inline long insn6(long nr, long a, long b, long c, long d, long e, long f)
{
#ifdef __x86_64__
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			 "r"(r9) : "rcx", "r11", "memory");
	return ret;
#else
	(void)nr; (void)a; (void)b; (void)c; (void)d; (void)e; (void)f;
	return -ENOSYS;
#endif
}

static inline long insn5(long nr, long a, long b, long c, long d, long e)
{
	return insn6(nr, a, b, c, d, e, 0);
}

static inline long insn4(long nr, long a, long b, long c, long d)
{
	return insn5(nr, a, b, c, d, 0);
}

static inline long insn3(long nr, long a, long b, long c)
{
	return insn5(nr, a, b, c, 0, 0);
}

#endif
