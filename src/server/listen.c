/* SPDX-License-Identifier: MIT */
/*
 * The daemon's socket, and who is on the other end of a connection. A
 * client's identity is what the kernel says about the peer -- SO_PEERCRED,
 * SO_PEERGROUPS, its effective capabilities -- never anything it sends; its
 * memory is opened once, here, as that identity (peer_bind).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "server/ctl.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77		/* Linux 6.5 */
#endif

static int sun_fill(struct sockaddr_un *sun, const char *path)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (!path[0] || strlen(path) >= sizeof(sun->sun_path))
		return -ENAMETOOLONG;
	strcpy(sun->sun_path, path);
	return 0;
}

/* A socket file left at path: a live daemon's, or a dead one's to replace. */
static int stale_socket(const char *path, const struct sockaddr_un *sun)
{
	struct stat sb;
	int fd, ret;

	if (lstat(path, &sb))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(sb.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ret = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) == 0 ? -EADDRINUSE
		: errno == ECONNREFUSED ? 0 : -errno;
	close(fd);
	if (!ret && unlink(path) && errno != ENOENT)
		ret = -errno;
	return ret;
}

int srv_listen_path(const char *path, mode_t mode, gid_t gid)
{
	struct sockaddr_un sun;
	mode_t old;
	int fd, ret;

	ret = sun_fill(&sun, path);
	if (ret)
		return ret;
	ret = stale_socket(path, &sun);
	if (ret)
		return ret;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/*
	 * Connecting needs write permission on the socket: made 0600 (only
	 * the daemon's user) by the bind itself, then given the group and
	 * mode asked, as a device node's owner, group and mode say who may
	 * open it before nvme_cmd_allowed() judges a command.
	 */
	old = umask(0177);
	ret = bind(fd, (const struct sockaddr *)&sun, sizeof(sun)) ? -errno : 0;
	umask(old);
	if (!ret && gid != (gid_t)-1 && chown(path, (uid_t)-1, gid))
		ret = -errno;
	if (!ret && chmod(path, mode & 0777))
		ret = -errno;
	if (ret && ret != -EADDRINUSE)
		unlink(path);
	if (!ret && listen(fd, 128))
		ret = -errno;
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

int srv_listen_systemd(void)
{
	const char *pid = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");
	int type = 0, acc = 0;
	socklen_t len = sizeof(type);
	struct sockaddr_un sun;
	socklen_t sl = sizeof(sun);

	if (!pid || !n || strtol(pid, NULL, 10) != getpid())
		return -ENOENT;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (strcmp(n, "1"))
		return -EINVAL;
	/* fd 3 is SD_LISTEN_FDS_START */
	if (getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_SEQPACKET)
		return -EINVAL;
	len = sizeof(acc);
	if (getsockopt(3, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) || !acc)
		return -EINVAL;
	if (getsockname(3, (struct sockaddr *)&sun, &sl) || sun.sun_family != AF_UNIX)
		return -EINVAL;
	if (fcntl(3, F_SETFD, FD_CLOEXEC))
		return -errno;
	return 3;
}

/* The peer's capabilities and effective uid, as /proc/PID/status shows them now. */
struct peer_status {
	bool same_ns;		/* the daemon's user namespace */
	bool have_euid;
	uid_t euid;
	uint64_t cap_prm, cap_eff;
};

/*
 * Capabilities count as Linux's capable() asks: in the initial user
 * namespace, here the daemon's. A process that made a user namespace of
 * its own (unshare -r) has every capability there, which /proc shows; that
 * must not count, so the peer's namespace is compared with the daemon's.
 */
static int peer_status(pid_t pid, struct peer_status *ps)
{
	char path[64], line[256];
	struct stat mine, theirs;
	FILE *f;

	memset(ps, 0, sizeof(*ps));
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	if (stat("/proc/self/ns/user", &mine) || stat(path, &theirs))
		return -ESRCH;
	ps->same_ns = mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		unsigned ruid, euid;

		if (sscanf(line, "Uid: %u %u", &ruid, &euid) == 2) {
			ps->euid = euid;
			ps->have_euid = true;
		} else if (sscanf(line, "CapPrm: %llx", &v) == 1) {
			ps->cap_prm = v;
		} else if (sscanf(line, "CapEff: %llx", &v) == 1) {
			ps->cap_eff = v;
		}
	}
	fclose(f);
	return ps->have_euid ? 0 : -ESRCH;
}

