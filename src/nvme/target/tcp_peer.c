// SPDX-License-Identifier: MIT
/*
 * Who is at the other end of a TCP connection to the target.
 *
 * SO_PEERCRED answers only for Unix sockets. A peer on this host (on
 * loopback or on any of the host's own addresses) is a socket of this
 * network namespace, and the kernel tells who owns it: NETLINK_SOCK_DIAG's
 * inet_diag finds the peer's socket by its four-tuple and gives its owner
 * uid (the creator's fsuid, Linux's sock_i_uid) and inode. A remote peer's
 * socket is not found there. The process holding that inode is found in
 * /proc/PID/fd, and its /proc/PID/status gives its gid and supplementary
 * groups.
 *
 * What is known, and what not:
 * - the uid is the kernel's word about the socket, but a socket outlives
 *   and travels: a process may have changed uid since, or received it
 *   over a Unix socket. The uid is taken only when a process holding the
 *   socket runs with that effective uid now;
 * - the gid and groups are that process's now;
 * - capabilities are never granted: a TCP peer is not a process the kernel
 *   vouches for as it does with SO_PEERCRED, so a root peer is uid 0
 *   without CAP_SYS_ADMIN;
 * - no process holds the socket of Linux's own nvme-tcp host (a kernel
 *   socket, made by root): a socket root made that no root process holds
 *   is judged as remote (NVMET_TCP_PEER_KERNEL);
 * - any other socket of this host whose holder cannot be told is
 *   unknown, and refused (NVMET_TCP_PEER_UNKNOWN): no file holds it any more
 *   (closed, what it sent still queued), no process of its maker's
 *   uid holds it (it is in flight in an SCM_RIGHTS message at the accept,
 *   or was passed to another user, or lives in a process ucmdd may not
 *   inspect: another user's, when ucmdd is not root), or the processes
 *   holding it differ in gid or groups. Judging it as remote instead
 *   would let a user hide from the rules that name its uid;
 * - a peer whose socket is not of this host is remote: uid and gid -1,
 *   no groups, pid 0.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>

#include "nvme/target/tcp.h"

/* An address in the IPv4 form when it is one (v4-mapped IPv6 included); its family. */
static int plain_addr(const struct sockaddr_storage *ss, uint32_t out[4], uint16_t *port)
{
	memset(out, 0, 16);
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;

		out[0] = in->sin_addr.s_addr;
		*port = in->sin_port;
		return AF_INET;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)ss;

		*port = in6->sin6_port;
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			memcpy(out, &in6->sin6_addr.s6_addr[12], 4);
			return AF_INET;
		}
		memcpy(out, &in6->sin6_addr, 16);
		return AF_INET6;
	}
	return -1;
}

/*
 * The peer socket's owner uid and inode through inet_diag; 0, -ENOENT when
 * this network namespace has no such socket, -ESRCH when it has one no file
 * holds, or -errno.
 */
static int diag_peer(int family, const uint32_t peer[4], uint16_t pport, const uint32_t local[4],
		     uint16_t lport, uid_t *uid, ino_t *ino)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {
		.nlh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST, .nlmsg_seq = 1 },
		.r = { .sdiag_family = (uint8_t)family, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = ~0u },
	};
	union {
		struct nlmsghdr nlh;
		uint8_t buf[8192];
	} rsp;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	const struct nlmsghdr *h;
	ssize_t n;
	int fd, ret = -ENOENT;

	/* the peer's socket: its source is the peer, its destination us */
	req.r.id.idiag_sport = pport;
	req.r.id.idiag_dport = lport;
	memcpy(req.r.id.idiag_src, peer, 16);
	memcpy(req.r.id.idiag_dst, local, 16);
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		goto out;
	}
	n = recv(fd, &rsp, sizeof(rsp), 0);
	if (n < 0) {
		ret = -errno;
		goto out;
	}
	for (h = &rsp.nlh; NLMSG_OK(h, (unsigned)n); h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			ret = e->error ? e->error : -ENOENT;
			break;
		}
		if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
		    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);

			*uid = m->idiag_uid;
			*ino = m->idiag_inode;
			/*
			 * no inode: no file holds it (closed by its process,
			 * what it sent still queued to us): nobody to judge
			 */
			ret = m->idiag_inode ? 0 : -ESRCH;
			break;
		}
	}
out:
	close(fd);
	return ret;
}

