/* SPDX-License-Identifier: MIT */
/*
 * The NVMe/TCP host transport, shared by tcp.c (connections, PDUs, the
 * ops table) and fabrics.c (the fabrics commands, identity, URL): Linux's
 * nvme-tcp and nvme-fabrics split.
 *
 * One TCP connection per queue (admin and each I/O queue), each with a
 * receiver thread that reads every PDU the controller sends: C2HData into
 * the request's buffer, R2T answered with H2CData, CapsuleResp completing
 * the request through the same path as a PCI completion (nvme_handle_cqe).
 * Submitters write CapsuleCmds under the queue's send lock.
 *
 * An I/O queue's completions are read by the waiting thread of the ring
 * that sent the commands (a wait source, core/uring_cmd.h): its receiver
 * reads only while no waiter comes, so a read completes where its caller
 * waits, with no thread switch in between.
 *
 * A polled queue (nr_poll_queues, Linux's nvme-tcp poll queues) is read
 * by whoever polls it (an IOPOLL ring's waiter, through ->poll): the
 * completions happen on the polling thread, with no thread switch. Its
 * receiver then only watches the connection for its end, and reads the
 * socket itself once nobody has polled for NVME_TCP_POLL_IDLE_MS.
 */
#ifndef UCMD_NVME_HOST_TCP_H
#define UCMD_NVME_HOST_TCP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fabrics.h"
#include "host.h"
#include "tcp/pdu.h"

/* Linux's deadline for ICResp: 10 s (nvme-tcp's icresp receive timeout) */
#define NVME_TCP_DEFAULT_ICRESP_MS	10000u

/*
 * The association's state, as Linux's nvme_ctrl_state reduced to what the
 * TCP host needs: NEW while nvme_host_start() runs (a drop fails the
 * attach), LIVE, RECONNECTING after a connection failed (submitters wait),
 * DEAD once ctrl_loss_tmo passed (everything fails with -ENOTCONN),
 * STOPPING while the host is detached.
 */
enum nvme_tcp_state {
	NVME_TCP_NEW,
	NVME_TCP_LIVE,
	NVME_TCP_RECONNECTING,
	NVME_TCP_DEAD,
	NVME_TCP_STOPPING,
};

struct nvme_tcp_ctrl {
	struct nvme_host host;		/* first: the public handle points at it */
	struct nvmf_ctrl fabrics;	/* the options (digests asked for in ICReq), cntlid */
	uint32_t io_inline_max;		/* in-capsule data bytes on I/O queues (IOCCSZ) */

	/*
	 * error recovery (tcp_recovery.c): one thread, woken when a connection
	 * fails; reconnect_delay and ctrl_loss_tmo are in fabrics.opts
	 */
	pthread_mutex_t state_lock;
	pthread_cond_t state_cond;	/* CLOCK_MONOTONIC */
	enum nvme_tcp_state state;
	pthread_t rec_thread;
	bool rec_started;		/* written by attach/detach under state_lock */
	atomic_ulong reconnects;	/* associations re-established */
	atomic_ulong polled_cqes;	/* completions a poller read off a socket */
	atomic_ulong waited_cqes;	/* completions a ring's waiter read off a socket */
	/*
	 * Why a connection failed, said by the thread that saw it (the
	 * receiver, the timeout handler): an attach that fails for it
	 * reports this sentence and err. Under state_lock.
	 */
	char why[192];
	int why_err;
};

