/* SPDX-License-Identifier: MIT */
/*
 * One connection: its control thread reads a request, checks it whole
 * (srv_msg_check: nothing a client sends is trusted), runs it through the
 * table below acting as the client (cred_override_set), and sends exactly
 * one reply echoing the request's seq. A client that sends garbage gets an
 * error back; one that hangs up, or dies, is cleaned up after; neither
 * reaches any other client or the daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/ctl.h"
#include "ucmd/nvme.h"
#include "ucmd/nvme_wire.h"

#define HDR sizeof(struct ucmdd_hdr)

struct srv_req {
	struct ucmdd_hdr h;
	const void *p;		/* payload, h.len bytes, checked by srv_msg_check */
	int fds[UCMDD_MAX_FDS_PER_MSG];
	unsigned nfds;
};

struct srv_rep {
	int result;
	const void *payload;
	size_t len;
	void *to_free;		/* the payload's allocation, if the handler made one */
	int fds[3];		/* sent with the reply, then closed */
	unsigned nfds;
};

/* ---- the requests ---- */

static void op_hello(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	static struct ucmdd_hello me = {
		.version = UCMDD_VERSION,
		.max_rings = SRV_MAX_RINGS,
		.max_fds = SRV_MAX_FDS,
		.max_entries = SRV_MAX_ENTRIES,
	};
	struct ucmdd_hello h;

	(void)c;
	memcpy(&h, q->p, sizeof(h));
	/* the daemon's limits either way: a client of another version learns which it is */
	r->result = h.version == UCMDD_VERSION ? 0 : -EPROTONOSUPPORT;
	r->payload = &me;
	r->len = sizeof(me);
}

static void op_device_names(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	const char **names;
	char *out;
	size_t off = 0, room = UCMDD_MSG_MAX - HDR;
	int n, m;

	(void)q;
	n = ucmd_device_names(c->d->e, NULL, 0);
	if (n <= 0) {
		r->result = n;
		return;
	}
	names = calloc((size_t)n, sizeof(*names));
	out = malloc(room);
	if (!names || !out) {
		free(names);
		free(out);
		r->result = -ENOMEM;
		return;
	}
	/* a device added meanwhile is left out: the count is what is sent */
	m = ucmd_device_names(c->d->e, names, (unsigned)n);
	if (m < n)
		n = m;
	for (int i = 0; i < n; i++) {
		size_t l = strlen(names[i]) + 1;

		if (l > room - off) {
			n = -ENOBUFS;
			break;
		}
		memcpy(out + off, names[i], l);
		off += l;
	}
	free(names);
	r->result = n;
	r->payload = r->to_free = out;
	r->len = n < 0 ? 0 : off;
}

static void op_disk_stat(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	const struct ucmdd_name *nm = q->p;
	struct ucmd_disk_stat *st = calloc(1, sizeof(*st));

	if (!st) {
		r->result = -ENOMEM;
		return;
	}
	r->result = ucmd_disk_stat(c->d->e, nm->name, st);
	r->payload = r->to_free = st;
	r->len = r->result < 0 ? 0 : sizeof(*st);
}

/*
 * The engine opens as the client (this thread's credentials) and the file
 * goes to the client's own table: the number it gets is the one it names
 * in ioctls and SQEs, which the engine resolves in that table. Each number
 * held counts against its uid (quota.c).
 */
static void op_open(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	struct ucmdd_open o;
	struct ucmd_file *f, *old = NULL;
	int ret;

	memcpy(&o, q->p, sizeof(o));
	ret = filp_open(c->d->e, o.name, o.flags & O_ACCMODE, &f);
	if (ret) {
		r->result = ret;
		return;
	}
	ret = srv_quota_charge(c->d, c->cred.uid, SRV_RES_FD, 1);
	if (ret) {
		fput(f);
		r->result = ret;
		return;
	}
	if (o.flags & UCMDD_OPEN_FIXED)
		ret = replace_fd(&c->files, o.fd, f, &old);	/* dup2(2): the old file goes */
	else
		ret = fd_install_lowest(&c->files, f);
	if (ret < 0)
		fput(f);
	/* a failed install, or a number held already, counts no more */
	if (ret < 0 || old)
		srv_quota_uncharge(c->d, c->cred.uid, SRV_RES_FD, 1);
	if (old)
		fput(old);
	r->result = ret;
}

