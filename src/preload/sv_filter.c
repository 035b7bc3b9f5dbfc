/* SPDX-License-Identifier: MIT */
/*
 * ucmd-supervise's seccomp filters (the lists are supervise.c's comment),
 * built from their own tables (sv.h). A static program's: x86-64 only,
 * every other system call ABI ENOSYS; USER_NOTIF for the calls that may
 * name ucmd's devices, and for the looks by path (stat, access, readlink
 * and their family: sv_stat.c answers those of ucmd's /dev and /sys from
 * the tree, as for a dynamic program). A dynamic program's (--dirs, beside the preload):
 * USER_NOTIF for getdents64 and getdents, so that its own instruction's listing of
 * /dev is ours too; for open, openat and creat from anywhere (a filter
 * cannot tell libc's text from the program's: libc and the preload are
 * mapped where the loader puts them), so that an open made with the
 * program's own instruction (Go's os.Open) is judged as a static
 * program's, but openat from the one instruction of the preload's
 * trampoline page made for it (PL_TRAMP_OPENAT_IP): the opens the preload
 * has judged itself, with a path copied into its own memory
 * (docs/security.md, "The preload's opens"); for the calls on a device descriptor such an open gave (the
 * static program's numbers); for rt_sigaction of SIGSYS not made from the
 * preload's trampoline (sv_sigsys.c); for stat, access, readlink and
 * their family by path not made from that trampoline (sv_stat.c: the
 * preload makes those of libc's interposers there, having judged the path
 * itself, so that only the program's own instruction and libc's internal
 * calls cost a notification). openat2 and open_by_handle_at are
 * ENOSYS, as are the opens and listings of i386 and every x32 call, so
 * that none reaches the host's /dev; everything else runs untouched.
 * Jumps are written as labels and resolved at the end (BPF jumps forward
 * only).
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <signal.h>
#include <stddef.h>
#include <sys/syscall.h>

#include "preload/preload.h"
#include "preload/sv.h"

const int sv_always[] = {
	__NR_open, __NR_openat, __NR_creat,
	__NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register, __NR_getdents64,
	__NR_getdents,	/* x86-64's old listing call: the same listing, its own records */
	__NR_execve, __NR_execveat,	/* only noted: the process's next call looks for a new image */
};
const unsigned sv_nr_always = sizeof(sv_always) / sizeof(sv_always[0]);
const int sv_fd0[] = {
	__NR_ioctl, __NR_close, __NR_read, __NR_write, __NR_pread64, __NR_pwrite64, __NR_lseek,
	__NR_readv, __NR_writev, __NR_preadv, __NR_pwritev, __NR_preadv2, __NR_pwritev2,
	__NR_fsync, __NR_fdatasync, __NR_fstat, __NR_newfstatat, __NR_statx,
};
const unsigned sv_nr_fd0 = sizeof(sv_fd0) / sizeof(sv_fd0[0]);

const int sv_paths[] = {
	__NR_stat, __NR_lstat, __NR_newfstatat, __NR_statx, __NR_access, __NR_faccessat,
	__NR_faccessat2, __NR_readlink, __NR_readlinkat,
};
const unsigned sv_nr_paths = sizeof(sv_paths) / sizeof(sv_paths[0]);

enum { L_ALLOW = -1, L_NOTIFY = -2, L_ENOSYS = -3, L_A0 = -4, L_A1 = -5, L_A4 = -6, L_SIG = -7,
       L_I386 = -8, L_OPENAT = -9, L_TRAMP = -10 };

struct insn {
	struct sock_filter f;
	int jt, jf;		/* label targets (< 0), or 0: fall through */
};

static struct insn prog[SV_FILTER_MAX];
static unsigned n_insn;

static void emit(uint16_t code, uint32_t k, int jt, int jf)
{
	prog[n_insn++] = (struct insn){ .f = { code, 0, 0, k }, .jt = jt, .jf = jf };
}

/* A number of ours in argument n (its low 32 bits: the kernel's int) goes to us. */
static void emit_arg_block(int label, unsigned n, int *where)
{
	where[-label] = (int)n_insn;
	emit(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args) + 8 * n, 0, 0);
	emit(BPF_JMP | BPF_JGE | BPF_K, SV_FD_BASE, 0, L_ALLOW);
	emit(BPF_JMP | BPF_JGE | BPF_K, SV_FD_BASE + SV_FD_NR, L_ALLOW, L_NOTIFY);
}

/* labels to offsets, counted from the next instruction; every jump goes forward */
static int resolve(struct sock_filter *out, const int *where)
{
	for (unsigned i = 0; i < n_insn; i++) {
		struct sock_filter f = prog[i].f;
		int jt = prog[i].jt ? where[-prog[i].jt] - (int)i - 1 : 0;
		int jf = prog[i].jf ? where[-prog[i].jf] - (int)i - 1 : 0;

		if (jt < 0 || jf < 0 || jt > 255 || jf > 255)
			return -EINVAL;
		if (BPF_OP(f.code) == BPF_JA && BPF_CLASS(f.code) == BPF_JMP) {
			f.k = (uint32_t)jt;
		} else {
			f.jt = (uint8_t)jt;
			f.jf = (uint8_t)jf;
		}
		out[i] = f;
	}
	return (int)n_insn;
}

static void emit_returns(int *where)
{
	where[-L_ALLOW] = (int)n_insn;
	emit(BPF_RET | BPF_K, SECCOMP_RET_ALLOW, 0, 0);
	where[-L_NOTIFY] = (int)n_insn;
	emit(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF, 0, 0);
	where[-L_ENOSYS] = (int)n_insn;
	emit(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS, 0, 0);
}

