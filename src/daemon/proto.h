/* SPDX-License-Identifier: MIT */
/*
 * The ucmdd wire protocol: what libucmd's daemon backend (src/client) and the
 * daemon (src/server) say to each other over a Unix SOCK_SEQPACKET socket.
 *
 * Control travels as messages, one request and exactly one reply each (the
 * reply echoes seq); a message is one struct ucmdd_hdr and len payload
 * bytes, at most UCMDD_MSG_MAX in all. File descriptors (ring memory,
 * eventfds, shared buffer memfds) travel as SCM_RIGHTS beside the message
 * that names them. I/O does not travel here: it goes through rings in a
 * memfd the daemon creates and both sides map, laid out as Linux lays out
 * an io_uring (io_uring_params' sq_off/cq_off), plus one control page
 * (struct ucmdd_ring_ctl) after the SQEs.
 *
 * Nothing here is trusted by the daemon: every length, index, fd number and
 * address from a client is checked; a client's identity is SO_PEERCRED and
 * SO_PEERGROUPS, never a field. Addresses are the client's own (its address
 * space), read and written by the daemon through its /proc/PID/mem, opened
 * as the client at connect, or inside a region the client shared
 * (UCMDD_REGION_ADD); a read's data may also reach the client through a
 * ring's read bounce area, which the client copies out (UCMDD_RING_BOUNCE).
 *
 * All integers are the host's byte order: the socket never leaves the host.
 */
#ifndef UCMD_DAEMON_PROTO_H
#define UCMD_DAEMON_PROTO_H

#include <stdint.h>
#include <linux/io_uring.h>

#define UCMDD_MAGIC	0x444d4355u	/* "UCMD" */
#define UCMDD_VERSION	1u
#define UCMDD_MSG_MAX	65536u		/* header + payload */
#define UCMDD_NAME_MAX	64u		/* device names, NUL included */
#define UCMDD_MAX_FDS_PER_MSG 4u

