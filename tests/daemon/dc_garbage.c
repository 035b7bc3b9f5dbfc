/* SPDX-License-Identifier: MIT */
/*
 * garbage: the bounded random client fuzzer. --iters rounds from --seed
 * (the same seed gives the same rounds), each one of:
 *
 *  - ring garbage: on a ring the daemon set up for us (connected through
 *    libucmd), random SQEs (random bytes, or plausible ones: every opcode the
 *    daemon may know, NVMe commands with any opcode, addresses that are
 *    NULL, kernel, unmapped, half outside a mapping, inside our shared
 *    buffer, iovec arrays of such), random SQ array entries (out of range
 *    too), tails moved by any amount, random flags, masks, entry counts and
 *    CQ heads: any byte of the SQ and CQ rings. Then the doorbell.
 *  - a protocol message on a raw SOCK_SEQPACKET connection: random bytes,
 *    headers with any op and a lying length, each request of proto.h with
 *    its fields mutated, with extra or wrong file descriptors attached (a
 *    pipe, /dev/null, memfds unsealed or shorter than claimed).
 *  - a reconnect: the old connection's rings, fds and regions dropped.
 *
 * Checks here: the daemon answers every message it does not hang up on
 * (within --stall-ms * 15, a hang bound, not a speed), each answer carries
 * the magic and our seq, and a message with a bad magic, an unknown op or
 * a length that is not what was sent is refused (result < 0) or hung up
 * on. The system test then checks the daemon is alive, ASan quiet, and
 * another client unharmed.
 *
 * Addresses are chosen so that what the daemon may legitimately write (we
 * named it) never lands in memory this process lives on: inside a scratch
 * mapping followed by a PROT_NONE guard page, or inside a ucmd_buf_alloc()
 * region, or on pages that are mapped inaccessible (PROT_NONE).
 */
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dc.h"
#include "proto.h"

#define SCRATCH		(64u << 10)
#define REGION		(64u << 10)

struct gctx {
	const struct dc_opts *o;
	uint64_t rng;
	const char *path;
	struct dc c;
	bool connected;
	uint8_t *scratch;	/* SCRATCH bytes, then a PROT_NONE page */
	uint8_t *region;	/* ucmd_buf_alloc(REGION) of the connection */
	uintptr_t hole;		/* a page mapped PROT_NONE */
	int sock;		/* raw protocol connection, -1 none */
	uint32_t seq;
	/* statistics */
	unsigned long ring_rounds, sqes, msgs, replies, hangups, refused;
};

static uint64_t rnd(struct gctx *g)
{
	return dc_rand(&g->rng);
}

static uint64_t below(struct gctx *g, uint64_t n)
{
	return n ? rnd(g) % n : 0;
}

static void fill(struct gctx *g, void *p, size_t len)
{
	uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)rnd(g);
}

/* An address (and a length that fits with it, mostly) the daemon may be given. */
static uint64_t pick_addr(struct gctx *g, uint64_t *len)
{
	uint64_t l = *len;

	switch (below(g, 10)) {
	case 0: return 0;
	case 1: return below(g, 4096);
	case 2: return 0xffff800000000000ull + below(g, 1ull << 40);	/* kernel */
	case 3: return g->hole + below(g, 4096);
	case 4: return rnd(g) & ((1ull << 47) - 1);		/* anywhere: almost surely unmapped */
	case 5: {
		/* runs into the guard page when long: -EFAULT, nothing written past it */
		uint64_t off = below(g, SCRATCH);
		return (uint64_t)(uintptr_t)g->scratch + off;
	}
	case 6:
		if (g->region) {
			uint64_t off = below(g, REGION);
			if (l > REGION - off)
				*len = REGION - off;
			return (uint64_t)(uintptr_t)g->region + off;
		}
		/* fall through */
	default: {
		uint64_t off = below(g, SCRATCH);
		if (l > SCRATCH - off)
			*len = SCRATCH - off;
		return (uint64_t)(uintptr_t)g->scratch + off;
	}
	}
}