static void op_close(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	struct ucmdd_fd f;

	memcpy(&f, q->p, sizeof(f));
	r->result = close_fd(&c->files, f.fd);
	if (!r->result)
		srv_quota_uncharge(c->d, c->cred.uid, SRV_RES_FD, 1);
}

static void op_ioctl(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	struct ucmdd_ioctl io;

	memcpy(&io, q->p, sizeof(io));
	/* ioctl numbers are 32 bits; a wider one names nothing */
	if (io.cmd >> 32) {
		r->result = -ENOTTY;
		return;
	}
	/*
	 * The engine's own ioctl path, acting for the client's task (this
	 * thread's, client_main): the fd in its file table; the argument
	 * copied from its memory once, the chain judges that copy, and the
	 * driver reaches the data, metadata and result through the same task.
	 */
	r->result = ucmd_ioctl(c->d->e, io.fd, (unsigned long)io.cmd, (void *)(uintptr_t)io.arg);
}

static void op_queue_init(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	struct ucmdd_queue_init qi;
	struct ucmdd_queue_init_rep *rep = calloc(1, sizeof(*rep));

	if (!rep) {
		r->result = -ENOMEM;
		return;
	}
	memcpy(&qi, q->p, sizeof(qi));
	r->result = srv_ring_create_relay(c, &qi, rep, r->fds, q->nfds ? q->fds[0] : -1);
	r->payload = r->to_free = rep;
	if (r->result >= 0) {
		r->len = sizeof(*rep);
		r->nfds = 3;
	}
}

static void op_queue_exit(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	struct ucmdd_ring_id id;

	memcpy(&id, q->p, sizeof(id));
	r->result = srv_ring_destroy(c, id.ring_id);
}

static void op_ring_bounce(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	struct ucmdd_ring_id id;
	struct ucmdd_bounce_rep *rep = calloc(1, sizeof(*rep));

	if (!rep) {
		r->result = -ENOMEM;
		return;
	}
	memcpy(&id, q->p, sizeof(id));
	/* the supervisor's library is not in the memory it acts on: it cannot copy */
	r->result = c->adopted ? -EOPNOTSUPP : srv_ring_bounce(c, id.ring_id, rep, r->fds);
	r->payload = r->to_free = rep;
	if (r->result >= 0) {
		r->len = sizeof(*rep);
		r->nfds = 1;
	}
}

static void op_register(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	struct ucmdd_register reg;
	void *payload = NULL;
	size_t len = 0;

	memcpy(&reg, q->p, sizeof(reg));
	if (reg.flags & UCMDD_REG_SHARED)
		r->result = srv_relay_register(c, &reg, q->fds[0], q->nfds > 1 ? q->fds[1] : -1,
					       &payload, &len);
	else
		r->result = srv_ring_register(c, &reg, q->nfds ? q->fds[0] : -1, &payload, &len);
	r->payload = r->to_free = payload;
	r->len = payload && len <= UCMDD_MSG_MAX - HDR ? len : 0;
}

static void op_region_add(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	struct ucmdd_region rg;

	unsigned before = c->nr_regions;

	memcpy(&rg, q->p, sizeof(rg));
	r->result = srv_quota_charge(c->d, c->cred.uid, SRV_RES_REGION, 1);
	if (r->result)
		return;
	/* the daemon's mapping keeps the memory; the fd is closed with the request's */
	r->result = srv_region_add(c, q->fds[0], rg.addr, rg.len);
	/* a region counts until the client goes: a removed one stays mapped until then */
	if (c->nr_regions == before)
		srv_quota_uncharge(c->d, c->cred.uid, SRV_RES_REGION, 1);
}

static void op_region_del(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	struct ucmdd_region rg;

	memcpy(&rg, q->p, sizeof(rg));
	r->result = srv_region_del(c, rg.addr);
}

/* The owner's run-time control of its ports' ANA states: asking is anyone's. */
static void op_ana_state(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	struct ucmdd_ana_state a;

	memcpy(&a, q->p, sizeof(a));
	if (a.state && c->cred.euid != 0 && c->cred.euid != geteuid())
		r->result = -EPERM;
	else if (!c->d->ana_state)
		r->result = -ENODEV;
	else
		r->result = c->d->ana_state(c->d, a.port, a.grpid, a.state);
}

