/* SPDX-License-Identifier: MIT */
/*
 * ucmdd's insides: one engine holding every controller the daemon owns,
 * the security chain judging every command, and per client a connection
 * (control thread), a table of the devices it opened, the memory regions it
 * shared, and its rings (served by the daemon's ring workers).
 *
 *   ucmdd.c      options, controllers, engine and security set-up, signals
 *   listen.c     the socket, accept, the peer's identity
 *   client.c     one connection: its control thread, the request table
 *   mem.c        the client's task (its file table, its mm): regions it shared, copies
 *   ring.c       a client ring: an engine ring in a memfd the client maps
 *   ring_pool.c  the workers that serve every client's rings, one per CPU
 *   ring_reg.c   io_uring_register(2) on a client ring
 *   ring_relay.c a forked child's relay ring and its register on a ring it
 *                inherited: another connection's ring, named by its memfd
 *   efd.c        the eventfds a client shares: never waited on
 *   quota.c      per-uid quotas, the reserve for root and the daemon's user
 *
 * Threads act as their client (cred_override_set with the peer's
 * credentials), so everything the engine does for them -- open, ring
 * set-up, the security chain, audit -- sees that client, never the daemon.
 */
#ifndef UCMD_SERVER_H
#define UCMD_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "core/cred.h"
#include "core/fdtable.h"
#include "core/file.h"
#include "core/task.h"
#include "daemon/proto.h"
#include "server/quota.h"
#include "uaccess/uaccess.h"
#include "ucmd/ucmd.h"

/* Per-client bounds: what one client may hold, whatever it asks. */
#define SRV_MAX_FDS		64u	/* engine files open at once */
/*
 * The numbers a client may name (0..SRV_FD_SPACE-1): wider than SRV_MAX_FDS
 * because a client mirroring its own descriptor numbers (UCMDD_OPEN_FIXED,
 * libucmd-preload) does not choose them small.
 */
#define SRV_FD_SPACE		1024u
#define SRV_MAX_RINGS		16u
#define SRV_MAX_ENTRIES		4096u	/* SQ entries per ring */
#define SRV_MAX_REGIONS		64u
#define SRV_MAX_BOUNCE		(256u << 20)	/* bounce bytes in flight per client */
#define SRV_MAX_OVERFLOW	4096u	/* CQEs held for a client whose CQ is full */

struct srv_daemon;
struct srv_ring;

/* A memfd region a client shared (UCMDD_REGION_ADD): zero-copy I/O. */
struct srv_region {
	uint64_t caddr;		/* where the client mapped it */
	uint64_t len;
	void *daddr;		/* where the daemon mapped it */
	/*
	 * Removed by UCMDD_REGION_DEL: no longer looked up, but mapped until
	 * the client is freed, because a command or a registered buffer may
	 * still point into it (unmapping it would fault the daemon).
	 */
	bool retired;
};

struct srv_client {
	struct srv_daemon *d;
	int sock;
	pid_t pid;			/* SO_PEERCRED */
	struct ucmd_cred cred;		/* SO_PEERCRED + SO_PEERGROUPS + CapEff */
	struct user_mm mm;		/* the client's address space, opened as it at connect */
	/*
	 * The engine's view of the client (core/task.h): its rings' addresses
	 * name task_mm -- the regions it shared, else mm -- and they act with
	 * cred, frozen at connect.
	 */
	struct user_mm task_mm;
	struct ucmd_task task;
	int pidfd;			/* the connecting process (SO_PEERPIDFD): exit ends the client */
	pthread_t thread;		/* control thread (client.c) */
	atomic_bool dead;		/* connection gone: rings stop and clean up */
	bool held;			/* control thread: ever held a device, ring or region */
	bool adopted;			/* control thread: acts for another process (UCMDD_ADOPT) */

	pthread_mutex_t lock;		/* rings */
	/*
	 * The client's file table, its task's (core/fdtable.h): the numbers
	 * it opens, closes and names in SQEs and fixed-file registrations,
	 * resolved by the engine itself. Each number held counts against the
	 * client's uid (SRV_RES_FD, quota.c).
	 */
	struct files_struct files;
	/*
	 * Regions have a lock of their own, for their writers (add, del,
	 * the connection's thread): the engine looks them up without it while
	 * issuing (task_mm) from the ring workers (srv_region_lookup says why
	 * that is safe). nr_regions only grows, stored with release.
	 */
	pthread_mutex_t region_lock;
	struct srv_region regions[SRV_MAX_REGIONS];
	unsigned nr_regions;
	struct srv_ring *rings[SRV_MAX_RINGS];

	atomic_size_t bounce_bytes;	/* the engine's bounces for this client (mem.c) */
	struct srv_client *next;	/* the daemon's list */
};