static int peer_pidfd(int sock, pid_t pid)
{
	int fd;
	socklen_t len = sizeof(fd);

	/* the process that connected, even if its pid was reused since */
	if (!getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &fd, &len) && fd >= 0)
		return fd;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	return fd < 0 ? -errno : fd;
}

/*
 * pid's memory (pidfd names pid), opened as peer c, with the capabilities of
 * c's own process (ps: its status), as peer_bind() below says.
 */
static int peer_mm_open(struct user_mm *mm, const struct ucmd_cred *c, pid_t pid, int pidfd,
			struct peer_status *ps)
{
	uint64_t act;
	int ret;

	ret = peer_status(c->pid, ps);
	if (ret)
		return ret;
	act = ps->same_ns ? ps->cap_prm : 0;
	if (c->euid != 0)
		act &= ~(1ull << 19);	/* CAP_SYS_PTRACE */
	ret = srv_peer_mm_open(mm, pid, c->euid, c->egid, act);
	if (ret)
		return ret;
	/* the pid still names the process the pidfd does: it was not reused meanwhile */
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0)) {
		user_mm_release(mm);
		return -ESRCH;
	}
	return 0;
}

/*
 * The client's memory and capabilities, both tied to the image that
 * connected. The capabilities are read first and the memory opened after,
 * with those capabilities and the connecting euid/egid (peer_mm.c): a
 * process that exec'd a set-user-ID or file-capability program before the
 * read is non-dumpable to that identity, or holds capabilities it lacks,
 * and the open fails; one that exec'd after the read had its own
 * capabilities read, and the mm opened is then either the old one (gone at
 * once) or one the open judged. CAP_SYS_PTRACE, which would let the open
 * past every check, is used only for a client that connected as root.
 * The pidfd still alive after the open proves the pid named the
 * connecting process throughout (a pid is not reused while it lives).
 */
static int peer_bind(int pidfd, const struct ucmd_cred *c, struct user_mm *mm, bool *cap_admin)
{
	struct peer_status ps;
	int ret = peer_mm_open(mm, c, c->pid, pidfd, &ps);

	if (ret)
		return ret;
	*cap_admin = ps.same_ns && ps.euid == c->euid && (ps.cap_eff & (1ull << 21));
	return 0;
}

/* The pid a pidfd names (its fdinfo), or -ESRCH. */
static pid_t pidfd_pid(int pidfd)
{
	char path[64], line[128];
	pid_t pid = -ESRCH;
	FILE *f;
	int v;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid: %d", &v) == 1)
			pid = v > 0 ? v : -ESRCH;	/* -1: exited; 0: another namespace's */
	fclose(f);
	return pid;
}

/* pid's parent and effective uid, from /proc/PID/status. */
static int parent_and_euid(pid_t pid, pid_t *ppid, uid_t *euid)
{
	char path[64], line[256];
	bool have_p = false, have_u = false;
	unsigned ruid, eu;
	FILE *f;
	int p;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "PPid: %d", &p) == 1) {
			*ppid = p;
			have_p = true;
		} else if (sscanf(line, "Uid: %u %u", &ruid, &eu) == 2) {
			*euid = eu;
			have_u = true;
		}
	}
	fclose(f);
	return have_p && have_u ? 0 : -ESRCH;
}

/*
 * Is the process whose parent is ppid a descendant of peer (its child, a
 * child of a child...)? 0 or -EPERM. A chain longer than ADOPT_DEPTH_MAX
 * generations, or one that reaches pid 1 or a process already gone, is not.
 * A process only ever moves up its ancestry (reparented to a subreaper or
 * init), never into another's subtree, so a chain found is one that was.
 */