/* The same for the controllers of a directory of several, each a port of its own. */
static void op_ctrl_ana_state(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	struct ucmdd_ctrl_ana_state a;

	memcpy(&a, q->p, sizeof(a));
	if (a.state && c->cred.euid != 0 && c->cred.euid != geteuid())
		r->result = -EPERM;
	else if (!c->d->ctrl_ana_state)
		r->result = -ENODEV;
	else
		r->result = c->d->ctrl_ana_state(c->d, a.name, a.grpid, a.state);
}

/*
 * The seccomp supervisor (src/preload/supervise.c) acts for its child, a
 * static program, or one of the program's descendants (sv_fork.c): the
 * connection's memory becomes that process's, and its exit ends it. Only while the connection holds nothing, so that no
 * ring or fd was set up against the other memory.
 */
static void op_adopt(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	struct user_mm mm;
	pid_t pid;
	int pidfd;

	if (c->held) {
		r->result = -EBUSY;
		return;
	}
	r->result = srv_peer_adopt(&c->cred, q->fds[0], &pid, &mm);
	if (r->result)
		return;
	pidfd = fcntl(q->fds[0], F_DUPFD_CLOEXEC, 0);
	if (pidfd < 0) {
		r->result = -errno;
		user_mm_release(&mm);
		return;
	}
	srv_log("pid %d (uid %u) acts for its descendant %d", (int)c->pid, (unsigned)c->cred.uid,
		(int)pid);
	user_mm_release(&c->mm);
	c->mm = mm;
	close(c->pidfd);
	c->pidfd = pidfd;
	c->adopted = true;
	c->pid = pid;
	c->cred.pid = pid;
}

static void op_port_state(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	struct ucmdd_port_state a;

	memcpy(&a, q->p, sizeof(a));
	if (a.state && c->cred.euid != 0 && c->cred.euid != geteuid())
		r->result = -EPERM;
	else if (!c->d->port_state)
		r->result = -ENODEV;
	else
		r->result = c->d->port_state(c->d, a.port, a.state);
}

/* A controller's registers, as its resource0 shows them: for whoever holds the device open. */
static void op_regs_read(struct srv_client *c, struct srv_req *q, struct srv_rep *r)
{
	struct ucmdd_regs_read rr;
	void *buf;

	memcpy(&rr, q->p, sizeof(rr));
	if (rr.len > UCMD_NVME_REG_DBS || rr.off > UCMD_NVME_REG_DBS - rr.len || (rr.off | rr.len) & 3) {
		r->result = -EINVAL;
		return;
	}
	buf = malloc(rr.len ? rr.len : 1);
	if (!buf) {
		r->result = -ENOMEM;
		return;
	}
	/* the fd in the client's own table: this thread acts for its task */
	r->result = ucmd_nvme_regs_read(c->d->e, rr.fd, rr.off, buf, rr.len);
	if (r->result) {
		free(buf);
		return;
	}
	/*
	 * ASQ and ACQ hold the daemon's own addresses (its queues' memory, the
	 * DMA addresses a PCI host would see): no client learns where the
	 * daemon's heap is. They read as zeros.
	 */
	for (uint32_t o = UCMD_NVME_REG_ASQ; o < UCMD_NVME_REG_ACQ + 8; o++)
		if (o >= rr.off && o < rr.off + rr.len)
			((uint8_t *)buf)[o - rr.off] = 0;
	r->payload = r->to_free = buf;
	r->len = rr.len;
}

