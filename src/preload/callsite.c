/* SPDX-License-Identifier: MIT */
/*
 * Call sites taken over from the trap (callsite.h): the plan (which bytes,
 * from a decoding of the whole function up to the site), the stubs (code
 * pages mapped twice from one memfd: executable near the site, writable
 * elsewhere, so no page is ever writable and executable), the one store
 * that redirects a site, and the entry the stubs call, which keeps what
 * the `syscall` instruction keeps.
 */
#include <assert.h>
#include <cpuid.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "preload/callsite.h"

#if defined(__x86_64__)

/* ------------------------------------------------------------------ plan */

/*
 * The register an allowed instruction writes (0..15), 16 for memory, or -1
 * when the instruction is not one a stub may replay: a plain move or ALU
 * op between registers or to or from memory that is not RIP-relative.
 */
static int replay_dest(const struct pl_insn *in, const uint8_t *p)
{
	unsigned rm = (in->modrm_byte & 7) | ((in->rex & 1) << 3);
	unsigned reg = ((in->modrm_byte >> 3) & 7) | ((in->rex & 4) << 1);
	bool mem = in->modrm && (in->modrm_byte >> 6) != 3;

	if (in->prefixes || in->riprel || in->vex || in->twobyte)
		return -1;
	switch (in->opcode) {
	case 0x01: case 0x09: case 0x21: case 0x29: case 0x31: case 0x89:
		return mem ? 16 : (int)rm;
	case 0x03: case 0x0b: case 0x23: case 0x2b: case 0x33: case 0x8b:
		return (int)reg;
	case 0xc7:
		if (((in->modrm_byte >> 3) & 7) != 0)
			return -1;
		return mem ? 16 : (int)rm;
	default:
		if (in->opcode >= 0xb8 && in->opcode <= 0xbf)
			return (int)((p[in->op_at] & 7) | ((in->rex & 1) << 3));
		return -1;
	}
}

/* the five bytes at a are replaced by one aligned 8- or 16-byte store */
static bool one_store(uintptr_t a)
{
	return (a & ~(uintptr_t)7) == ((a + 4) & ~(uintptr_t)7) ||
	       (a & ~(uintptr_t)15) == ((a + 4) & ~(uintptr_t)15);
}

#define WINDOW_MAX 6	/* instructions replayed, the mov $nr,%eax among them */

int pl_cs_plan(const uint8_t *code, uintptr_t func, uintptr_t sc, long nr,
	       struct pl_cs_plan *plan)
{
	size_t at[WINDOW_MAX + 1], n = 0, off = 0, end;
	bool have_mov = false, straddle = false;
	struct pl_insn in;

	if (sc < func || nr < 0)
		return -ENOEXEC;
	end = sc - func;
	/* a linear decoding from the function's first instruction must land on the syscall */
	while (off < end) {
		int len = pl_insn_decode(code + off, end + 2 - off, &in);

		if (len < 0)
			return -ENOEXEC;
		at[n++ % (WINDOW_MAX + 1)] = off;
		off += (size_t)len;
	}
	if (off != end || code[end] != 0x0f || code[end + 1] != 0x05)
		return -ENOEXEC;
	/*
	 * Back from the syscall over instructions a stub may replay: after the
	 * mov $nr,%eax none may write rax or rsp (the number stays nr); the
	 * first instruction of the window, the mov or one before it, must be
	 * five bytes or more and replaceable in one store.
	 */
	for (size_t k = 1; k <= WINDOW_MAX && k <= n; k++) {
		size_t o = at[(n - k) % (WINDOW_MAX + 1)];
		int dest;

		pl_insn_decode(code + o, end - o, &in);
		dest = replay_dest(&in, code + o);
		if (dest < 0)
			break;
		if (!have_mov) {
			if (in.len == 5 && code[o] == 0xb8) {
				int32_t imm;

				memcpy(&imm, code + o + 1, 4);
				if (imm != nr)
					return -ENOEXEC;
				have_mov = true;
			} else if (dest == 0 || dest == 4) {
				return -ENOEXEC;
			} else {
				continue;
			}
		} else if (dest == 4) {
			return -ENOEXEC;	/* the stack pointer: the stub's frame is below it */
		}
		if (in.len < 5)
			continue;
		if (!one_store(func + o)) {
			straddle = true;
			continue;
		}
		if (end - o > PL_CS_MAX_COPY)
			return -ENOEXEC;
		plan->start = func + o;
		plan->resume = sc + 2;
		plan->copy_len = (uint8_t)(end - o);
		memcpy(plan->copy, code + o, end - o);
		return 0;
	}
	return straddle ? -EAGAIN : -ENOEXEC;
}

