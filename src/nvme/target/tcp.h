/* SPDX-License-Identifier: MIT */
/*
 * ucmdd's NVMe/TCP target (docs/daemon.md): the daemon's controllers exported as
 * NVMe over Fabrics subsystems, so that Linux's nvme-tcp host driver (or
 * any NVMe/TCP host) reaches them. Commands go through the daemon's engine
 * as io_uring passthrough commands (IORING_OP_URING_CMD) on a ring of the
 * daemon's engine that the connection owns, created acting as the
 * connection (cred_override_set): the policy and the audit judge every
 * command as that identity, of which the host NQN and host ID from Connect
 * are part.
 *
 *   target.c        the listener, the subsystems, the fabrics controllers
 *                   (associations) shared by a host's queues
 *   target_conn.c   one connection: ICReq/ICResp, the PDU receive loop,
 *                   H2CData into the command's buffer, sends, TermReq,
 *                   the command's way from its capsule to its response
 *   target_io.c     the connection's engine ring: submission, completion
 *   tcp_buf.c       the commands' data buffers, kept by the slots
 *   target_cmd.c    one command: fabrics (Connect, Property Get/Set,
 *                   Disconnect), the admin commands a fabrics controller
 *                   answers itself, passthrough to the engine, discovery
 *
 * Threads: one listener; per connection one thread that receives,
 * submits, reaps and sends (target_io.c says why). As many
 * commands run at once as the host's queue holds (as Linux's nvmet does),
 * and everything a connection holds is bounded: slots = its queue size,
 * command data = NVMET_TCP_CONN_MEM (a command that does not fit waits for
 * others to complete, in order). A connection whose peer stops reading
 * stalls only its own threads until the send timeout closes it. What one
 * user may hold is bounded too (struct nvmet_tcp_limits): connections and
 * associations per uid or address, deadlines for ICReq and Connect, a KATO
 * for every association; root always gets in.
 */
#ifndef UCMD_TCP_TARGET_H
#define UCMD_TCP_TARGET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/cred.h"
#include "tcp/pdu.h"
#include "ucmd/ucmd.h"

struct ucmd_engine;

#define NVMET_TCP_MAX_SUBSYS		32
/*
 * Listeners (ports) of one daemon: each has its own range of controller
 * IDs, so that the associations of all ports of a subsystem stay distinct
 * (a host refuses a duplicate CNTLID in one subsystem)
 */
#define NVMET_TCP_MAX_PORTS		16
#define NVMET_TCP_ANA_GRPS		1	/* ANAGRPMAX: group 1 holds every namespace */
#define NVMET_TCP_ANATT		10	/* seconds a change state may last */
#define NVMET_TCP_AEN_CFG_ANA	(1u << 11)	/* Asynchronous Event Configuration: ANA Change */
#define NVMET_TCP_MAX_CTRLS		128	/* fabrics controllers (associations) at once */
#define NVMET_TCP_MAX_CONNS		256
/* beyond the limits above, kept for root so that no user can lock it out */
#define NVMET_TCP_ROOT_CONNS		16
#define NVMET_TCP_ROOT_CTRLS		8
#define NVMET_TCP_QUEUE_SIZE		128	/* CAP.MQES + 1: slots per connection */
#define NVMET_TCP_ICD_LEN		8192	/* in-capsule data we accept (admin and I/O) */
#define NVMET_TCP_MAXH2CDATA		(128u << 10)
#define NVMET_TCP_MDTS		8	/* 2^8 x 4 KiB = 1 MiB per command */
#define NVMET_TCP_MAX_XFER		(4096u << NVMET_TCP_MDTS)
#define NVMET_TCP_MAX_IO_QUEUES	64
/*
 * The limits of a target (the --nvme-tcp option's ",key=value" settings,
 * docs/nvme-tcp.md): every one bounds what a peer that does not follow
 * the protocol, or one user, can hold.
 */