/* Indexed by op: the payload each request carries, exactly, and its handler. */
static const struct srv_op {
	size_t size;
	void (*fn)(struct srv_client *c, struct srv_req *q, struct srv_rep *r);
} srv_ops[UCMDD_OP_MAX] = {
	[UCMDD_HELLO] = { sizeof(struct ucmdd_hello), op_hello },
	[UCMDD_DEVICE_NAMES] = { 0, op_device_names },
	[UCMDD_DISK_STAT] = { sizeof(struct ucmdd_name), op_disk_stat },
	[UCMDD_OPEN] = { sizeof(struct ucmdd_open), op_open },
	[UCMDD_CLOSE] = { sizeof(struct ucmdd_fd), op_close },
	[UCMDD_IOCTL] = { sizeof(struct ucmdd_ioctl), op_ioctl },
	[UCMDD_QUEUE_INIT] = { sizeof(struct ucmdd_queue_init), op_queue_init },
	[UCMDD_QUEUE_EXIT] = { sizeof(struct ucmdd_ring_id), op_queue_exit },
	[UCMDD_REGISTER] = { sizeof(struct ucmdd_register), op_register },
	[UCMDD_REGION_ADD] = { sizeof(struct ucmdd_region), op_region_add },
	[UCMDD_REGION_DEL] = { sizeof(struct ucmdd_region), op_region_del },
	[UCMDD_ANA_STATE] = { sizeof(struct ucmdd_ana_state), op_ana_state },
	[UCMDD_ADOPT] = { 0, op_adopt },
	[UCMDD_PORT_STATE] = { sizeof(struct ucmdd_port_state), op_port_state },
	[UCMDD_REGS_READ] = { sizeof(struct ucmdd_regs_read), op_regs_read },
	[UCMDD_CTRL_ANA_STATE] = { sizeof(struct ucmdd_ctrl_ana_state), op_ctrl_ana_state },
	[UCMDD_RING_BOUNCE] = { sizeof(struct ucmdd_ring_id), op_ring_bounce },
};

/* ---- checking a request ---- */

static bool name_ok(const char *name)
{
	return memchr(name, 0, UCMDD_NAME_MAX) != NULL;
}

/* What each payload must hold beyond its size: zero pads, terminated names, known flags. */
static int payload_check(unsigned op, const void *p)
{
	switch (op) {
	case UCMDD_DISK_STAT: {
		struct ucmdd_name n;

		memcpy(&n, p, sizeof(n));
		return name_ok(n.name) ? 0 : -EINVAL;
	}
	case UCMDD_OPEN: {
		struct ucmdd_open o;
		int acc;

		memcpy(&o, p, sizeof(o));
		acc = o.flags & O_ACCMODE;
		/* O_CLOEXEC means nothing here and is tolerated; any other flag is refused */
		if ((o.flags & ~(O_ACCMODE | O_CLOEXEC | UCMDD_OPEN_FIXED)) ||
		    (acc != O_RDONLY && acc != O_WRONLY && acc != O_RDWR))
			return -EINVAL;
		if (o.flags & UCMDD_OPEN_FIXED ? o.fd < 0 || (unsigned)o.fd >= SRV_FD_SPACE : o.fd)
			return -EINVAL;
		return name_ok(o.name) ? 0 : -EINVAL;
	}
	case UCMDD_CLOSE: {
		struct ucmdd_fd f;

		memcpy(&f, p, sizeof(f));
		return f.pad ? -EINVAL : 0;
	}
	case UCMDD_IOCTL: {
		struct ucmdd_ioctl io;

		memcpy(&io, p, sizeof(io));
		return io.pad ? -EINVAL : 0;
	}
	case UCMDD_QUEUE_INIT: {
		struct ucmdd_queue_init qi;

		memcpy(&qi, p, sizeof(qi));
		return qi.flags & ~(UCMDD_QI_SQES_AT_OFF | UCMDD_QI_SUBMIT_COPY | UCMDD_QI_RELAY) ?
			       -EINVAL : 0;
	}
	case UCMDD_QUEUE_EXIT:
	case UCMDD_RING_BOUNCE: {
		struct ucmdd_ring_id id;

		memcpy(&id, p, sizeof(id));
		return id.pad ? -EINVAL : 0;
	}
	case UCMDD_REGISTER: {
		struct ucmdd_register reg;

		memcpy(&reg, p, sizeof(reg));
		if (reg.flags & ~UCMDD_REG_SHARED)
			return -EINVAL;
		/* a shared ring is named by its memfd alone */
		return (reg.flags & UCMDD_REG_SHARED) && reg.ring_id ? -EINVAL : 0;
	}
	case UCMDD_ANA_STATE: {
		struct ucmdd_ana_state a;

		memcpy(&a, p, sizeof(a));
		return a.pad ? -EINVAL : 0;
	}
	case UCMDD_PORT_STATE: {
		struct ucmdd_port_state a;

		memcpy(&a, p, sizeof(a));
		return a.state > UCMDD_PORT_DOWN ? -EINVAL : 0;
	}
	case UCMDD_REGS_READ: {
		struct ucmdd_regs_read rr;

		memcpy(&rr, p, sizeof(rr));
		return rr.pad ? -EINVAL : 0;
	}
	case UCMDD_CTRL_ANA_STATE: {
		struct ucmdd_ctrl_ana_state a;

		memcpy(&a, p, sizeof(a));
		return name_ok(a.name) ? 0 : -EINVAL;
	}
	default:
		return 0;
	}
}

