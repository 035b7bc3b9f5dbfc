/* SPDX-License-Identifier: MIT */
/* The kernel's cpu_relax() and prefetchw(). */
#ifndef UCMD_CPU_H
#define UCMD_CPU_H

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();	/* frees the core for its SMT sibling */
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/*
 * Ask for a cache line in order to write it (the kernel's prefetchw()): a
 * line another CPU holds is taken over now, so that the stores that follow
 * do not fill the store buffer waiting for it. GCC emits PREFETCHW for
 * __builtin_prefetch(p, 1) only with -mprfchw; the instruction is older
 * than that flag: CPUs before it execute it as a NOP (0F 0D is a NOP
 * opcode there).
 */
static inline void prefetchw(const void *p)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1);
#endif
}

#endif /* UCMD_CPU_H */
