/* SPDX-License-Identifier: MIT */
/*
 * hostile: a client that uses what the protocol hands it against the daemon
 * (tests/system/daemon_hostile.sh), speaking the wire protocol itself
 * (src/daemon/proto.h) so that it holds the ring's eventfds as the library
 * never shows them.
 *
 *   hostile efd-user   registers a blocking eventfd whose counter is at
 *                      2^64-2, then has a CQE posted: the daemon's signal
 *                      cannot add 1 without waiting for us
 *   hostile efd-cq     clears O_NONBLOCK on the ring's cq eventfd (the
 *                      daemon's own file description), fills it to 2^64-2,
 *                      says it waits for CQEs, then has a CQE posted
 *   hostile efd-sq     clears O_NONBLOCK on the sq eventfd, keeps it at 0
 *                      and has the engine wake the sleeping proxy (a
 *                      TIMEOUT), which then drains the sq eventfd
 * Each then exits (--hold-ms later): the daemon must clean it up.
 *
 *   hostile idle-rings --count N --seconds S [--sqpoll]
 *                      N rings with sq_thread_idle 100 ms, each rung (sq
 *                      eventfd) every 50 ms for S seconds with nothing to
 *                      do: what the daemon spends on them is its own
 *   hostile conns --count N      N connections (HELLO each), held --hold-ms;
 *                      prints how many the daemon served and the errno of
 *                      the first refusal
 *   hostile fds --count N        opens --ns N times, on a new connection
 *                      whenever one holds the daemon's per-client limit;
 *                      prints the count and the first errno
 *   hostile rings --count N      N rings, the same way
 *   hostile regions --count N    N shared regions (a sealed memfd page each)
 *   hostile idle                 connects and sends nothing: prints "closed"
 *                      when the daemon hangs up within --seconds
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "dc.h"
#include "proto.h"

#define EFD_FULL 0xfffffffffffffffeull
#define MAX_CONNS 1024
#define PER_CONN_FDS 64

struct rconn {
	int sock;
	uint32_t seq;
};

struct rring {
	struct rconn *c;
	uint32_t id;
	int memfd, sq_efd, cq_efd;
	uint8_t *mem;
	size_t len;
	struct ucmdd_queue_init_rep rep;
	struct ucmdd_ring_ctl *ctl;
};

static int rconnect(const char *path, struct rconn *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	c->seq = 0;
	c->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->sock < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(c->sock, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(c->sock);
		return err;
	}
	return 0;
}

/*
 * One request, its reply: the result, or -ENOTCONN when the daemon hung
 * up. A refusal at connection is one message with op and seq 0 before the
 * hang-up: its result is returned.
 */
static int rcall(struct rconn *c, uint16_t op, const void *p, uint32_t len, int fd_in,
		 void *rep, size_t rep_len, int *fds_out, unsigned nfds)
{
	uint8_t buf[UCMDD_MSG_MAX];
	struct ucmdd_hdr h = { .magic = UCMDD_MAGIC, .op = op, .seq = ++c->seq, .len = len };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)p, len } };
	union {
		char b[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr a;
	} u;
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
	struct iovec riov = { buf, sizeof(buf) };
	ssize_t n;

	if (fd_in >= 0) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		m.msg_control = u.b;
		m.msg_controllen = CMSG_SPACE(sizeof(int));
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd_in, sizeof(int));
	}
	/* a daemon that refused us may have hung up already: its message is still there */
	if (sendmsg(c->sock, &m, MSG_NOSIGNAL) < 0 && errno != EPIPE && errno != ECONNRESET)
		return -errno;
	memset(&m, 0, sizeof(m));
	m.msg_iov = &riov;
	m.msg_iovlen = 1;
	m.msg_control = u.b;
	m.msg_controllen = sizeof(u.b);
	n = recvmsg(c->sock, &m, MSG_CMSG_CLOEXEC);
	/* a hang-up on our unread request reports ECONNRESET once; the refusal is behind it */
	if (n < 0 && errno == ECONNRESET)
		n = recvmsg(c->sock, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n <= 0)
		return -ENOTCONN;
	if ((size_t)n < sizeof(h))
		dc_die("hostile: a short reply");
	memcpy(&h, buf, sizeof(h));
	if (!h.op && !h.seq && h.result < 0)
		return h.result;
	if (h.seq != c->seq)
		dc_die("hostile: reply seq %u for %u", h.seq, c->seq);
	if (rep)
		memcpy(rep, buf + sizeof(h), (size_t)n - sizeof(h) < rep_len ?
		       (size_t)n - sizeof(h) : rep_len);
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
		unsigned k = (unsigned)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));

		for (unsigned i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (i < nfds && fds_out)
				fds_out[i] = fd;
			else
				close(fd);
		}
	}
	return h.result;
}

static int rhello(struct rconn *c)
{
	struct ucmdd_hello h = { .version = UCMDD_VERSION };

	return rcall(c, UCMDD_HELLO, &h, sizeof(h), -1, NULL, 0, NULL, 0);
}