int srv_msg_check(const void *buf, size_t len)
{
	struct ucmdd_hdr h;

	if (len < HDR)
		return -EPROTO;
	memcpy(&h, buf, HDR);
	if (h.magic != UCMDD_MAGIC)
		return -EPROTO;
	if (len > UCMDD_MSG_MAX)
		return -EMSGSIZE;
	/* the header's length must be the message's: neither truncated nor padded */
	if (h.len != len - HDR)
		return -EPROTO;
	if (h.flags || h.pad || h.result)
		return -EINVAL;
	if (h.op == 0 || h.op >= UCMDD_OP_MAX || !srv_ops[h.op].fn)
		return -EINVAL;
	if (h.len != srv_ops[h.op].size)
		return -EINVAL;
	return payload_check(h.op, (const char *)buf + HDR);
}

void srv_msg_fds(const void *buf, size_t len, unsigned *min, unsigned *max)
{
	struct ucmdd_hdr h;

	*min = *max = 0;
	if (len < HDR)
		return;
	memcpy(&h, buf, HDR);
	if (h.op == UCMDD_REGION_ADD || h.op == UCMDD_ADOPT) {
		*min = *max = 1;
	} else if (h.op == UCMDD_QUEUE_INIT && len >= HDR + sizeof(struct ucmdd_queue_init)) {
		struct ucmdd_queue_init qi;

		memcpy(&qi, (const char *)buf + HDR, sizeof(qi));
		if (qi.flags & UCMDD_QI_RELAY)
			*min = *max = 1;
	} else if (h.op == UCMDD_REGISTER && len >= HDR + sizeof(struct ucmdd_register)) {
		struct ucmdd_register reg;

		memcpy(&reg, (const char *)buf + HDR, sizeof(reg));
		if (reg.opcode == IORING_REGISTER_EVENTFD ||
		    reg.opcode == IORING_REGISTER_EVENTFD_ASYNC)
			*min = *max = 1;
		if (reg.flags & UCMDD_REG_SHARED) {
			(*min)++;
			(*max)++;
		}
	}
}

/* ---- the connection ---- */

