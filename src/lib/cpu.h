/* SPDX-License-Identifier: MIT */
/* The kernel's cpu_relax(): the pause in a spin-wait loop. */
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

#endif /* UCMD_CPU_H */
