/* SPDX-License-Identifier: MIT */
/*
 * execve/execveat through libc from a preloaded program (a shell, make, a
 * test runner):
 * the new image is preloaded again only if the dynamic linker loads it. A
 * statically linked or 32-bit program is not, so it would open the host's
 * real /dev/nvme* and /sys; and the seccomp filter it inherits traps its
 * io_uring calls with no handler to serve them (SIGSYS). Such an exec is
 * refused with EACCES and a line on stderr saying why, as `ucmd exec`
 * refuses the same program given to it directly (tools/ucmd/exec_check.c).
 *
 * The exec family and posix_spawn are interposed (glibc's own execvp,
 * execl* and posix_spawn call its internal execve, which no symbol
 * catches): each judges the file it will run first, with a line that
 * names the program. The system calls themselves, whoever makes them, are
 * execraw.c's (judged again there, and the environment kept). The file is
 * read with raw system calls, so
 * that a path is the kernel's, not paths.c's. What is judged is the file at
 * the moment of the check; a program racing its own exec against a rename
 * can get past it (the preload does not guard against the program it
 * serves).
 *
 * Set-user-ID programs need nothing here: the filter set no_new_privs, so
 * they run without their privilege and with the preload.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/preload.h"

#define PATH_LEN 4096

static int raw_open(int dirfd, const char *path)
{
	return (int)pl_raw_syscall(__NR_openat, dirfd, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
}

static long raw_pread(int fd, void *buf, size_t len, off_t off)
{
	return pl_raw_syscall(__NR_pread64, fd, (long)buf, (long)len, (long)off, 0, 0);
}

static void raw_close(int fd)
{
	pl_raw_syscall(__NR_close, fd, 0, 0, 0, 0, 0);
}

static const char *judge_fd(int fd, char *interp, size_t ilen, int depth)
{
	unsigned char buf[256];
	Elf64_Ehdr eh;
	long n = raw_pread(fd, buf, sizeof(buf) - 1, 0);

	if (n < 4)
		return NULL;	/* the kernel says what is wrong with it */
	buf[n] = '\0';
	if (buf[0] == '#' && buf[1] == '!') {
		char *s = (char *)buf + 2, *e;
		const char *why;
		int ifd;

		if (depth)
			return NULL;	/* an interpreter that is a script: ENOEXEC is the kernel's */
		s += strspn(s, " \t");
		e = s + strcspn(s, " \t\n");
		*e = '\0';
		if (!*s || (size_t)(e - s) >= ilen)
			return NULL;
		memcpy(interp, s, (size_t)(e - s) + 1);
		ifd = raw_open(AT_FDCWD, interp);
		if (ifd < 0)
			return NULL;
		why = judge_fd(ifd, interp, ilen, 1);
		raw_close(ifd);
		return why;
	}
	if (memcmp(buf, ELFMAG, SELFMAG))
		return NULL;	/* binfmt_misc and friends: nothing to judge */
	if (buf[EI_CLASS] != ELFCLASS64)
		return "it is a 32-bit program (the preload library is 64-bit)";
	if ((size_t)n < sizeof(eh))
		return NULL;
	memcpy(&eh, buf, sizeof(eh));
	if (eh.e_phentsize != sizeof(Elf64_Phdr))
		return NULL;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (raw_pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    (long)sizeof(ph))
			return NULL;
		if (ph.p_type == PT_INTERP)
			return NULL;
	}
	return "it is statically linked (no dynamic linker loads the preload)";
}

/* Why file (as execve would open it, relative to dirfd) may not run here; NULL if it may. */
static const char *judge_path(int dirfd, const char *file, char *interp, size_t ilen)
{
	const char *why;
	int fd = raw_open(dirfd, file);

	if (fd < 0)
		return NULL;	/* the real call fails as it will */
	why = judge_fd(fd, interp, ilen, 0);
	raw_close(fd);
	return why;
}

/* execvp's search: file if it has a slash, else the first executable in $PATH; NULL if none. */
static const char *search(const char *file, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(file, '/'))
		return file;
	if (!path)
		path = "/bin:/usr/bin";	/* glibc's default */
	for (p = path; ; p = end + 1) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		if (snprintf(out, len, "%.*s%s%s", (int)(end - p), p, end > p ? "/" : "", file) <
		    (int)len && !pl_raw_syscall(__NR_faccessat, AT_FDCWD, (long)out, X_OK, 0, 0, 0))
			return out;
		if (!*end)
			return NULL;
	}
}

