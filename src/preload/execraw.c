/* SPDX-License-Identifier: MIT */
/*
 * The execve and execveat system calls of a preloaded program, whoever
 * makes them: the program's own instruction (the seccomp filter traps
 * both, seccomp.c), libc's syscall(), and libc's own call sites (its
 * execve, which posix_spawn, execvp and system() reach without a symbol we
 * interpose, and execveat), taken over in the constructor so that they are
 * a function call and not a trap: posix_spawn's child runs with every
 * signal handler reset, where a trap would kill it.
 *
 * Each is judged as execguard.c judges libc's exec family (a static or
 * 32-bit program, which no preload would reach, is EACCES with the reason
 * on stderr), then made through the trampoline with the preload's
 * environment kept: LD_PRELOAD naming this library, UCMD_DAEMON,
 * UCMD_EXEC_ROOT, UCMD_EXEC_TRACE, UCMD_EXEC_VIEW and the filter's mark are put back into
 * the new image's environment if the program left them out (`env -i`, an
 * environment built by hand), and this library is put first in an
 * LD_PRELOAD that does not name it, since an image without them would see
 * the host's /dev and /sys and die of SIGSYS on io_uring. A value the
 * program gave one of them is its own (a nested `ucmd exec` names its own
 * daemon; a wrong one makes the new image fail closed), and so is the
 * rest of the environment.
 *
 * The program's arguments are read with process_vm_readv on ourselves (a
 * bad pointer is EFAULT, never a fault here), and nothing is allocated
 * with malloc: this runs in vfork children, which share their parent's
 * memory.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "preload/callsite.h"
#include "preload/preload.h"

#define PL_ENV_SECCOMP_MARK "UCMD_PRELOAD_SECCOMP"	/* seccomp.c's */
#define ENV_MAX (1u << 20)	/* entries: far above what ARG_MAX lets through */
#define LDP_MAX 8192

/* What the constructor saw: the values every exec'd image gets back. */
static char lib_path[PATH_MAX];
static char *keep[5];		/* "NAME=value" of the variables below, or NULL */
static const char *const keep_names[5] = {
	PL_ENV_DAEMON, PL_ENV_TRACE, PL_ENV_SECCOMP_MARK, PL_ENV_ROOT, PL_ENV_VIEW,
};

/* n bytes at src of our own memory, as the kernel would read them: bytes read or -EFAULT. */
static long self_read(void *dst, const void *src, size_t n)
{
	struct iovec l = { dst, n }, r = { (void *)src, n };
	long pid = pl_raw_syscall(__NR_getpid, 0, 0, 0, 0, 0, 0);
	long got = pl_raw_syscall(__NR_process_vm_readv, pid, (long)&l, 1, (long)&r, 1, 0);

	return got < 0 ? -EFAULT : got;
}

/* The string at s into buf (max bytes with its NUL): its length, -ENAMETOOLONG or -EFAULT. */
static long self_str(const char *s, char *buf, size_t max)
{
	size_t got = 0;

	while (got < max) {
		size_t n = 4096 - (((uintptr_t)s + got) & 4095);
		long r;
		char *nul;

		if (n > max - got)
			n = max - got;
		r = self_read(buf + got, s + got, n);
		if (r <= 0)
			return -EFAULT;
		nul = memchr(buf + got, 0, (size_t)r);
		if (nul)
			return nul - buf;
		got += (size_t)r;
	}
	return -ENAMETOOLONG;
}

/* Is our library one of the names in an LD_PRELOAD value (colons or spaces between)? */
static bool names_lib(const char *v)
{
	size_t len = strlen(lib_path);

	while (*v) {
		size_t n = strcspn(v, ": ");

		if (n == len && !memcmp(v, lib_path, len))
			return true;
		v += n;
		v += strspn(v, ": ");
	}
	return false;
}

/* Is env entry e (its first bytes in head) the variable name=...? */
static bool is_var(const char *head, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(head, name, n) && head[n] == '=';
}

/* Room for the strings build_env makes, after the array (not on the stack: a spawn child's is small). */
struct env_room {
	char ldp[LDP_MAX + PATH_MAX + 16];	/* LD_PRELOAD=ours[:theirs] */
	char val[LDP_MAX];			/* theirs */
	char root[PATH_MAX + 32];		/* UCMD_EXEC_ROOT=... */
};

/*
 * The environment the new image gets: the program's envp with ours put
 * back, in out (mmap'ed with room for its strings; *len its bytes to
 * unmap). 0 or -errno.
 */
