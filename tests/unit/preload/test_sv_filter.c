/* SPDX-License-Identifier: MIT */
/*
 * ucmd-supervise's seccomp filter (src/preload/sv_filter.c), run by the
 * kernel: in a forked child, one thread installs it (SECCOMP_FILTER_FLAG_
 * NEW_LISTENER, that thread only) and makes calls; another thread, outside
 * the filter, answers every notification with EXDEV, an errno none of the
 * calls could give by itself. So EXDEV means "sent to the supervisor".
 * Both filters: a static program's, and a dynamic one's (--dirs).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/audit.h>

#include <cmocka.h>

#include "preload/preload.h"
#include "preload/sv.h"

static volatile int listener = -1;	/* set by the other thread */

static void *answer(void *arg)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	(void)arg;
	for (;;) {
		struct pollfd pf = { listener, POLLIN, 0 };

		if (listener < 0 || poll(&pf, 1, 100) <= 0)
			continue;
		memset(&req, 0, sizeof(req));
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req))
			continue;
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.error = -EXDEV;
		ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	return NULL;
}

/* errno of a raw system call, 0 if it succeeded */
static int err(long ret)
{
	return ret < 0 ? errno : 0;
}

#define EXPECT(cond) do { if (!(cond)) return __LINE__; } while (0)