static int ropen(struct rconn *c, const char *name)
{
	struct ucmdd_open o = { .flags = O_RDONLY };

	snprintf(o.name, sizeof(o.name), "%s", name);
	return rcall(c, UCMDD_OPEN, &o, sizeof(o), -1, NULL, 0, NULL, 0);
}

static int rring_init(struct rconn *c, struct rring *r, unsigned flags, unsigned idle_ms)
{
	struct ucmdd_queue_init q = { .entries = 8 };
	int fds[3] = { -1, -1, -1 };
	int ret;

	memset(r, 0, sizeof(*r));
	q.p.flags = flags;
	q.p.sq_thread_idle = idle_ms;
	ret = rcall(c, UCMDD_QUEUE_INIT, &q, sizeof(q), -1, &r->rep, sizeof(r->rep), fds, 3);
	if (ret < 0)
		return ret;
	r->c = c;
	r->id = (uint32_t)ret;
	r->memfd = fds[0];
	r->sq_efd = fds[1];
	r->cq_efd = fds[2];
	r->len = r->rep.mmap_size;
	r->mem = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->memfd, 0);
	if (r->mem == MAP_FAILED)
		dc_die("hostile: mmap the ring: %s", strerror(errno));
	r->ctl = (struct ucmdd_ring_ctl *)(r->mem + r->rep.ctl_off);
	return 0;
}

static void set_blocking(int fd)
{
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK))
		dc_die("hostile: F_SETFL: %s", strerror(errno));
}

static void efd_fill(int fd)
{
	uint64_t v = EFD_FULL;

	if (write(fd, &v, sizeof(v)) != sizeof(v))
		dc_die("hostile: filling an eventfd: %s", strerror(errno));
}