struct srv_daemon {
	struct ucmd_engine *e;
	atomic_bool stopping;		/* SIGTERM: drain, then exit */
	int stop_fd;			/* eventfd, readable once stopping: wakes control threads */
	pthread_mutex_t lock;		/* clients */
	pthread_cond_t gone;		/* a client left: nr_clients went down */
	struct srv_client *clients;
	unsigned nr_clients;
	struct srv_quota *quota;	/* quota.c; NULL: nothing counted per uid */
	/* ring_pool.c: the ring workers, while any ring exists (under lock) */
	struct srv_pool *pool;
	unsigned pool_workers;		/* how many serve rings; 0: one per online CPU */
	unsigned pool_stall_ms;		/* a pass this long counts as stuck; 0: SRV_STALL_MS */
	/*
	 * UCMDD_ANA_STATE, for the daemon's NVMe/TCP ports (ucmdd.c): the
	 * state after the request, or -errno as proto.h says; NULL: no port.
	 */
	int (*ana_state)(struct srv_daemon *d, uint32_t port, uint32_t grpid, uint32_t state);
	/* UCMDD_PORT_STATE: NULL without NVMe/TCP ports */
	int (*port_state)(struct srv_daemon *d, uint32_t port, uint32_t state);
	/* UCMDD_CTRL_ANA_STATE: a controller's (ucmdd.c), by its device name */
	int (*ctrl_ana_state)(struct srv_daemon *d, const char *name, uint32_t grpid,
			      uint32_t state);
};

/* ---- mem.c: the client's memory ---- */
/*
 * Regions: the client's memfd mapped in the daemon. The memfd must be a
 * memfd sealed against shrinking (F_SEAL_SHRINK), so that the client cannot
 * make the daemon's mapping fault (SIGBUS) by truncating it; len at most its
 * size; caddr page-aligned. 0 or -EINVAL, -ENOSPC (too many), -EEXIST
 * (overlaps one), -ENOMEM.
 */
int srv_region_add(struct srv_client *c, int memfd, uint64_t caddr, uint64_t len);
int srv_region_del(struct srv_client *c, uint64_t caddr);
/*
 * A new client's task (c->mm already opened): its mm over c->mm and its
 * regions, its cred, an empty file table. 0 or -ENOMEM. And its end: every
 * file it holds closed (and given back to its uid's quota), regions
 * unmapped.
 */
int srv_task_init(struct srv_client *c);
void srv_task_free(struct srv_client *c);
/* The daemon's address for [caddr, caddr + len) when one region holds it whole, else NULL. */
void *srv_region_lookup(struct srv_client *c, uint64_t caddr, uint64_t len);

/* Copies with the client: 0 or -EFAULT (regions first, else its /proc/PID/mem). */
int srv_copy_from(struct srv_client *c, void *dst, uint64_t csrc, size_t len);
int srv_copy_to(struct srv_client *c, uint64_t cdst, const void *src, size_t len);
/*
 * The same through the client's address space alone (no region lookup).
 * An address space found gone (exec, exit) cuts the client off: its socket
 * is shut down for reading, so that its control thread ends the connection.
 */
int srv_mm_copy_from(struct srv_client *c, void *dst, uint64_t csrc, size_t len);
int srv_mm_copy_to(struct srv_client *c, uint64_t cdst, const void *src, size_t len);

/* ---- ring.c ---- */
/*
 * UCMDD_QUEUE_INIT: a ring for the client; fills rep and fds[3] (ring memfd,
 * sq eventfd, cq eventfd: the caller sends and then closes them). The ring
 * id is the result.
 */
int srv_ring_create(struct srv_client *c, const struct ucmdd_queue_init *req,
		    struct ucmdd_queue_init_rep *rep, int fds[3]);
/* the same with UCMDD_QI_RELAY's memfd (relay_fd; -1: none sent) */
int srv_ring_create_relay(struct srv_client *c, const struct ucmdd_queue_init *req,
			  struct ucmdd_queue_init_rep *rep, int fds[3], int relay_fd);
/* UCMDD_RING_BOUNCE: the ring's read bounce area; *fd is ours to send and close. */
int srv_ring_bounce(struct srv_client *c, uint32_t ring_id, struct ucmdd_bounce_rep *rep, int *fd);
/* UCMDD_REGISTER; a probe goes to *payload (malloc'd, *payload_len bytes). */
int srv_ring_register(struct srv_client *c, const struct ucmdd_register *req, int fd_in,
		      void **payload, size_t *payload_len);
/* UCMDD_REGISTER with UCMDD_REG_SHARED: on the ring whose memfd is ring_fd (ring_relay.c). */
int srv_relay_register(struct srv_client *c, const struct ucmdd_register *req, int ring_fd,
		       int fd_in, void **payload, size_t *payload_len);
/* UCMDD_QUEUE_EXIT: stop the ring, complete or cancel what it holds, free it. */
int srv_ring_destroy(struct srv_client *c, uint32_t ring_id);
/* The client is gone, or the daemon stops: every ring of c, as srv_ring_destroy. */
void srv_rings_destroy_all(struct srv_client *c);

/* ---- client.c ---- */
/*
 * Decode and check one request message (header and payload sizes for its
 * op). 0, or the -errno its reply carries. The fuzz target's entry.
 */
int srv_msg_check(const void *buf, size_t len);

#endif /* UCMD_SERVER_H */