/* 0, or -errno when the client is gone or the daemon stops before it reads. */
static int send_reply(struct srv_client *c, const struct ucmdd_hdr *rq, struct srv_rep *r)
{
	struct ucmdd_hdr h = {
		.magic = UCMDD_MAGIC,
		.op = rq ? rq->op : 0,
		.seq = rq ? rq->seq : 0,
		.result = r->result,
		.len = (uint32_t)r->len,
	};
	struct iovec iov[2] = {
		{ .iov_base = &h, .iov_len = HDR },
		{ .iov_base = (void *)r->payload, .iov_len = r->len },
	};
	union {
		char buf[CMSG_SPACE(sizeof(int) * 3)];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = r->len ? 2 : 1 };

	if (r->nfds) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * r->nfds);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * r->nfds);
		memcpy(CMSG_DATA(cm), r->fds, sizeof(int) * r->nfds);
	}
	for (;;) {
		struct pollfd pf[2] = {
			{ .fd = c->sock, .events = POLLOUT },
			{ .fd = c->d->stop_fd, .events = POLLIN },
		};

		/*
		 * Never blocking in sendmsg: a client that stops reading its
		 * replies must not keep this thread from seeing SIGTERM.
		 */
		if (sendmsg(c->sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
			return 0;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			return -errno;
		if (pf[1].revents)
			return -ESHUTDOWN;
	}
}

static void rep_release(struct srv_rep *r)
{
	for (unsigned i = 0; i < r->nfds; i++)
		close(r->fds[i]);
	free(r->to_free);
}

/*
 * Wait for the next request: 1 when one is there, 0 when the daemon
 * stops, -errno on error.
 */
static int wait_request(struct srv_client *c)
{
	struct pollfd pf[3] = {
		{ .fd = c->sock, .events = POLLIN },
		{ .fd = c->d->stop_fd, .events = POLLIN },
		/* the connecting process exited: its memory, and so the client, is gone */
		{ .fd = c->pidfd, .events = POLLIN },
	};
	unsigned idle_s = srv_idle_timeout_s(c->d);

	for (;;) {
		/*
		 * A connection that never held a device, a ring or a region
		 * is closed after idle_s silent seconds: idle connections
		 * would otherwise hold the daemon's table (and a thread each)
		 * for nothing.
		 */
		int timeout = idle_s && !c->held ? (int)idle_s * 1000 : -1;
		int n = poll(pf, 3, timeout);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			return -ETIMEDOUT;
		if (pf[1].revents)
			return 0;
		if (pf[2].revents || user_mm_gone(&c->mm))
			return -ESRCH;
		return 1;
	}
}

/* One request in, one reply out. 0 to go on; < 0 when the connection is done. */
static int serve_one(struct srv_client *c, void *buf)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * UCMDD_MAX_FDS_PER_MSG)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = UCMDD_MSG_MAX };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct srv_req q = { 0 };
	struct srv_rep r = { 0 };
	struct ucmdd_hdr *echo = NULL;
	unsigned min, max;
	ssize_t n;
	int ret;

	n = recvmsg(c->sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -ENOTCONN;	/* the client hung up */
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (q.nfds < UCMDD_MAX_FDS_PER_MSG)
				q.fds[q.nfds++] = fd;
			else
				close(fd);
		}
	}
	if ((size_t)n >= HDR) {
		memcpy(&q.h, buf, HDR);
		echo = &q.h;
	}
	if (msg.msg_flags & MSG_TRUNC) {
		/* larger than any request: the rest of it is gone */
		ret = -EMSGSIZE;
	} else if (msg.msg_flags & MSG_CTRUNC) {
		ret = -EINVAL;
	} else {
		ret = srv_msg_check(buf, (size_t)n);
		if (!ret) {
			srv_msg_fds(buf, (size_t)n, &min, &max);
			if (q.nfds < min || q.nfds > max)
				ret = -EINVAL;
		}
	}
	if (ret) {
		r.result = ret;
	} else {
		q.p = (const char *)buf + HDR;
		srv_ops[q.h.op].fn(c, &q, &r);
		if (r.result >= 0 && (q.h.op == UCMDD_OPEN || q.h.op == UCMDD_QUEUE_INIT ||
				      q.h.op == UCMDD_REGION_ADD))
			c->held = true;
	}
	for (unsigned i = 0; i < q.nfds; i++)
		close(q.fds[i]);
	ret = send_reply(c, echo, &r);
	rep_release(&r);
	return ret;
}