struct nvmet_tcp_limits {
	uint32_t icreq_ms;	/* ICReq within this of the accept, else closed (10 s) */
	uint32_t connect_ms;	/* a successful Connect within this of the accept (10 s) */
	uint32_t send_ms;	/* one send of queued PDUs done within this, else closed (30 s) */
	uint32_t kato0_ms;	/* the KATO of a host that asks for none (120 s, nvmet's discovery one) */
	unsigned max_conns;	/* connections of everyone but root (NVMET_TCP_MAX_CONNS) */
	unsigned max_ctrls;	/* associations of everyone but root (NVMET_TCP_MAX_CTRLS) */
	unsigned peer_conns;	/* connections of one uid (local) or address (remote): 130 */
	unsigned peer_ctrls;	/* associations of one uid or address: 16 */
};
/* command data a connection holds at once: 8 commands of the largest size */
#define NVMET_TCP_CONN_MEM		(8u * NVMET_TCP_MAX_XFER)
/* SQ entries of a connection's ring: every slot, and a wake-up NOP */
#define NVMET_TCP_RING_ENTRIES	(2 * NVMET_TCP_QUEUE_SIZE)
/* what one receive may bring: many capsules, parsed before one submission */
#define NVMET_TCP_RXBUF		(64u << 10)
/* PDUs queued for one sendmsg (a read's response is up to 4 iovecs) */
#define NVMET_TCP_OUT_MAX		32
#define NVMET_TCP_OUT_IOV		(4 * NVMET_TCP_OUT_MAX)
/*
 * A slot keeps its data buffer for the next command it serves when it is
 * at most NVMET_TCP_POOL_BUF and the connection keeps no more than
 * NVMET_TCP_POOL_MEM in all: no allocation per command at a steady load,
 * and what an idle connection holds stays bounded.
 */
#define NVMET_TCP_POOL_BUF		(128u << 10)
#define NVMET_TCP_POOL_MEM		(1u << 20)

/* One exported controller: ucmdd's nvme<instance>, named by its subnqn. */
struct nvmet_tcp_subsys {
	unsigned instance;
	char nqn[NVME_NQN_LENGTH];
};

struct nvmet_tcp_port;

/* A fabrics controller: what Connect on the admin queue creates. */
struct nvmet_tcp_ctrl {
	struct nvmet_tcp_port *t;
	uint16_t cntlid;
	int subsys;		/* index in t->subsys, -1: the discovery controller */
	char hostnqn[NVME_NQN_LENGTH];
	uint8_t hostid[16];
	char owner[80];		/* the quota's key: its admin queue's peer (nvmet_tcp_conn.owner) */
	bool root;		/* ... is root: beyond the limits */
	_Atomic uint32_t kato_ms;	/* 0: no keep-alive timeout (Set Features may change it) */
	uint32_t cc, csts;
	_Atomic uint16_t nr_io_queues;	/* Set Features Number of Queues granted */
	_Atomic uint32_t aec;	/* Asynchronous Event Configuration the host set */
	atomic_bool dead;	/* admin queue gone or KATO expired: I/O queues end */
	unsigned refs;		/* under t->lock */
	pthread_mutex_t lock;	/* cc/csts */
};

/*
 * FREE -> WAIT_MEM (its data does not fit NVMET_TCP_CONN_MEM yet) -> WAIT_DATA
 * (R2T sent) -> RUNNING (executing, or submitted to the engine) -> FREE;
 * PARKED: an AER, answered only by an event.
 */
enum nvmet_tcp_slot_state { SLOT_FREE, SLOT_WAIT_MEM, SLOT_WAIT_DATA, SLOT_RUNNING, SLOT_PARKED };

/* One command on a connection, from its capsule to its response. */
struct nvmet_tcp_slot {
	enum nvmet_tcp_slot_state state;
	struct ucmd_nvme_sqe sqe;
	uint8_t *buf;		/* the command's data, len bytes */
	uint32_t len;
	uint32_t received;	/* H2CData bytes in buf so far */
	bool h2c;		/* data flows host -> controller */
	bool icd;		/* data came in the capsule */
	uint32_t mem;		/* bytes of NVMET_TCP_CONN_MEM it holds */
	/*
	 * The slot's kept buffer (tcp_buf.c), pool_cap bytes, or NULL. It
	 * holds zeros or bytes this connection's host sent or was sent:
	 * a command whose data it filled and did not send zeroes it.
	 */
	uint8_t *pool;
	uint32_t pool_cap;
	bool unsent;		/* buf was not zeroed and its data is not yet queued to the host */
	uint8_t icd_data[NVMET_TCP_ICD_LEN];
	/* its queued PDUs' headers (R2T or C2HData; CapsuleResp), until sent */
	_Alignas(8) uint8_t hdr[2][NVME_TCP_HDR_BUF];
	uint32_t ddgst;		/* the C2HData's data digest */
	struct nvmet_tcp_slot *next;	/* the queue of slots waiting for memory */
};

