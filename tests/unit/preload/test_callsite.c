// SPDX-License-Identifier: MIT
/*
 * Call-site take-over (src/preload/callsite.c, insn_len.c): instruction
 * lengths of compiler output, which layouts are planned and which are
 * refused (an ambiguous `b8` inside another instruction among them), and
 * the patch itself on a synthetic code page: the site's call goes to the
 * handler afterwards, with threads calling it while it is patched.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "preload/callsite.h"

#define B(...) ((const uint8_t[]){ __VA_ARGS__ }), sizeof((const uint8_t[]){ __VA_ARGS__ })

static void len_is(const uint8_t *p, size_t n, int want)
{
	struct pl_insn in;

	assert_int_equal(pl_insn_decode(p, n, &in), want);
}

static void test_lengths(void **state)
{
	(void)state;
	len_is(B(0x41, 0x8b, 0x87, 0x74, 0x08, 0x00, 0x00), 7);	/* mov 0x874(%r15),%eax */
	len_is(B(0x89, 0xc1), 2);
	len_is(B(0xc1, 0xe1, 0x0d), 3);					/* shl $0xd,%ecx */
	len_is(B(0x41, 0x0f, 0x44, 0xcc), 4);				/* cmove %r12d,%ecx */
	len_is(B(0xe8, 0xb8, 0xce, 0xfa, 0xff), 5);
	len_is(B(0x0f, 0x84, 0x77, 0x0a, 0x00, 0x00), 6);
	len_is(B(0x48, 0x81, 0xc7, 0xb8, 0xed, 0x02, 0x00), 7);	/* add $imm32,%rdi */
	len_is(B(0x41, 0xb8, 0xa2, 0x02, 0x00, 0x00), 6);		/* mov $imm32,%r8d */
	len_is(B(0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8), 10);		/* movabs */
	len_is(B(0x66, 0xb8, 1, 2), 4);					/* mov $imm16,%ax */
	len_is(B(0xf2, 0x0f, 0x10, 0x05, 0xe6, 0x09, 0x00, 0x00), 8);	/* movsd rip,%xmm0 */
	len_is(B(0x41, 0xc7, 0x85, 0x8c, 0, 0, 0, 0, 0, 0, 0), 11);	/* movl $0,0x8c(%r13) */
	len_is(B(0x48, 0x83, 0xbd, 0x40, 0x0c, 0, 0, 0), 8);		/* cmpq $0,0xc40(%rbp) */
	len_is(B(0xc7, 0x44, 0x24, 0xb8, 0xaa, 0x01, 0x00, 0x00), 8);	/* movl $0x1aa,-0x48(%rsp) */
	len_is(B(0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00), 6);		/* nopw */
	len_is(B(0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0), 10);	/* cs nopw */
	len_is(B(0xf6, 0x40, 0x10, 0x01), 4);				/* testb $1,0x10(%rax) */
	len_is(B(0xf7, 0xd8), 2);					/* neg %eax */
	len_is(B(0xc5, 0xf9, 0x6f, 0x05, 1, 2, 3, 4), 8);		/* vmovdqa rip,%xmm0 */
	len_is(B(0xc5, 0xf8, 0x77), 3);					/* vzeroupper */
	len_is(B(0xc4, 0xe3, 0x79, 0x16, 0xc0, 0x01), 6);		/* vpextrd $1 */
	len_is(B(0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x04, 0x24), 7);	/* vmovdqu64 (%rsp),%zmm0 */
	len_is(B(0x66, 0x0f, 0x3a, 0x0f, 0xc1, 0x08), 6);		/* palignr $8 */
	len_is(B(0x66, 0x0f, 0x38, 0x00, 0xc1), 5);			/* pshufb */
	len_is(B(0xf3, 0x48, 0xab), 3);					/* rep stos */
	len_is(B(0x0f, 0x05), 2);
	len_is(B(0xc3), 1);
	len_is(B(0xa1, 1, 2, 3, 4, 5, 6, 7, 8), 9);			/* movabs moffs,%eax */
	len_is(B(0x66, 0x66, 0x48, 0xe8, 1, 2, 3, 4), 8);		/* data16 rex.W call */
	len_is(B(0x66, 0x48, 0x81, 0xc7, 1, 2, 3, 4), 8);		/* REX.W: imm32 despite 0x66 */
	len_is(B(0x66, 0xe8, 1, 2, 3, 4), -1);			/* rel16 or rel32: CPUs differ */
	len_is(B(0x47, 0x47, 0xc9), -1);				/* REX, REX: data, not code */
	len_is(B(0x48, 0x66, 0x90), -1);				/* REX before a prefix */
	len_is(B(0x06), -1);						/* push %es: not in 64-bit mode */
	len_is(B(0xe8, 0x00, 0x00), -1);				/* cut short */
	len_is(B(0x8f, 0xe9, 0x78, 0x01, 0xc0), -1);			/* XOP */
	len_is(B(0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
		 0x66, 0x66, 0x90), -1);				/* over 15 bytes */
}

