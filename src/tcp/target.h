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
 *   target_cmd.c    one command: fabrics (Connect, Property Get/Set,
 *                   Disconnect), the admin commands a fabrics controller
 *                   answers itself, passthrough to the engine, discovery
 *
 * Threads: one listener; per connection one thread that receives,
 * submits, reaps and sends (target_io.c says why). As many
 * commands run at once as the host's queue holds (as Linux's nvmet does),
 * and everything a connection holds is bounded: slots = its queue size,
 * command data = TCPT_CONN_MEM (a command that does not fit waits for
 * others to complete, in order). A connection whose peer stops reading
 * stalls only its own threads until the send timeout closes it. What one
 * user may hold is bounded too (struct tcpt_limits): connections and
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

#define TCPT_MAX_SUBSYS		32
/*
 * Listeners (ports) of one daemon: each has its own range of controller
 * IDs, so that the associations of all ports of a subsystem stay distinct
 * (a host refuses a duplicate CNTLID in one subsystem)
 */
#define TCPT_MAX_PORTS		16
#define TCPT_ANA_GRPS		1	/* ANAGRPMAX: group 1 holds every namespace */
#define TCPT_ANATT		10	/* seconds a change state may last */
#define TCPT_AEN_CFG_ANA	(1u << 11)	/* Asynchronous Event Configuration: ANA Change */
#define TCPT_MAX_CTRLS		128	/* fabrics controllers (associations) at once */
#define TCPT_MAX_CONNS		256
/* beyond the limits above, kept for root so that no user can lock it out */
#define TCPT_ROOT_CONNS		16
#define TCPT_ROOT_CTRLS		8
#define TCPT_QUEUE_SIZE		128	/* CAP.MQES + 1: slots per connection */
#define TCPT_ICD_LEN		8192	/* in-capsule data we accept (admin and I/O) */
#define TCPT_MAXH2CDATA		(128u << 10)
#define TCPT_MDTS		8	/* 2^8 x 4 KiB = 1 MiB per command */
#define TCPT_MAX_XFER		(4096u << TCPT_MDTS)
#define TCPT_MAX_IO_QUEUES	64
/* Connect's CATTR bit 2 (NVMe-oF 1.1 section 3.3): the host needs no SQHD */
#define TCPT_CATTR_DISABLE_SQFLOW	(1u << 2)
/*
 * The limits of a target (the --nvme-tcp option's ",key=value" settings,
 * docs/nvme-tcp.md): every one bounds what a peer that does not follow
 * the protocol, or one user, can hold.
 */
struct tcpt_limits {
	uint32_t icreq_ms;	/* ICReq within this of the accept, else closed (10 s) */
	uint32_t connect_ms;	/* a successful Connect within this of the accept (10 s) */
	uint32_t send_ms;	/* one send of queued PDUs done within this, else closed (30 s) */
	uint32_t kato0_ms;	/* the KATO of a host that asks for none (120 s, nvmet's discovery one) */
	unsigned max_conns;	/* connections of everyone but root (TCPT_MAX_CONNS) */
	unsigned max_ctrls;	/* associations of everyone but root (TCPT_MAX_CTRLS) */
	unsigned peer_conns;	/* connections of one uid (local) or address (remote): 130 */
	unsigned peer_ctrls;	/* associations of one uid or address: 16 */
};
/* command data a connection holds at once: 8 commands of the largest size */
#define TCPT_CONN_MEM		(8u * TCPT_MAX_XFER)
/* SQ entries of a connection's ring: every slot, and a wake-up NOP */
#define TCPT_RING_ENTRIES	(2 * TCPT_QUEUE_SIZE)
/* what one receive may bring: many capsules, parsed before one submission */
#define TCPT_RXBUF		(64u << 10)
/* PDUs queued for one sendmsg (a read's response is up to 4 iovecs) */
#define TCPT_OUT_MAX		32
#define TCPT_OUT_IOV		(4 * TCPT_OUT_MAX)

/* One exported controller: ucmdd's nvme<instance>, named by its subnqn. */
struct tcpt_subsys {
	unsigned instance;
	char nqn[NVME_NQN_LENGTH];
};

struct tcpt;