/* Publish one SQE and submit it as io_uring_enter(2) would (sq_limit), ringing the doorbell. */
static void rsubmit(struct rring *r, const struct io_uring_sqe *sqe)
{
	const struct io_sqring_offsets *so = &r->rep.p.sq_off;
	uint32_t *tail = (uint32_t *)(r->mem + so->tail);
	uint32_t mask = *(uint32_t *)(r->mem + so->ring_mask);
	uint32_t *array = (uint32_t *)(r->mem + so->array);
	uint32_t t = *tail;
	struct io_uring_sqe *s = (struct io_uring_sqe *)(r->mem + r->rep.sqes_off) + (t & mask);
	uint64_t one = 1;

	*s = *sqe;
	array[t & mask] = t & mask;
	__atomic_store_n(tail, t + 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&r->ctl->sq_limit, t + 1, __ATOMIC_SEQ_CST);
	if (write(r->sq_efd, &one, sizeof(one)) < 0)
		dc_die("hostile: doorbell: %s", strerror(errno));
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static const char *path_of(const struct dc_opts *o)
{
	const char *p = o->daemon ? o->daemon : getenv("UCMD_DAEMON");

	if (!p)
		dc_die("hostile: no --daemon and no UCMD_DAEMON");
	return p;
}

static int cmd_efd(const struct dc_opts *o, const char *mode)
{
	struct io_uring_sqe sqe = { .opcode = IORING_OP_NOP, .user_data = 1 };
	struct __kernel_timespec ts = { .tv_nsec = 20 * 1000000 };
	struct rconn c;
	struct rring r;
	int ret;

	if (rconnect(path_of(o), &c) || rhello(&c) < 0)
		dc_die("hostile: connecting: %s", strerror(errno));
	ret = rring_init(&c, &r, 0, 0);
	if (ret)
		dc_die("hostile: QUEUE_INIT: %s", strerror(-ret));
	if (!strcmp(mode, "efd-user")) {
		struct ucmdd_register reg = { .ring_id = r.id, .opcode = IORING_REGISTER_EVENTFD,
					      .nr = 1 };
		int efd = eventfd(0, EFD_CLOEXEC);	/* blocking */

		efd_fill(efd);
		ret = rcall(&c, UCMDD_REGISTER, &reg, sizeof(reg), efd, NULL, 0, NULL, 0);
		if (ret)
			dc_die("hostile: REGISTER_EVENTFD: %s", strerror(-ret));
	} else if (!strcmp(mode, "efd-cq")) {
		set_blocking(r.cq_efd);
		efd_fill(r.cq_efd);
		__atomic_store_n(&r.ctl->cq_waiting, 1, __ATOMIC_SEQ_CST);
	} else if (!strcmp(mode, "efd-sq")) {
		/* the doorbell below leaves 1 there, which the proxy drains; then it is 0 */
		set_blocking(r.sq_efd);
		sqe.opcode = IORING_OP_TIMEOUT;
		sqe.addr = (uint64_t)(uintptr_t)&ts;
		sqe.len = 1;
	} else {
		dc_die("hostile: unknown mode %s", mode);
	}
	rsubmit(&r, &sqe);
	sleep_ms(o->stall_ms ? o->stall_ms : 500);
	printf("%s: done\n", mode);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmd_idle_rings(const struct dc_opts *o, bool sqpoll)
{
	unsigned n = o->count ? o->count : 16;
	struct rconn c;
	struct rring *r = calloc(n, sizeof(*r));
	double end;
	int ret;

	if (!r || rconnect(path_of(o), &c) || rhello(&c) < 0)
		dc_die("hostile: connecting: %s", strerror(errno));
	for (unsigned i = 0; i < n; i++) {
		ret = rring_init(&c, &r[i], sqpoll ? IORING_SETUP_SQPOLL : 0, 100);
		if (ret) {
			printf("rings: %u, then %s\n", i, strerror(-ret));
			return 0;
		}
	}
	printf("rings: %u\n", n);
	fflush(stdout);
	end = now_s() + (o->seconds ? o->seconds : 2);
	while (now_s() < end) {
		uint64_t one = 1;

		for (unsigned i = 0; i < n; i++)
			if (write(r[i].sq_efd, &one, sizeof(one)) < 0)
				dc_die("hostile: doorbell: %s", strerror(errno));
		sleep_ms(50);
	}
	return 0;
}

static void print_result(const char *what, unsigned got, int err)
{
	char name[32];

	printf("%s: %u %s\n", what, got, err ? dc_res_name(err, name, sizeof(name)) : "OK");
}

static int cmd_conns(const struct dc_opts *o)
{
	static struct rconn c[MAX_CONNS];
	unsigned n = o->count > MAX_CONNS ? MAX_CONNS : o->count, got = 0;
	int err = 0;

	for (; got < n; got++) {
		err = rconnect(path_of(o), &c[got]);
		if (!err) {
			err = rhello(&c[got]);
			if (err < 0)
				close(c[got].sock);
		}
		if (err < 0)
			break;
		err = 0;
	}
	print_result("conns", got, err);
	fflush(stdout);
	sleep_ms(o->stall_ms);
	return 0;
}

/* One shared region: a sealed memfd page mapped here. */
static int rregion(struct rconn *c)
{
	struct ucmdd_region rg = { .len = 4096 };
	int fd = memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *p;
	int ret;

	if (fd < 0 || ftruncate(fd, 4096) || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK))
		dc_die("hostile: memfd: %s", strerror(errno));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		dc_die("hostile: mmap: %s", strerror(errno));
	rg.addr = (uint64_t)(uintptr_t)p;
	ret = rcall(c, UCMDD_REGION_ADD, &rg, sizeof(rg), fd, NULL, 0, NULL, 0);
	close(fd);
	return ret;
}

enum many { MANY_FDS, MANY_RINGS, MANY_REGIONS };

/* fds, rings or regions over as many connections as it takes. */
static int cmd_many(const struct dc_opts *o, enum many what)
{
	static const char *const name[] = { "fds", "rings", "regions" };
	static const unsigned per_conn[] = { PER_CONN_FDS, 16, 64 };
	static struct rconn c[MAX_CONNS];
	unsigned nc = 0, got = 0, in_conn = 0, per = per_conn[what];
	int err = 0;

	while (got < o->count) {
		if (!nc || in_conn == per) {
			if (nc == MAX_CONNS)
				break;
			err = rconnect(path_of(o), &c[nc]);
			if (!err)
				err = rhello(&c[nc]);
			if (err < 0)
				break;
			nc++;
			in_conn = 0;
		}
		if (what == MANY_RINGS) {
			struct rring r;

			err = rring_init(&c[nc - 1], &r, 0, 0);
		} else if (what == MANY_REGIONS) {
			err = rregion(&c[nc - 1]);
		} else {
			err = ropen(&c[nc - 1], o->ns ? o->ns : "ng0n1");
		}
		if (err < 0)
			break;
		err = 0;
		got++;
		in_conn++;
	}
	print_result(name[what], got, err);
	fflush(stdout);
	sleep_ms(o->stall_ms);
	return 0;
}

static int cmd_idle(const struct dc_opts *o)
{
	struct rconn c;
	struct pollfd pfd;
	char b;

	if (rconnect(path_of(o), &c))
		dc_die("hostile: connect: %s", strerror(errno));
	pfd.fd = c.sock;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, (int)((o->seconds ? o->seconds : 5) * 1000)) > 0 &&
	    recv(c.sock, &b, 1, MSG_DONTWAIT) <= 0)
		printf("closed\n");
	else
		printf("open\n");
	return 0;
}

int dc_hostile(const struct dc_opts *o, const char *what)
{
	if (!strncmp(what, "efd-", 4))
		return cmd_efd(o, what);
	if (!strcmp(what, "idle-rings"))
		return cmd_idle_rings(o, false);
	if (!strcmp(what, "idle-rings-sqpoll"))
		return cmd_idle_rings(o, true);
	if (!strcmp(what, "conns"))
		return cmd_conns(o);
	if (!strcmp(what, "fds"))
		return cmd_many(o, MANY_FDS);
	if (!strcmp(what, "rings"))
		return cmd_many(o, MANY_RINGS);
	if (!strcmp(what, "regions"))
		return cmd_many(o, MANY_REGIONS);
	if (!strcmp(what, "idle"))
		return cmd_idle(o);
	dc_die("hostile: unknown check %s", what);
}
