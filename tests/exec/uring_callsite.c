// SPDX-License-Identifier: MIT
/*
 * A program that makes io_uring_enter with its own `syscall` instruction
 * (as fio's io_uring engines do), in five layouts:
 *
 *   plain     mov $426,%eax; syscall                 (fio's submit)
 *   gap       mov $426,%eax; mov %ecx,%edx; syscall
 *   reap      as fio's reap: mov $1,%r10d; mov %r8d,%r8d; mov %r9d,%r9d;
 *             mov $426,%eax (across a 16-byte boundary); mov %ecx,%edx;
 *             syscall (site: the mov to r10d, which the jmp replaces)
 *   riprel    mov $426,%eax; lea 0(%rip),%r11; syscall
 *   straddle  the mov across a 16-byte boundary, nothing before it to replace
 *
 * Each submits NOPs one at a time and waits for each (to_submit 1,
 * min_complete 1, GETEVENTS), then makes empty enters (nothing to submit
 * or wait for), and checks after each what the syscall instruction keeps:
 * the argument registers, three vector registers, the carry flag, and rcx
 * (the address after the syscall). Prints per layout "name: ok site=<first
 * byte of the mov, hex> ns=<per empty enter>" or why not.
 */
#include <errno.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct ring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int setup(struct ring *r)
{
	struct io_uring_params p;
	char *sq, *cq;

	memset(&p, 0, sizeof(p));
	r->fd = (int)syscall(__NR_io_uring_setup, 8, &p);
	if (r->fd < 0)
		return -errno;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * 4, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
		return -errno;
	r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)(sq + p.sq_off.array);
	r->cq_head = (unsigned *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* what one call left: its result and what it must have kept */
struct after {
	long ret;
	long fd, sub, min, flags, r8, r9;
	double v0, v1, v2;
	unsigned char cf;
	unsigned long rcx, want_rcx, site;
};

/*
 * The shared frame of every layout: values in the argument registers and
 * in three vector registers, the carry flag set, then LAYOUT (which ends
 * in a syscall at label 1) and the registers read back.
 */
#define ENTER(name, LAYOUT)							\
static __attribute__((noinline)) void name(int fd, long sub, long min,	\
					    struct after *a)		\
{									\
	register long r10 __asm__("r10") = IORING_ENTER_GETEVENTS;	\
	register long r8 __asm__("r8") = 0;				\
	register long r9 __asm__("r9") = 0;				\
	long rdi = fd, rsi = sub, rdx = min, rcx = min, ret;		\
	double v0 = 1.5, v1 = -2.25, v2 = 1e300;			\
	unsigned char cf;						\
	unsigned long want, site;					\
									\
	__asm__ volatile("lea 1f(%%rip),%[want]\n\t"			\
			 "lea 2f(%%rip),%[site]\n\t"			\
			 "stc\n\t"					\
			 LAYOUT						\
			 "1:\n\t"					\
			 "setc %[cf]\n\t"				\
			 : "=a"(ret), "+D"(rdi), "+S"(rsi), "+d"(rdx),	\
			   "+c"(rcx), "+r"(r10), "+r"(r8), "+r"(r9),	\
			   "+x"(v0), "+x"(v1), "+x"(v2), [cf] "=q"(cf),	\
			   [want] "=&r"(want), [site] "=&r"(site)	\
			 :						\
			 : "r11", "memory", "cc");			\
	a->ret = ret;							\
	a->fd = rdi, a->sub = rsi, a->min = rdx, a->flags = r10;	\
	a->r8 = r8, a->r9 = r9;						\
	a->v0 = v0, a->v1 = v1, a->v2 = v2;				\
	a->cf = cf;							\
	a->rcx = (unsigned long)rcx, a->want_rcx = want, a->site = site;\
}

ENTER(enter_plain, ".p2align 4\n\t2: mov $426,%%eax\n\tsyscall\n\t")
ENTER(enter_gap, ".p2align 4\n\t2: mov $426,%%eax\n\tmov %%ecx,%%edx\n\tsyscall\n\t")
ENTER(enter_riprel, ".p2align 4\n\t2: mov $426,%%eax\n\t"
		    "lea 0(%%rip),%%r11\n\tsyscall\n\t")
ENTER(enter_reap, ".p2align 4\n\tnop; nop; nop\n\t"
		  "2: mov $1,%%r10d\n\tmov %%r8d,%%r8d\n\tmov %%r9d,%%r9d\n\t"
		  "mov $426,%%eax\n\tmov %%ecx,%%edx\n\tsyscall\n\t")
ENTER(enter_straddle, ".p2align 4\n\t"
		      "nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop\n\t"
		      "2: mov $426,%%eax\n\tsyscall\n\t")

typedef void (*enter_fn)(int fd, long sub, long min, struct after *a);

/* what the call must have kept */
static const char *kept(const struct ring *r, long sub, long min, const struct after *a)
{
	if (a->fd != r->fd || a->sub != sub || a->min != min ||
	    a->flags != IORING_ENTER_GETEVENTS || a->r8 || a->r9)
		return "an argument register changed";
	if (a->v0 != 1.5 || a->v1 != -2.25 || a->v2 != 1e300)
		return "a vector register changed";
	if (!a->cf)
		return "the carry flag changed";
	if (a->rcx != a->want_rcx)
		return "rcx is not the address after the syscall";
	return NULL;
}

/* NOPs one at a time, then the time of an enter with nothing to do */
static const char *run(struct ring *r, enter_fn enter, struct after *a, double *ns)
{
	enum { N = 2000 };
	struct timespec t0, t1;

	for (unsigned i = 0; i < N; i++) {
		unsigned tail = *r->sq_tail, head;
		struct io_uring_sqe *s = &r->sqes[tail & *r->sq_mask];
		struct io_uring_cqe *c;

		memset(s, 0, sizeof(*s));
		s->opcode = IORING_OP_NOP;
		s->user_data = 1000 + i;
		r->sq_array[tail & *r->sq_mask] = tail & *r->sq_mask;
		__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
		enter(r->fd, 1, 1, a);
		if (a->ret != 1)
			return "io_uring_enter did not submit one";
		if (kept(r, 1, 1, a))
			return kept(r, 1, 1, a);
		head = *r->cq_head;
		if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
			return "no completion";
		c = &r->cqes[head & *r->cq_mask];
		if (c->user_data != 1000 + i || c->res != 0)
			return "a wrong completion";
		__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < N * 10; i++) {
		enter(r->fd, 0, 0, a);
		if (a->ret != 0)
			return "an empty io_uring_enter did not return 0";
		if (kept(r, 0, 0, a))
			return kept(r, 0, 0, a);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (N * 10);
	return NULL;
}

int main(void)
{
	static const struct {
		const char *name;
		enter_fn fn;
	} cases[] = {
		{ "plain", enter_plain }, { "gap", enter_gap },
		{ "reap", enter_reap }, { "riprel", enter_riprel },
		{ "straddle", enter_straddle },
	};
	struct ring r = { 0 };
	int ret = setup(&r), bad = 0;

	if (ret) {
		printf("setup: %s\n", strerror(-ret));
		return 1;
	}
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct after a = { 0 };
		double ns = 0;
		const char *why = run(&r, cases[i].fn, &a, &ns);

		if (why) {
			printf("%s: %s (ret %ld)\n", cases[i].name, why, a.ret);
			bad = 1;
			continue;
		}
		printf("%s: ok site=%02x ns=%.0f\n", cases[i].name, *(unsigned char *)a.site, ns);
	}
	return bad;
}