static int build_env(char *const *envp, char ***out, size_t *len)
{
	char head[64], *p, **v, *ldp, *root;
	size_t n = 0, k = 0, size;
	const char *r = getenv(PL_ENV_ROOT);
	struct env_room *room;
	bool have_ldp = false, seen[5] = { false };

	/* count, without trusting the array */
	for (; envp; n++) {
		if (n >= ENV_MAX)
			return -E2BIG;
		if (self_read(&p, &envp[n], sizeof(p)) != sizeof(p))
			return -EFAULT;
		if (!p)
			break;
	}
	size = sizeof(*room) + (n + 8) * sizeof(char *);
	room = (struct env_room *)pl_raw_syscall(__NR_mmap, 0, (long)size, PROT_READ | PROT_WRITE,
						 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((long)room < 0 && (long)room > -4096)
		return (int)(long)room;
	*len = size;
	*out = v = (char **)(room + 1);
	ldp = room->ldp;
	root = room->root;
	if (!r || (size_t)snprintf(root, sizeof(room->root), "%s=%s", PL_ENV_ROOT, r) >=
			  sizeof(room->root))
		root[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		bool drop = false;
		long l;

		if (self_read(&p, &envp[i], sizeof(p)) != sizeof(p))
			return -EFAULT;
		l = self_str(p, head, sizeof(head));
		if (l == -EFAULT)
			return -EFAULT;
		if (l < 0)
			head[sizeof(head) - 1] = '\0';
		for (unsigned j = 0; j < 5; j++)
			if (is_var(head, keep_names[j]))
				seen[j] = true;
		if (is_var(head, "LD_PRELOAD") && !have_ldp) {
			char *val = room->val;

			have_ldp = true;
			drop = true;
			l = self_str(p, val, sizeof(room->val));
			if (l >= 0 && names_lib(val + 11)) {
				drop = false;
			} else if (l >= 0 && val[11]) {
				if ((size_t)snprintf(ldp, sizeof(room->ldp), "LD_PRELOAD=%s:%s",
						     lib_path, val + 11) >= sizeof(room->ldp))
					snprintf(ldp, sizeof(room->ldp), "LD_PRELOAD=%s", lib_path);
				v[k++] = ldp;
			} else {
				snprintf(ldp, sizeof(room->ldp), "LD_PRELOAD=%s", lib_path);
				v[k++] = ldp;
			}
		}
		if (!drop)
			v[k++] = p;
	}
	if (!have_ldp) {
		snprintf(ldp, sizeof(room->ldp), "LD_PRELOAD=%s", lib_path);
		v[k++] = ldp;
	}
	for (unsigned j = 0; j < 5; j++)
		if (j != 3 && keep[j] && !seen[j])	/* the root's is made here, below */
			v[k++] = keep[j];
	if (root[0] && !seen[3])
		v[k++] = root;
	v[k] = NULL;
	return 0;
}

long pl_exec_syscall(long nr, const long a[6])
{
	bool at = nr == __NR_execveat;
	const char *path = (const char *)a[at ? 1 : 0];
	char *const *envp = (char *const *)a[at ? 3 : 2];
	char fdpath[64], c;
	char **env = NULL;
	size_t len = 0;
	long ret;
	int err;

	if (at && (a[4] & AT_EMPTY_PATH) && self_read(&c, path, 1) == 1 && !c) {
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", (int)a[0]);
		err = pl_exec_check(AT_FDCWD, fdpath, false);
	} else {
		err = pl_exec_check(at ? (int)a[0] : AT_FDCWD, path, false);
	}
	if (err)
		return -err;
	if (!lib_path[0])	/* no constructor ran: nothing to keep */
		return pl_raw_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	ret = build_env(envp, &env, &len);
	if (ret) {
		if (len)
			pl_raw_syscall(__NR_munmap, (long)env - (long)sizeof(struct env_room),
				       (long)len, 0, 0, 0, 0);
		return ret;
	}
	/* the device locks Linux's exec keeps: their descriptors survive it */
	pl_devlock_exec();
	if (at)
		ret = pl_raw_syscall(nr, a[0], a[1], a[2], (long)env, a[4], 0);
	else
		ret = pl_raw_syscall(nr, a[0], a[1], (long)env, 0, 0, 0);
	pl_devlock_exec_failed();
	pl_raw_syscall(__NR_munmap, (long)env - (long)sizeof(struct env_room), (long)len, 0, 0, 0,
		       0);
	return ret;
}

/* The syscall instruction of libc's function fn (a wrapper); 0 if none. */
static uintptr_t libc_site(const char *fn)
{
	const uint8_t *p = dlsym(RTLD_NEXT, fn);
	struct pl_insn in;
	size_t off = 0;

	if (!p)
		return 0;
	/* a wrapper: the syscall is among its first few instructions */
	while (off < 32) {
		if (pl_insn_decode(p + off, 32 - off + 16, &in) < 0)
			return 0;
		if (in.len == 2 && p[off] == 0x0f && p[off + 1] == 0x05)
			return (uintptr_t)(p + off);
		off += in.len;
	}
	return 0;
}

void pl_exec_init(void)
{
	Dl_info di;

	if (dladdr((void *)pl_exec_init, &di) && di.dli_fname && di.dli_fname[0] == '/')
		snprintf(lib_path, sizeof(lib_path), "%s", di.dli_fname);
	for (unsigned j = 0; j < 5; j++) {
		const char *v = j == 3 ? NULL : getenv(keep_names[j]);

		if (v && asprintf(&keep[j], "%s=%s", keep_names[j], v) < 0)
			keep[j] = NULL;
	}
	/* libc's own sites: a call from here on, never a trap (posix_spawn's child) */
	static const struct { const char *fn; long nr; } sites[] = {
		{ "execve", __NR_execve }, { "execveat", __NR_execveat },
	};
	for (unsigned i = 0; i < 2; i++) {
		uintptr_t sc = libc_site(sites[i].fn);
		int ret = sc ? pl_cs_take_over(sc + 2, sites[i].nr) : -ENOENT;

		if (ret)
			pl_trace("libc's %s stays on the trap: %s (a posix_spawn child would die "
				 "of SIGSYS)", sites[i].fn, strerror(-ret));
	}
}