static void client_free(struct srv_client *c)
{
	struct srv_daemon *d = c->d;

	/*
	 * With the daemon stopping, c->dead stays false while the rings
	 * go: they finish what they hold and post it. A client that hung up
	 * is dead first: its rings cancel what they can.
	 */
	if (!atomic_load(&d->stopping))
		atomic_store(&c->dead, true);
	srv_rings_destroy_all(c);
	atomic_store(&c->dead, true);
	srv_quota_uncharge(d, c->cred.uid, SRV_RES_REGION, c->nr_regions);
	srv_task_free(c);
	user_mm_release(&c->mm);
	close(c->pidfd);
	close(c->sock);

	pthread_mutex_lock(&d->lock);
	for (struct srv_client **pp = &d->clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	d->nr_clients--;
	pthread_cond_broadcast(&d->gone);
	pthread_mutex_unlock(&d->lock);
	/* out of the list first: a relay ring's end looks at every client's rings (ring_relay.c) */
	pthread_mutex_destroy(&c->lock);
	srv_quota_uncharge(d, c->cred.uid, SRV_RES_CONN, 1);
	free(c);
}

static void *client_main(void *arg)
{
	struct srv_client *c = arg;
	void *buf = malloc(UCMDD_MSG_MAX);
	int ret = buf ? 0 : -ENOMEM;

	/* everything this thread does, the engine sees the client do */
	task_override_set(&c->task);
	while (!ret) {
		ret = wait_request(c);
		if (ret <= 0)
			break;
		ret = serve_one(c, buf);
	}
	task_override_set(NULL);
	free(buf);
	client_free(c);
	return NULL;
}

/*
 * A connection refused: one message, op and seq 0, carrying why, before the
 * hang-up, so that the client's first call fails with that errno rather
 * than a bare end of file. Never waits: the socket is new and empty.
 */
static void refuse(int sock, int err)
{
	struct ucmdd_hdr h = { .magic = UCMDD_MAGIC, .result = err };
	char b;

	if (send(sock, &h, sizeof(h), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return;
	/*
	 * What the client sent already is dropped: closed with unread data,
	 * the socket would report ECONNRESET to the client ahead of the reason.
	 */
	for (int i = 0; i < 16 && recv(sock, &b, sizeof(b), MSG_DONTWAIT | MSG_TRUNC) > 0; i++)
		;
}

/*
 * Whether the daemon takes one more connection of uid: 0, -EMFILE (every
 * slot taken), or the quota's answer (-EDQUOT, -EUSERS: only the reserve for
 * root and the daemon's user is left).
 */
static int admit(struct srv_daemon *d, uid_t uid)
{
	bool full;
	int ret;

	pthread_mutex_lock(&d->lock);
	full = d->nr_clients >= SRV_MAX_CLIENTS;
	pthread_mutex_unlock(&d->lock);
	if (full)
		return -EMFILE;
	ret = srv_quota_charge(d, uid, SRV_RES_CONN, 1);
	return ret;
}

int srv_client_start(struct srv_daemon *d, int sock, const struct ucmd_cred *cred, int pidfd,
		     const struct user_mm *mm)
{
	struct srv_client *c;
	pthread_attr_t attr;
	int ret;

	ret = admit(d, cred->uid);
	if (ret) {
		srv_log("refusing pid %d (uid %u): %s", (int)cred->pid, (unsigned)cred->uid,
			ret == -EMFILE ? "the daemon serves as many connections as it may"
			: ret == -EDQUOT ? "the user's connection quota is reached"
			: ret == -EUSERS ? "what is left is kept for root and the daemon's user"
			: strerror(-ret));
		refuse(sock, ret);
		return ret;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		srv_quota_uncharge(d, cred->uid, SRV_RES_CONN, 1);
		return -ENOMEM;
	}
	c->d = d;
	c->sock = sock;
	c->pid = cred->pid;
	c->cred = *cred;
	c->cred.retired_next = NULL;
	c->pidfd = pidfd;
	c->mm = *mm;
	atomic_init(&c->dead, false);
	atomic_init(&c->bounce_bytes, 0);
	if (srv_task_init(c)) {
		srv_quota_uncharge(d, cred->uid, SRV_RES_CONN, 1);
		free(c);
		return -ENOMEM;
	}
	pthread_mutex_init(&c->lock, NULL);

	pthread_mutex_lock(&d->lock);
	c->next = d->clients;
	d->clients = c;
	d->nr_clients++;
	pthread_mutex_unlock(&d->lock);

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = -pthread_create(&c->thread, &attr, client_main, c);
	pthread_attr_destroy(&attr);
	if (ret) {
		pthread_mutex_lock(&d->lock);
		for (struct srv_client **pp = &d->clients; *pp; pp = &(*pp)->next) {
			if (*pp == c) {
				*pp = c->next;
				break;
			}
		}
		d->nr_clients--;
		pthread_mutex_unlock(&d->lock);
		srv_quota_uncharge(d, cred->uid, SRV_RES_CONN, 1);
		srv_task_free(c);
		pthread_mutex_destroy(&c->lock);
		free(c);
	}
	return ret;
}

void srv_clients_stop(struct srv_daemon *d)
{
	uint64_t one = 1;

	atomic_store(&d->stopping, true);
	if (write(d->stop_fd, &one, sizeof(one)) != sizeof(one))
		srv_log("waking the clients: %s", strerror(errno));
	pthread_mutex_lock(&d->lock);
	while (d->nr_clients)
		pthread_cond_wait(&d->gone, &d->lock);
	pthread_mutex_unlock(&d->lock);
}