/* ----------------------------------------------------------------- entry */

/* named from the entry's assembly: global (hidden) so that LTO keeps their names */
__attribute__((used, visibility("hidden"))) pl_cs_handler_fn pl_cs_handler;
__attribute__((used, visibility("hidden"))) unsigned long pl_cs_xsave_size;

/*
 * pl_cs_entry: called by a stub (the red zone already skipped) with the
 * system call's registers: rax the number, rdi rsi rdx r10 r8 r9 its
 * arguments. Returns the result in rax and keeps every register but rax,
 * rcx and r11 (the stub sets those two as the syscall instruction does),
 * the flags and the XSAVE state (x87, SSE, AVX, AVX-512): the handler is C
 * and may use any of them.
 */
void pl_cs_entry(void);
__asm__(".text\n"
	".p2align 4\n"
	".globl pl_cs_entry\n"
	".hidden pl_cs_entry\n"
	".type pl_cs_entry,@function\n"
	"pl_cs_entry:\n"
	"	pushfq\n"
	"	push %r9\n"
	"	push %r8\n"
	"	push %r10\n"
	"	push %rdx\n"
	"	push %rsi\n"
	"	push %rdi\n"
	"	push %rbp\n"
	"	push %rbx\n"
	"	push %rax\n"
	"	lea 24(%rsp),%rbx\n"		/* the six arguments, in order */
	"	mov %rsp,%rbp\n"
	"	cld\n"
	"	sub pl_cs_xsave_size(%rip),%rsp\n"
	"	and $-64,%rsp\n"
	"	xor %eax,%eax\n"		/* XSAVE leaves the header's tail: zero it */
	"	mov %rax,512(%rsp)\n"
	"	mov %rax,520(%rsp)\n"
	"	mov %rax,528(%rsp)\n"
	"	mov %rax,536(%rsp)\n"
	"	mov %rax,544(%rsp)\n"
	"	mov %rax,552(%rsp)\n"
	"	mov %rax,560(%rsp)\n"
	"	mov %rax,568(%rsp)\n"
	"	mov $-1,%eax\n"
	"	mov $-1,%edx\n"
	"	xsave64 (%rsp)\n"
	"	mov 0(%rbp),%rdi\n"
	"	mov %rbx,%rsi\n"
	"	call *pl_cs_handler(%rip)\n"
	"	mov %rax,%rbx\n"
	"	mov $-1,%eax\n"
	"	mov $-1,%edx\n"
	"	xrstor64 (%rsp)\n"
	"	mov %rbx,%rax\n"
	"	lea 8(%rbp),%rsp\n"
	"	pop %rbx\n"
	"	pop %rbp\n"
	"	pop %rdi\n"
	"	pop %rsi\n"
	"	pop %rdx\n"
	"	pop %r10\n"
	"	pop %r8\n"
	"	pop %r9\n"
	"	popfq\n"
	"	ret\n"
	".size pl_cs_entry, .-pl_cs_entry\n");

int pl_cs_init(pl_cs_handler_fn handler)
{
	unsigned a, b, c, d;

	/* OSXSAVE: the kernel enabled XSAVE; CPUID 0xd/0 ebx: the area for what XCR0 enables */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
		return -EOPNOTSUPP;
	__cpuid_count(0xd, 0, a, b, c, d);
	if (b < 576)
		return -EOPNOTSUPP;
	pl_cs_xsave_size = (b + 63) & ~63u;
	pl_cs_handler = handler;
	return 0;
}

/* ----------------------------------------------------------------- stubs */

