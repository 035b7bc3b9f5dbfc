/* SPDX-License-Identifier: MIT */
/*
 * Taking over a program's own `syscall` instructions for the calls the
 * seccomp filter traps (seccomp.c): after the first trap at a call site
 * whose bytes are a layout known here, the site jumps to a stub that calls
 * the same handler the SIGSYS trap runs, at the cost of a function call
 * instead of a signal (docs/security.md, "Call sites"; docs/compat.md).
 *
 * The layouts taken over: `mov $nr,%eax` (b8 imm32, exactly five bytes)
 * among at most six instructions before the `syscall` (0f 05), each a
 * register or plain-memory move or ALU op (no RIP-relative operand, no
 * branch), none after the `mov` writing rax or rsp (so the number is
 * always nr). The first five bytes of the window's first instruction (the
 * `mov` itself, or one of five bytes or more before it: fio's reap puts a
 * `mov $1,%r10d` there) become a `jmp rel32` to a stub that replays the
 * window, calls the handler with every register the system call would
 * keep (flags, vector and x87 state included) kept, and jumps back past
 * the `syscall`. Nothing else of the site changes: a thread that had
 * already passed the first instruction runs the original code and traps,
 * as before. The window's instructions must be instruction boundaries: the
 * site's function is decoded from its first instruction (the unwind
 * table's FDE) to the
 * `syscall`. Every other layout stays on the trap.
 */
#ifndef UCMD_PRELOAD_CALLSITE_H
#define UCMD_PRELOAD_CALLSITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One decoded x86-64 instruction (insn_len.c). */
struct pl_insn {
	uint8_t len;		/* bytes, prefixes included */
	uint8_t prefixes;	/* legacy prefix bytes before any REX */
	uint8_t rex;		/* the REX byte, 0 if none */
	uint8_t op_at;		/* offset of the (last) opcode byte */
	uint8_t opcode;		/* the opcode byte in its map */
	uint8_t modrm_byte;	/* when modrm */
	bool modrm, twobyte, vex, riprel;
};

/* The length of the instruction at p (at most avail bytes readable), or -1. */
int pl_insn_decode(const uint8_t *p, size_t avail, struct pl_insn *in);

#define PL_CS_MAX_COPY 32

/* How one call site is taken over. */
struct pl_cs_plan {
	uintptr_t start;		/* the `mov $nr,%eax` */
	uintptr_t resume;		/* right after the `syscall` */
	uint8_t copy[PL_CS_MAX_COPY];	/* start..syscall, replayed by the stub */
	uint8_t copy_len;
};

/*
 * Plans the take-over of the `syscall` at address sc made with number nr,
 * from code: the bytes at addresses func..sc+2 (func: the first
 * instruction of sc's function). 0, or -ENOEXEC for a layout not known
 * here (the decoding does not reach sc, no `mov $nr,%eax`, an instruction
 * between them not allowed), -EAGAIN when the `mov` is not inside one
 * aligned 8- or 16-byte block (it could not be replaced in one store).
 */
int pl_cs_plan(const uint8_t *code, uintptr_t func, uintptr_t sc, long nr,
	       struct pl_cs_plan *plan);

/* What the stubs call: the system call's number and its six arguments; returns its result. */
typedef long (*pl_cs_handler_fn)(long nr, const long args[6]);

/* 0 when this CPU and kernel allow stubs (XSAVE); otherwise -EOPNOTSUPP. */
int pl_cs_init(pl_cs_handler_fn handler);

/*
 * Writes plan's stub and makes plan->start jump to it. The code page's
 * protection is prot outside the store. 0 or -errno (nothing changed).
 */
int pl_cs_apply(const struct pl_cs_plan *plan, int prot);

/*
 * After a trap at the instruction before rip made with number nr: plan and
 * apply, once per site. 0 when the site now jumps to a stub, -errno when
 * it stays on the trap.
 */
int pl_cs_take_over(uintptr_t rip, long nr);

#endif