static uint64_t pick_len(struct gctx *g)
{
	switch (below(g, 8)) {
	case 0: return 0;
	case 1: return 1 + below(g, 511);
	case 2: return 512;
	case 3: return 4096;
	case 4: return below(g, 1u << 20);
	case 5: return 0xffffffffull;
	case 6: return (uint32_t)rnd(g);
	default: return 512u << below(g, 5);
	}
}

/* An iovec array in scratch naming (mostly) safe segments. */
static uint64_t pick_iovecs(struct gctx *g, uint32_t *nr)
{
	unsigned n = (unsigned)below(g, 9);
	struct iovec *iov = (struct iovec *)(g->scratch + SCRATCH - 4096 - 16 * 16);

	for (unsigned i = 0; i < n; i++) {
		uint64_t len = pick_len(g) & 0xffff;
		uint64_t a = pick_addr(g, &len);
		iov[i].iov_base = (void *)(uintptr_t)a;
		iov[i].iov_len = len;
	}
	*nr = below(g, 8) ? n : (uint32_t)rnd(g);
	return below(g, 10) ? (uint64_t)(uintptr_t)iov : pick_addr(g, &(uint64_t){ 0 });
}

/* ---- ring garbage ---- */

static int g_connect(struct gctx *g)
{
	struct iovec iov;
	int ret = dc_open(&g->c, g->o, 1u << (2 + below(g, 5)));

	if (ret) {
		dc_close(&g->c);
		return ret;
	}
	g->connected = true;
	/*
	 * Garbage moves the tail over stale slots too, and the daemon then
	 * rightly runs what they say: the set-up's Identify named a heap
	 * buffer freed since. Only NOPs (all zero) stay behind.
	 */
	memset(g->c.ring.sq.sqes, 0, (size_t)g->c.ring.sq.ring_entries * 128);
	g->region = ucmd_buf_alloc(g->c.e, REGION);
	if (g->region)
		memset(g->region, 0, REGION);
	/* registered buffers for *_FIXED: the region and a scratch slice (a shadow) */
	iov = (struct iovec){ g->scratch, 8192 };
	if (g->region) {
		struct iovec two[2] = { { g->region, REGION }, iov };
		ucmd_register_buffers(&g->c.ring, two, 2);
	} else {
		ucmd_register_buffers(&g->c.ring, &iov, 1);
	}
	return 0;
}

static void g_disconnect(struct gctx *g)
{
	if (!g->connected)
		return;
	/* the ring's memory is garbage by now: only the library's own state is used */
	dc_close(&g->c);
	g->region = NULL;	/* unmapped with the engine */
	g->connected = false;
}