enum ucmdd_op {
	/* -> ucmdd_hello; <- ucmdd_hello (the daemon's limits) */
	UCMDD_HELLO = 1,
	/* -> nothing; <- result = count, payload = NUL-terminated names back to back */
	UCMDD_DEVICE_NAMES,
	/* -> ucmdd_name; <- struct ucmd_disk_stat (include/ucmd/ucmd.h) */
	UCMDD_DISK_STAT,
	/*
	 * -> ucmdd_open; <- result = the client's fd number (its own table):
	 * the lowest free one, or with UCMDD_OPEN_FIXED in flags the number in
	 * fd (what was there is closed first, as dup2(2) does), so that a
	 * client can mirror its own descriptor numbers (libucmd-preload).
	 */
	UCMDD_OPEN,
	/* -> ucmdd_fd; <- result */
	UCMDD_CLOSE,
	/*
	 * -> ucmdd_ioctl; <- result. The daemon reads *arg from the client,
	 * bounces every buffer the command names, runs it, writes back what
	 * Linux writes back (the result field, read data).
	 */
	UCMDD_IOCTL,
	/*
	 * -> ucmdd_queue_init (with UCMDD_QI_RELAY, SCM_RIGHTS [the shared
	 * ring's memfd]); <- ucmdd_queue_init_rep and SCM_RIGHTS
	 * [ring memfd, sq eventfd, cq eventfd]. result = ring id.
	 */
	UCMDD_QUEUE_INIT,
	/* -> ucmdd_ring_id; <- result (after the ring's requests are done or cancelled) */
	UCMDD_QUEUE_EXIT,
	/*
	 * -> ucmdd_register, and SCM_RIGHTS [the ring's memfd with
	 * UCMDD_REG_SHARED, then for IORING_REGISTER_EVENTFD the eventfd]; <- result as io_uring_register(2) returns it, and for
	 * IORING_REGISTER_PROBE the probe as payload.
	 */
	UCMDD_REGISTER,
	/* -> ucmdd_region and SCM_RIGHTS [memfd sealed F_SEAL_SHRINK]; <- result */
	UCMDD_REGION_ADD,
	/* -> ucmdd_region (len ignored); <- result */
	UCMDD_REGION_DEL,
	/*
	 * -> ucmdd_ana_state; <- result = the ANA state of the group on the
	 * port after the request. state 0 asks; another value sets it, which
	 * only the daemon's own user and root may do (-EPERM). -ENODEV: no
	 * such port (--nvme-tcp, 1 the first); -EINVAL: no such group or
	 * state (NVMe's values: 1, 2, 3, 4, 0Fh).
	 */
	UCMDD_ANA_STATE,
	/*
	 * -> nothing, and SCM_RIGHTS [a pidfd]; <- result. From then on the
	 * connection acts in that process's memory instead of the client's:
	 * the seccomp supervisor of a statically linked program
	 * (src/preload/supervise.c) serves the program's calls, and its SQEs
	 * and ioctls name the program's addresses. Still judged with the
	 * client's credentials. Only before the connection held a device,
	 * ring or region (-EBUSY); the process must be the client's child, of
	 * its effective uid (-EPERM), and its memory must open as the
	 * client's identity (-EACCES/-EPERM: as the kernel's ptrace check).
	 */
	UCMDD_ADOPT,
	/*
	 * -> ucmdd_port_state; <- result = the port's state after the
	 * request (UCMDD_PORT_UP or UCMDD_PORT_DOWN). state 0 asks; UP or
	 * DOWN sets it (the daemon's own user and root only: -EPERM). Down,
	 * the port listens no more and its connections are closed; up, it
	 * listens again on its address. -ENODEV: no such port.
	 */
	UCMDD_PORT_STATE,
	/*
	 * -> ucmdd_regs_read; <- result 0 and payload = len bytes of the
	 * controller's registers from off (Linux's sysfs resource0), for a
	 * controller device the client has open at fd: -EBADF (no such fd),
	 * -ENOTTY (not a controller's), -EINVAL (off or len not multiples of
	 * 4, or past 1000h).
	 */
	UCMDD_REGS_READ,
	/*
	 * -> ucmdd_ctrl_ana_state; <- result = the ANA state of the group on
	 * the controller named (nvmeX: a controller of a directory of several,
	 * each a port of its own) after the request. state 0 asks; another
	 * value sets it (the daemon's own user and root only: -EPERM), kept
	 * in the directory. -ENODEV: no such controller; -EOPNOTSUPP: a
	 * controller of a subsystem of one (no ANA); -EINVAL: no such group
	 * or state.
	 */
	UCMDD_CTRL_ANA_STATE,
	/*
	 * -> ucmdd_ring_id; <- ucmdd_bounce_rep and SCM_RIGHTS [a memfd,
	 * sealed]: the ring's bounce area (struct ucmdd_bounce_ctl
	 * below), which the client maps. From then on the daemon completes a
	 * read into the client's plain memory there, and holds that read's
	 * CQE back until the client copied it out; and takes a write's data
	 * from there when the client copied it in as it submitted the write
	 * (struct ucmdd_bounce_wrec). -EBADF: no such ring;
	 * -EEXIST: it has one; -EOPNOTSUPP: a SQPOLL ring (its owner need not
	 * enter), or a connection acting for another process (UCMDD_ADOPT).
	 */
	UCMDD_RING_BOUNCE,
	UCMDD_OP_MAX
};

struct ucmdd_hdr {
	uint32_t magic;		/* UCMDD_MAGIC */
	uint16_t op;		/* enum ucmdd_op */
	uint16_t flags;		/* 0 */
	uint32_t seq;		/* the requester's; echoed */
	int32_t result;		/* replies: >= 0 or -errno; requests: 0 */
	uint32_t len;		/* payload bytes after the header */
	uint32_t pad;		/* 0 */
};

struct ucmdd_hello {
	uint32_t version;	/* UCMDD_VERSION */
	uint32_t max_rings;	/* per client */
	uint32_t max_fds;	/* per client */
	uint32_t max_entries;	/* SQ entries per ring */
};

struct ucmdd_name {
	char name[UCMDD_NAME_MAX];	/* NUL-terminated */
};

#define UCMDD_OPEN_FIXED 0x40000000	/* in ucmdd_open.flags: install at .fd */

struct ucmdd_open {
	int32_t flags;		/* O_RDONLY/O_WRONLY/O_RDWR, UCMDD_OPEN_FIXED (others refused, -EINVAL) */
	int32_t fd;		/* with UCMDD_OPEN_FIXED, the number wanted; else 0 */
	char name[UCMDD_NAME_MAX];
};