/* 0 if the exec may go on, else EACCES with the reason on stderr. */
int pl_exec_check(int dirfd, const char *file, bool path_search)
{
	char interp[PATH_LEN] = "", found[PATH_LEN], line[3 * PATH_LEN];
	const char *why, *f = file;
	int len;

	if (path_search && !(f = search(file, found, sizeof(found))))
		return 0;
	why = judge_path(dirfd, f, interp, sizeof(interp));
	if (!why)
		return 0;
	len = snprintf(line, sizeof(line), "ucmd exec: refusing to run %s%s%s: %s, so it could "
		       "not reach ucmd's devices and would see the host's /dev and /sys\n", f,
		       *interp ? ", whose interpreter is " : "", interp, why);
	if (len > (int)sizeof(line))
		len = (int)sizeof(line);
	pl_raw_syscall(__NR_write, 2, (long)line, len, 0, 0, 0);
	pl_trace("exec of %s refused: %s", f, why);
	return EACCES;
}

static int refuse(int err)
{
	errno = err;
	return -1;
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvp_fn)(const char *, char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]);

PL_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	int err = pl_exec_check(AT_FDCWD, path, false);

	return err ? refuse(err) : ((execve_fn)pl_next("execve"))(path, argv, envp);
}

PL_EXPORT int execv(const char *path, char *const argv[])
{
	int err = pl_exec_check(AT_FDCWD, path, false);

	return err ? refuse(err) : ((execvp_fn)pl_next("execv"))(path, argv);
}

PL_EXPORT int execvp(const char *file, char *const argv[])
{
	int err = pl_exec_check(AT_FDCWD, file, true);

	return err ? refuse(err) : ((execvp_fn)pl_next("execvp"))(file, argv);
}

PL_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	int err = pl_exec_check(AT_FDCWD, file, true);

	return err ? refuse(err) : ((execvpe_fn)pl_next("execvpe"))(file, argv, envp);
}

PL_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		       int flags)
{
	char fdpath[64];
	int err;

	if ((flags & AT_EMPTY_PATH) && !*path) {
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", dirfd);
		err = pl_exec_check(AT_FDCWD, fdpath, false);
	} else {
		err = pl_exec_check(dirfd, path, false);
	}
	return err ? refuse(err) : ((execveat_fn)pl_next("execveat"))(dirfd, path, argv, envp,
								       flags);
}

PL_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	char fdpath[64];
	int err;

	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	err = pl_exec_check(AT_FDCWD, fdpath, false);
	return err ? refuse(err) : ((fexecve_fn)pl_next("fexecve"))(fd, argv, envp);
}

/* execl, execle, execlp: their arguments as an array (execle's envp after the NULL). */
static char **collect(const char *arg0, va_list ap, char ***envp)
{
	size_t n = 1, cap = 16;
	char **v = malloc(cap * sizeof(*v)), *a;

	if (!v)
		return NULL;
	v[0] = (char *)arg0;
	do {
		a = va_arg(ap, char *);
		if (n == cap) {
			char **nv = realloc(v, (cap *= 2) * sizeof(*v));

			if (!nv) {
				free(v);
				return NULL;
			}
			v = nv;
		}
		v[n++] = a;
	} while (a);
	if (envp)
		*envp = va_arg(ap, char **);
	return v;
}

enum exec_list { EXEC_L, EXEC_LP, EXEC_LE };

/* The list gathered into an array and handed to execv, execvp or execve (checked there). */
static int exec_list(const char *path, const char *arg, va_list ap, enum exec_list how)
{
	char **v, **envp = NULL;
	int ret;

	v = collect(arg, ap, how == EXEC_LE ? &envp : NULL);
	if (!v)
		return refuse(ENOMEM);
	if (how == EXEC_LP)
		ret = execvp(path, v);
	else if (how == EXEC_LE)
		ret = execve(path, v, envp);
	else
		ret = execv(path, v);
	free(v);
	return ret;
}

PL_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg);
	ret = exec_list(path, arg, ap, EXEC_L);
	va_end(ap);
	return ret;
}

PL_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg);
	ret = exec_list(file, arg, ap, EXEC_LP);
	va_end(ap);
	return ret;
}

PL_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg);
	ret = exec_list(path, arg, ap, EXEC_LE);
	va_end(ap);
	return ret;
}

/* posix_spawn returns the error number; its child never reports back through errno. */
PL_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
	int err = pl_exec_check(AT_FDCWD, path, false);

	return err ? err : ((spawn_fn)pl_next("posix_spawn"))(pid, path, fa, at, argv, envp);
}

PL_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
	int err = pl_exec_check(AT_FDCWD, file, true);

	return err ? err : ((spawn_fn)pl_next("posix_spawnp"))(pid, file, fa, at, argv, envp);
}