static void garbage_sqe(struct gctx *g, struct io_uring_sqe *sqe)
{
	static const uint8_t ops[] = {
		IORING_OP_NOP, IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_FSYNC,
		IORING_OP_READ_FIXED, IORING_OP_WRITE_FIXED, IORING_OP_TIMEOUT,
		IORING_OP_TIMEOUT_REMOVE, IORING_OP_ASYNC_CANCEL, IORING_OP_LINK_TIMEOUT,
		IORING_OP_READ, IORING_OP_WRITE, IORING_OP_URING_CMD, IORING_OP_URING_CMD,
		IORING_OP_URING_CMD, IORING_OP_URING_CMD,
	};
	static const uint32_t cmd_ops[] = {
		NVME_URING_CMD_IO, NVME_URING_CMD_IO_VEC, NVME_URING_CMD_ADMIN,
		NVME_URING_CMD_ADMIN_VEC, 0,
	};
	uint64_t len;

	if (!below(g, 6)) {	/* raw bytes */
		fill(g, sqe, 128);
		return;
	}
	memset(sqe, 0, 128);
	sqe->opcode = below(g, 12) ? ops[below(g, sizeof(ops))] : (uint8_t)rnd(g);
	sqe->flags = below(g, 3) ? 0 : (uint8_t)rnd(g);
	sqe->fd = below(g, 8) ? (int32_t)below(g, 4) - 1 : (int32_t)rnd(g);
	sqe->user_data = rnd(g);
	sqe->ioprio = below(g, 8) ? 0 : (uint16_t)rnd(g);
	sqe->buf_index = (uint16_t)below(g, 4);
	sqe->personality = below(g, 8) ? 0 : (uint16_t)rnd(g);
	sqe->off = below(g, 4) ? below(g, 1 << 20) * 512 : rnd(g);
	switch (sqe->opcode) {
	case IORING_OP_READV:
	case IORING_OP_WRITEV: {
		uint32_t nr;
		sqe->addr = pick_iovecs(g, &nr);
		sqe->len = nr;
		break;
	}
	case IORING_OP_TIMEOUT:
	case IORING_OP_LINK_TIMEOUT: {
		struct __kernel_timespec *ts = (void *)(g->scratch + SCRATCH - 4096 - 512);
		ts->tv_sec = below(g, 4) ? (int64_t)below(g, 2) : (int64_t)rnd(g);
		ts->tv_nsec = below(g, 4) ? (long long)below(g, 1000000) : (long long)rnd(g);
		sqe->addr = below(g, 6) ? (uint64_t)(uintptr_t)ts : pick_addr(g, &(uint64_t){ 0 });
		sqe->len = below(g, 6) ? 1 : (uint32_t)rnd(g);
		sqe->timeout_flags = below(g, 4) ? 0 : (uint32_t)rnd(g);
		break;
	}
	case IORING_OP_URING_CMD: {
		struct nvme_uring_cmd *c = (struct nvme_uring_cmd *)sqe->cmd;
		sqe->cmd_op = below(g, 10) ? cmd_ops[below(g, 5)] : (uint32_t)rnd(g);
		sqe->uring_cmd_flags = below(g, 4) ? 0 : (uint32_t)rnd(g) & 3;
		c->opcode = below(g, 2) ? (uint8_t)below(g, 3) : (uint8_t)rnd(g);
		c->nsid = below(g, 4) ? 1 : (uint32_t)rnd(g);
		c->flags = below(g, 8) ? 0 : (uint8_t)rnd(g);
		if (sqe->cmd_op == NVME_URING_CMD_IO_VEC || sqe->cmd_op == NVME_URING_CMD_ADMIN_VEC) {
			uint32_t nr;
			c->addr = pick_iovecs(g, &nr);
			c->data_len = nr;
		} else {
			len = pick_len(g);
			c->addr = pick_addr(g, &len);
			c->data_len = (uint32_t)len;
		}
		if (!below(g, 4)) {
			len = below(g, 256);
			c->metadata = pick_addr(g, &len);
			c->metadata_len = (uint32_t)len;
		}
		c->cdw10 = below(g, 2) ? (uint32_t)below(g, 1 << 20) : (uint32_t)rnd(g);
		c->cdw11 = below(g, 4) ? 0 : (uint32_t)rnd(g);
		c->cdw12 = below(g, 2) ? (uint32_t)below(g, 16) : (uint32_t)rnd(g);
		c->cdw13 = (uint32_t)below(g, 2);
		c->timeout_ms = (uint32_t)below(g, 2);
		if (!below(g, 8))
			fill(g, sqe->cmd + sizeof(*c), 80 - sizeof(*c));
		break;
	}
	default:
		len = pick_len(g);
		sqe->addr = pick_addr(g, &len);
		sqe->len = (uint32_t)len;
		sqe->rw_flags = below(g, 4) ? 0 : (int)rnd(g);
		break;
	}
}

