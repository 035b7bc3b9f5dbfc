/* SPDX-License-Identifier: MIT */
/*
 * ucmdd's control side, between its own files: the daemon's main
 * (ucmdd.c), the socket and the peer's identity (listen.c), one
 * connection's control thread (client.c). The rings (ring.c) do not need
 * any of it; server.h is the contract between the two sides.
 */
#ifndef UCMD_SERVER_CTL_H
#define UCMD_SERVER_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "server/server.h"

/*
 * Connections served at once. Beyond it a new connection is refused at once
 * (one message with the errno, then end of file): every connection is a
 * thread and up to SRV_MAX_FDS open files, and the engine's bound on open
 * files (UCMD_MAX_FILES) is shared by all. Of these, SRV_RESERVE_CONNS are for root and the daemon's
 * user only (quota.c).
 */
#define SRV_MAX_CLIENTS 256u

/* ---- listen.c ---- */
/*
 * A SOCK_SEQPACKET socket listening at path, of group gid ((gid_t)-1: the
 * daemon's) and mode (permission bits): who may connect at all, as a
 * device node's mode says who may open it. A stale socket left by a daemon
 * that died is replaced; a live one (a daemon answers) is -EADDRINUSE, and
 * a path that is not a socket -EEXIST. fd or -errno.
 */
int srv_listen_path(const char *path, mode_t mode, gid_t gid);
/*
 * systemd's socket activation (sd_listen_fds(3)): LISTEN_PID is this
 * process and LISTEN_FDS 1, the socket at fd 3, which must be a listening
 * SOCK_SEQPACKET Unix socket. fd; -ENOENT when not socket-activated;
 * -EINVAL when the passed fds are not what the unit promises.
 */
int srv_listen_systemd(void);
/*
 * The peer's identity, from the kernel alone: SO_PEERCRED (pid, uid,
 * gid), SO_PEERGROUPS, and CAP_SYS_ADMIN from the effective set in
 * /proc/PID/status, counted only when the peer shares the daemon's user
 * namespace and only when its memory could be opened as it (listen.c's
 * peer_bind: the capabilities are never an exec'd image's). *pidfd: the
 * peer process (SO_PEERPIDFD, else pidfd_open); *mm: its address space,
 * opened as the peer (srv_peer_mm_open). 0, or -ESRCH (the peer's pid is
 * not visible to the daemon or it is gone), -EPERM/-EACCES (its memory is
 * not its own identity's to reach), -E2BIG (more supplementary groups than
 * UCMD_NGROUPS_MAX: *pidfd and *mm are open, a policy rule could not see
 * the others), -errno.
 */
int srv_peer_cred(int sock, struct ucmd_cred *cred, int *pidfd, struct user_mm *mm);
/*
 * peer_mm.c: open pid's address space (user_mm_init_remote) acting as
 * effective uid and gid with effective capabilities caps (a mask of
 * CAP_* bits, never more than the daemon's), on the calling thread only.
 * 0, or -errno: -EACCES/-EPERM when the kernel would not let that identity
 * reach it (another user's, a set-user-ID or file-capability image's).
 */
int srv_peer_mm_open(struct user_mm *mm, pid_t pid, uid_t uid, gid_t gid, uint64_t caps);
/*
 * UCMDD_ADOPT: the process behind pidfd, if the peer may act in its memory
 * (its descendant -- a child, a child's child... -- of the peer's euid, its memory opened as the peer's identity
 * with the peer's capabilities): its pid in *pid, its memory in *mm. 0 or
 * -errno (-ESRCH, -EPERM, -EACCES).
 */
int srv_peer_adopt(const struct ucmd_cred *peer, int pidfd, pid_t *pid, struct user_mm *mm);
/* Accept one connection on lfd and start its control thread; 0 or -errno. */
int srv_accept(struct srv_daemon *d, int lfd);

/* ---- client.c ---- */
/*
 * A connection's client, its thread started; it frees itself when the
 * connection ends. On success sock, pidfd and mm are the client's; refused
 * (the client told why, quota.c's errnos or -EMFILE when every slot is
 * taken), the caller releases them.
 */
int srv_client_start(struct srv_daemon *d, int sock, const struct ucmd_cred *cred, int pidfd,
		     const struct user_mm *mm);
/*
 * SIGTERM: wake every control thread (d->stop_fd), which then drains its
 * rings and closes its connection; returns when every client is gone.
 */
void srv_clients_stop(struct srv_daemon *d);
/* How many SCM_RIGHTS fds a request of op may carry: [*min, *max]. */
void srv_msg_fds(const void *buf, size_t len, unsigned *min, unsigned *max);

/* ---- log.c ---- */
void srv_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* From now on (detached): syslog, facility daemon. */
void srv_log_to_syslog(void);

#endif /* UCMD_SERVER_CTL_H */