#define FUNC 0x401000ul

static int plan(const uint8_t *code, size_t n, long nr, struct pl_cs_plan *p)
{
	/* the syscall is the last two bytes */
	return pl_cs_plan(code, FUNC, FUNC + n - 2, nr, p);
}

static void test_plan_layouts(void **state)
{
	struct pl_cs_plan p;

	(void)state;
	/* push %rbp; mov %rsp,%rbp; mov $426,%eax; syscall */
	assert_int_equal(plan(B(0x55, 0x48, 0x89, 0xe5, 0xb8, 0xaa, 0x01, 0, 0, 0x0f, 0x05), 426, &p), 0);
	assert_int_equal(p.start, FUNC + 4);
	assert_int_equal(p.resume, FUNC + 11);
	assert_int_equal(p.copy_len, 5);
	assert_memory_equal(p.copy, ((uint8_t[]){ 0xb8, 0xaa, 0x01, 0, 0 }), 5);
	/* fio's reap: mov $426,%eax; mov %ebp,%edx; syscall */
	assert_int_equal(plan(B(0xb8, 0xaa, 0x01, 0, 0, 0x89, 0xea, 0x0f, 0x05), 426, &p), 0);
	assert_int_equal(p.copy_len, 7);
	/* mov $426,%eax; mov $1,%r10d; xor %r8d,%r8d; mov (%rbx),%edi; syscall */
	assert_int_equal(plan(B(0xb8, 0xaa, 0x01, 0, 0, 0x41, 0xba, 1, 0, 0, 0, 0x45, 0x31, 0xc0,
				0x8b, 0x3b, 0x0f, 0x05), 426, &p), 0);
	assert_int_equal(p.copy_len, 16);
}