/* Record why a connection of c failed (the first reason is kept until an attach reads it). */
void nvme_tcp_set_why(struct nvme_tcp_ctrl *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct nvme_tcp_queue {
	struct nvme_queue *nq;
	int fd;
	pthread_t rx_thread;
	bool rx_started;
	atomic_bool dead;		/* the connection failed or was closed */
	pthread_mutex_t send_lock;	/* one PDU at a time on the socket */
	bool hdgst, ddgst;		/* negotiated */
	uint8_t cpda;			/* the controller's data alignment */
	uint32_t maxh2cdata;
	uint32_t inline_max;		/* in-capsule data bytes this queue sends */
	/*
	 * CLOCK_MONOTONIC ms by which what is being read must have come, for
	 * the exchanges before the receiver runs (ICResp, Connect, the
	 * recovery's commands); 0: none (the receiver's reads wait, the
	 * commands' own timeouts bound them)
	 */
	uint64_t rx_deadline_ms;
	struct nvme_tcp_rx_limits lim;
	/*
	 * What one recv brought and the receiver has not parsed yet
	 * (NVME_TCP_RXQ bytes; [rxq_off, rxq_len) unread): one system call
	 * serves every PDU the controller sent together.
	 */
	uint8_t *rxq;
	uint32_t rxq_off, rxq_len;
	bool rx_short;			/* the last recv took less than NVME_TCP_RXQ: the socket was empty */
	/*
	 * The last read of the connection ended on finding it empty, and no
	 * poll has looked at it since (under rx_lock): a waiter that would
	 * sleep on it if it found nothing leaves the look to its poll.
	 */
	bool rx_drained;
	/* completions parsed off this connection (under rx_lock on a polled queue) */
	unsigned rx_completed;
	/*
	 * A polled queue: the receive side (the stream, rxq) belongs to whoever
	 * holds rx_lock, a poller or the receiver; neither sleeps holding it
	 * except to finish a PDU that has begun. A poller that finds the
	 * connection broken records why in rx_err and shuts the socket down:
	 * the receiver, which watches it, then fails the queue as usual.
	 * A ring's waiter (tcp_wait_*) reads an I/O queue the same way.
	 */
	bool polled;
	pthread_mutex_t rx_lock;
	atomic_int rx_err;
	atomic_ullong last_poll_ms;	/* CLOCK_MONOTONIC ms of the last poll (or waiter's read) */
	atomic_int wait_sleepers;	/* a ring's waiter sleeps on the socket (holding rx_lock) */
	atomic_ullong empty_ns;		/* CLOCK_MONOTONIC ns a poll last found nothing */
	/*
	 * The PDUs of one submission, staged until its last request (or
	 * commit_rqs) sends them in one sendmsg, as Linux's nvme-tcp sends
	 * with MSG_MORE until the last. Under send_lock; tx_len bytes staged.
	 * Also the bounce buffer of H2CData (sent after the staged PDUs).
	 */
	uint8_t *tx_buf;
	uint32_t tx_len;
	uint32_t tx_nr;		/* capsules staged (tx_len's), for NVME_TCP_DEFER_MAX */
	/*
	 * Sends a ring's waiter owes (tcp_queue_rq): at one SQE per submit the
	 * capsules of consecutive submissions stay staged while that ring's
	 * waiter is about to come back for their completions, and it sends
	 * them together before it reads the socket (tcp_wait_reap): one
	 * sendmsg per pass instead of one per command. Only while the
	 * receiver watches (rx_watching, cleared with a flush under send_lock
	 * before it sleeps untimed; a submitter that finds it cleared wakes it
	 * through kick_fd first) and no waiter sleeps on the socket; the
	 * receiver sends what waited NVME_TCP_WAIT_IDLE_MS (tx_defer_ms, the
	 * first one's time) itself, so a ring that stops waiting is not stuck.
	 * tx_deferred: set and cleared under send_lock, read without it.
	 */
	atomic_bool tx_deferred;
	atomic_bool rx_watching;
	int kick_fd;			/* eventfd: wakes the receiver to watch */
	atomic_bool rx_kicked;		/* written, not yet read by the receiver */
	atomic_ullong tx_defer_ms;
	_Atomic(const void *) waiter;	/* the thread that last read it as a ring's waiter */
};

#define NVME_TCP_BUF	(128u * 1024)
/*
 * At most this many capsules wait for a ring's waiter (tcp_may_defer): a
 * submission that stages more, or brings the staged ones to it, sends them
 * at once. Deferral is for one-SQE submissions; batches of several already
 * leave in one sendmsg, and held back they would wait for a waiter that has
 * its CQEs (peeked from the CQ without entering) and does not come.
 */
#define NVME_TCP_DEFER_MAX	8u
/*
 * A polled queue's receiver reads the socket after nvme_tcp_poll_idle_ms
 * (100) without a poll; an I/O queue's receiver leaves the reading to the
 * rings' waiters while one has come within nvme_tcp_wait_idle_ms (10,
 * tcp_wait_*), then reads again. Variables only so that a test can widen
 * them: which thread completes what is otherwise decided by how long a
 * thread keeps its CPU, which no test on a loaded machine can assume.
 */
extern atomic_uint nvme_tcp_poll_idle_ms, nvme_tcp_wait_idle_ms;
#define NVME_TCP_POLL_IDLE_MS	atomic_load_explicit(&nvme_tcp_poll_idle_ms, memory_order_relaxed)
#define NVME_TCP_WAIT_IDLE_MS	atomic_load_explicit(&nvme_tcp_wait_idle_ms, memory_order_relaxed)
/* a poll this soon after one that found the connection empty does not look again */
#define NVME_TCP_POLL_RECHECK_NS	2000u
/*
 * What one waiter's pass brings fits one recv: QD32 of 4 KiB reads is
 * 32 C2HData of 4,120 bytes (131,840), which a 64 KiB buffer took in
 * three recvs and the pass's last empty one.
 */
#define NVME_TCP_RXQ	(256u * 1024)
/* tx_buf: any one CapsuleCmd (header, in-capsule data up to NVME_TCP_BUF, digest) fits */
#define NVME_TCP_TXQ	(NVME_TCP_BUF + NVME_TCP_HDR_BUF + NVME_TCP_DIGEST_LEN)

static inline struct nvme_tcp_ctrl *nvme_tcp_ctrl(struct nvme_host *h)
{
	return (struct nvme_tcp_ctrl *)(void *)h;
}

/* ---- tcp.c ---- */
/* ucmd_nvme_attach_tcp(); ns_hidden: a multipath path, its namespaces without devices. */
int  nvme_tcp_attach(struct ucmd_engine *e, const char *url,
		     const struct ucmd_nvme_host_opts *opts,
		     const struct ucmd_nvme_tcp_opts *topts, bool ns_hidden,
		     struct ucmd_nvme_host **out);
/* A new connection for q's existing queue: socket, ICReq, Connect (no receiver yet). */
int  nvme_tcp_reconnect_queue(struct nvme_host *h, struct nvme_queue *q);
/* A command on a queue whose receiver is not running; its result in *result. */
int  nvme_tcp_raw_cmd(struct nvme_tcp_queue *tq, struct ucmd_nvme_sqe *sqe, uint64_t *result);
int  nvme_tcp_start_rx(struct nvme_tcp_queue *tq);
void nvme_tcp_join_rx(struct nvme_tcp_queue *tq);
/* Send again every request sent on the lost connection and not completed. */
void nvme_tcp_resend(struct nvme_tcp_queue *tq);
/* End every request sent on tq and not completed with err. */
void nvme_tcp_end_sent(struct nvme_tcp_queue *tq, int err);
/*
 * A multipath path's I/O queue lost its connection (Linux's
 * nvme_cancel_request then nvme_failover_req): the head's block requests
 * sent on it end with -ENOTCONN, a path error the head sends on another
 * path; its passthrough ends with Host Aborted Command (never sent again).
 * Not those the timeout handler gave up on (they end as they would).
 */
void nvme_tcp_failover_sent(struct nvme_tcp_queue *tq);

/* ---- tcp_recovery.c ---- */
/* The association is being re-established or is lost (no register access then). */
bool nvme_tcp_unreachable(struct nvme_tcp_ctrl *c);
void nvme_tcp_state_init(struct nvme_tcp_ctrl *c);
void nvme_tcp_state_destroy(struct nvme_tcp_ctrl *c);
int  nvme_tcp_recovery_start(struct nvme_host *h);
/* Stop recovering (state STOPPING, submitters woken) and join the thread. */
void nvme_tcp_recovery_stop(struct nvme_host *h);
/* A connection failed: true if the association will be re-established. */
bool nvme_tcp_error_recovery(struct nvme_host *h);
/*
 * A submitter on tq: wait while the association is being re-established.
 * 0 when tq can carry commands (send lock held on return), else -ENOTCONN
 * or -EIO (send lock not held). failfast: -ENOTCONN at once while it is
 * (a multipath head's request: another path takes it, Linux's
 * nvmf_fail_nonready_command).
 */
int  nvme_tcp_wait_live(struct nvme_tcp_queue *tq, bool failfast);

#endif