struct nvmet_tcp_conn {
	struct nvmet_tcp_port *t;
	int sock;
	struct ucmd_cred cred;	/* the peer, then + host NQN once connected */
	bool local;		/* a process on this host (target_peer.c) */
	bool root;		/* uid 0's, or a socket root made: past the limits */
	char peer[64];
	char owner[80];		/* whose quota it counts against: "uid N" or "address A" */
	uint64_t accepted_ms;	/* for the ICReq and Connect deadlines */
	bool ic_done;		/* ICResp sent */
	/* negotiated by ICReq/ICResp */
	bool hdgst, ddgst;
	uint8_t hpda;		/* the alignment the host asked of our data */
	/* set by Connect */
	/* set by Connect; read by must_end() on the same thread, atomic as it was */
	struct nvmet_tcp_ctrl *_Atomic ctrl;
	uint16_t qid, sqsize;	/* sqsize 0's based */
	/*
	 * SQ flow control disabled by Connect: SQHD is reserved (0) and a
	 * read that succeeds with a zero result ends with a C2HData that has
	 * SUCCESS set, and no CapsuleResp (NVMe/TCP 1.0 section 3.6.2.7)
	 */
	bool sqflow_off;
	uint32_t sqhd;
	int efd;		/* engine fd: nvme<i> on the admin queue */
	int ns_fd[8];		/* engine fds of ng<i>n<nsid> on an I/O queue, by nsid-1 */

	/*
	 * Everything below is the receive thread's alone (tcp_io.c: it
	 * receives, submits, reaps and sends): no lock. Other threads only
	 * shut the socket down (tcp_port.c) or read the atomics.
	 */
	struct nvmet_tcp_slot *slots;	/* NVMET_TCP_QUEUE_SIZE */
	struct nvmet_tcp_slot *q_head, *q_tail;	/* waiting for memory, in arrival order */
	uint32_t mem_used;	/* of NVMET_TCP_CONN_MEM */
	bool dispatching;	/* a thread is starting queued slots */
	unsigned inflight;	/* submitted to the engine, not yet reaped */
	uint32_t pool_bytes;	/* kept by the slots (pool_cap), of NVMET_TCP_POOL_MEM */
	atomic_bool dead;
	/* PDUs waiting for one sendmsg; a slot whose response it is goes back after */
	struct iovec out_iov[NVMET_TCP_OUT_IOV];
	unsigned out_niov, out_nslot;
	struct nvmet_tcp_slot *out_slot[NVMET_TCP_OUT_MAX];
	bool out_release[NVMET_TCP_OUT_MAX];
	/* received and not yet parsed: rxbuf[rx_off, rx_len) */
	uint8_t *rxbuf;
	uint32_t rx_off, rx_len;
	/*
	 * The last recv took less than it asked for: the socket was empty
	 * then, and the next read sleeps (in poll, or a blocking recv when
	 * nothing is in flight) before it asks again (recv_full)
	 */
	bool rx_short;
	/* the engine ring (target_io.c): an I/O or subsystem admin queue has one */
	struct ucmd_ring ring;
	bool has_ring;
	int ring_efd;		/* eventfd registered on the ring: late completions */
	unsigned sq_pending;	/* SQEs queued, submitted at the next flush */
	pthread_t rx;
	_Atomic uint64_t last_ka;	/* CLOCK_MONOTONIC ms of the last admin command */
	_Atomic uint64_t ana_seen;	/* the port's ANA change count the host was told of */
	atomic_bool disconnecting;	/* Disconnect answered: close after its response */
	struct nvmet_tcp_conn *next;	/* t->conns */
};