struct ucmdd_fd {
	int32_t fd;
	uint32_t pad;
};

struct ucmdd_ioctl {
	int32_t fd;
	uint32_t pad;
	uint64_t cmd;
	uint64_t arg;		/* client address */
};

/* in ucmdd_queue_init.flags: the SQEs at offset IORING_OFF_SQES of the ring memfd */
#define UCMDD_QI_SQES_AT_OFF 1u
/*
 * in ucmdd_queue_init.flags: a ring without SQPOLL whose program fills an SQ
 * of its own (the program's SQ, UCMDD_PSQ_* below), which the client copies
 * into the ring's SQ when the program submits, as Linux copies SQEs in
 * io_uring_enter(2). The client's submit then returns without waiting for
 * the proxy to take them: the program's head moves when they are copied,
 * and its slots are free again at once. The daemon never reads the
 * program's SQ; it takes the ring's SQ up to its tail (no sq_limit: only
 * the client's submit moves that tail). Not with SQPOLL or
 * UCMDD_QI_SQES_AT_OFF (-EINVAL). With IORING_SETUP_NO_SQARRAY too (the
 * program's head and tail then at UCMDD_PSQ_NOARRAY_OFF, below).
 */
#define UCMDD_QI_SUBMIT_COPY 2u

/*
 * in ucmdd_queue_init.flags: a forked child's ring for its submits on a
 * ring it inherited (libucmd-preload's relay: its SQEs run in its own
 * memory and file table, their CQEs copied into the shared ring's CQ by
 * the client). The message carries the shared ring's memfd (SCM_RIGHTS,
 * one), which proves the client holds it. The CQEs this ring still holds
 * when it ends (its client gone with requests in flight: cancelled, as at
 * any client's end, or completed; never reaped) are posted into the shared
 * ring's CQ, as Linux posts a dead task's requests' CQEs into the ring they
 * were submitted on. CQEs with user_data UCMDD_RELAY_OWN_UD are the
 * client's own and are not posted. -EBADF when no ring of the daemon's has
 * that memfd; not with SQPOLL or UCMDD_QI_SUBMIT_COPY (-EINVAL).
 */
#define UCMDD_QI_RELAY 4u
#define UCMDD_RELAY_OWN_UD 0x75636d6472656c79ull	/* "ucmdrely" */

/*
 * The program's SQ of a UCMDD_QI_SUBMIT_COPY ring, in the memfd after the
 * control page's struct, at these offsets from ctl_off: its head (the
 * client writes), tail (the program writes), index array (sq_entries
 * words), and its SQEs, page-aligned after the array (sq_entries of the
 * ring's SQE size). The memfd holds at least ctl_off + ucmdd_psq_len().
 */
#define UCMDD_PSQ_HEAD	64u
/*
 * Client words the program is not told of, in the head's line: the lock
 * every process holding the ring takes to copy from the program's SQ into
 * the ring's (a forked child shares both with its maker, as Linux's
 * uring_lock serialises submitters), its holder's pid; and how far the
 * program's SQ was copied (the head the program reads is stored from it).
 */
#define UCMDD_PSQ_XLOCK	96u
#define UCMDD_PSQ_KHEAD	100u
#define UCMDD_PSQ_TAIL	128u
#define UCMDD_PSQ_ARRAY	192u
#define UCMDD_PSQ_PAGE	4096u
/*
 * A UCMDD_QI_SUBMIT_COPY ring without an SQ array (IORING_SETUP_NO_SQARRAY):
 * the program is told of no array, so it maps the rings only as far as its
 * CQEs end (liburing's size for it) and would not reach the words after the
 * control page. Its head and tail are then the words this many bytes past
 * the ring's sq_off.head and sq_off.tail (UCMDD_PSQ_HEAD and _TAIL stay
 * unused; the array is none, the SQEs and the client words are where they
 * are above): the daemon gives the ring's SQ head and tail a 64-byte line
 * each (src/ring/ring.c) and never touches the rest of those lines. The
 * client checks that they are clear of every other word of the layout.
 */