static void ring_round(struct gctx *g)
{
	struct ucmd_ring *r;
	unsigned entries, n = 1 + (unsigned)below(g, 8);

	if (!g->connected && g_connect(g))
		return;
	r = &g->c.ring;
	entries = r->sq.ring_entries;
	g->ring_rounds++;
	for (unsigned i = 0; i < n; i++) {
		unsigned tail = __atomic_load_n(r->sq.ktail, __ATOMIC_RELAXED);
		switch (below(g, 12)) {
		case 0: case 1: case 2: case 3: case 4: {
			/* a garbage SQE published the normal way */
			unsigned slot = (unsigned)below(g, entries);
			garbage_sqe(g, (struct io_uring_sqe *)((uint8_t *)r->sq.sqes + 128 * slot));
			r->sq.array[tail & r->sq.ring_mask] =
				below(g, 8) ? slot : (unsigned)rnd(g);
			__atomic_store_n(r->sq.ktail, tail + 1, __ATOMIC_RELEASE);
			g->sqes++;
			break;
		}
		case 5:	/* the tail anywhere */
			__atomic_store_n(r->sq.ktail, below(g, 2) ? tail + (unsigned)below(g, 4 * entries)
					 : (unsigned)rnd(g), __ATOMIC_RELEASE);
			break;
		case 6:	/* random array entries */
			r->sq.array[below(g, entries)] = (unsigned)rnd(g);
			break;
		case 7:	/* the CQ head anywhere */
			__atomic_store_n(r->cq.khead, (unsigned)rnd(g), __ATOMIC_RELEASE);
			break;
		case 8: {	/* flags, masks, entry counts, dropped, overflow */
			unsigned *w[] = { r->sq.kflags, r->sq.kring_mask, r->sq.kring_entries,
					  r->sq.kdropped, r->sq.khead, r->cq.kflags,
					  r->cq.kring_mask, r->cq.kring_entries, r->cq.koverflow,
					  r->cq.ktail };
			unsigned k = (unsigned)below(g, sizeof(w) / sizeof(w[0]));
			if (w[k])
				__atomic_store_n(w[k], (unsigned)rnd(g), __ATOMIC_RELEASE);
			break;
		}
		case 9: {	/* any byte of the ring memory */
			uint8_t *p = r->sq.ring_ptr;
			if (p && r->sq.ring_sz)
				p[below(g, r->sq.ring_sz)] = (uint8_t)rnd(g);
			p = r->cq.ring_ptr;
			if (p && r->cq.ring_sz)
				p[below(g, r->cq.ring_sz)] = (uint8_t)rnd(g);
			break;
		}
		default: {	/* a whole SQE slot rewritten after publication */
			unsigned slot = (unsigned)below(g, entries);
			fill(g, (uint8_t *)r->sq.sqes + 128 * slot, 128);
			break;
		}
		}
	}
	/* the doorbell; never wait for completions that garbage may not give */
	ucmd_enter(r, (unsigned)below(g, entries + 1), 0, below(g, 4) ? 0 : IORING_ENTER_SQ_WAKEUP);
	/* take whatever completed, so the CQ does not stay full */
	__atomic_store_n(r->cq.khead, __atomic_load_n(r->cq.ktail, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
	/* sometimes the library's own calls on the damaged ring: errors, not crashes */
	if (!below(g, 8)) {
		struct io_uring_probe *p = ucmd_get_probe_ring(r);
		if (p)
			ucmd_free_probe(p);
	}
	if (!below(g, 10))
		g_disconnect(g);
}

/* ---- protocol garbage ---- */

static int raw_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (s < 0)
		dc_die("garbage: socket: %s", strerror(errno));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)))
		dc_die("garbage: connect %s: %s", path, strerror(errno));
	return s;
}

/* An fd of some kind to attach: the daemon must check what it is given. */
static int some_fd(struct gctx *g, size_t want_len)
{
	int fd = -1, p[2];

	switch (below(g, 6)) {
	case 0:
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		break;
	case 1:
		if (pipe2(p, O_CLOEXEC) == 0) {
			close(p[1]);
			fd = p[0];
		}
		break;
	case 2:	/* unsealed: could be shrunk under the daemon */
		fd = memfd_create("garbage", MFD_CLOEXEC);
		if (fd >= 0 && ftruncate(fd, (off_t)want_len)) {
			close(fd);
			fd = -1;
		}
		break;
	default: {	/* sealed, maybe shorter than claimed */
		fd = memfd_create("garbage", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		size_t len = below(g, 2) ? want_len : (size_t)below(g, want_len + 1);
		if (fd >= 0 && (ftruncate(fd, (off_t)len) ||
				fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | (below(g, 2) ? F_SEAL_GROW : 0)))) {
			close(fd);
			fd = -1;
		}
		break;
	}
	}
	return fd;
}