struct nvmet_tcp_port {
	struct ucmd_engine *e;
	int lfd;
	int stop_fd;		/* eventfd: readable once stopping */
	atomic_bool stopping;
	pthread_t listener;
	char traddr[64];	/* the address the discovery log gives */
	char trsvcid[8];
	uint16_t portid;	/* 1-based: the order of ucmdd's --nvme-tcp options */
	uint16_t cntlid_base;	/* this port's controllers are cntlid_base + 1... */
	/* target_ana.c: the port's ANA state per group [1..], and its change count */
	_Atomic uint8_t ana_state[NVMET_TCP_ANA_GRPS + 1];
	_Atomic uint64_t ana_chgcnt;
	int adrfam;		/* NVMF_ADDR_FAMILY_IP4/IP6 */
	struct nvmet_tcp_limits lim;
	struct nvmet_tcp_subsys subsys[NVMET_TCP_MAX_SUBSYS];
	unsigned nr_subsys;
	uint64_t genctr;	/* discovery log generation */
	void (*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

	/*
	 * tcp_port.c: the owner takes the port down (no listener, every
	 * connection closed) and brings it back on the same address; under
	 * state_lock, which also orders them with nvmet_tcp_stop().
	 */
	pthread_mutex_t state_lock;
	atomic_bool disabled;
	struct sockaddr_storage ss;
	socklen_t sl;

	pthread_mutex_t lock;	/* ctrls, conns */
	pthread_cond_t gone;
	struct nvmet_tcp_ctrl *ctrls[NVMET_TCP_MAX_CTRLS + NVMET_TCP_ROOT_CTRLS];	/* by cntlid - base - 1 */
	struct nvmet_tcp_conn *conns;
	unsigned nr_conns;
};

/* ---- target.c: what ucmdd calls ---- */
/*
 * Listen on addr ("ADDR[:PORT][,KEY=VALUE...]", nvmet_tcp_parse) as port portid
 * (1..NVMET_TCP_MAX_PORTS) and export nvme<instances[i]> of e: their
 * subsystem NQNs come from Identify Controller, asked now with the
 * daemon's credentials. 0 or -errno with the reason in err.
 */
int nvmet_tcp_start(struct ucmd_engine *e, const char *addr, unsigned portid,
	       const unsigned *instances, unsigned nr, void (*log)(const char *fmt, ...),
	       struct nvmet_tcp_port **out, char *err, size_t errlen);
/* Stop listening, end every connection, wait for their threads, free. */
void nvmet_tcp_stop(struct nvmet_tcp_port *t);
/* Listen on the port's address and start its listener thread: 0 or -errno. */
int  nvmet_tcp_listen(struct nvmet_tcp_port *t);

/* ---- tcp_port.c: a port taken down and brought back ---- */
/*
 * enable false: the listener stops (new connections are refused) and
 * every connection of the port is closed, its associations gone, as a
 * port whose link went down; true: listening again on the same address.
 * 0 or -errno (the address taken meanwhile: -EADDRINUSE).
 */
int  nvmet_tcp_port_enable(struct nvmet_tcp_port *t, bool enable);
/* Every connection of t shut down, and gone when this returns (tcp.c's stop too). */
void nvmet_tcp_port_drop_conns(struct nvmet_tcp_port *t);
bool nvmet_tcp_port_enabled(struct nvmet_tcp_port *t);

/*
 * Parse "ADDR[:PORT]" (IPv6 in brackets), port 4420 by default, then
 * ",KEY=VALUE" settings of the limits (icreq_timeout, connect_timeout,
 * send_timeout, kato0 in seconds; max_conns, max_assocs, conns_per_peer,
 * assocs_per_peer), defaults for those not given; 0 or -EINVAL (lim may
 * be NULL: only checked).
 */
int nvmet_tcp_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len,
	       struct nvmet_tcp_limits *lim);
/* nvmet_tcp_parse without the limits, as ucmdd checks its option. */
int nvmet_tcp_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len);
/*
 * A new fabrics controller for connection c's admin Connect; NULL: none
 * free, or c's owner holds its share of them (errno EDQUOT then).
 */
