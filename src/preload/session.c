/* SPDX-License-Identifier: MIT */
/*
 * The preload's session: one connection to ucmdd per process. The daemon
 * knows a client by its socket's peer (SO_PEERCRED: pid, uid, groups) and
 * reads and writes its memory by that pid, so a forked child must never
 * speak on its parent's connection: after fork the child drops it (closes
 * its copy of the socket, leaves the parent's objects alone) and connects
 * anew on first use, then re-opens every device fd it inherited at the same
 * numbers (fdmap.c). An exec'd image finds its inherited device fds by
 * their placeholder paths (fdmap.c) the same way.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "client/client.h"
#include "core/backend.h"
#include "preload/preload.h"
#include "ucmd/daemon.h"

static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t self_pid;
static struct ucmd_engine *_Atomic session_engine;
static pid_t session_pid;
static char root_path[4096];
static int trace_fd = -1;

void *pl_next(const char *sym)
{
	void *p = dlsym(RTLD_NEXT, sym);

	if (!p) {
		static const char msg[] = "libucmd-preload: a libc symbol is missing\n";

		/* nothing to fall back on: an interposer with no next definition cannot work */
		if (write(2, msg, sizeof(msg) - 1) < 0) {
		}
		abort();
	}
	return p;
}

pid_t pl_pid(void)
{
	pid_t p = __atomic_load_n(&self_pid, __ATOMIC_RELAXED);

	if (!p) {
		p = getpid();
		__atomic_store_n(&self_pid, p, __ATOMIC_RELAXED);
	}
	return p;
}

