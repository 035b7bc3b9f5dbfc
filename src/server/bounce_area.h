/* SPDX-License-Identifier: MIT */
/*
 * A ring's read bounce area (UCMDD_RING_BOUNCE, src/daemon/proto.h): a
 * sealed memfd shared with that one client, where reads into the client's
 * plain memory complete, for the client's library to copy out when it
 * enters the ring; their CQEs wait until it has (bounce_area.c).
 */
#ifndef UCMD_SERVER_BOUNCE_AREA_H
#define UCMD_SERVER_BOUNCE_AREA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/proto.h"

struct srv_client;
struct srv_bounce;

/* Records outstanding at most, and the data area's pages (4 KiB). */
#define SRV_BOUNCE_RECS		256u
#define SRV_BOUNCE_PAGES	512u
/* Write records (one per SQ position modulo) and the write data area's bytes. */
#define SRV_BOUNCE_WRECS	256u
#define SRV_BOUNCE_WDATA	(1u << 20)
/* The most pages one segment may take: a larger read bounces as before. */
#define SRV_BOUNCE_SEG_PAGES	64u
/*
 * A client that has not claimed its data this long gets it through
 * /proc/PID/mem: srv_bounce_wait_ns, SRV_BOUNCE_WAIT_NS unless a test
 * changes it, on the coarse monotonic clock (up to a tick longer).
 */
#define SRV_BOUNCE_WAIT_NS	1000000ull
extern unsigned long long srv_bounce_wait_ns;

/*
 * A new area for client c, for a ring whose CQ tail is cq_tail now; its
 * memfd (ours, to dup and send) and what the reply says of it in rep.
 * 0 or -errno.
 */
int srv_bounce_create(struct srv_client *c, unsigned cq_tail, struct srv_bounce **out,
		      struct ucmdd_bounce_rep *rep);
int srv_bounce_fd(const struct srv_bounce *b);
/* After the engine ring that used it is gone. */
void srv_bounce_free(struct srv_bounce *b);

/*
 * The area of the ring whose pass runs on this thread (srv_bounce_enter/leave), or NULL.
 * srv_bounce_enter: a pass starts, the ring's SQ head at sq_head: write
 * records of earlier positions are read no more (UCMDD's wdone).
 */
struct srv_bounce *srv_bounce_current(void);
void srv_bounce_enter(struct srv_bounce *b, unsigned sq_head);
void srv_bounce_leave(void);
struct srv_client *srv_bounce_client(const struct srv_bounce *b);

/* user_mm_ops' share_* (mem.c installs them): see src/uaccess/uaccess.h. */
void *srv_bounce_alloc(struct srv_bounce *b, uint64_t uaddr, size_t n);
bool srv_bounce_owns(const struct srv_bounce *b, const void *p);
int srv_bounce_post(struct srv_bounce *b, const void *p, uint64_t uaddr, size_t n);
void srv_bounce_put(struct srv_bounce *b, const void *p);

/*
 * core's cq_publish for the ring: the tail stored stops before the oldest
 * read not copied out, and never moves back (the client may move it too).
 */
void srv_bounce_cq_publish(void *b, unsigned *ktail, unsigned tail);
/*
 * The ring's owner, once per pass: takes in what the client copied, and
 * copies itself what it left unclaimed for SRV_BOUNCE_WAIT_NS (all of it
 * when force). true when the CQ tail may move on (commit again).
 */
bool srv_bounce_poll(struct srv_bounce *b, bool force);
/*
 * The client's memory [addr, addr + n) is about to be read for a request:
 * reads waiting in the area for it are written there first.
 */
void srv_bounce_sync(struct srv_bounce *b, uint64_t addr, size_t n);
/*
 * The data of a write the client copied into the area when it submitted
 * it (struct ucmdd_bounce_wrec), for the request taken at SQ position pos
 * in this pass, with this user_data, reading [uaddr, uaddr + n): copied to
 * dst (ours), 0; -ENOENT when no record of that SQE holds all of that
 * range (one range, or one of a table's: proto.h) inside the area (the
 * caller reads the client's memory as without).
 */
int srv_bounce_wtake(struct srv_bounce *b, void *dst, uint64_t uaddr, size_t n, unsigned pos,
		     uint64_t user_data);
/*
 * The client said, in a read record (UCMDD_BOUNCE_WREC_READ) of the
 * request taken at SQ position pos in this pass with this user_data, that
 * [uaddr, uaddr + n) was writeable when it submitted it: true, and the
 * caller need not ask the client's mappings before bouncing the read here.
 */
bool srv_bounce_wchecked(const struct srv_bounce *b, uint64_t uaddr, size_t n, unsigned pos,
			 uint64_t user_data);
/*
 * For the ring's owner after a pass, in one look: records published so
 * far, whether any wait for the client, the CQ tail last stored.
 */
void srv_bounce_state(struct srv_bounce *b, unsigned *recs, bool *waiting, unsigned *cq_tail);

#endif
