/* SPDX-License-Identifier: MIT */
/*
 * The daemon backend: ucmd's API through ucmdd, the daemon that owns the
 * controllers. An engine made by ucmd_engine_connect() is a connection to
 * the daemon's socket; its devices ("nvme0", "ng0n1", ...) are the
 * daemon's, opened, judged by the daemon's security policy and audited as
 * the peer the socket says the caller is. Its rings are memfds the daemon
 * shares, with Linux's layout, so ucmd_get_sqe(), ucmd_submit(),
 * ucmd_wait_cqe() and the rest work unchanged; a thread of the daemon
 * consumes each SQ as a SQPOLL thread does, so SQEs are taken after
 * ucmd_submit() returns and ucmd_get_sqe() can find the SQ full until then
 * (wait for a CQE, or ucmd_enter() with IORING_ENTER_SQ_WAIT). Buffers from ucmd_buf_alloc() are shared with the
 * daemon and need no copy; any other memory is copied by the daemon.
 *
 * Once the daemon is gone (stopped, killed), every call on the engine and
 * its rings returns -ENOTCONN: never a hang, never SIGPIPE. CQEs it posted
 * before going can still be reaped.
 */
#ifndef UCMD_DAEMON_H
#define UCMD_DAEMON_H

#include <stdbool.h>

#include "ucmd/ucmd.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/*
 * Connect to the daemon listening on the Unix socket path (NULL: the path
 * in $UCMD_DAEMON) and make an engine of the connection into *out. 0 or
 * -errno with the reason in ucmd_last_error(): -EINVAL (no path, out NULL),
 * -ENAMETOOLONG, -ENOENT (no such socket), -ECONNREFUSED (no daemon
 * behind it), -EACCES (not allowed to reach it), -EPROTO (a daemon of
 * another protocol version), -ENOTCONN (it hung up). Release with
 * ucmd_engine_free(), which closes the connection: the daemon then frees
 * whatever the engine still held.
 */
int ucmd_engine_connect(const char *path, struct ucmd_engine **out);
/*
 * The same over a connected SOCK_SEQPACKET socket (a socketpair to a
 * daemon started by the caller, a socket passed by a supervisor). The
 * engine owns sock from then on, and closes it even on failure.
 */
int ucmd_engine_connect_fd(int sock, struct ucmd_engine **out);
/* Whether e is a daemon engine. */
bool ucmd_engine_is_daemon(const struct ucmd_engine *e);
/*
 * The ANA state of group grpid on NVMe/TCP port `port` of daemon engine e
 * (1 is ucmdd's first --nvme-tcp listener): state 0 asks, another value
 * (NVMe's: 1 optimized, 2 non-optimized, 3 inaccessible, 4 persistent
 * loss, 0Fh change) sets it, which the daemon allows its own user and root
 * only. The state after the call, or -EPERM, -ENODEV (no such port),
 * -EINVAL (no such group or state), -EOPNOTSUPP (e is not a daemon's).
 */
int ucmd_daemon_ana_state(struct ucmd_engine *e, unsigned port, unsigned grpid, unsigned state);
/*
 * The same for controller `name` (nvmeX) of daemon engine e, one of a
 * controller directory of several (ucmd_ctrl_ana_state: each controller a
 * port of its own; the state is kept in the directory). The state after
 * the call, or -EPERM, -ENODEV (no such controller), -EOPNOTSUPP (a
 * controller of a subsystem of one, or e is not a daemon's), -EINVAL.
 */
int ucmd_daemon_ctrl_ana_state(struct ucmd_engine *e, const char *name, unsigned grpid,
			       unsigned state);
/*
 * NVMe/TCP port `port` of daemon engine e taken down or brought back:
 * state 0 asks, UCMD_PORT_DOWN stops its listener and closes every
 * connection made through it (its hosts lose their associations, as when
 * a link goes down), UCMD_PORT_UP listens again on its address. The
 * daemon's own user and root only. The state after the call, or -EPERM,
 * -ENODEV (no such port), -EINVAL, -EADDRINUSE (the address was taken
 * meanwhile), -EOPNOTSUPP (e is not a daemon's).
 */
#define UCMD_PORT_UP	1u
#define UCMD_PORT_DOWN	2u
int ucmd_daemon_port_state(struct ucmd_engine *e, unsigned port, unsigned state);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* UCMD_DAEMON_H */