/* A fabrics controller: what Connect on the admin queue creates. */
struct tcpt_ctrl {
	struct tcpt *t;
	uint16_t cntlid;
	int subsys;		/* index in t->subsys, -1: the discovery controller */
	char hostnqn[NVME_NQN_LENGTH];
	uint8_t hostid[16];
	char owner[80];		/* the quota's key: its admin queue's peer (tcpt_conn.owner) */
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
 * FREE -> WAIT_MEM (its data does not fit TCPT_CONN_MEM yet) -> WAIT_DATA
 * (R2T sent) -> RUNNING (executing, or submitted to the engine) -> FREE;
 * PARKED: an AER, answered only by an event.
 */
enum tcpt_slot_state { SLOT_FREE, SLOT_WAIT_MEM, SLOT_WAIT_DATA, SLOT_RUNNING, SLOT_PARKED };

/* One command on a connection, from its capsule to its response. */
struct tcpt_slot {
	enum tcpt_slot_state state;
	struct ucmd_nvme_sqe sqe;
	uint8_t *buf;		/* the command's data, len bytes */
	uint32_t len;
	uint32_t received;	/* H2CData bytes in buf so far */
	bool h2c;		/* data flows host -> controller */
	bool icd;		/* data came in the capsule */
	uint32_t mem;		/* bytes of TCPT_CONN_MEM it holds */
	uint8_t icd_data[TCPT_ICD_LEN];
	/* its queued PDUs' headers (R2T or C2HData; CapsuleResp), until sent */
	uint8_t hdr[2][NVME_TCP_HDR_BUF];
	uint32_t ddgst;		/* the C2HData's data digest */
	struct tcpt_slot *next;	/* the queue of slots waiting for memory */
};

struct tcpt_conn {
	struct tcpt *t;
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
	/* set by a worker's Connect, read by the receive thread: atomic */
	struct tcpt_ctrl *_Atomic ctrl;
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

	pthread_mutex_t lock;	/* slots, the memory queue, mem_used, inflight */
	struct tcpt_slot *slots;	/* TCPT_QUEUE_SIZE */
	struct tcpt_slot *q_head, *q_tail;	/* waiting for memory, in arrival order */
	uint32_t mem_used;	/* of TCPT_CONN_MEM */
	bool dispatching;	/* a thread is starting queued slots */
	unsigned inflight;	/* submitted to the engine, not yet reaped */
	atomic_bool dead;
	pthread_mutex_t send_lock;	/* the socket's sending side and the out queue */
	/* PDUs waiting for one sendmsg; a slot whose response it is goes back after */
	struct iovec out_iov[TCPT_OUT_IOV];
	unsigned out_niov, out_nslot;
	struct tcpt_slot *out_slot[TCPT_OUT_MAX];
	bool out_release[TCPT_OUT_MAX];
	/* received and not yet parsed: rxbuf[rx_off, rx_len) */
	uint8_t *rxbuf;
	uint32_t rx_off, rx_len;
	/* the engine ring (target_io.c): an I/O or subsystem admin queue has one */
	struct ucmd_ring ring;
	bool has_ring;
	int ring_efd;		/* eventfd registered on the ring: late completions */
	unsigned sq_pending;	/* SQEs queued, submitted at the next flush */
	pthread_mutex_t sq_lock;	/* the ring's SQ */
	pthread_t rx;
	_Atomic uint64_t last_ka;	/* CLOCK_MONOTONIC ms of the last admin command */
	_Atomic uint64_t ana_seen;	/* the port's ANA change count the host was told of */
	atomic_bool disconnecting;	/* Disconnect answered: close after its response */
	struct tcpt_conn *next;	/* t->conns */
};

struct tcpt {
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
	_Atomic uint8_t ana_state[TCPT_ANA_GRPS + 1];
	_Atomic uint64_t ana_chgcnt;
	int adrfam;		/* NVMF_ADDR_FAMILY_IP4/IP6 */
	struct tcpt_limits lim;
	struct tcpt_subsys subsys[TCPT_MAX_SUBSYS];
	unsigned nr_subsys;
	uint64_t genctr;	/* discovery log generation */
	void (*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

	pthread_mutex_t lock;	/* ctrls, conns */
	pthread_cond_t gone;
	struct tcpt_ctrl *ctrls[TCPT_MAX_CTRLS + TCPT_ROOT_CTRLS];	/* by cntlid - base - 1 */
	struct tcpt_conn *conns;
	unsigned nr_conns;
};

/* ---- target.c: what ucmdd calls ---- */
/*
 * Listen on addr ("ADDR[:PORT][,KEY=VALUE...]", tcpt_parse) as port portid
 * (1..TCPT_MAX_PORTS) and export nvme<instances[i]> of e: their
 * subsystem NQNs come from Identify Controller, asked now with the
 * daemon's credentials. 0 or -errno with the reason in err.
 */
int tcpt_start(struct ucmd_engine *e, const char *addr, unsigned portid,
	       const unsigned *instances, unsigned nr, void (*log)(const char *fmt, ...),
	       struct tcpt **out, char *err, size_t errlen);
/* Stop listening, end every connection, wait for their threads, free. */
void tcpt_stop(struct tcpt *t);

/*
 * Parse "ADDR[:PORT]" (IPv6 in brackets), port 4420 by default, then
 * ",KEY=VALUE" settings of the limits (icreq_timeout, connect_timeout,
 * send_timeout, kato0 in seconds; max_conns, max_assocs, conns_per_peer,
 * assocs_per_peer), defaults for those not given; 0 or -EINVAL (lim may
 * be NULL: only checked).
 */
int tcpt_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len,
	       struct tcpt_limits *lim);
/* tcpt_parse without the limits, as ucmdd checks its option. */
int tcpt_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len);
/*
 * A new fabrics controller for connection c's admin Connect; NULL: none
 * free, or c's owner holds its share of them (errno EDQUOT then).
 */