static void msg_round(struct gctx *g)
{
	static uint8_t buf[UCMDD_MSG_MAX + 256], rep[UCMDD_MSG_MAX + 256];
	struct ucmdd_hdr *h = (struct ucmdd_hdr *)buf;
	uint8_t *pl = buf + sizeof(*h);
	size_t plen = 0, total;
	bool must_refuse = false, valid_hdr = true;
	int fds[UCMDD_MAX_FDS_PER_MSG + 4], nfds = 0;
	uint16_t op;

	if (g->sock < 0)
		g->sock = raw_connect(g->path);
	memset(buf, 0, sizeof(*h) + 512);
	op = below(g, 8) ? (uint16_t)(1 + below(g, UCMDD_OP_MAX)) : (uint16_t)rnd(g);
	switch (op) {
	case UCMDD_HELLO: {
		struct ucmdd_hello *m = (void *)pl;
		m->version = below(g, 2) ? UCMDD_VERSION : (uint32_t)rnd(g);
		fill(g, &m->max_rings, 12);
		plen = sizeof(*m);
		break;
	}
	case UCMDD_DISK_STAT: {
		struct ucmdd_name *m = (void *)pl;
		if (below(g, 2))
			snprintf(m->name, sizeof(m->name), "%s", below(g, 2) ? "nvme0n1" : "ng0n1");
		else
			fill(g, m->name, sizeof(m->name));	/* unterminated */
		plen = sizeof(*m);
		break;
	}
	case UCMDD_OPEN: {
		struct ucmdd_open *m = (void *)pl;
		static const char *names[] = { "nvme0", "ng0n1", "nvme0n1", "null", "../x", "" };
		m->flags = below(g, 2) ? (int32_t)below(g, 3) : (int32_t)rnd(g);
		if (below(g, 3) == 0)
			m->flags = (m->flags & O_ACCMODE) | UCMDD_OPEN_FIXED;
		/* fixed numbers anywhere, in range or not */
		m->fd = below(g, 4) ? (int32_t)below(g, 1100) : (int32_t)rnd(g);
		if (below(g, 4))
			snprintf(m->name, sizeof(m->name), "%s", names[below(g, 6)]);
		else
			fill(g, m->name, sizeof(m->name));
		plen = sizeof(*m);
		break;
	}
	case UCMDD_CLOSE:
	case UCMDD_QUEUE_EXIT: {
		struct ucmdd_fd *m = (void *)pl;
		m->fd = below(g, 2) ? (int32_t)below(g, 70) - 2 : (int32_t)rnd(g);
		plen = sizeof(*m);
		break;
	}
	case UCMDD_IOCTL: {
		struct ucmdd_ioctl *m = (void *)pl;
		uint64_t len = 72;
		m->fd = (int32_t)below(g, 4) - 1;
		/* Linux's, the old 32-bit ones (0x41, 0x43) and the rest of 'N' */
		static const uint64_t cmds[] = { NVME_IOCTL_ID, NVME_IOCTL_ADMIN64_CMD,
			NVME_IOCTL_IO64_CMD, NVME_IOCTL_IO64_CMD_VEC, 0xc0484e41, 0xc0484e43,
			0x4e44, 0x4e45 };
		m->cmd = below(g, 4) ? cmds[below(g, 8)] : rnd(g);
		fill(g, g->scratch, 72);	/* a random struct nvme_passthru_cmd64 */
		m->arg = pick_addr(g, &len);
		plen = sizeof(*m);
		break;
	}
	case UCMDD_QUEUE_INIT: {
		struct ucmdd_queue_init *m = (void *)pl;
		m->entries = below(g, 2) ? 1u << below(g, 14) : (uint32_t)rnd(g);
		m->p.flags = below(g, 2) ? (IORING_SETUP_SQE128 | IORING_SETUP_CQE32) : (uint32_t)rnd(g);
		m->p.cq_entries = below(g, 2) ? 0 : (uint32_t)rnd(g);
		m->p.sq_thread_idle = below(g, 2) ? 0 : (uint32_t)rnd(g);
		if (!below(g, 4))
			fill(g, &m->p, sizeof(m->p));
		plen = sizeof(*m);
		break;
	}
	case UCMDD_REGISTER: {
		struct ucmdd_register *m = (void *)pl;
		m->ring_id = (uint32_t)below(g, 4);
		m->opcode = below(g, 2) ? (uint32_t)below(g, 32) : (uint32_t)rnd(g);
		fill(g, g->scratch + 4096, 4096);	/* whatever arg points at */
		/* what the daemon writes back (a probe) must land in scratch or nowhere */
		m->arg = below(g, 2) ? (uint64_t)(uintptr_t)(g->scratch + 4096) :
			 below(g, 2) ? 0 : (uint64_t)g->hole;
		m->nr = below(g, 2) ? (uint32_t)below(g, 8) : (uint32_t)rnd(g);
		plen = sizeof(*m);
		if (m->opcode == IORING_REGISTER_EVENTFD || !below(g, 4))
			if ((fds[nfds] = some_fd(g, 0)) >= 0)
				nfds++;
		break;
	}
	case UCMDD_REGION_ADD:
	case UCMDD_REGION_DEL: {
		struct ucmdd_region *m = (void *)pl;
		m->len = below(g, 2) ? 4096u << below(g, 6) : rnd(g);
		m->addr = below(g, 2) ? (uint64_t)(uintptr_t)g->scratch : pick_addr(g, &(uint64_t){ 0 });
		plen = sizeof(*m);
		if (op == UCMDD_REGION_ADD && below(g, 6))
			if ((fds[nfds] = some_fd(g, (size_t)(m->len & 0xffffff))) >= 0)
				nfds++;
		break;
	}
	default:	/* DEVICE_NAMES, unknown ops */
		plen = below(g, 64);
		fill(g, pl, plen);
		break;
	}
	h->magic = UCMDD_MAGIC;
	h->op = op;
	h->seq = ++g->seq;
	h->len = (uint32_t)plen;
	if (op == 0 || op >= UCMDD_OP_MAX)
		must_refuse = true;
	/* mutations of the message as a whole */
	switch (below(g, 10)) {
	case 0:	/* a lying length */
		h->len = below(g, 2) ? (uint32_t)rnd(g) : (uint32_t)(plen + 1 + below(g, 8));
		must_refuse = true;
		break;
	case 1:	/* a truncated payload (DEVICE_NAMES carries none: any length is whole) */
		if (plen && op != UCMDD_DEVICE_NAMES) {
			plen = below(g, plen);
			h->len = (uint32_t)plen;
			must_refuse = true;
		}
		break;
	case 2:	/* bad magic, flags or pad */
		if (below(g, 2)) {
			h->magic = (uint32_t)rnd(g);
			valid_hdr = h->magic == UCMDD_MAGIC;
			must_refuse = !valid_hdr;
		} else {
			h->flags = (uint16_t)(1 + below(g, 0xfffe));
		}
		break;
	case 3:	/* all random, any size up to past the limit */
		plen = below(g, 4) ? below(g, 64) : below(g, UCMDD_MSG_MAX + 128);
		fill(g, buf, sizeof(*h) + plen);
		valid_hdr = h->magic == UCMDD_MAGIC;
		must_refuse = false;	/* judged below by what it is */
		if (valid_hdr)
			must_refuse = h->op == 0 || h->op >= UCMDD_OP_MAX || h->len != plen;
		else
			must_refuse = true;
		break;
	case 4:	/* extra descriptors on any message */
		for (unsigned k = (unsigned)below(g, UCMDD_MAX_FDS_PER_MSG + 3); k && nfds < (int)(sizeof(fds) / sizeof(fds[0])); k--)
			if ((fds[nfds] = some_fd(g, 4096)) >= 0)
				nfds++;
		break;
	default:
		break;
	}
	total = sizeof(*h) + plen;
	if (!below(g, 40))
		total = below(g, sizeof(*h));	/* shorter than a header, even empty */
	if (total < sizeof(*h)) {
		valid_hdr = false;
		must_refuse = true;
	}

	/* send */
	struct iovec iov = { buf, total };
	union { struct cmsghdr c; char b[CMSG_SPACE(sizeof(fds))]; } cm;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (nfds) {
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	g->msgs++;
	ssize_t sent = sendmsg(g->sock, &mh, MSG_NOSIGNAL);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	if (sent < 0) {
		/* too big for the socket, or the daemon hung up on us before */
		close(g->sock);
		g->sock = -1;
		g->hangups++;
		return;
	}

	/* one reply, or a hang-up */
	struct pollfd pfd = { .fd = g->sock, .events = POLLIN };
	int pr = poll(&pfd, 1, (int)(g->o->stall_ms * 15));
	if (pr == 0)
		dc_die("garbage: seed %llu message %lu (op %u, %zu bytes): no reply and no hang-up",
		       (unsigned long long)g->o->seed, g->msgs, op, total);
	union { struct cmsghdr c; char b[CMSG_SPACE(sizeof(int) * 8)]; } rcm;
	struct iovec riov = { rep, sizeof(rep) };
	struct msghdr rmh = { .msg_iov = &riov, .msg_iovlen = 1, .msg_control = rcm.b,
			      .msg_controllen = sizeof(rcm.b) };
	ssize_t got = recvmsg(g->sock, &rmh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	/* descriptors in the reply (a ring memfd, eventfds): not ours to keep */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&rmh); got > 0 && c; c = CMSG_NXTHDR(&rmh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			for (size_t k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++)
				close(((int *)CMSG_DATA(c))[k]);
	if (got <= 0) {
		close(g->sock);
		g->sock = -1;
		g->hangups++;
		return;
	}
	g->replies++;
	const struct ucmdd_hdr *rh = (const void *)rep;
	if ((size_t)got < sizeof(*rh) || rh->magic != UCMDD_MAGIC)
		dc_die("garbage: seed %llu message %lu: a reply of %zd bytes without the magic",
		       (unsigned long long)g->o->seed, g->msgs, got);
	if (valid_hdr && rh->seq != h->seq)
		dc_die("garbage: seed %llu message %lu: reply seq %u for request seq %u",
		       (unsigned long long)g->o->seed, g->msgs, rh->seq, h->seq);
	if (must_refuse && rh->result >= 0)
		dc_die("garbage: seed %llu message %lu (op %u, len field %u, %zu bytes sent): "
		       "accepted (result %d)", (unsigned long long)g->o->seed, g->msgs, h->op,
		       h->len, total, rh->result);
	if (rh->result < 0)
		g->refused++;
	if (!below(g, 16)) {	/* a new connection now and then: the old one's state freed */
		close(g->sock);
		g->sock = -1;
	}
}

int dc_garbage(const struct dc_opts *o)
{
	struct gctx g = { .o = o, .rng = o->seed, .sock = -1 };
	uint8_t *m;

	g.path = o->daemon ? o->daemon : getenv("UCMD_DAEMON");
	if (!g.path)
		dc_die("garbage: --daemon or $UCMD_DAEMON");
	m = mmap(NULL, SCRATCH + 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		dc_die("garbage: mmap");
	/*
	 * [scratch][guard][hole], both inaccessible: a page that is merely
	 * unmapped would be reused by the next mmap (a ring, a buffer of the
	 * library, a large malloc), and the daemon would then rightly write
	 * where we named.
	 */
	g.scratch = m;
	if (mprotect(m + SCRATCH, 2 * 4096, PROT_NONE))
		dc_die("garbage: mprotect");
	g.hole = (uintptr_t)(m + SCRATCH + 4096);
	for (uint64_t it = 0; it < o->iters; it++) {
		switch (below(&g, 10)) {
		case 0: case 1: case 2: case 3:
			ring_round(&g);
			break;
		case 4:
			g_disconnect(&g);
			break;
		default:
			msg_round(&g);
			break;
		}
	}
	g_disconnect(&g);
	if (g.sock >= 0)
		close(g.sock);
	printf("garbage: seed %llu, %llu iterations: %lu ring rounds (%lu SQEs), %lu messages, "
	       "%lu replies (%lu refused), %lu hang-ups\n", (unsigned long long)o->seed,
	       (unsigned long long)o->iters, g.ring_rounds, g.sqes, g.msgs, g.replies, g.refused,
	       g.hangups);
	return 0;
}