struct nvmet_tcp_ctrl *nvmet_tcp_ctrl_new(struct nvmet_tcp_conn *c, int subsys, const char *hostnqn,
				const uint8_t hostid[16], uint32_t kato_ms);
/* The controller cntlid, with a reference, when subsys, hostnqn and hostid match. */
struct nvmet_tcp_ctrl *nvmet_tcp_ctrl_get(struct nvmet_tcp_port *t, uint16_t cntlid, int subsys, const char *hostnqn,
				const uint8_t hostid[16]);
void nvmet_tcp_ctrl_put(struct nvmet_tcp_ctrl *c);
/* The subsystem index of nqn, -1 for the discovery NQN, -2 for none. */
int nvmet_tcp_subsys_find(struct nvmet_tcp_port *t, const char *nqn);
uint64_t nvmet_tcp_now_ms(void);

/* ---- target_conn.c ---- */
int nvmet_tcp_conn_start(struct nvmet_tcp_port *t, int sock);
/* Fatal: C2HTermReq (when fes) and close; the connection's threads end. */
void nvmet_tcp_conn_fail(struct nvmet_tcp_conn *c, uint16_t fes, uint32_t fei, const void *hdr,
		    size_t hdr_len);

/*
 * A command's end: its response (C2HData and CapsuleResp as allowed, on
 * failure a CapsuleResp alone) is queued; once it is sent
 * (nvmet_tcp_conn_flush_out), the slot and its memory go back and the commands
 * waiting for memory may start. The receiver's thread only.
 */
void nvmet_tcp_conn_respond(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, struct ucmd_nvme_cqe *cqe,
		       uint32_t out_len);
/* Send the queued PDUs in one sendmsg, then free the slots they answered. */
void nvmet_tcp_conn_flush_out(struct nvmet_tcp_conn *c);

/* ---- tcp_buf.c: the slots' data buffers ---- */
/*
 * s->buf for s->len bytes: the slot's kept buffer when it is large
 * enough, else a new one (kept when the pool has room). Zeroed except
 * where the command is known to overwrite it (an I/O queue's Read: the
 * blocks it reads). 0 or -ENOMEM.
 */
int  nvmet_tcp_buf_get(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s);
/*
 * s's buffer back: kept or freed; a buffer whose data was filled and not
 * queued to the host (s->unsent: the command failed) is zeroed first.
 */
void nvmet_tcp_buf_put(struct nvmet_tcp_slot *s);
/* Every kept buffer freed (the connection's end). */
void nvmet_tcp_buf_drain(struct nvmet_tcp_conn *c);

/* ---- target_io.c ---- */
/* The ring of a connection that Connect bound to a subsystem, and its eventfd. */
int nvmet_tcp_io_start(struct nvmet_tcp_conn *c);
/* Wait for every submitted command to complete, exit the ring. */
void nvmet_tcp_io_stop(struct nvmet_tcp_conn *c);
/*
 * Queue s as a passthrough uring_cmd on engine file fd, submitted at the
 * next nvmet_tcp_io_flush; -errno if it could not be queued.
 */
int nvmet_tcp_io_submit(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, int fd, bool admin);
/*
 * Before the receiver makes a system call: submit what is queued, reap
 * what completed, send the responses (all of them in one sendmsg).
 */
void nvmet_tcp_io_flush(struct nvmet_tcp_conn *c);
/*
 * Nothing submitted to the engine and not reaped, nothing queued: no
 * completion can come while the receiver sleeps, which it may then do in
 * its recv (recv_full) instead of a poll that also watches the ring.
 */
bool nvmet_tcp_io_idle(const struct nvmet_tcp_conn *c);
/*
 * Around the receiver's poll: *pf becomes the ring's eventfd to poll
 * (fd -1: no ring; -2: CQEs are there already, do not sleep), and the
 * eventfd is enabled between the two calls only.
 */
struct pollfd;
void nvmet_tcp_io_wait_begin(struct nvmet_tcp_conn *c, struct pollfd *pf);
void nvmet_tcp_io_wait_end(struct nvmet_tcp_conn *c, const struct pollfd *pf);