static void test_plan_refused(void **state)
{
	struct pl_cs_plan p;

	(void)state;
	/* movl $0x1aa,-0x48(%rsp); syscall: the b8 is a displacement, not a mov */
	assert_int_equal(plan(B(0xc7, 0x44, 0x24, 0xb8, 0xaa, 0x01, 0, 0, 0x0f, 0x05), 426, &p),
			 -ENOEXEC);
	/* mov $426,%r8d; syscall: b8 behind a REX prefix */
	assert_int_equal(plan(B(0x41, 0xb8, 0xaa, 0x01, 0, 0, 0x0f, 0x05), 426, &p), -ENOEXEC);
	/* a RIP-relative instruction between: it would read elsewhere from the stub */
	assert_int_equal(plan(B(0xb8, 0xaa, 0x01, 0, 0, 0x48, 0x8b, 0x15, 1, 2, 3, 4, 0x0f, 0x05),
			      426, &p), -ENOEXEC);
	/* a branch between */
	assert_int_equal(plan(B(0xb8, 0xaa, 0x01, 0, 0, 0x74, 0x00, 0x0f, 0x05), 426, &p), -ENOEXEC);
	/* the mov's number is not the call's */
	assert_int_equal(plan(B(0xb8, 0xa9, 0x01, 0, 0, 0x0f, 0x05), 426, &p), -ENOEXEC);
	/* the number comes from a register */
	assert_int_equal(plan(B(0x44, 0x89, 0xe0, 0x0f, 0x05), 426, &p), -ENOEXEC);
	/* six instructions after the mov: more than a stub replays */
	assert_int_equal(plan(B(0xb8, 0xaa, 0x01, 0, 0, 0x89, 0xc1, 0x89, 0xc1, 0x89, 0xc1,
				0x89, 0xc1, 0x89, 0xc1, 0x89, 0xc1, 0x0f, 0x05), 426, &p), -ENOEXEC);
	/* mov %ecx,%eax after the mov: the number would not be nr */
	assert_int_equal(plan(B(0xb8, 0xaa, 0x01, 0, 0, 0x89, 0xc8, 0x0f, 0x05), 426, &p), -ENOEXEC);
	/* mov 8(%rsp),%eax after it; and xor %eax,%eax */
	assert_int_equal(plan(B(0xb8, 0xaa, 0x01, 0, 0, 0x8b, 0x44, 0x24, 0x08, 0x0f, 0x05), 426, &p),
			 -ENOEXEC);
	assert_int_equal(plan(B(0xb8, 0xaa, 0x01, 0, 0, 0x31, 0xc0, 0x0f, 0x05), 426, &p), -ENOEXEC);
	/* mov %rax,%rsp after it */
	assert_int_equal(plan(B(0xb8, 0xaa, 0x01, 0, 0, 0x48, 0x89, 0xc4, 0x0f, 0x05), 426, &p),
			 -ENOEXEC);
	/* the decoding from the function's start does not land on the syscall */
	static const uint8_t inside[] = { 0xb8, 0xaa, 0x01, 0x0f, 0x05, 0x0f, 0x05 };

	assert_int_equal(pl_cs_plan(inside, FUNC, FUNC + 3, 426, &p), -ENOEXEC);
	/* not a syscall at sc */
	assert_int_equal(plan(B(0xb8, 0xaa, 0x01, 0, 0, 0x0f, 0x34), 426, &p), -ENOEXEC);
	/* an undecodable byte before the site */
	assert_int_equal(plan(B(0x06, 0xb8, 0xaa, 0x01, 0, 0, 0x0f, 0x05), 426, &p), -ENOEXEC);
	/* the mov across a 16-byte boundary: no single store replaces it */
	uint8_t code[32];

	memset(code, 0x90, sizeof(code));
	memcpy(code + 12, "\xb8\xaa\x01\x00\x00\x0f\x05", 7);
	assert_int_equal(pl_cs_plan(code, FUNC, FUNC + 17, 426, &p), -EAGAIN);
	/* at 8..12: inside one 8-byte word; at 4..8: inside one 16-byte block */
	memset(code, 0x90, sizeof(code));
	memcpy(code + 8, "\xb8\xaa\x01\x00\x00\x0f\x05", 7);
	assert_int_equal(pl_cs_plan(code, FUNC, FUNC + 13, 426, &p), 0);
	memset(code, 0x90, sizeof(code));
	memcpy(code + 4, "\xb8\xaa\x01\x00\x00\x0f\x05", 7);
	assert_int_equal(pl_cs_plan(code, FUNC, FUNC + 9, 426, &p), 0);
	/*
	 * fio's reap, its mov across a 16-byte boundary: the window starts at
	 * the mov $1,%r10d before it (at 3..7, one 8-byte word), whose first
	 * five bytes become the jmp.
	 */
	static const uint8_t reap[] = {
		0x90, 0x90, 0x90,
		0x41, 0xba, 0x01, 0, 0, 0,	/* 3: mov $1,%r10d */
		0x45, 0x31, 0xc0,		/* 9: xor %r8d,%r8d */
		0x45, 0x31, 0xc9,		/* 12: xor %r9d,%r9d */
		0xb8, 0xaa, 0x01, 0, 0,		/* 15: mov $426,%eax */
		0x89, 0xea,			/* 20: mov %ebp,%edx */
		0x0f, 0x05,			/* 22: syscall */
	};

	assert_int_equal(pl_cs_plan(reap, FUNC, FUNC + 22, 426, &p), 0);
	assert_int_equal(p.start, FUNC + 3);
	assert_int_equal(p.copy_len, 19);
	assert_memory_equal(p.copy, reap + 3, 19);
	/* the same with xor %eax,%eax before the mov: it may write rax, the mov comes after */
	static const uint8_t before[] = {
		0x90, 0x90, 0x90,
		0x41, 0xba, 0x01, 0, 0, 0,	/* 3: mov $1,%r10d */
		0x31, 0xc0,			/* 9: xor %eax,%eax */
		0x45, 0x31, 0xc0, 0x90,		/* 11: xor %r8d,%r8d; nop */
		0xb8, 0xaa, 0x01, 0, 0,		/* 15: mov $426,%eax */
		0x0f, 0x05,			/* 20: syscall */
	};

	assert_int_equal(pl_cs_plan(before, FUNC, FUNC + 20, 426, &p), -EAGAIN);	/* the nop */
	static const uint8_t before2[] = {
		0x90, 0x90,
		0x41, 0xba, 0x01, 0, 0, 0,	/* 2: mov $1,%r10d */
		0x31, 0xc0,			/* 8: xor %eax,%eax */
		0x45, 0x31, 0xc0, 0x89, 0xc1,	/* 10: xor %r8d,%r8d; mov %eax,%ecx */
		0xb8, 0xaa, 0x01, 0, 0,		/* 15: mov $426,%eax */
		0x0f, 0x05,			/* 20: syscall */
	};

	assert_int_equal(pl_cs_plan(before2, FUNC, FUNC + 20, 426, &p), 0);
	assert_int_equal(p.start, FUNC + 2);
}