#define AREA_LEN (64 * 1024ul)
#define STUB_LEN 128ul
/* what stub_write puts after the copy: lea, call, pushfq/pop, lea, lea, jmp */
#define STUB_TAIL (5 + 6 + 3 + 7 + 8 + 5)
_Static_assert(PL_CS_MAX_COPY + STUB_TAIL <= STUB_LEN, "a stub overruns the next");
#define MAX_AREAS 8
#define REACH (1ul << 30)	/* well inside rel32's 2 GiB */

/* the head of an area, in its own first bytes: shared with forked children */
struct area_head {
	uint64_t entry;			/* the stubs' call goes through this */
	_Atomic uint32_t next;		/* next free stub, parent and children alike */
};

struct area {
	uintptr_t x;	/* the executable view */
	uint8_t *w;	/* the writable view */
};

static struct area areas[MAX_AREAS];
static _Atomic unsigned nareas;
static atomic_flag cs_busy = ATOMIC_FLAG_INIT;

static uintptr_t dist(uintptr_t a, uintptr_t b)
{
	return a > b ? a - b : b - a;
}

static int area_new(uintptr_t near, struct area *ar)
{
	int fd = memfd_create("ucmd-callsite", MFD_CLOEXEC);
	void *w, *x = MAP_FAILED;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, AREA_LEN)) {
		close(fd);
		return -errno;
	}
	/* below the site first (free space sits below the libraries), then above */
	for (uintptr_t step = 16ul << 20; step < REACH && x == MAP_FAILED; step += 16ul << 20) {
		for (int dir = 0; dir < 2 && x == MAP_FAILED; dir++) {
			uintptr_t at = ((dir ? near + step : near - step) & ~(AREA_LEN - 1));

			if (!dir && near < step + 0x10000)
				continue;
			x = mmap((void *)at, AREA_LEN, PROT_READ | PROT_EXEC,
				 MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
			if (x != MAP_FAILED && x != (void *)at) {
				munmap(x, AREA_LEN);
				x = MAP_FAILED;
			}
		}
	}
	if (x == MAP_FAILED) {
		close(fd);
		return -ENOMEM;
	}
	w = mmap(NULL, AREA_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (w == MAP_FAILED) {
		munmap(x, AREA_LEN);
		return -ENOMEM;
	}
	ar->x = (uintptr_t)x;
	ar->w = w;
	((struct area_head *)w)->entry = (uint64_t)(uintptr_t)pl_cs_entry;
	atomic_store(&((struct area_head *)w)->next, (uint32_t)STUB_LEN);
	return 0;
}

/* a free stub within reach of both plan->start and plan->resume */
static int stub_get(const struct pl_cs_plan *plan, struct area **ar, size_t *off)
{
	unsigned n = atomic_load(&nareas);

	for (unsigned i = 0; i <= n && i < MAX_AREAS; i++) {
		struct area *a = &areas[i];

		if (i == n) {
			if (area_new(plan->start, a))
				return -ENOMEM;
			atomic_store(&nareas, n + 1);
		}
		if (dist(a->x, plan->start) >= REACH || dist(a->x, plan->resume) >= REACH)
			continue;
		uint32_t o = atomic_fetch_add(&((struct area_head *)a->w)->next, (uint32_t)STUB_LEN);

		if (o + STUB_LEN > AREA_LEN)
			continue;
		*ar = a;
		*off = o;
		return 0;
	}
	return -ENOSPC;
}

static void put32(uint8_t *p, int64_t v)
{
	int32_t x = (int32_t)v;

	memcpy(p, &x, 4);
}

/*
 *	<copy>				mov $nr,%eax and what followed it
 *	lea -0x80(%rsp),%rsp		past the red zone
 *	call *entry(%rip)
 *	pushfq; pop %r11		r11 = rflags, as after syscall
 *	lea resume(%rip),%rcx		rcx = the next instruction, as after syscall
 *	lea 0x80(%rsp),%rsp
 *	jmp resume
 */
static size_t stub_write(uint8_t *w, uintptr_t x, uintptr_t head_x, const struct pl_cs_plan *plan)
{
	size_t i = 0;

	memcpy(w, plan->copy, plan->copy_len);
	i = plan->copy_len;
	memcpy(w + i, "\x48\x8d\x64\x24\x80", 5);
	i += 5;
	memcpy(w + i, "\xff\x15", 2);
	put32(w + i + 2, (int64_t)head_x - (int64_t)(x + i + 6));
	i += 6;
	memcpy(w + i, "\x9c\x41\x5b", 3);
	i += 3;
	memcpy(w + i, "\x48\x8d\x0d", 3);
	put32(w + i + 3, (int64_t)plan->resume - (int64_t)(x + i + 7));
	i += 7;
	memcpy(w + i, "\x48\x8d\xa4\x24\x80\x00\x00\x00", 8);
	i += 8;
	w[i] = 0xe9;
	put32(w + i + 1, (int64_t)plan->resume - (int64_t)(x + i + 5));
	i += 5;
	assert(i == (size_t)plan->copy_len + STUB_TAIL);
	return i;
}

/* replaces the five bytes at a with new5 in one store, if they still are old5 */
static int store5(uintptr_t a, const uint8_t old5[5], const uint8_t new5[5])
{
	if ((a & ~(uintptr_t)7) == ((a + 4) & ~(uintptr_t)7)) {
		uint64_t *p = (uint64_t *)(a & ~(uintptr_t)7), want, val;

		want = __atomic_load_n(p, __ATOMIC_ACQUIRE);
		if (memcmp((uint8_t *)&want + (a & 7), old5, 5))
			return -EBUSY;
		val = want;
		memcpy((uint8_t *)&val + (a & 7), new5, 5);
		return __atomic_compare_exchange_n(p, &want, val, false, __ATOMIC_RELEASE,
						   __ATOMIC_RELAXED) ? 0 : -EBUSY;
	}
	uint64_t *p = (uint64_t *)(a & ~(uintptr_t)15);
	uint64_t cur[2], val[2];
	bool ok;

	cur[0] = __atomic_load_n(&p[0], __ATOMIC_ACQUIRE);
	cur[1] = __atomic_load_n(&p[1], __ATOMIC_ACQUIRE);
	if (memcmp((uint8_t *)cur + (a & 15), old5, 5))
		return -EBUSY;
	memcpy(val, cur, 16);
	memcpy((uint8_t *)val + (a & 15), new5, 5);
	__asm__ volatile("lock cmpxchg16b %1\n\tsete %0"
			 : "=q"(ok), "+m"(*(unsigned __int128 *)p), "+a"(cur[0]), "+d"(cur[1])
			 : "b"(val[0]), "c"(val[1])
			 : "memory", "cc");
	return ok ? 0 : -EBUSY;
}

int pl_cs_apply(const struct pl_cs_plan *plan, int prot)
{
	uintptr_t page = plan->start & ~(uintptr_t)4095;
	uint8_t jmp[5];
	struct area *ar;
	size_t off;
	int ret;

	if (!pl_cs_handler || !pl_cs_xsave_size)
		return -EOPNOTSUPP;
	if (!one_store(plan->start) || plan->copy_len < 5)
		return -EINVAL;
	if (atomic_flag_test_and_set(&cs_busy))
		return -EBUSY;	/* another thread, or this one in a nested signal: the trap still works */
	ret = stub_get(plan, &ar, &off);
	if (ret)
		goto out;
	/*
	 * The stub's bytes before the jump that leads to them: store5()'s
	 * locked cmpxchg orders every earlier store (a release at least), so
	 * no fence here (and TSan, which rejects fences, builds it).
	 */
	stub_write(ar->w + off, ar->x + off, ar->x, plan);
	jmp[0] = 0xe9;
	put32(jmp + 1, (int64_t)(ar->x + off) - (int64_t)(plan->start + 5));
	/* the page stays executable throughout: other threads may be running in it */
	if (mprotect((void *)page, 4096, prot | PROT_WRITE | PROT_EXEC)) {
		ret = -errno;
		goto out;
	}
	ret = store5(plan->start, plan->copy, jmp);
	if (mprotect((void *)page, 4096, prot) && !ret)
		ret = -errno;
out:
	atomic_flag_clear(&cs_busy);
	return ret;
}

/* -------------------------------------------------------------- take over */

#define MAX_SWEEP (64 * 1024ul)
#define MAX_TRIED 64

static _Atomic uintptr_t tried[MAX_TRIED];
static _Atomic unsigned ntried;

struct find {
	uintptr_t pc;
	uintptr_t seg_lo, seg_hi;	/* the executable PT_LOAD holding pc */
	int prot;
	const uint8_t *hdr;		/* its PT_GNU_EH_FRAME */
	bool found;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find *f = data;
	const uint8_t *hdr = NULL;
	bool in = false;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && f->pc >= lo &&
		    f->pc < lo + ph->p_memsz) {
			in = true;
			f->seg_lo = lo;
			f->seg_hi = lo + ph->p_memsz;
			f->prot = PROT_EXEC | ((ph->p_flags & PF_R) ? PROT_READ : 0) |
				  ((ph->p_flags & PF_W) ? PROT_WRITE : 0);
		}
		if (ph->p_type == PT_GNU_EH_FRAME)
			hdr = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
	}
	if (!in)
		return 0;
	f->hdr = hdr;
	f->found = true;
	return 1;
}