/* i386's numbers (int 0x80 on x86-64) */
#define I386_NR_open 5u
#define I386_NR_creat 8u
#define I386_NR_getdents 141u
#define I386_NR_getdents64 220u
#define I386_NR_openat 295u
#define I386_NR_open_by_handle_at 342u
#define I386_NR_openat2 437u

int sv_dirs_filter_build(struct sock_filter *out)
{
	static const uint32_t i386_refused[] = {
		I386_NR_open, I386_NR_creat, I386_NR_getdents, I386_NR_getdents64, I386_NR_openat,
		I386_NR_open_by_handle_at, I386_NR_openat2,
	};
	int where[12] = { 0 };

	n_insn = 0;
	emit(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch), 0, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, L_I386, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, L_ALLOW);
	emit(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr), 0, 0);
	/* x32: the preload cannot serve such a program; none of its calls runs */
	emit(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u /* __X32_SYSCALL_BIT */, L_ENOSYS, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigaction, L_SIG, 0);
	/* every open: the program's own instruction is out of the preload's reach */
	emit(BPF_JMP | BPF_JEQ | BPF_K, __NR_open, L_NOTIFY, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, L_OPENAT, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, __NR_creat, L_NOTIFY, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, __NR_getdents64, L_NOTIFY, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, __NR_getdents, L_NOTIFY, 0);
	/* the looks by path: a device's or the tree's are answered from the tree (sv_stat.c) */
	for (unsigned i = 0; i < sv_nr_paths; i++)
		emit(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)sv_paths[i], L_TRAMP, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, L_ENOSYS, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, __NR_open_by_handle_at, L_ENOSYS, 0);
	/* the calls on a device descriptor the supervisor gave (an open above) */
	for (unsigned i = 0; i < sv_nr_fd0; i++)
		emit(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)sv_fd0[i], L_A0, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, __NR_dup2, L_A1, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, __NR_dup3, L_A1, 0);
	emit(BPF_JMP | BPF_JA, 0, L_ALLOW, 0);	/* jt holds the target of JA's k */
	emit_arg_block(L_A0, 0, where);
	emit_arg_block(L_A1, 1, where);
	/* i386's opens and listings: ENOSYS, so that none reaches the host's /dev */
	where[-L_I386] = (int)n_insn;
	emit(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr), 0, 0);
	for (unsigned i = 0; i < sizeof(i386_refused) / sizeof(i386_refused[0]); i++)
		emit(BPF_JMP | BPF_JEQ | BPF_K, i386_refused[i], L_ENOSYS, 0);
	emit(BPF_JMP | BPF_JA, 0, L_ALLOW, 0);
	/* x86-64's rt_sigaction of SIGSYS, but the preload's own (from its trampoline page) */
	where[-L_SIG] = (int)n_insn;
	emit(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args), 0, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, SIGSYS, 0, L_ALLOW);
	/*
	 * ... and the looks by path the preload makes itself once it has
	 * judged the path (paths.c): those of its trampoline page run, the
	 * others come to us (sv_stat.c)
	 */
	where[-L_TRAMP] = (int)n_insn;
	emit(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer) + 4, 0, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(PL_TRAMP_ADDR >> 32), 0, L_NOTIFY);
	emit(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer), 0, 0);
	emit(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)PL_TRAMP_ADDR + (uint32_t)PL_TRAMP_LEN, L_NOTIFY, 0);
	emit(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)PL_TRAMP_ADDR, L_ALLOW, L_NOTIFY);
	/*
	 * openat from the preload's openat stub alone (the instruction after
	 * its syscall): an open whose path the preload judged and copied into
	 * its own memory (docs/security.md, "The preload's opens")
	 */
	where[-L_OPENAT] = (int)n_insn;
	emit(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer) + 4, 0, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)((PL_TRAMP_ADDR + PL_TRAMP_OPENAT_IP) >> 32), 0,
	     L_NOTIFY);
	emit(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer), 0, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(PL_TRAMP_ADDR + PL_TRAMP_OPENAT_IP), L_ALLOW,
	     L_NOTIFY);
	emit_returns(where);
	return resolve(out, where);
}

int sv_filter_build(struct sock_filter *out)
{
	int where[10] = { 0 };

	n_insn = 0;
	emit(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch), 0, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, L_ENOSYS);
	emit(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr), 0, 0);
	emit(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u /* __X32_SYSCALL_BIT */, L_ENOSYS, 0);
	for (unsigned i = 0; i < sv_nr_always; i++)
		emit(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)sv_always[i], L_NOTIFY, 0);
	/*
	 * the looks by path, from any instruction (a static program has no
	 * trampoline: each is its own): newfstatat and statx on a number of
	 * ours are fstat (sv_calls.c tells them apart), so they come first
	 */
	for (unsigned i = 0; i < sv_nr_paths; i++)
		emit(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)sv_paths[i], L_NOTIFY, 0);
	for (unsigned i = 0; i < sv_nr_fd0; i++)
		emit(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)sv_fd0[i], L_A0, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, __NR_dup2, L_A1, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, __NR_dup3, L_A1, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, L_A4, 0);
	emit(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, L_ENOSYS, 0);
	emit(BPF_JMP | BPF_JA, 0, L_ALLOW, 0);	/* jt holds the target of JA's k */
	emit_arg_block(L_A0, 0, where);
	emit_arg_block(L_A1, 1, where);
	emit_arg_block(L_A4, 4, where);
	emit_returns(where);
	return resolve(out, where);
}