struct tcpt_ctrl *tcpt_ctrl_new(struct tcpt_conn *c, int subsys, const char *hostnqn,
				const uint8_t hostid[16], uint32_t kato_ms);
/* The controller cntlid, with a reference, when subsys, hostnqn and hostid match. */
struct tcpt_ctrl *tcpt_ctrl_get(struct tcpt *t, uint16_t cntlid, int subsys, const char *hostnqn,
				const uint8_t hostid[16]);
void tcpt_ctrl_put(struct tcpt_ctrl *c);
/* The subsystem index of nqn, -1 for the discovery NQN, -2 for none. */
int tcpt_subsys_find(struct tcpt *t, const char *nqn);
uint64_t tcpt_now_ms(void);

/* ---- target_conn.c ---- */
int tcpt_conn_start(struct tcpt *t, int sock);
/* Fatal: C2HTermReq (when fes) and close; the connection's threads end. */
void tcpt_conn_fail(struct tcpt_conn *c, uint16_t fes, uint32_t fei, const void *hdr,
		    size_t hdr_len);

/*
 * A command's end: its response (C2HData and CapsuleResp as allowed, on
 * failure a CapsuleResp alone) is queued; once it is sent
 * (tcpt_conn_flush_out), the slot and its memory go back and the commands
 * waiting for memory may start. The receiver's thread only.
 */
void tcpt_conn_respond(struct tcpt_conn *c, struct tcpt_slot *s, struct ucmd_nvme_cqe *cqe,
		       uint32_t out_len);
/* Send the queued PDUs in one sendmsg, then free the slots they answered. */
void tcpt_conn_flush_out(struct tcpt_conn *c);

/* ---- target_io.c ---- */
/* The ring of a connection that Connect bound to a subsystem, and its eventfd. */
int tcpt_io_start(struct tcpt_conn *c);
/* Wait for every submitted command to complete, exit the ring. */
void tcpt_io_stop(struct tcpt_conn *c);
/*
 * Queue s as a passthrough uring_cmd on engine file fd, submitted at the
 * next tcpt_io_flush; -errno if it could not be queued.
 */
int tcpt_io_submit(struct tcpt_conn *c, struct tcpt_slot *s, int fd, bool admin);
/*
 * Before the receiver makes a system call: submit what is queued, reap
 * what completed, send the responses (all of them in one sendmsg).
 */
void tcpt_io_flush(struct tcpt_conn *c);
/*
 * Around the receiver's poll: *pf becomes the ring's eventfd to poll
 * (fd -1: no ring; -2: CQEs are there already, do not sleep), and the
 * eventfd is enabled between the two calls only.
 */