/* the start of pc's function: the last FDE starting at or below pc (.eh_frame_hdr's table) */
static int func_start(const uint8_t *hdr, uintptr_t pc, uintptr_t *start)
{
	int32_t lo = 0, hi, v;
	uint32_t count;

	/* version 1; eh_frame_ptr pcrel|sdata4; fde_count udata4; table datarel|sdata4 */
	if (!hdr || hdr[0] != 1 || hdr[1] != 0x1b || hdr[2] != 0x03 || hdr[3] != 0x3b)
		return -ENOEXEC;
	memcpy(&count, hdr + 8, 4);
	if (!count || count > (1u << 24))
		return -ENOEXEC;
	hi = (int32_t)count - 1;
	memcpy(&v, hdr + 12, 4);
	if ((uintptr_t)hdr + v > pc)
		return -ENOEXEC;
	while (lo < hi) {
		int32_t mid = lo + (hi - lo + 1) / 2;

		memcpy(&v, hdr + 12 + 8 * (size_t)mid, 4);
		if ((uintptr_t)hdr + v <= pc)
			lo = mid;
		else
			hi = mid - 1;
	}
	memcpy(&v, hdr + 12 + 8 * (size_t)lo, 4);
	*start = (uintptr_t)hdr + v;
	return 0;
}