#define UCMDD_PSQ_NOARRAY_OFF 32u

static inline uint64_t ucmdd_psq_sqes(uint32_t sq_entries)
{
	return ((uint64_t)UCMDD_PSQ_ARRAY + 4u * (uint64_t)sq_entries + UCMDD_PSQ_PAGE - 1) &
	       ~(uint64_t)(UCMDD_PSQ_PAGE - 1);
}

static inline uint64_t ucmdd_psq_len(uint32_t sq_entries, uint32_t sqe_size)
{
	return ucmdd_psq_sqes(sq_entries) + (uint64_t)sq_entries * sqe_size;
}

struct ucmdd_queue_init {
	uint32_t entries;
	uint32_t flags;		/* UCMDD_QI_* (others refused, -EINVAL) */
	struct io_uring_params p;	/* flags, sq_thread_idle, cq_entries as for io_uring_setup(2) */
};

struct ucmdd_queue_init_rep {
	uint32_t ring_id;
	uint32_t pad;
	uint64_t mmap_size;	/* bytes of the ring memfd to map (MAP_SHARED) */
	uint64_t ctl_off;	/* struct ucmdd_ring_ctl's offset in it */
	uint64_t sqes_off;	/* the SQE array's offset in it */
	struct io_uring_params p;	/* as io_uring_setup(2) fills it: sq_off, cq_off */
};

struct ucmdd_ring_id {
	uint32_t ring_id;
	uint32_t pad;
};

struct ucmdd_register {
	uint32_t ring_id;
	uint32_t opcode;	/* IORING_REGISTER_* */
	uint64_t arg;		/* client address, as io_uring_register(2)'s arg */
	uint32_t nr;		/* as io_uring_register(2)'s nr_args */
	uint32_t flags;		/* UCMDD_REG_* (others refused, -EINVAL) */
};

/*
 * in ucmdd_register.flags: the ring is named by its memfd, sent first
 * (SCM_RIGHTS; the eventfd second), not by ring_id (0): a forked child's
 * io_uring_register on a ring it inherited, which is another connection's
 * (libucmd-preload). Holding the memfd is holding the ring. Linux's
 * registrations belong to the ring, whoever makes them; what the daemon's
 * ring can take from a client that is not its own: IORING_REGISTER_PROBE,
 * IORING_REGISTER_EVENTFD(_ASYNC), IORING_UNREGISTER_EVENTFD. Any other
 * opcode names the caller's memory or file table, which the ring, acting
 * in its maker's, cannot reach: -EOPNOTSUPP. -EBADF when no ring of the
 * daemon's has that memfd.
 */
#define UCMDD_REG_SHARED 1u

struct ucmdd_ana_state {
	uint32_t port;		/* 1..: ucmdd's --nvme-tcp options in order */
	uint32_t grpid;		/* ANA group */
	uint32_t state;		/* 0: ask; else NVMe's ANA state value */
	uint32_t pad;		/* 0 */
};

struct ucmdd_ctrl_ana_state {
	char name[UCMDD_NAME_MAX];	/* the controller's device, NUL-terminated */
	uint32_t grpid;		/* ANA group */
	uint32_t state;		/* 0: ask; else NVMe's ANA state value */
};

#define UCMDD_PORT_UP	1u
#define UCMDD_PORT_DOWN	2u
struct ucmdd_port_state {
	uint32_t port;		/* 1..: ucmdd's --nvme-tcp options in order */
	uint32_t state;		/* 0: ask; UCMDD_PORT_UP or UCMDD_PORT_DOWN: set */
};

struct ucmdd_regs_read {
	int32_t fd;		/* the client's, of a controller device (nvmeX) */
	uint32_t off;		/* byte offset in the register file */
	uint32_t len;		/* bytes, at most 1000h - off */
	uint32_t pad;		/* 0 */
};

struct ucmdd_region {
	uint64_t addr;		/* where the client mapped the memfd (MAP_SHARED, offset 0) */
	uint64_t len;		/* bytes mapped; at most the memfd's size */
};