/* Whether process pid holds the socket inode ino. */
static bool holds(int pid, ino_t ino)
{
	char path[64], want[48], got[48];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return false;	/* gone, or not ours to look at */
	snprintf(want, sizeof(want), "socket:[%lu]", (unsigned long)ino);
	while (!found && (de = readdir(d))) {
		char link[64 + sizeof(de->d_name)];
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", path, de->d_name);
		n = readlink(link, got, sizeof(got) - 1);
		if (n <= 0)
			continue;
		got[n] = 0;
		found = !strcmp(got, want);
	}
	closedir(d);
	return found;
}

/* A process's effective uid and gid and its groups from /proc/PID/status; 0 or -1. */
static int proc_ids(int pid, struct ucmd_cred *c)
{
	char path[64], line[1024];
	int seen = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned r, e;

		if (sscanf(line, "Uid: %u %u", &r, &e) == 2) {
			c->uid = r;
			c->euid = e;
			seen |= 1;
		} else if (sscanf(line, "Gid: %u %u", &r, &e) == 2) {
			c->gid = r;
			c->egid = e;
			seen |= 2;
		} else if (!strncmp(line, "Groups:", 7)) {
			char *p = line + 7, *end;

			c->ngroups = 0;
			for (;;) {
				unsigned long g = strtoul(p, &end, 10);

				if (end == p)
					break;
				if (c->ngroups == UCMD_NGROUPS_MAX) {
					seen = -1;	/* more than a rule could see: not this one */
					break;
				}
				c->groups[c->ngroups++] = (gid_t)g;
				p = end;
			}
			if (seen < 0)
				break;
			seen |= 4;
		}
	}
	fclose(f);
	c->pid = pid;
	return seen == 7 ? 0 : -1;
}

static bool same_ids(const struct ucmd_cred *a, const struct ucmd_cred *b)
{
	return a->uid == b->uid && a->euid == b->euid && a->gid == b->gid &&
	       a->egid == b->egid && a->ngroups == b->ngroups &&
	       !memcmp(a->groups, b->groups, (size_t)a->ngroups * sizeof(a->groups[0]));
}

/*
 * The processes holding socket ino whose effective uid is uid: 1 and their
 * identity in *c when they agree, 0 when none is found, -1 when they differ.
 */
static int holders(ino_t ino, uid_t uid, struct ucmd_cred *c)
{
	pid_t self = getpid();
	struct dirent *de;
	int found = 0;
	DIR *d = opendir("/proc");

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct ucmd_cred p = { 0 };
		int pid = atoi(de->d_name);

		if (pid <= 0 || pid == self)
			continue;
		if (!holds(pid, ino) || proc_ids(pid, &p) || p.euid != uid)
			continue;
		if (!found) {
			*c = p;
			found = 1;
		} else if (!same_ids(c, &p)) {
			found = -1;
			break;
		}
	}
	closedir(d);
	return found;
}

enum nvmet_tcp_peer nvmet_tcp_peer_identify(int sock, struct ucmd_cred *c, uid_t *maker)
{
	struct sockaddr_storage ps, ls;
	socklen_t pl = sizeof(ps), ll = sizeof(ls);
	uint32_t pa[4], la[4];
	uint16_t pport, lport;
	struct ucmd_cred h;
	uid_t uid = (uid_t)-1;
	ino_t ino;
	int fam, n;

	*maker = (uid_t)-1;
	if (getpeername(sock, (struct sockaddr *)&ps, &pl) ||
	    getsockname(sock, (struct sockaddr *)&ls, &ll))
		return NVMET_TCP_PEER_REMOTE;
	fam = plain_addr(&ps, pa, &pport);
	if (fam < 0 || plain_addr(&ls, la, &lport) != fam)
		return NVMET_TCP_PEER_REMOTE;
	/*
	 * not found in this network namespace: another machine's (or
	 * namespace's) socket; a lookup that failed otherwise says nothing
	 */
	n = diag_peer(fam, pa, pport, la, lport, &uid, &ino);
	if (n == -ENOENT)
		return NVMET_TCP_PEER_REMOTE;
	if (!n || n == -ESRCH)
		*maker = uid;
	if (n)
		return NVMET_TCP_PEER_UNKNOWN;
	n = holders(ino, uid, &h);
	if (n == 0 && uid == 0)
		return NVMET_TCP_PEER_KERNEL;
	if (n <= 0)
		return NVMET_TCP_PEER_UNKNOWN;
	c->uid = c->euid = uid;
	c->pid = h.pid;
	c->uid = h.uid;
	c->gid = h.gid;
	c->egid = h.egid;
	c->ngroups = h.ngroups;
	memcpy(c->groups, h.groups, sizeof(c->groups));
	c->cap_sys_admin = false;
	return NVMET_TCP_PEER_LOCAL;
}