static bool tried_before(uintptr_t sc)
{
	unsigned n = atomic_load(&ntried);

	for (unsigned i = 0; i < n && i < MAX_TRIED; i++)
		if (atomic_load(&tried[i]) == sc)
			return true;
	return false;
}

int pl_cs_take_over(uintptr_t rip, long nr)
{
	uintptr_t sc = rip - 2, func;
	struct pl_cs_plan plan;
	struct find f = { .pc = sc };
	unsigned slot;
	int ret;

	if (!pl_cs_handler || tried_before(sc))
		return -EALREADY;
	slot = atomic_fetch_add(&ntried, 1);
	if (slot >= MAX_TRIED)
		return -ENOSPC;	/* every later site stays on the trap */
	atomic_store(&tried[slot], sc);
	dl_iterate_phdr(find_cb, &f);
	if (!f.found || sc + 2 > f.seg_hi)
		return -ENOEXEC;
	ret = func_start(f.hdr, sc, &func);
	if (ret)
		return ret;
	if (func < f.seg_lo || sc - func > MAX_SWEEP)
		return -ENOEXEC;
	ret = pl_cs_plan((const uint8_t *)func, func, sc, nr, &plan);
	if (ret)
		return ret;
	return pl_cs_apply(&plan, f.prot);
}

#else /* !__x86_64__ */

int pl_cs_plan(const uint8_t *code, uintptr_t func, uintptr_t sc, long nr,
	       struct pl_cs_plan *plan)
{
	(void)code, (void)func, (void)sc, (void)nr, (void)plan;
	return -ENOEXEC;
}

int pl_cs_init(pl_cs_handler_fn handler)
{
	(void)handler;
	return -EOPNOTSUPP;
}

int pl_cs_apply(const struct pl_cs_plan *plan, int prot)
{
	(void)plan, (void)prot;
	return -EOPNOTSUPP;
}

int pl_cs_take_over(uintptr_t rip, long nr)
{
	(void)rip, (void)nr;
	return -EOPNOTSUPP;
}

#endif