int pl_copy_in(void *dst, const void *src, size_t len)
{
	struct iovec l = { dst, len }, r = { (void *)src, len };

	return process_vm_readv(pl_pid(), &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

int pl_copy_out(void *dst, const void *src, size_t len)
{
	struct iovec l = { (void *)src, len }, r = { dst, len };

	return process_vm_writev(pl_pid(), &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

bool pl_tracing(void)
{
	return trace_fd >= 0;
}

void pl_trace(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	if (trace_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "ucmd exec[%d]: ", (int)getpid());
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* one write: lines of several processes do not interleave */
	if (write(trace_fd, line, (size_t)n) < 0) {
	}
}

/*
 * UCMD_EXEC_TRACE=PATH is opened by whatever program runs preloaded, root's
 * included, so a name another user could plant must not redirect root's
 * lines into root's files: the last component is never followed
 * (O_NOFOLLOW, relative to its directory), and in a directory others may
 * write (/tmp) an existing file must be ours or the directory owner's, with
 * one link. That is what fs.protected_symlinks, protected_regular and
 * protected_hardlinks enforce when they are set; here it holds whatever the
 * sysctls say. Symlinks above the last component are the kernel's walk.
 * Returns the descriptor or -errno, and in *why what was refused.
 */
static int trace_open_path(const char *path, const char **why)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	char dir[4096];
	struct stat ds, sb;
	int dfd, fd, fl;
	bool shared;

	*why = NULL;
	if (!*base)
		return -EISDIR;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fstat(dfd, &ds) < 0) {
		fd = -errno;
		close(dfd);
		return fd;
	}
	/* O_NONBLOCK: a FIFO without a reader is ENXIO, not a program stuck in its constructor */
	fd = openat(dfd, base, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		    0600);
	if (fd < 0) {
		fd = -errno;
		/* O_CREAT on a symlink can be EACCES rather than ELOOP (in a sticky directory) */
		if (fd == -ELOOP || (!fstatat(dfd, base, &sb, AT_SYMLINK_NOFOLLOW) &&
				     S_ISLNK(sb.st_mode)))
			*why = "a symbolic link: not followed";
		close(dfd);
		return fd;
	}
	close(dfd);
	shared = ds.st_mode & (S_IWGRP | S_IWOTH);
	if (fstat(fd, &sb) < 0)
		*why = "cannot fstat it";
	else if (!S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode) && !S_ISCHR(sb.st_mode))
		*why = "not a regular file, FIFO or character device";
	else if (shared && sb.st_uid != geteuid() && sb.st_uid != ds.st_uid)
		*why = "another user's file in a directory others may write: not written to";
	else if (shared && S_ISREG(sb.st_mode) && sb.st_nlink != 1)
		*why = "a file with several links in a directory others may write: not written to";
	else if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		*why = "cannot make it blocking";
	if (*why) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

static void trace_open(void)
{
	const char *t = getenv(PL_ENV_TRACE), *why;
	char msg[4400];
	int fd, n;

	if (!t || !*t || !strcmp(t, "0"))
		return;
	if (!strcmp(t, "1")) {
		trace_fd = fcntl(2, F_DUPFD_CLOEXEC, 100);
		return;
	}
	fd = trace_open_path(t, &why);
	if (fd >= 0) {
		trace_fd = fd;
		return;
	}
	/* the program runs on; the one who asked for a trace learns why there is none */
	n = snprintf(msg, sizeof(msg), "libucmd-preload: %s=%s: %s; not tracing\n", PL_ENV_TRACE,
		     t, why ? why : strerror(-fd));
	if (n > 0 && write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1) < 0) {
	}
}

/* In the child of fork(): the parent's connection stays the parent's. */
static void session_atfork_child(void)
{
	struct ucmd_engine *e = atomic_load(&session_engine);

	pthread_mutex_init(&session_lock, NULL);
	__atomic_store_n(&self_pid, 0, __ATOMIC_RELAXED);
	if (e && ucmd_engine_is_daemon(e)) {
		struct dclient *dc = backend_engine_priv(e);

		/*
		 * Only our copy of the socket goes; the engine object is left
		 * as it is (freeing it would tell the daemon to tear down the
		 * parent's rings on the parent's behalf).
		 */
		close(dc->sock);
		dc->sock = -1;
	}
	atomic_store(&session_engine, NULL);
	session_pid = 0;
	pl_uring_forked();
}

int pl_fd_move_high(int fd)
{
	int hi;

	if (fd < 0 || fd >= PL_HIGH_FD_MIN)
		return fd;
	hi = (int)pl_raw_syscall(__NR_fcntl, fd, F_DUPFD_CLOEXEC, PL_HIGH_FD_MIN, 0, 0, 0);
	if (hi < 0)
		return fd;
	pl_raw_syscall(__NR_close, fd, 0, 0, 0, 0, 0);
	return hi;
}

/*
 * The connection's socket, made at the lowest free number, is moved out of
 * the program's way: a program that takes a low number it believes free
 * (a shell's `exec 3<>FILE` moves what holds 3 aside, dup2 onto it) would
 * otherwise cut the preload off the daemon.
 */
static void move_socket_high(struct ucmd_engine *e)
{
	struct dclient *dc;

	if (!ucmd_engine_is_daemon(e))
		return;
	dc = backend_engine_priv(e);
	dc->sock = pl_fd_move_high(dc->sock);
}

struct ucmd_engine *pl_engine(void)
{
	struct ucmd_engine *e = atomic_load_explicit(&session_engine, memory_order_acquire);
	const char *path;
	int ret;

	if (e)
		return e;
	pthread_mutex_lock(&session_lock);
	e = atomic_load(&session_engine);
	if (e)
		goto out;
	path = getenv(PL_ENV_DAEMON);
	if (!path || !*path) {
		pthread_mutex_unlock(&session_lock);
		errno = ENOTCONN;
		return NULL;
	}
	ret = ucmd_engine_connect(path, &e);
	if (ret) {
		pthread_mutex_unlock(&session_lock);
		pl_trace("cannot connect to ucmdd at %s: %s", path, strerror(-ret));
		errno = ret == -ENOENT || ret == -ECONNREFUSED ? ENOTCONN : -ret;
		return NULL;
	}
	session_pid = getpid();
	move_socket_high(e);
	/* the descriptors this image inherited (fork, exec) become the daemon's too */
	pl_fdmap_reopen(e);
	atomic_store_explicit(&session_engine, e, memory_order_release);
out:
	pthread_mutex_unlock(&session_lock);
	return e;
}

const char *pl_root(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static _Atomic bool ready;
	const char *r;
	char ready_path[4200];
	int ret = 0;

	if (atomic_load_explicit(&ready, memory_order_acquire))
		return root_path;
	/* no daemon, no devices: nothing to build, and no directory left behind */
	if (!getenv(PL_ENV_DAEMON)) {
		errno = ENOTCONN;
		return NULL;
	}
	pthread_mutex_lock(&lock);
	if (atomic_load(&ready))
		goto out;
	r = getenv(PL_ENV_ROOT);
	if (r && *r) {
		snprintf(root_path, sizeof(root_path), "%s", r);
	} else {
		/* LD_PRELOAD by hand: a private tree, and children inherit its name */
		char tmpl[] = "/tmp/ucmd-exec.XXXXXX";

		if (!mkdtemp(tmpl)) {
			pthread_mutex_unlock(&lock);
			return NULL;
		}
		snprintf(root_path, sizeof(root_path), "%s", tmpl);
		setenv(PL_ENV_ROOT, root_path, 1);
	}
	snprintf(ready_path, sizeof(ready_path), "%s/.ready", root_path);
	/*
	 * EACCES: ucmd exec's tree, which ucmd-supervise built before the
	 * program started, in the exec's private directory, which this
	 * process, dropped to another user since, cannot search: the name is
	 * still right, and where.c has the supervisor answer what is in it
	 */
	if (access(ready_path, F_OK) && !(errno == EACCES && r && *r))
		ret = pl_sysfs_build(root_path);
	if (ret) {
		pl_trace("cannot build the device tree in %s: %s", root_path, strerror(-ret));
		pthread_mutex_unlock(&lock);
		errno = -ret;
		return NULL;
	}
	/* mapped now, while the tree is this process's to reach: a thread that drops later still asks it */
	pl_ctl_map();
	atomic_store_explicit(&ready, true, memory_order_release);
out:
	pthread_mutex_unlock(&lock);
	return root_path;
}

__attribute__((constructor)) static void session_init(void)
{
	trace_open();
	pthread_atfork(NULL, NULL, session_atfork_child);
	if (!getenv(PL_ENV_DAEMON))
		return;
	pl_view_init();
	pl_fdmap_recover();
	pl_devlock_recover();
	if (pl_seccomp_install())
		pl_trace("io_uring system calls made without libc are not caught");
}