/* In the child, after the filter: each call trapped or not as the filter's table says. */
static int calls(void)
{
	char buf[8], sx[256];	/* sx: a struct statx's room */
	struct stat st;
	void *p;

	/* path calls always reach the supervisor */
	EXPECT(err(syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY)) == EXDEV);
	EXPECT(err(syscall(SYS_open, "/dev/null", O_RDONLY)) == EXDEV);
	EXPECT(err(syscall(SYS_io_uring_setup, 1, NULL)) == EXDEV);
	/* directory listings too (/dev shows ucmd's devices), the old getdents as well */
	EXPECT(err(syscall(SYS_getdents64, 0, buf, sizeof(buf))) == EXDEV);
	EXPECT(err(syscall(SYS_getdents, 0, buf, sizeof(buf))) == EXDEV);
	/* exec, to be noted (the process's image changes: sv_fork.c) */
	EXPECT(err(syscall(SYS_execve, "/nonexistent", NULL, NULL)) == EXDEV);
	EXPECT(err(syscall(SYS_execveat, AT_FDCWD, "/nonexistent", NULL, NULL, 0)) == EXDEV);
	/* the looks by path too (ucmd's /dev and /sys are the tree's: sv_stat.c) */
	EXPECT(err(syscall(SYS_stat, "/", &st)) == EXDEV);
	EXPECT(err(syscall(SYS_access, "/", F_OK)) == EXDEV);
	EXPECT(err(syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", buf, sizeof(buf))) == EXDEV);
	EXPECT(err(syscall(SYS_newfstatat, AT_FDCWD, "/", &st, 0)) == EXDEV);
	EXPECT(err(syscall(SYS_statx, 0, "", AT_EMPTY_PATH, 0, sx)) == EXDEV);
	/* openat2 has no supervisor: ENOSYS, libc falls back to openat */
	EXPECT(err(syscall(SYS_openat2, AT_FDCWD, "/dev/null", NULL, 0)) == ENOSYS);
	/* fd calls only on the supervisor's numbers */
	EXPECT(err(syscall(SYS_read, 900, buf, 1)) == EBADF);
	EXPECT(err(syscall(SYS_read, SV_FD_BASE, buf, 1)) == EXDEV);
	EXPECT(err(syscall(SYS_ioctl, SV_FD_BASE + SV_FD_NR - 1, 0, 0)) == EXDEV);
	EXPECT(err(syscall(SYS_ioctl, SV_FD_BASE + SV_FD_NR, 0, 0)) == EBADF);
	EXPECT(err(syscall(SYS_fstat, SV_FD_BASE + 3, NULL)) == EXDEV);
	/* dup2/dup3 onto them, not from them */
	EXPECT(err(syscall(SYS_dup2, 0, SV_FD_BASE + 1)) == EXDEV);
	EXPECT(err(syscall(SYS_dup3, 0, SV_FD_BASE + 1, 0)) == EXDEV);
	EXPECT(err(syscall(SYS_dup2, SV_FD_BASE + 1, 900)) == EBADF);
	/* mmap of one of them; anonymous memory (fd -1) is the kernel's */
	EXPECT(err(syscall(SYS_mmap, NULL, 4096, PROT_READ, MAP_SHARED, SV_FD_BASE, 0)) == EXDEV);
	p = (void *)syscall(SYS_mmap, NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	EXPECT(p != MAP_FAILED);
	/* a 64-bit fd argument: only its low 32 bits count, as the kernel's int */
	EXPECT(err(syscall(SYS_read, (1ul << 32) | SV_FD_BASE, buf, 1)) == EXDEV);
	/* an x32 system call number: ENOSYS from the filter, never run */
	EXPECT(err(syscall(0x40000000 | SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY)) == ENOSYS);
	return 0;
}

/*
 * A call made from the preload's trampoline page (PL_TRAMP_ADDR) at
 * offset at: "mov %rcx,%r10; mov $nr,%eax; syscall; ret", as the
 * preload's openat stub is laid out (its syscall ends PL_TRAMP_OPENAT_IP
 * when at is PL_TRAMP_OPENAT). errno, 0 if it succeeded (closed again).
 */
/* byte stores of our own: under AddressSanitizer the page is its shadow gap, not to be checked */
__attribute__((no_sanitize("address")))
static int tramp_call(unsigned long at, uint32_t nr, long a0, const char *a1, long a2)
{
	unsigned char code[] = { 0x49, 0x89, 0xca, 0xb8, (unsigned char)nr, (unsigned char)(nr >> 8),
				 0, 0, 0x0f, 0x05, 0xc3 };
	volatile unsigned char *page = (volatile unsigned char *)PL_TRAMP_ADDR;
	long (*fn)(long, const char *, long, long);
	long ret;

	if (mprotect((void *)page, PL_TRAMP_LEN, PROT_READ | PROT_WRITE))
		return -1;
	for (unsigned long i = 0; i < PL_TRAMP_LEN; i++)
		page[i] = 0xcc;
	for (unsigned long i = 0; i < sizeof(code); i++)
		page[at + i] = code[i];
	if (mprotect((void *)page, PL_TRAMP_LEN, PROT_READ | PROT_EXEC))
		return -1;
	fn = (long (*)(long, const char *, long, long))(uintptr_t)(page + at);
	ret = fn(a0, a1, a2, 0);
	if (ret < 0)
		return (int)-ret;
	close((int)ret);
	return 0;
}

/* The preload's openat stub: its openat alone goes to the kernel, nothing else from its page. */
static int tramp_calls(void)
{
	void *page = mmap((void *)PL_TRAMP_ADDR, PL_TRAMP_LEN, PROT_READ | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

#if defined(__SANITIZE_ADDRESS__)
	/*
	 * AddressSanitizer reserves this address as its shadow gap (PROT_NONE,
	 * never touched): this forked child, which only runs these calls, may
	 * take one page of it
	 */
	if (page == MAP_FAILED && errno == EEXIST)
		page = mmap((void *)PL_TRAMP_ADDR, PL_TRAMP_LEN, PROT_READ | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
#endif
	EXPECT(page == (void *)PL_TRAMP_ADDR);
	EXPECT(PL_TRAMP_OPENAT + 10 == PL_TRAMP_OPENAT_IP);
	/* from the stub: made by the kernel (no EXDEV), its errors the kernel's */
	EXPECT(tramp_call(PL_TRAMP_OPENAT, SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY) == 0);
	EXPECT(tramp_call(PL_TRAMP_OPENAT, SYS_openat, AT_FDCWD, "/nonexistent/x", O_RDONLY) ==
	       ENOENT);
	/* the same instruction making open or creat: sent */
	EXPECT(tramp_call(PL_TRAMP_OPENAT, SYS_open, (long)"/dev/null", NULL, O_RDONLY) == EXDEV);
	EXPECT(tramp_call(PL_TRAMP_OPENAT, SYS_creat, (long)"/nonexistent/x", NULL, 0600) == EXDEV);
	/* openat from any other instruction of the page (the generic trampoline's): sent */
	EXPECT(tramp_call(0, SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY) == EXDEV);
	EXPECT(tramp_call(PL_TRAMP_OPENAT + 1, SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY) ==
	       EXDEV);
	EXPECT(tramp_call(PL_TRAMP_OPENAT - 1, SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY) ==
	       EXDEV);
	munmap(page, PL_TRAMP_LEN);
	return 0;
}

/* In the child, after the dynamic program's filter (--dirs): opens, getdents64, SIGSYS's rt_sigaction, calls on our numbers. */
static int dirs_calls(void)
{
	struct stat st;
	char link[16];
	long k[4];
	char buf[8];
	long fd;
	int line = tramp_calls();

	if (line)
		return line;

	/* the looks by path: the supervisor's (from the trampoline: test_dirs_filter_ip) */
	EXPECT(err(syscall(SYS_stat, "/", &st)) == EXDEV);
	EXPECT(err(syscall(SYS_lstat, "/", &st)) == EXDEV);
	EXPECT(err(syscall(SYS_newfstatat, AT_FDCWD, "/", &st, 0)) == EXDEV);
	EXPECT(err(syscall(SYS_statx, AT_FDCWD, "/", 0, 0, buf)) == EXDEV);
	EXPECT(err(syscall(SYS_access, "/", F_OK)) == EXDEV);
	EXPECT(err(syscall(SYS_faccessat, AT_FDCWD, "/", F_OK)) == EXDEV);
	EXPECT(err(syscall(SYS_faccessat2, AT_FDCWD, "/", F_OK, 0)) == EXDEV);
	EXPECT(err(syscall(SYS_readlink, "/proc/self/exe", link, sizeof(link))) == EXDEV);
	EXPECT(err(syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", link, sizeof(link))) == EXDEV);

	EXPECT(err(syscall(SYS_getdents64, 0, buf, sizeof(buf))) == EXDEV);
	EXPECT(err(syscall(SYS_getdents64, SV_FD_BASE, buf, sizeof(buf))) == EXDEV);
	EXPECT(err(syscall(SYS_getdents, 0, buf, sizeof(buf))) == EXDEV);
	/* every open, whoever makes it (a filter cannot tell libc's instruction from the program's) */
	EXPECT(err(syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY)) == EXDEV);
	EXPECT(err(syscall(SYS_open, "/dev/null", O_RDONLY)) == EXDEV);
	EXPECT(err(syscall(SYS_creat, "/nonexistent/x", 0600)) == EXDEV);
	/* the opens with no supervisor: ENOSYS (libc falls back to openat) */
	EXPECT(err(syscall(SYS_openat2, AT_FDCWD, "/dev/null", NULL, 0)) == ENOSYS);
	EXPECT(err(syscall(SYS_open_by_handle_at, 0, NULL, O_RDONLY)) == ENOSYS);
	/* calls on the numbers a served open gives, and only on those */
	EXPECT(err(syscall(SYS_read, SV_FD_BASE, buf, 1)) == EXDEV);
	EXPECT(err(syscall(SYS_ioctl, SV_FD_BASE + SV_FD_NR - 1, 0, 0)) == EXDEV);
	EXPECT(err(syscall(SYS_ioctl, SV_FD_BASE + SV_FD_NR, 0, 0)) == EBADF);
	EXPECT(err(syscall(SYS_read, 900, buf, 1)) == EBADF);
	EXPECT(err(syscall(SYS_dup2, 0, SV_FD_BASE + 1)) == EXDEV);
	EXPECT(err(syscall(SYS_dup3, 0, SV_FD_BASE + 1, 0)) == EXDEV);
	fd = syscall(SYS_dup2, 0, 900);
	EXPECT(fd == 900);
	close((int)fd);
	/* exec stays the preload's (its own trap) */
	EXPECT(err(syscall(SYS_execve, "/nonexistent", NULL, NULL)) == ENOENT);
	/* io_uring stays the preload's */
	EXPECT(err(syscall(SYS_io_uring_setup, 1, NULL)) != EXDEV);
	/* i386's getdents64 number is another call on x86-64 (semtimedop): not sent */
	EXPECT(err(syscall(220, 0, NULL, 0, NULL)) != EXDEV);
	/* rt_sigaction of SIGSYS (not from the preload's trampoline), and of no other signal */
	EXPECT(err(syscall(SYS_rt_sigaction, SIGSYS, NULL, k, 8)) == EXDEV);
	EXPECT(err(syscall(SYS_rt_sigaction, SIGUSR1, NULL, k, 8)) == 0);
	/* x32's calls: ENOSYS from the filter, so no listing or open escapes it */
	EXPECT(err(syscall(0x40000000 | SYS_getdents64, 0, buf, sizeof(buf))) == ENOSYS);
	EXPECT(err(syscall(0x40000000 | SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY)) == ENOSYS);
	return 0;
}

/* In a forked child: the filter by build(), answered by another thread; run(): 0 or a line. */
static void run_filtered(int (*build)(struct sock_filter *), int (*run)(void))
{
	int st;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sock_filter f[SV_FILTER_MAX];
		int n = build(f);
		struct sock_fprog fp = { .len = (unsigned short)n, .filter = f };
		pthread_t t;

		if (n <= 0 || pthread_create(&t, NULL, answer, NULL) ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(200);
		/* this thread only (no TSYNC): the answering thread stays outside */
		listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
					SECCOMP_FILTER_FLAG_NEW_LISTENER, &fp);
		if (listener < 0)
			_exit(201);
		_exit(run());
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	/* the failing check's line in run(), 0 when all held */
	assert_int_equal(WEXITSTATUS(st), 0);
}

/*
 * The filter run on seccomp_data d, as the kernel runs it (the classic BPF
 * the builders emit: loads of d's words, jumps on constants, returns):
 * its return value. The instruction pointer cannot be chosen by a real
 * call in a sanitized build (its shadow memory lies at the trampoline's
 * address), so the rules on it are checked here.
 */
static uint32_t run_bpf(const struct sock_filter *f, int n, const struct seccomp_data *d)
{
	uint32_t acc = 0;

	for (int pc = 0; pc < n; pc++) {
		const struct sock_filter *i = &f[pc];

		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
			memcpy(&acc, (const char *)d + i->k, sizeof(acc));
			break;
		case BPF_RET:
			return i->k;
		case BPF_JMP:
			if (BPF_OP(i->code) == BPF_JA)
				pc += (int)i->k;
			else if (BPF_OP(i->code) == BPF_JEQ)
				pc += acc == i->k ? i->jt : i->jf;
			else if (BPF_OP(i->code) == BPF_JGE)
				pc += acc >= i->k ? i->jt : i->jf;
			else
				fail();
			break;
		default:
			fail();
		}
	}
	fail();
	return 0;
}

static void test_dirs_filter_ip(void **state)
{
	static const int looks[] = { SYS_stat, SYS_lstat, SYS_newfstatat, SYS_statx, SYS_access,
				     SYS_faccessat, SYS_faccessat2, SYS_readlink, SYS_readlinkat };
	struct sock_filter f[SV_FILTER_MAX];
	int n = sv_dirs_filter_build(f);
	struct seccomp_data d = { .arch = AUDIT_ARCH_X86_64, .args = { (uint64_t)AT_FDCWD } };

	(void)state;
	assert_true(n > 0);
	for (unsigned i = 0; i < sizeof(looks) / sizeof(looks[0]); i++) {
		d.nr = looks[i];
		/* the preload's own look, once it has judged the path: runs */
		d.instruction_pointer = PL_TRAMP_ADDR + 16;
		assert_int_equal(run_bpf(f, n, &d), SECCOMP_RET_ALLOW);
		d.instruction_pointer = PL_TRAMP_ADDR + PL_TRAMP_LEN - 1;
		assert_int_equal(run_bpf(f, n, &d), SECCOMP_RET_ALLOW);
		/* anywhere else (past the page, below it, the program's text): the supervisor's */
		d.instruction_pointer = PL_TRAMP_ADDR + PL_TRAMP_LEN;
		assert_int_equal(run_bpf(f, n, &d), SECCOMP_RET_USER_NOTIF);
		d.instruction_pointer = PL_TRAMP_ADDR - 1;
		assert_int_equal(run_bpf(f, n, &d), SECCOMP_RET_USER_NOTIF);
		d.instruction_pointer = 0x401000;
		assert_int_equal(run_bpf(f, n, &d), SECCOMP_RET_USER_NOTIF);
		d.instruction_pointer = (PL_TRAMP_ADDR + 16) | (1ull << 44);
		assert_int_equal(run_bpf(f, n, &d), SECCOMP_RET_USER_NOTIF);
	}
	/* from the trampoline, an open is the supervisor's all the same */
	d.nr = SYS_openat;
	d.instruction_pointer = PL_TRAMP_ADDR + 16;
	assert_int_equal(run_bpf(f, n, &d), SECCOMP_RET_USER_NOTIF);
	/*
	 * and the static program's filter sends every look, wherever it is
	 * made (a static program has no trampoline: a page it maps there is
	 * its own), on any descriptor (a path, or fstat of a number of ours)
	 */
	n = sv_filter_build(f);
	assert_true(n > 0);
	for (unsigned i = 0; i < sizeof(looks) / sizeof(looks[0]); i++) {
		d.nr = looks[i];
		d.args[0] = (uint64_t)AT_FDCWD;
		d.instruction_pointer = 0x401000;
		assert_int_equal(run_bpf(f, n, &d), SECCOMP_RET_USER_NOTIF);
		d.instruction_pointer = PL_TRAMP_ADDR + 16;
		assert_int_equal(run_bpf(f, n, &d), SECCOMP_RET_USER_NOTIF);
		d.args[0] = 3;
		assert_int_equal(run_bpf(f, n, &d), SECCOMP_RET_USER_NOTIF);
	}
}

static void test_filter(void **state)
{
	(void)state;
	run_filtered(sv_filter_build, calls);
}

static void test_dirs_filter(void **state)
{
	(void)state;
	run_filtered(sv_dirs_filter_build, dirs_calls);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_dirs_filter),
		cmocka_unit_test(test_dirs_filter_ip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