/* ---- target_ana.c ---- */
/* nvmet's names of the ANA states (optimized, ...): the state, or -EINVAL */
int nvmet_tcp_ana_state_parse(const char *s);
/* The name of a state, NULL for a value that is none */
const char *nvmet_tcp_ana_state_name(uint8_t state);
/* Every group optimized, no change yet */
void nvmet_tcp_ana_init(struct nvmet_tcp_port *t);
/* The port's state of group grpid: 0, or -EINVAL for a group or state that is none */
int nvmet_tcp_ana_set(struct nvmet_tcp_port *t, uint32_t grpid, uint8_t state);
/* The state, 0 for a group that is none */
uint8_t nvmet_tcp_ana_get(struct nvmet_tcp_port *t, uint32_t grpid);
/* What an I/O command on namespace nsid through this port gets: 0 or a path status */
uint16_t nvmet_tcp_ana_io_status(struct nvmet_tcp_port *t, uint32_t nsid);
/* Identify Controller's and Identify Namespace's multipath and ANA fields */
struct nvme_id_ctrl;
void nvmet_tcp_ana_id_ctrl(struct nvme_id_ctrl *id);
void nvmet_tcp_ana_id_ns(uint8_t cns, void *buf);
/* The ANA log page (0Ch) of the connection's port into s->buf */
uint16_t nvmet_tcp_ana_log(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, uint32_t *out_len);
/* Receiver thread, admin queue: answer a parked AER if the port's ANA changed */
void nvmet_tcp_ana_notice(struct nvmet_tcp_conn *c);

/* ---- target_peer.c ---- */
enum nvmet_tcp_peer {
	NVMET_TCP_PEER_REMOTE,	/* not a socket of this host: judged by host NQN and ID */
	NVMET_TCP_PEER_LOCAL,	/* a process of this host: its uid, gid and groups in c */
	/*
	 * a socket of this host that root made and no root process holds:
	 * Linux's own nvme-tcp host (a kernel socket). Judged as remote; past
	 * the limits, as root's
	 */
	NVMET_TCP_PEER_KERNEL,
	/*
	 * a socket of this host whose holder cannot be told: no process of
	 * its maker's uid holds it (in flight in an SCM_RIGHTS message,
	 * passed to another user, or in a process ucmdd may not inspect), or
	 * its holders differ. Refused: what is not known is not granted
	 */
	NVMET_TCP_PEER_UNKNOWN,
};
/*
 * Who is at the other end of sock (target_peer.c says how): for
 * NVMET_TCP_PEER_LOCAL its uid, gid and groups into c (no capability), c
 * untouched otherwise; *maker the uid that made the peer's socket (-1 when
 * remote).
 */
enum nvmet_tcp_peer nvmet_tcp_peer_identify(int sock, struct ucmd_cred *c, uid_t *maker);

/* ---- target_cmd.c ---- */
/*
 * Execute a command whose data is in slot->buf (host to controller) or to
 * be filled there (controller to host). The commands the target answers
 * itself fill cqe and *out_len (bytes of buf to send back) and return 0;
 * a passthrough is submitted to the engine and returns -EINPROGRESS: its
 * completion calls nvmet_tcp_cmd_done.
 */
int nvmet_tcp_cmd_exec(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, struct ucmd_nvme_cqe *cqe,
		  uint32_t *out_len);
/* A passthrough's completion (res: NVMe status or -errno, result: DW0/DW1). */
void nvmet_tcp_cmd_done(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, int res, uint64_t result,
		   struct ucmd_nvme_cqe *cqe, uint32_t *out_len);
/* Whether a command is one the fabrics controller parks (AER): no response. */
bool nvmet_tcp_cmd_parks(const struct nvmet_tcp_conn *c, const struct ucmd_nvme_sqe *sqe);
/* Close the engine fds a connection opened. */
void nvmet_tcp_cmd_conn_close(struct nvmet_tcp_conn *c);

/* NVMe status field values: SC | SCT << 8 | DNR */
#define NVMET_TCP_SC(sct, sc, dnr) ((uint16_t)((sc) | ((sct) << 8) | ((dnr) ? 0x4000 : 0)))

#endif
