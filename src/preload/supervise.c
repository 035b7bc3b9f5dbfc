/* SPDX-License-Identifier: MIT */
/*
 * ucmd-supervise --daemon SOCKET [--trace] -- PROGRAM [ARGS...]
 * ucmd-supervise --daemon SOCKET --dirs --preload LIST [--trace] -- PROGRAM [ARGS...]
 *
 * What `ucmd exec` runs for a statically linked PROGRAM (sv.h): the
 * program is our child, started under a seccomp filter that sends us the
 * calls that may name ucmd's devices; we serve them until it exits, and
 * exit with its status (128+N when signal N ended it). Its looks at /dev
 * and /sys (stat, access, readlink, opens of /sys, listings) are answered
 * from the tree a dynamic program's preload answers from, built here with
 * the preload's code (sv_pl.c), so both see one /dev and one /sys.
 *
 * With --dirs, what `ucmd exec` runs for a dynamically linked one: the
 * program starts with LD_PRELOAD=LIST (the preload serves its libc calls)
 * and under a filter that sends us its getdents64 and getdents calls, which a program
 * may make with its own instruction (Go's runtime never calls libc for
 * them): /dev lists ucmd's devices whoever asks (sv_dirs.c); its opens
 * (open, openat, creat, whoever makes them: the filter cannot tell libc's
 * instruction from the program's), made here as a static program's, so
 * that Go's os.Open of /dev/ng0n1 gets ucmd's device (a descriptor of
 * ours, SV_FD_BASE.., whose calls come here as a static program's) and
 * never the host's node; and its
 * rt_sigaction calls of SIGSYS, recorded and not made, so that the
 * preload's handler stays (sv_sigsys.c). A filter
 * rather than the preload's SIGSYS trap, because a process whose SIGSYS
 * handler is not the preload's (Go's runtime installs its own) would die
 * listing any directory. Once we have taken a call, only a fatal signal
 * cuts the program's wait short (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV):
 * the listing has moved the directory's position by then, and a restarted
 * call would miss those entries. i386 and x32 getdents calls are ENOSYS.
 *
 * The filter (x86-64 only; any other system call ABI -- int 0x80, x32 --
 * is ENOSYS, so that no call escapes it):
 *
 *   open, openat, creat, io_uring_setup/enter/register,
 *   getdents64, getdents, execve, execveat (noted)        always
 *   ioctl, close, read, write, pread64, pwrite64, readv,
 *   writev, preadv, pwritev, preadv2, pwritev2, fsync,
 *   fdatasync, lseek, fstat, newfstatat, statx            on numbers SV_FD_BASE..
 *   mmap                                                  on those numbers
 *   dup2, dup3                                            onto those numbers
 *   openat2                                               ENOSYS (libc falls back)
 *   stat, lstat, newfstatat, statx, access, faccessat,
 *   faccessat2, readlink, readlinkat                      always (a static program:
 *                                                         sv_stat.c answers from the
 *                                                         tree); --dirs: unless from
 *                                                         the preload's trampoline
 *
 * Everything else runs as it would. The filter stays on whatever the
 * program execs and forks; when we are gone its trapped calls fail (ENOSYS).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ucmd/daemon.h>

#include "preload/preload.h"
#include "preload/sv.h"

#define MAX_NAMES ((int)SV_MAX_NAMES)

static struct sv sv;
static pid_t child;

void sv_trace(struct sv *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->trace)
		return;
	fprintf(stderr, "ucmd exec[%d]: ", (int)s->pid);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool sv_id_valid(struct sv *s, uint64_t id)
{
	return ioctl(s->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* ---- the program ---- */

/* One byte with room for one descriptor (SCM_RIGHTS): what send_fd and recv_fd pass. */
struct fd_msg {
	char c;
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m;
};

static struct msghdr *fd_msg_init(struct fd_msg *f)
{
	f->c = 0;
	f->iov = (struct iovec){ &f->c, 1 };
	f->m = (struct msghdr){ .msg_iov = &f->iov, .msg_iovlen = 1, .msg_control = f->u.buf,
				.msg_controllen = sizeof(f->u.buf) };
	return &f->m;
}