struct pollfd;
void tcpt_io_wait_begin(struct tcpt_conn *c, struct pollfd *pf);
void tcpt_io_wait_end(struct tcpt_conn *c, const struct pollfd *pf);

/* ---- target_ana.c ---- */
/* nvmet's names of the ANA states (optimized, ...): the state, or -EINVAL */
int tcpt_ana_state_parse(const char *s);
/* The name of a state, NULL for a value that is none */
const char *tcpt_ana_state_name(uint8_t state);
/* Every group optimized, no change yet */
void tcpt_ana_init(struct tcpt *t);
/* The port's state of group grpid: 0, or -EINVAL for a group or state that is none */
int tcpt_ana_set(struct tcpt *t, uint32_t grpid, uint8_t state);
/* The state, 0 for a group that is none */
uint8_t tcpt_ana_get(struct tcpt *t, uint32_t grpid);
/* What an I/O command on namespace nsid through this port gets: 0 or a path status */
uint16_t tcpt_ana_io_status(struct tcpt *t, uint32_t nsid);
/* Identify Controller's and Identify Namespace's multipath and ANA fields */
struct nvme_id_ctrl;
void tcpt_ana_id_ctrl(struct nvme_id_ctrl *id);
void tcpt_ana_id_ns(uint8_t cns, void *buf);
/* The ANA log page (0Ch) of the connection's port into s->buf */
uint16_t tcpt_ana_log(struct tcpt_conn *c, struct tcpt_slot *s, uint32_t *out_len);
/* Receiver thread, admin queue: answer a parked AER if the port's ANA changed */
void tcpt_ana_notice(struct tcpt_conn *c);

/* ---- target_peer.c ---- */
enum tcpt_peer {
	TCPT_PEER_REMOTE,	/* not a socket of this host: judged by host NQN and ID */
	TCPT_PEER_LOCAL,	/* a process of this host: its uid, gid and groups in c */
	/*
	 * a socket of this host that root made and no root process holds:
	 * Linux's own nvme-tcp host (a kernel socket). Judged as remote; past
	 * the limits, as root's
	 */
	TCPT_PEER_KERNEL,
	/*
	 * a socket of this host whose holder cannot be told: no process of
	 * its maker's uid holds it (in flight in an SCM_RIGHTS message,
	 * passed to another user, or in a process ucmdd may not inspect), or
	 * its holders differ. Refused: what is not known is not granted
	 */
	TCPT_PEER_UNKNOWN,
};
/*
 * Who is at the other end of sock (target_peer.c says how): for
 * TCPT_PEER_LOCAL its uid, gid and groups into c (no capability), c
 * untouched otherwise; *maker the uid that made the peer's socket (-1 when
 * remote).
 */
enum tcpt_peer tcpt_peer_identify(int sock, struct ucmd_cred *c, uid_t *maker);

/* ---- target_cmd.c ---- */
/*
 * Execute a command whose data is in slot->buf (host to controller) or to
 * be filled there (controller to host). The commands the target answers
 * itself fill cqe and *out_len (bytes of buf to send back) and return 0;
 * a passthrough is submitted to the engine and returns -EINPROGRESS: its
 * completion calls tcpt_cmd_done.
 */
int tcpt_cmd_exec(struct tcpt_conn *c, struct tcpt_slot *s, struct ucmd_nvme_cqe *cqe,
		  uint32_t *out_len);
/* A passthrough's completion (res: NVMe status or -errno, result: DW0/DW1). */
void tcpt_cmd_done(struct tcpt_conn *c, struct tcpt_slot *s, int res, uint64_t result,
		   struct ucmd_nvme_cqe *cqe, uint32_t *out_len);
/* Whether a command is one the fabrics controller parks (AER): no response. */
bool tcpt_cmd_parks(const struct tcpt_conn *c, const struct ucmd_nvme_sqe *sqe);
/* Close the engine fds a connection opened. */
void tcpt_cmd_conn_close(struct tcpt_conn *c);

/* NVMe status field values: SC | SCT << 8 | DNR */
#define TCPT_SC(sct, sc, dnr) ((uint16_t)((sc) | ((sct) << 8) | ((dnr) ? 0x4000 : 0)))

#endif