/* --- the patch on a synthetic page --- */

static long seen_nr, seen_args[6];
static _Atomic long handled;

static long handler(long nr, const long a[6])
{
	seen_nr = nr;
	memcpy(seen_args, a, sizeof(seen_args));
	handled++;
	return 777;
}

typedef long (*fn6)(long, long, long, long, long, long);

/*
 * long f(a0..a5): the System V arguments moved to the system call's, then
 * mov $getpid,%eax (at offset 16, inside one 16-byte block); syscall; ret.
 */
static uint8_t *make_page(void)
{
	static const uint8_t code[] = {
		0x49, 0x89, 0xca,		/* mov %rcx,%r10 */
		0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
		0xb8, __NR_getpid, 0, 0, 0,	/* 16: mov $getpid,%eax */
		0x0f, 0x05,			/* syscall */
		0xc3,				/* ret */
	};
	uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_ptr_not_equal(p, MAP_FAILED);
	memcpy(p, code, sizeof(code));
	assert_int_equal(mprotect(p, 4096, PROT_READ | PROT_EXEC), 0);
	return p;
}

static void test_apply(void **state)
{
	struct pl_cs_plan p;
	uint8_t *page;
	fn6 f;

	(void)state;
	/* every x86-64 CPU since 2011 has XSAVE, and Linux enables it */
	assert_int_equal(pl_cs_init(handler), 0);
	page = make_page();
	f = (fn6)(uintptr_t)page;
	assert_int_equal(f(1, 2, 3, 4, 5, 6), getpid());
	assert_int_equal(pl_cs_plan(page, (uintptr_t)page, (uintptr_t)page + 21, __NR_getpid, &p), 0);
	assert_int_equal(p.start, (uintptr_t)page + 16);
	assert_int_equal(pl_cs_apply(&p, PROT_READ | PROT_EXEC), 0);
	assert_int_equal(page[16], 0xe9);
	/* the syscall itself stays, for a thread that had passed the mov */
	assert_int_equal(page[21], 0x0f);
	assert_int_equal(page[22], 0x05);
	handled = 0;
	assert_int_equal(f(11, 12, 13, 14, 15, 16), 777);
	assert_int_equal(handled, 1);
	assert_int_equal(seen_nr, __NR_getpid);
	for (int i = 0; i < 6; i++)
		assert_int_equal(seen_args[i], 11 + i);
	/* a second apply of the same plan finds the bytes changed: nothing written */
	assert_int_equal(pl_cs_apply(&p, PROT_READ | PROT_EXEC), -EBUSY);
	assert_int_equal(f(0, 0, 0, 0, 0, 0), 777);
	munmap(page, 4096);
}

static fn6 racing;
static _Atomic int stop;
static _Atomic long bad;

static void *caller(void *arg)
{
	long pid = (long)(intptr_t)arg;

	while (!stop) {
		long r = racing(1, 2, 3, 4, 5, 6);

		if (r != pid && r != 777)
			bad++;
	}
	return NULL;
}

/* threads call the site while it is patched: each call is the old one or the new one */
static void test_apply_racing(void **state)
{
	struct pl_cs_plan p;
	pthread_t t[3];
	uint8_t *page;

	(void)state;
	assert_int_equal(pl_cs_init(handler), 0);
	for (int round = 0; round < 20; round++) {
		page = make_page();
		racing = (fn6)(uintptr_t)page;
		stop = 0;
		for (int i = 0; i < 3; i++)
			assert_int_equal(pthread_create(&t[i], NULL, caller,
							(void *)(intptr_t)getpid()), 0);
		usleep(1000);
		assert_int_equal(pl_cs_plan(page, (uintptr_t)page, (uintptr_t)page + 21,
					    __NR_getpid, &p), 0);
		assert_int_equal(pl_cs_apply(&p, PROT_READ | PROT_EXEC), 0);
		handled = 0;
		while (handled < 100)
			usleep(100);
		stop = 1;
		for (int i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
		assert_int_equal(bad, 0);
		munmap(page, 4096);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_plan_layouts),
		cmocka_unit_test(test_plan_refused),
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_apply_racing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