static int send_fd(int sock, int fd)
{
	struct fd_msg f;
	struct msghdr *m = fd_msg_init(&f);
	struct cmsghdr *cm = CMSG_FIRSTHDR(m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	struct fd_msg f;
	struct msghdr *m = fd_msg_init(&f);
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

static bool dirs_only;
static const char *preload_list;

/* In the child: the filter, its listener to the parent, then the program. Never returns. */
static void start_program(char **argv, int sock)
{
	struct sock_filter f[SV_FILTER_MAX];
	int n = dirs_only ? sv_dirs_filter_build(f) : sv_filter_build(f), listener = -1;
	struct sock_fprog fp = { .len = (unsigned short)n, .filter = f };

	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	if (n < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		fprintf(stderr, "ucmd exec: no_new_privs: %s\n", strerror(errno));
		_exit(126);
	}
	if (dirs_only)
		listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
					SECCOMP_FILTER_FLAG_NEW_LISTENER |
					SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &fp);
	if (listener < 0)	/* before Linux 5.19: a signal may cost a listing its entries */
		listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
					SECCOMP_FILTER_FLAG_NEW_LISTENER, &fp);
	if (listener < 0) {
		fprintf(stderr, "ucmd exec: the seccomp filter: %s\n", strerror(errno));
		_exit(126);
	}
	if (send_fd(sock, listener)) {
		fprintf(stderr, "ucmd exec: the supervisor is gone\n");
		_exit(126);
	}
	close(listener);
	close(sock);
	if (preload_list && setenv("LD_PRELOAD", preload_list, 1)) {
		fprintf(stderr, "ucmd exec: environment: %s\n", strerror(errno));
		_exit(126);
	}
	execvp(argv[0], argv);
	fprintf(stderr, "ucmd exec: %s: %s\n", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

/*
 * Placeholders of device fds: <dir>/dev/<name>, an empty directory opened
 * read-only, on which every data call fails by itself (read EISDIR; write,
 * fallocate EBADF; mmap ENODEV; sendfile, splice EINVAL). An O_PATH
 * descriptor would fail more plainly, but cannot be installed in another
 * process (SECCOMP_IOCTL_NOTIF_ADDFD takes no O_PATH file).
 */
static char *make_placeholders(void)
{
	const char *tmp = getenv("TMPDIR");
	char tmpl[PATH_MAX], *dev;

	snprintf(tmpl, sizeof(tmpl), "%s/ucmd-supervise.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpl) || asprintf(&dev, "%s/dev", tmpl) < 0 || mkdir(dev, 0700))
		return NULL;
	for (int i = 0; i < sv.nr_names; i++) {
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s/%s", dev, sv.names[i]);
		if (mkdir(p, 0500))
			return NULL;
	}
	return dev;
}

static void remove_placeholders(const char *dev)
{
	char p[PATH_MAX];

	if (!dev || !*dev)
		return;
	for (int i = 0; i < sv.nr_names; i++) {
		snprintf(p, sizeof(p), "%s/%s", dev, sv.names[i]);
		rmdir(p);
	}
	rmdir(dev);
	snprintf(p, sizeof(p), "%s", dev);
	*strrchr(p, '/') = '\0';
	rmdir(p);
}

static volatile sig_atomic_t chld;

static void on_chld(int sig)
{
	(void)sig;
	chld = 1;
}

/*
 * Orphans of the program's descendants are ours (PR_SET_CHILD_SUBREAPER,
 * so that they stay served): reap those that exited. The program itself
 * is left to the loop (its status is ours).
 */
static void reap_orphans(void)
{
	siginfo_t si;

	chld = 0;
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) || !si.si_pid ||
		    si.si_pid == sv.pid)
			return;
		waitpid(si.si_pid, NULL, WNOHANG);
	}
}

#define SV_POLL_MAX 130