/*
 * The ring memfd's control page (at ctl_off). The SQ's IORING_SQ_NEED_WAKEUP
 * (sq flags) says the daemon sleeps: the client then writes 1 to the sq
 * eventfd after publishing SQEs, as a SQPOLL ring's owner calls
 * io_uring_enter(IORING_ENTER_SQ_WAKEUP). A client about to sleep for CQEs
 * sets cq_waiting, re-checks the CQ, and sleeps on the cq eventfd (and on
 * the socket, whose hang-up means the daemon is gone); the daemon writes
 * the cq eventfd after posting CQEs only while cq_waiting is set.
 *
 * A ring without IORING_SETUP_SQPOLL (and without UCMDD_QI_SUBMIT_COPY,
 * whose SQ tail is only moved by the client's submit) is consumed as
 * Linux consumes one: only what io_uring_enter(2) submitted. sq_limit is the SQ index the
 * client submitted up to (its enter moves it by to_submit, at most to the
 * tail); the proxy takes no SQE at or past it, and the client's enter
 * returns once the SQ head has reached it (programs such as fio read the
 * SQ head before io_uring_enter and count on it not moving meanwhile) --
 * unless sq_blocked says that the proxy takes nothing until the client
 * reaps (its CQ backed up, or as many requests in flight as it may have).
 *
 * A daemon that sets UCMDD_CTL_CQ_FUTEX in features (before it sends the
 * ring) also wakes a client that sleeps on a futex instead: the client
 * reads cq_futex, adds itself to cq_fwaiting, looks at the CQ again and
 * sleeps in FUTEX_WAIT on cq_futex (a shared futex: both map the memfd);
 * the daemon, after posting CQEs (or making the ring dead) while
 * cq_fwaiting is set, bumps cq_futex and calls FUTEX_WAKE, which never
 * blocks on the client (no eventfd, no guard timers). The two ways are
 * independent: a client that predates the futex sets only cq_waiting.
 *
 * A daemon that sets UCMDD_CTL_SQ_BELL in features clears sq_bell (seq_cst)
 * after each read that empties the sq eventfd, and looks at the ring after
 * that. A client that would write the sq eventfd first swaps sq_bell to 1
 * and writes only if it was 0. sq_bell set so means a write that no
 * emptying read has taken yet (its swap came after the last clear, so its
 * write after the read before it): a poll will wake the daemon, whose clear
 * and look then come after the swap that found sq_bell set, and see every
 * SQE that client published before it. Two clients of one ring, or a client
 * that submits one SQE per enter while the daemon sleeps, ring once per
 * sleep, not once per enter (fio's default job under `ucmd exec` wrote the
 * eventfd for nearly every read on a crowded machine). A client that
 * predates the bell writes every time, which the daemon drains as before.
 */
struct ucmdd_ring_ctl {
	uint32_t cq_waiting;	/* client writes; daemon reads */
	uint32_t state;		/* daemon writes: UCMDD_RING_* */
	uint32_t wakeups;	/* daemon: times it slept and was woken (statistics) */
	uint32_t sq_limit;	/* client writes (rings without SQPOLL); daemon reads, bounds */
	uint32_t sq_blocked;	/* daemon writes: 1 while it takes no SQE until the client reaps */
	uint32_t features;	/* daemon writes at set-up: UCMDD_CTL_* */
	uint32_t cq_futex;	/* daemon writes: bumped before each FUTEX_WAKE */
	uint32_t cq_fwaiting;	/* client writes: its threads sleeping on cq_futex */
	uint32_t sq_bell;	/* client sets to 1 before it writes the sq eventfd; daemon clears */
};

#define UCMDD_CTL_CQ_FUTEX	(1u << 0)	/* the daemon wakes cq_fwaiting sleepers */
#define UCMDD_CTL_SQ_BELL	(1u << 1)	/* the daemon clears sq_bell after emptying the sq eventfd */

/*
 * The read bounce area (UCMDD_RING_BOUNCE): this control block at offset 0,
 * nr_recs records at recs_off, data_len bytes of data at data_off. The
 * daemon writes a read's data into the data area, then its record, then
 * moves tail. The client, when it enters the ring, claims the records from
 * claim to tail (compare-and-swap of claim), copies each one's data to its
 * buffer, then stores done. The CQ tail the daemon stores stops before the
 * CQE of any read not yet copied; it moves on once the daemon sees done,
 * or the client moves it itself: cq says that every CQE below its low half
 * is written and that only records below its high half may need copying
 * first, so a client that has copied all of those may store a CQ tail up
 * to that low half (never moving it back: compare-and-swap). A client that
 * does not claim within a bound (about a millisecond) finds claim moved by
 * the daemon, which then writes the data through /proc/PID/mem itself, as
 * without an area, and stores taken once it has. The daemon decides from
 * its own records alone; what the client writes here (claim, done, the CQ
 * tail, anything else) can only delay or garble its own reads.
 */
