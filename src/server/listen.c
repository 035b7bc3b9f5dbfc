/* SPDX-License-Identifier: MIT */
/*
 * The daemon's socket, and who is on the other end of a connection. A
 * client's identity is what the kernel says about the peer -- SO_PEERCRED,
 * SO_PEERGROUPS, its effective capabilities -- never anything it sends.
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

int srv_listen_path(const char *path)
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
	 * 0666: anyone may connect. What a client may then do is the
	 * policy's decision, from its credentials; the socket's mode is not
	 * the boundary (docs/daemon.md). A site that wants fewer users at
	 * the door puts the socket in a directory they cannot search.
	 */
	old = umask(0111);
	ret = bind(fd, (const struct sockaddr *)&sun, sizeof(sun)) ? -errno : 0;
	umask(old);
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

/*
 * CAP_SYS_ADMIN in the peer's effective set, as Linux's capable() asks it:
 * in the initial user namespace, here the daemon's. A process that made a
 * user namespace of its own (unshare -r) has every capability there, which
 * /proc shows; that must not count, so the peer's namespace is compared
 * with the daemon's first.
 */
static bool peer_cap_sys_admin(pid_t pid, uid_t uid)
{
	char path[64], line[256];
	struct stat mine, theirs;
	bool cap = false, same_uid = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	if (stat("/proc/self/ns/user", &mine) || stat(path, &theirs) ||
	    mine.st_dev != theirs.st_dev || mine.st_ino != theirs.st_ino)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long eff;
		unsigned ruid, euid;

		/*
		 * Uid: comes before CapEff:. The capabilities are read now, the
		 * identity at connect(): they describe the same credentials only
		 * while the effective uid is still the one SO_PEERCRED gave (a
		 * process that connected and then exec'd a set-user-ID program
		 * has that program's capabilities, not its own).
		 */
		if (sscanf(line, "Uid: %u %u", &ruid, &euid) == 2)
			same_uid = euid == uid;
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			cap = same_uid && (eff & (1ull << 21));	/* CAP_SYS_ADMIN */
			break;
		}
	}
	fclose(f);
	return cap;
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

int srv_peer_cred(int sock, struct ucmd_cred *cred, int *pidfd)
{
	struct ucmd_cred c;
	struct ucred uc;
	gid_t groups[UCMD_NGROUPS_MAX];
	socklen_t len = sizeof(uc);
	int fd, ret = 0;

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
	c.cap_sys_admin = peer_cap_sys_admin(uc.pid, uc.uid);
	/* the capabilities read above were the connecting process's only if it still lives */
	if (syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0)) {
		close(fd);
		return -ESRCH;
	}
	*cred = c;
	*pidfd = fd;
	return ret;
}

int srv_accept(struct srv_daemon *d, int lfd)
{
	struct ucmd_cred cred;
	int sock, pidfd = -1, ret;

	sock = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (sock < 0)
		return -errno;
	/* who it is first: srv_client_start() admits by uid (the reserve for root) */
	ret = srv_peer_cred(sock, &cred, &pidfd);
	if (ret == -E2BIG) {
		srv_log("refusing pid %d (uid %u): more than %d supplementary groups", (int)cred.pid,
			(unsigned)cred.uid, UCMD_NGROUPS_MAX);
		close(pidfd);
	}
	if (ret) {
		close(sock);
		return ret;
	}
	ret = srv_client_start(d, sock, &cred, pidfd);
	if (ret) {
		close(pidfd);
		close(sock);
	}
	return ret;
}