static int serve_loop(void)
{
	struct seccomp_notif_sizes sz;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	int st;

	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz))
		return -errno;
	req = calloc(1, sz.seccomp_notif > sizeof(*req) ? sz.seccomp_notif : sizeof(*req));
	resp = calloc(1, sz.seccomp_notif_resp > sizeof(*resp) ? sz.seccomp_notif_resp
							       : sizeof(*resp));
	if (!req || !resp)
		return -ENOMEM;
	for (;;) {
		struct pollfd pf[SV_POLL_MAX] = { { sv.listener, POLLIN, 0 }, { sv.pidfd, POLLIN, 0 } };
		int nv = sv_views_pollfds(pf + 2, SV_POLL_MAX - 2);
		struct sv_ans a;

		if (chld)
			reap_orphans();
		if (poll(pf, 2 + (nfds_t)nv, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pf[1].revents) {
			while (waitpid(sv.pid, &st, 0) < 0)
				if (errno != EINTR)
					return -errno;
			break;
		}
		/* a descendant's exit: its connection, rings and descriptions go */
		sv_views_exited(&sv, pf + 2, nv);
		if (!(pf[0].revents & POLLIN))
			continue;
		memset(req, 0, sz.seccomp_notif);
		if (ioctl(sv.listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
			continue;	/* the caller went away (a signal, its exit) */
		sv_serve(&sv, req, &a);
		if (a.sent)
			continue;
		memset(resp, 0, sz.seccomp_notif_resp);
		resp->id = req->id;
		if (a.cont)
			resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		else if (a.error)
			resp->error = a.error;
		else
			resp->val = a.val;
		/* ENOENT: the call was interrupted meanwhile; the program retries or not, as on Linux */
		ioctl(sv.listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
	}
	sv_views_end(&sv);
	sv_trace(&sv, "%lu calls served, %lu passed on", sv.served, sv.passed);
	free(req);
	free(resp);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void usage(void)
{
	fprintf(stderr, "usage: ucmd-supervise --daemon SOCKET [--dirs --preload LIST] [--trace] "
		"-- PROGRAM [ARGS...]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "daemon", required_argument, 0, 'D' },
		{ "trace", no_argument, 0, 't' },
		{ "dirs", no_argument, 0, 'd' },
		{ "preload", required_argument, 0, 'p' },
		{ 0, 0, 0, 0 },
	};
	const char *sock_path = NULL, *dev;
	struct sigaction fw = { .sa_handler = forward }, ign = { .sa_handler = SIG_IGN };
	struct rlimit rl;
	int c, sp[2], ret;

	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'D': sock_path = optarg; break;
		case 't': sv.trace = true; break;
		case 'd': dirs_only = sv.dirs = true; break;
		case 'p': preload_list = optarg; break;
		default: usage(); return 2;
		}
	}
	if (!sock_path || optind >= argc || !dirs_only != !preload_list) {
		usage();
		return 2;
	}
	/* the numbers the filter judges must be ones the program can hold */
	if (!dirs_only && (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur < SV_FD_BASE + SV_FD_NR)) {
		fprintf(stderr, "ucmd exec: RLIMIT_NOFILE is below %u: the static program's device "
			"descriptors (%u..%u) would not fit\n", SV_FD_BASE + SV_FD_NR, SV_FD_BASE,
			SV_FD_BASE + SV_FD_NR - 1);
		return 126;
	}
	sv.sock = sock_path;
	sv_pl_trace = sv.trace;
	/* the tree code (sv_pl.c) finds the daemon as the program's preload does */
	if (setenv(PL_ENV_DAEMON, sock_path, 0)) {
		fprintf(stderr, "ucmd exec: environment: %s\n", strerror(errno));
		return 126;
	}
	ret = ucmd_engine_connect(sock_path, &sv.e);
	if (ret) {
		fprintf(stderr, "ucmd exec: cannot reach ucmdd at %s: %s\n", sock_path,
			strerror(-ret));
		return 126;
	}
	static const char *names[MAX_NAMES];

	sv.names = names;
	sv.nr_names = ucmd_device_names(sv.e, names, MAX_NAMES);
	if (sv.nr_names < 0) {
		fprintf(stderr, "ucmd exec: ucmdd lists no devices: %s\n", strerror(-sv.nr_names));
		return 126;
	}
	if (sv.nr_names > MAX_NAMES)
		sv.nr_names = MAX_NAMES;
	/* the engine's buffer holds them until its next call; the engine is replaced later */
	for (int i = 0; i < sv.nr_names; i++)
		if (!(names[i] = strdup(names[i]))) {
			fprintf(stderr, "ucmd exec: %s\n", strerror(ENOMEM));
			return 126;
		}
	/*
	 * The tree, built now by the preload's own code (sv_pl.c) before any
	 * process of the program can hold its lock: a process holding it waits
	 * for us to make its opens, so from here on we never wait for it. A
	 * static program's looks at /dev and /sys are answered from it alone.
	 */
	if (!pl_root())
		sv_trace(&sv, "no device tree: the program's looks find no NVMe device in /dev or "
			 "/sys (ENOENT), the rest of /sys is the host's");
	pl_sysfs_lock_nowait = true;
	/* a dynamic program's too: its own open instruction is served here (sv_open.c) */
	dev = make_placeholders();
	if (!dev) {
		fprintf(stderr, "ucmd exec: a private directory: %s\n", strerror(errno));
		return 126;
	}
	sv.phdir = dev;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp)) {
		remove_placeholders(dev);
		return 126;
	}
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGQUIT, &ign, NULL);
	sigaction(SIGTERM, &fw, NULL);
	sigaction(SIGHUP, &fw, NULL);
	/* restarted: the daemon's calls in flight must not see EINTR (poll returns it anyway) */
	sigaction(SIGCHLD, &(struct sigaction){ .sa_handler = on_chld, .sa_flags = SA_RESTART }, NULL);
	/* a descendant whose parent exits stays ours, and so served (sv_fork.c) */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	child = fork();
	if (child == 0) {
		close(sp[0]);
		signal(SIGCHLD, SIG_DFL);
		start_program(argv + optind, sp[1]);
	}
	close(sp[1]);
	if (child < 0) {
		fprintf(stderr, "ucmd exec: fork: %s\n", strerror(errno));
		remove_placeholders(dev);
		return 126;
	}
	sv.pid = child;
	sv.pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	sv.listener = recv_fd(sp[0]);
	close(sp[0]);
	if (sv.pidfd < 0 || sv.listener < 0) {
		/* the child failed before its program started: its status says why */
		int st;

		while (waitpid(child, &st, 0) < 0 && errno == EINTR)
			;
		remove_placeholders(dev);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 126;
	}
	ret = serve_loop();
	remove_placeholders(dev);
	if (ret < 0) {
		fprintf(stderr, "ucmd exec: the supervisor: %s\n", strerror(-ret));
		kill(child, SIGKILL);
		return 126;
	}
	return ret;
}