#define ADOPT_DEPTH_MAX 64
static int descends_from(pid_t ppid, pid_t peer)
{
	uid_t euid;

	for (int depth = 0; depth < ADOPT_DEPTH_MAX && ppid > 1; depth++) {
		if (ppid == peer)
			return 0;
		if (parent_and_euid(ppid, &ppid, &euid))
			return -EPERM;
	}
	return -EPERM;
}

int srv_peer_adopt(const struct ucmd_cred *peer, int pidfd, pid_t *pid_out, struct user_mm *mm)
{
	struct peer_status ps;
	pid_t pid = pidfd_pid(pidfd), ppid;
	uid_t euid;
	int ret;

	if (pid < 0)
		return -ESRCH;
	ret = parent_and_euid(pid, &ppid, &euid);
	if (ret)
		return ret;
	if (euid != peer->euid)
		return -EPERM;
	ret = descends_from(ppid, peer->pid);
	if (ret)
		return ret;
	/* the peer's own capabilities, never the child's: it is the peer that acts */
	ret = peer_mm_open(mm, peer, pid, pidfd, &ps);
	if (ret)
		return ret;
	*pid_out = pid;
	return 0;
}

int srv_peer_cred(int sock, struct ucmd_cred *cred, int *pidfd, struct user_mm *mm)
{
	struct ucmd_cred c;
	struct ucred uc;
	gid_t groups[UCMD_NGROUPS_MAX];
	socklen_t len = sizeof(uc);
	int fd, ret = 0, err;

	memset(&c, 0, sizeof(c));
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &uc, &len))
		return -errno;
	/* 0: the peer's pid namespace hides it from ours; its memory is out of reach */
	if (uc.pid <= 0)
		return -ESRCH;
	c.pid = uc.pid;
	c.uid = c.euid = uc.uid;
	c.gid = c.egid = uc.gid;
	len = sizeof(groups);
	if (getsockopt(sock, SOL_SOCKET, SO_PEERGROUPS, groups, &len)) {
		if (errno != ERANGE)
			return -errno;
		/* more than a policy rule could be judged against */
		ret = -E2BIG;
		len = sizeof(groups);
	}
	c.ngroups = (int)(len / sizeof(gid_t));
	memcpy(c.groups, groups, (size_t)c.ngroups * sizeof(gid_t));
	fd = peer_pidfd(sock, uc.pid);
	if (fd < 0)
		return fd == -ESRCH ? -ESRCH : fd;
	err = peer_bind(fd, &c, mm, &c.cap_sys_admin);
	if (err) {
		close(fd);
		return err;
	}
	*cred = c;
	*pidfd = fd;
	return ret;
}

int srv_accept(struct srv_daemon *d, int lfd)
{
	struct ucmd_cred cred;
	struct user_mm mm;
	int sock, pidfd = -1, ret;

	sock = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (sock < 0)
		return -errno;
	/* who it is first: srv_client_start() admits by uid (the reserve for root) */
	ret = srv_peer_cred(sock, &cred, &pidfd, &mm);
	if (ret == -E2BIG) {
		srv_log("refusing pid %d (uid %u): more than %d supplementary groups", (int)cred.pid,
			(unsigned)cred.uid, UCMD_NGROUPS_MAX);
		user_mm_release(&mm);
		close(pidfd);
	} else if (ret == -EPERM || ret == -EACCES) {
		/* an exec'd privileged image, or Yama's ptrace_scope: say which may apply */
		srv_log("refusing a client: its memory is not its own uid's to reach (%s): a "
			"set-user-ID or file-capability program, or ptrace restricted (Yama)",
			strerror(-ret));
	}
	if (ret) {
		close(sock);
		return ret;
	}
	ret = srv_client_start(d, sock, &cred, pidfd, &mm);
	if (ret) {
		user_mm_release(&mm);
		close(pidfd);
		close(sock);
	}
	return ret;
}