struct ucmdd_bounce_ctl {
	uint32_t tail;		/* daemon writes: records published */
	uint32_t claim;		/* both, by compare-and-swap: records taken to be copied */
	uint32_t done;		/* client writes: records it copied */
	uint32_t taken;		/* daemon writes: records below it are copied (its takeovers) */
	uint64_t cq;		/* daemon writes: records << 32 | CQEs written */
	/*
	 * daemon writes: write records of SQ positions below it are read no
	 * more; their slots and data are the client's again
	 */
	uint32_t wdone;
	uint32_t pad;
};

/*
 * A write's data, copied into the write data area by the client when it
 * submitted the write's SQE, before the daemon may take it (sq_limit, or
 * the SQ tail of a UCMDD_QI_SUBMIT_COPY ring). At nr_wrecs slots, the
 * record of SQ position pos at pos & (nr_wrecs - 1). The daemon uses it
 * for the request of that very SQE issued while it takes it, and only if
 * all of it matches (pos, the user_data, the range read lying within the
 * record's buffer, the data inside the area); else it reads the client's
 * memory as without. It copies the data into memory of its own before it
 * uses it.
 *
 * A write that reads more than one range of the client's memory (an
 * iovec array and its segments, separate metadata) has one record with nr
 * set: its off then names a table of nr struct ucmdd_bounce_wseg in the
 * write data area (8-aligned), one per range, and its addr and len are 0
 * (which no read of the daemon's can match: a daemon that predates nr
 * takes nothing from such a record). nr is 0 for a record of one range,
 * which addr, len and off describe.
 */
struct ucmdd_bounce_wrec {
	uint32_t pos;		/* the SQE's position: the SQ tail count when it was published */
	uint32_t len;		/* bytes */
	uint64_t addr;		/* the client's buffer */
	uint64_t user_data;	/* the SQE's */
	uint32_t off;		/* the copy's offset in the write data area */
	uint32_t nr;		/* 0, or the ranges in the table at off */
};

/* One range of a record's table: the client's [addr, addr + len), its copy at off. */
struct ucmdd_bounce_wseg {
	uint64_t addr;
	uint32_t len;
	uint32_t off;		/* in the write data area */
};

/* The most ranges one record's table may hold (the daemon ignores a larger one). */
#define UCMDD_BOUNCE_WSEG_MAX	64u
/*
 * In nr: not a write's record but a read's, with no data. The client found
 * [addr, addr + len), the read's buffer, writeable when it submitted the
 * SQE (a probe in its own process), so the daemon need not ask the
 * client's mappings before the read bounces in the area. A client that
 * lies loses its own read's data (its copy out faults into nothing).
 */
#define UCMDD_BOUNCE_WREC_READ	0x80000000u

struct ucmdd_bounce_rec {
	uint64_t addr;		/* the client's buffer */
	uint32_t off;		/* the data's offset in the data area */
	uint32_t len;		/* bytes */
};

struct ucmdd_bounce_rep {
	uint64_t size;		/* bytes of the memfd to map (MAP_SHARED) */
	uint64_t recs_off;	/* struct ucmdd_bounce_rec[nr_recs] */
	uint64_t data_off;
	uint64_t data_len;
	uint32_t nr_recs;	/* a power of two; record n is at n & (nr_recs - 1) */
	uint32_t nr_wrecs;	/* a power of two: struct ucmdd_bounce_wrec[nr_wrecs] */
	uint64_t wrecs_off;
	uint64_t wdata_off;	/* the write data area */
	uint64_t wdata_len;
};

#define UCMDD_RING_LIVE	0u
#define UCMDD_RING_DEAD	1u	/* the daemon is stopping or gone: -ENOTCONN from now on */

#endif /* UCMD_DAEMON_PROTO_H */
