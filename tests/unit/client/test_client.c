/* SPDX-License-Identifier: MIT */
/*
 * The daemon backend (src/client) against a fake ucmdd: a thread on the
 * other end of a SOCK_SEQPACKET socketpair that speaks src/daemon/proto.h,
 * records what it was sent, and lays a ring out in a memfd as the daemon
 * does. It checks the framing (magic, op, seq, one reply per request),
 * fds in both directions, error mapping, the ring mapping and its
 * doorbells, and that a daemon that goes away is -ENOTCONN, never a hang
 * or SIGPIPE.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/backend.h"
#include "client/client.h"
#include "daemon/proto.h"
#include "uaccess/uaccess.h"
#include "ucmd/daemon.h"
#include "ucmd/nvme.h"
#include "ucmd/ucmd.h"

enum fake_mode {
	FAKE_OK,
	FAKE_OLD_VERSION,	/* HELLO answers version 2 */
	FAKE_BAD_SEQ,		/* the OPEN reply carries another seq */
	FAKE_CLOSE_ON_OPEN,	/* hang up instead of answering OPEN */
	FAKE_NO_COPY,		/* refuses UCMDD_QI_SUBMIT_COPY, as a daemon before it */
	FAKE_SHORT_COPY,	/* takes it, but makes no room for the program's SQ */
	FAKE_BOUNCE,		/* as FAKE_OK, and gives each ring a read bounce area */
	FAKE_BOUNCE_W,		/* the same with a write part: 8 records, 16 KiB of data */
	FAKE_FUTEX,		/* as FAKE_OK, and offers the futex wake-up (UCMDD_CTL_CQ_FUTEX) */
	FAKE_BELL,		/* as FAKE_OK, and clears sq_bell after emptying the doorbell (UCMDD_CTL_SQ_BELL) */
};

struct fake {
	int sock;
	enum fake_mode mode;
	pthread_t thread;
	/* what it saw */
	unsigned nreq;
	uint32_t seqs[64];
	uint16_t ops[64];
	char open_name[UCMDD_NAME_MAX];
	int open_flags;
	uint32_t reg_opcode, reg_nr;
	bool reg_fd_is_eventfd;
	bool region_sealed;
	uint64_t region_addr, region_len;
	void *region_map;
	bool region_del;
	struct ucmdd_ana_state ana;
	struct ucmdd_regs_read regs;
	bool exited;
	/* the ring it laid out */
	char *mem;
	size_t mem_len;
	struct ucmdd_queue_init_rep rep;
	int sq_efd, cq_efd;
	/* the read bounce area (FAKE_BOUNCE; else UCMDD_RING_BOUNCE is -EINVAL) */
	char *bmem;
	struct ucmdd_bounce_rep brep;
};

static size_t up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Linux's layout, as the daemon makes it: SQ ring, CQ ring, SQEs, control page. */
static int fake_ring(struct fake *f, const struct ucmdd_queue_init *req, int fds[3])
{
	struct io_uring_params *p = &f->rep.p;
	unsigned n = req->entries, sqe = (req->p.flags & IORING_SETUP_SQE128) ? 128 : 64;
	unsigned cqe = (req->p.flags & IORING_SETUP_CQE32) ? 32 : 16;
	size_t off;

	memset(&f->rep, 0, sizeof(f->rep));
	p->flags = req->p.flags;
	p->sq_entries = n;
	p->cq_entries = 2 * n;
	p->features = IORING_FEAT_NODROP;
	p->sq_off = (struct io_sqring_offsets){ .head = 0, .tail = 4, .ring_mask = 8,
						.ring_entries = 12, .flags = 16, .dropped = 20,
						.array = 64 };
	off = up(64 + 4 * n, 64);
	p->cq_off = (struct io_cqring_offsets){ .head = (uint32_t)off, .tail = (uint32_t)off + 4,
						.ring_mask = (uint32_t)off + 8,
						.ring_entries = (uint32_t)off + 12,
						.overflow = (uint32_t)off + 16,
						.flags = (uint32_t)off + 20,
						.cqes = (uint32_t)off + 64 };
	off = up(off + 64 + (size_t)2 * n * cqe, 64);
	if (req->flags & UCMDD_QI_SQES_AT_OFF) {
		/* the rings, the control page, a hole, the SQEs at IORING_OFF_SQES */
		f->rep.ctl_off = up(off, 4096);
		f->rep.sqes_off = IORING_OFF_SQES;
		f->mem_len = IORING_OFF_SQES + up((size_t)n * sqe, 4096);
	} else {
		f->rep.sqes_off = off;
		off = up(off + (size_t)n * sqe, 4096);
		f->rep.ctl_off = off;
		f->mem_len = off + 4096;
		/* the program's SQ after the control page's struct */
		if ((req->flags & UCMDD_QI_SUBMIT_COPY) && f->mode != FAKE_SHORT_COPY)
			f->mem_len = off + up(ucmdd_psq_len(n, sqe), 4096);
	}
	f->rep.mmap_size = f->mem_len;
	f->rep.ring_id = 5;
	fds[0] = memfd_create("fake-ring", MFD_CLOEXEC);
	if (fds[0] < 0 || ftruncate(fds[0], (off_t)f->mem_len))
		return -errno;
	f->mem = mmap(NULL, f->mem_len, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	if (f->mem == MAP_FAILED)
		return -errno;
	*(unsigned *)(f->mem + p->sq_off.ring_mask) = n - 1;
	*(unsigned *)(f->mem + p->sq_off.ring_entries) = n;
	*(unsigned *)(f->mem + p->cq_off.ring_mask) = 2 * n - 1;
	*(unsigned *)(f->mem + p->cq_off.ring_entries) = 2 * n;
	if (f->mode == FAKE_FUTEX)
		((struct ucmdd_ring_ctl *)(f->mem + f->rep.ctl_off))->features = UCMDD_CTL_CQ_FUTEX;
	if (f->mode == FAKE_BELL)
		((struct ucmdd_ring_ctl *)(f->mem + f->rep.ctl_off))->features = UCMDD_CTL_SQ_BELL;
	fds[1] = f->sq_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	fds[2] = f->cq_efd = eventfd(0, EFD_CLOEXEC);
	return 5;
}

static bool is_eventfd(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = 0;
	return strstr(target, "eventfd") != NULL;
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	char buf[UCMDD_MSG_MAX];
	union {
		struct cmsghdr a;
		char b[CMSG_SPACE(sizeof(int) * UCMDD_MAX_FDS_PER_MSG)];
	} cin, cout;

	for (;;) {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cin.b,
				    .msg_controllen = sizeof(cin.b) };
		ssize_t n = recvmsg(f->sock, &m, MSG_CMSG_CLOEXEC);
		struct ucmdd_hdr *h = (struct ucmdd_hdr *)buf;
		int fd_in = -1, fds[3] = { -1, -1, -1 }, nfds = 0;
		char payload[4096];
		uint32_t plen = 0;
		int32_t result = 0;

		if (n <= 0)
			break;
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		if (c && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd_in, CMSG_DATA(c), sizeof(int));
		/* framing: what every request must look like */
		if ((size_t)n < sizeof(*h) || h->magic != UCMDD_MAGIC || h->flags || h->pad ||
		    h->result || h->len != (size_t)n - sizeof(*h))
			break;
		if (f->nreq < 64) {
			f->seqs[f->nreq] = h->seq;
			f->ops[f->nreq] = h->op;
		}
		f->nreq++;
		void *req = buf + sizeof(*h);
		switch (h->op) {
		case UCMDD_HELLO: {
			struct ucmdd_hello hello = { .version = f->mode == FAKE_OLD_VERSION ? 2 : 1,
						     .max_rings = 16, .max_fds = 64,
						     .max_entries = 4096 };
			memcpy(payload, &hello, sizeof(hello));
			plen = sizeof(hello);
			break;
		}
		case UCMDD_OPEN: {
			const struct ucmdd_open *o = req;
			if (f->mode == FAKE_CLOSE_ON_OPEN)
				goto out;
			memcpy(f->open_name, o->name, sizeof(f->open_name));
			f->open_flags = o->flags;
			result = strcmp(o->name, "ng0n1") ? -ENOENT : 3;
			if (f->mode == FAKE_BAD_SEQ)
				h->seq++;
			break;
		}
		case UCMDD_IOCTL: {
			const struct ucmdd_ioctl *io = req;
			/* same address space: the arg is ours to look at */
			result = io->cmd == NVME_IOCTL_ID ? 1 : -EACCES;
			(void)io;
			break;
		}
		case UCMDD_DEVICE_NAMES:
			memcpy(payload, "nvme0\0ng0n1\0", 12);
			plen = 12;
			result = 2;
			break;
		case UCMDD_DISK_STAT: {
			struct ucmd_disk_stat st = { .ios = { 7, 9 } };
			const struct ucmdd_name *nm = req;
			if (strcmp(nm->name, "nvme0n1")) {
				result = -ENOTBLK;
				break;
			}
			memcpy(payload, &st, sizeof(st));
			plen = sizeof(st);
			break;
		}
		case UCMDD_QUEUE_INIT:
			if (f->mode == FAKE_NO_COPY &&
			    (((const struct ucmdd_queue_init *)req)->flags & UCMDD_QI_SUBMIT_COPY)) {
				result = -EINVAL;
				break;
			}
			result = fake_ring(f, req, fds);
			memcpy(payload, &f->rep, sizeof(f->rep));
			plen = sizeof(f->rep);
			nfds = 3;
			break;
		case UCMDD_QUEUE_EXIT:
			f->exited = true;
			break;
		case UCMDD_RING_BOUNCE:
			if (f->mode != FAKE_BOUNCE && f->mode != FAKE_BOUNCE_W) {
				result = -EINVAL;
				break;
			}
			/*
			 * a control page, a page of records, four pages of data;
			 * FAKE_BOUNCE_W: a page of write records, four of write data
			 */
			f->brep = (struct ucmdd_bounce_rep){ .size = 6 * 4096, .recs_off = 4096,
							     .data_off = 2 * 4096,
							     .data_len = 4 * 4096, .nr_recs = 256 };
			if (f->mode == FAKE_BOUNCE_W) {
				f->brep.size = 11 * 4096;
				f->brep.nr_wrecs = 8;
				f->brep.wrecs_off = 6 * 4096;
				f->brep.wdata_off = 7 * 4096;
				f->brep.wdata_len = 4 * 4096;
			}
			fds[0] = memfd_create("fake-bounce", MFD_CLOEXEC);
			if (fds[0] < 0 || ftruncate(fds[0], (off_t)f->brep.size)) {
				result = -ENOMEM;
				break;
			}
			f->bmem = mmap(NULL, f->brep.size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0],
				       0);
			memcpy(payload, &f->brep, sizeof(f->brep));
			plen = sizeof(f->brep);
			nfds = 1;
			break;
		case UCMDD_REGISTER: {
			const struct ucmdd_register *r = req;
			f->reg_opcode = r->opcode;
			f->reg_nr = r->nr;
			f->reg_fd_is_eventfd = fd_in >= 0 && is_eventfd(fd_in);
			if (r->opcode == IORING_REGISTER_PROBE) {
				struct io_uring_probe *p = (struct io_uring_probe *)payload;
				memset(p, 0, sizeof(*p) + 3 * sizeof(p->ops[0]));
				p->last_op = 2;
				p->ops_len = 3;
				for (int i = 0; i < 3; i++) {
					p->ops[i].op = (uint8_t)i;
					p->ops[i].flags = i == 1 ? 0 : IO_URING_OP_SUPPORTED;
				}
				plen = sizeof(*p) + 3 * sizeof(p->ops[0]);
			} else if (r->opcode == IORING_REGISTER_FILES) {
				result = -EBADF;
			}
			break;
		}
		case UCMDD_REGION_ADD: {
			const struct ucmdd_region *r = req;
			int seals = fd_in >= 0 ? fcntl(fd_in, F_GET_SEALS) : -1;
			f->region_sealed = seals >= 0 && (seals & F_SEAL_SHRINK) &&
					   (seals & F_SEAL_GROW);
			f->region_addr = r->addr;
			f->region_len = r->len;
			f->region_map = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED,
					     fd_in, 0);
			if (f->region_map != MAP_FAILED)
				memset(f->region_map, 0xa5, r->len);
			break;
		}
		case UCMDD_REGION_DEL:
			f->region_del = true;
			break;
		case UCMDD_ANA_STATE:
			/* a daemon with one port: a state set is the answer, 0 asks (1) */
			memcpy(&f->ana, req, sizeof(f->ana));
			result = f->ana.port != 1 ? -ENODEV : f->ana.state ? (int)f->ana.state : 1;
			break;
		case UCMDD_REGS_READ:
			/* fd 5 a controller (bytes = their offset), 6 one that answers short, else none */
			memcpy(&f->regs, req, sizeof(f->regs));
			if (f->regs.fd != 5 && f->regs.fd != 6) {
				result = -ENOTTY;
				break;
			}
			plen = f->regs.len - (f->regs.fd == 6 ? 4 : 0);
			for (size_t i = 0; i < plen; i++)
				((uint8_t *)payload)[i] = (uint8_t)(f->regs.off + i);
			break;
		default:
			result = -EINVAL;
		}
		if (fd_in >= 0)
			close(fd_in);
		struct ucmdd_hdr rh = { .magic = UCMDD_MAGIC, .op = h->op, .seq = h->seq,
					.result = result, .len = result < 0 ? 0 : plen };
		struct iovec riov[2] = { { &rh, sizeof(rh) }, { payload, rh.len } };
		struct msghdr rm = { .msg_iov = riov, .msg_iovlen = 2 };
		if (nfds && result >= 0) {
			rm.msg_control = cout.b;
			rm.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
			struct cmsghdr *oc = CMSG_FIRSTHDR(&rm);
			oc->cmsg_level = SOL_SOCKET;
			oc->cmsg_type = SCM_RIGHTS;
			oc->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
			memcpy(CMSG_DATA(oc), fds, sizeof(int) * (size_t)nfds);
		}
		if (sendmsg(f->sock, &rm, MSG_NOSIGNAL) < 0)
			break;
		/* the client has its copies; ours of the ring memfd can go */
		if (nfds && fds[0] >= 0)
			close(fds[0]);
	}
out:
	/* f->sock stays as it was: the poster may still be reading it */
	close(f->sock);
	return NULL;
}

/* A fake daemon and an engine connected to it. */
static struct ucmd_engine *fake_start(struct fake *f, enum fake_mode mode)
{
	struct ucmd_engine *e = NULL;
	int sv[2];

	memset(f, 0, sizeof(*f));
	f->mode = mode;
	f->sq_efd = f->cq_efd = -1;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	f->sock = sv[1];
	assert_int_equal(pthread_create(&f->thread, NULL, fake_main, f), 0);
	int ret = ucmd_engine_connect_fd(sv[0], &e);
	if (mode == FAKE_OLD_VERSION) {
		assert_int_equal(ret, -EPROTO);
		return NULL;
	}
	assert_int_equal(ret, 0);
	assert_true(ucmd_engine_is_daemon(e));
	return e;
}

static void fake_stop(struct fake *f, struct ucmd_engine *e)
{
	ucmd_engine_free(e);	/* closes the socket: the fake sees EOF */
	pthread_join(f->thread, NULL);
	if (f->mem && f->mem != MAP_FAILED)
		munmap(f->mem, f->mem_len);
	if (f->region_map && f->region_map != MAP_FAILED)
		munmap(f->region_map, f->region_len);
	if (f->sq_efd >= 0)
		close(f->sq_efd);
	if (f->cq_efd >= 0)
		close(f->cq_efd);
}

static void test_framing_and_errors(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_OK);
	const char *names[4];
	struct ucmd_disk_stat st;
	struct nvme_passthru_cmd64 cmd = { 0 };

	(void)state;
	assert_int_equal(ucmd_open(e, "ng0n1", O_RDONLY), 3);
	assert_string_equal(f.open_name, "ng0n1");
	assert_int_equal(f.open_flags, O_RDONLY);
	/* the daemon's errno comes back as it is */
	assert_int_equal(ucmd_open(e, "ng9n9", O_RDWR), -ENOENT);
	char long_name[100];
	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = 0;
	assert_int_equal(ucmd_open(e, long_name, O_RDWR), -ENAMETOOLONG);
	assert_int_equal(ucmd_ioctl(e, 3, NVME_IOCTL_ID, NULL), 1);
	assert_int_equal(ucmd_ioctl(e, 3, NVME_IOCTL_ADMIN64_CMD, &cmd), -EACCES);
	assert_int_equal(ucmd_device_names(e, names, 4), 2);
	assert_string_equal(names[0], "nvme0");
	assert_string_equal(names[1], "ng0n1");
	assert_int_equal(ucmd_disk_stat(e, "nvme0n1", &st), 0);
	assert_int_equal(st.ios[1], 9);
	assert_int_equal(ucmd_disk_stat(e, "ng0n1", &st), -ENOTBLK);
	/* one request per call (the long name never left), seq counting up from HELLO's */
	assert_int_equal(f.nreq, 8);
	assert_int_equal(f.ops[0], UCMDD_HELLO);
	for (unsigned i = 0; i < f.nreq; i++)
		assert_int_equal(f.seqs[i], i + 1);
	fake_stop(&f, e);
}

static void test_old_version(void **state)
{
	struct fake f;

	(void)state;
	assert_null(fake_start(&f, FAKE_OLD_VERSION));
	assert_non_null(strstr(ucmd_last_error(), "version"));
	pthread_join(f.thread, NULL);
}

/* A reply that is not the request's: -EPROTO, and nothing is asked after it. */
static void test_bad_seq(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_BAD_SEQ);

	(void)state;
	assert_int_equal(ucmd_open(e, "ng0n1", O_RDWR), -EPROTO);
	assert_int_equal(ucmd_open(e, "ng0n1", O_RDWR), -ENOTCONN);
	assert_int_equal(f.nreq, 2);
	fake_stop(&f, e);
}

static volatile sig_atomic_t sigpipes;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

/* The daemon hangs up: -ENOTCONN for this call and every later one, no SIGPIPE. */
static void test_peer_gone(void **state)
{
	struct sigaction sa = { .sa_handler = on_sigpipe }, old;
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_CLOSE_ON_OPEN);
	struct ucmd_ring ring;
	struct io_uring_params p = { 0 };

	(void)state;
	sigaction(SIGPIPE, &sa, &old);
	sigpipes = 0;
	assert_int_equal(ucmd_open(e, "ng0n1", O_RDWR), -ENOTCONN);
	pthread_join(f.thread, NULL);	/* the peer is closed for sure now */
	assert_int_equal(ucmd_close(e, 3), -ENOTCONN);
	assert_int_equal(ucmd_queue_init_engine(e, 4, &ring, &p), -ENOTCONN);
	assert_null(ucmd_buf_alloc(e, 4096));
	assert_int_equal(errno, ENOTCONN);
	assert_int_equal(sigpipes, 0);
	sigaction(SIGPIPE, &old, NULL);
	ucmd_engine_free(e);
}

/* Sends after the peer closed, bypassing the dead flag: MSG_NOSIGNAL itself. */
static void test_no_sigpipe_on_send(void **state)
{
	struct sigaction sa = { .sa_handler = on_sigpipe }, old;
	struct ucmd_engine *e = NULL;
	int sv[2];

	(void)state;
	sigaction(SIGPIPE, &sa, &old);
	sigpipes = 0;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	close(sv[1]);
	assert_int_equal(ucmd_engine_connect_fd(sv[0], &e), -ENOTCONN);
	assert_int_equal(sigpipes, 0);
	sigaction(SIGPIPE, &old, NULL);
}

static unsigned *word(struct fake *f, uint32_t off)
{
	return (unsigned *)(f->mem + off);
}

static void post_cqe(struct fake *f, uint64_t user_data, int32_t res)
{
	const struct io_uring_params *p = &f->rep.p;
	unsigned tail = *word(f, p->cq_off.tail);
	unsigned shift = (p->flags & IORING_SETUP_CQE32) ? 1 : 0;
	struct io_uring_cqe *cqe = (struct io_uring_cqe *)(f->mem + p->cq_off.cqes) +
				   ((tail & (p->cq_entries - 1)) << shift);

	cqe->user_data = user_data;
	cqe->res = res;
	cqe->flags = 0;
	__atomic_store_n(word(f, p->cq_off.tail), tail + 1, __ATOMIC_SEQ_CST);
}

static struct ucmdd_ring_ctl *ctl_of(struct fake *f)
{
	return (struct ucmdd_ring_ctl *)(f->mem + f->rep.ctl_off);
}

/* The proxy's taking, faked: the SQ head follows the client's submit limit. */
struct taker {
	struct fake *f;
	bool stop;
};

static void *taker_main(void *arg)
{
	struct taker *tk = arg;
	struct fake *f = tk->f;

	while (!__atomic_load_n(&tk->stop, __ATOMIC_SEQ_CST)) {
		unsigned lim = __atomic_load_n(&ctl_of(f)->sq_limit, __ATOMIC_SEQ_CST);

		__atomic_store_n(word(f, f->rep.p.sq_off.head), lim, __ATOMIC_SEQ_CST);
		sched_yield();
	}
	return NULL;
}

/* The ring memfd the fake laid out, seen through struct ucmd_ring. */
static void test_ring_mapping(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_OK);
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct ucmd_ring ring;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	uint64_t cnt;

	(void)state;
	assert_int_equal(ucmd_queue_init_engine(e, 4, &ring, &p), 0);
	assert_int_equal(ring.flags, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ring.sq.ring_entries, 4);
	assert_int_equal(ring.cq.ring_entries, 8);
	assert_int_equal(p.sq_off.array, f.rep.p.sq_off.array);
	/* the fields point at the fake's offsets, into the same memory */
	assert_ptr_equal((char *)ring.sq.khead - (char *)ring.sq.ring_ptr, f.rep.p.sq_off.head);
	assert_ptr_equal((char *)ring.cq.cqes - (char *)ring.cq.ring_ptr, f.rep.p.cq_off.cqes);
	assert_ptr_equal((char *)ring.sq.sqes - (char *)ring.sq.ring_ptr, f.rep.sqes_off);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(word(&f, f.rep.p.sq_off.array)[i], i);

	/*
	 * A ring without SQPOLL is consumed only as far as enter submitted
	 * (ctl->sq_limit), and submit returns once the proxy took it. The
	 * proxy is awake: no doorbell; the fake's taker moves the head.
	 */
	struct taker tk = { .f = &f };
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, taker_main, &tk), 0);
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_nop(sqe);
	sqe->user_data = 42;
	assert_int_equal(ucmd_submit(&ring), 1);
	assert_int_equal(__atomic_load_n(word(&f, f.rep.p.sq_off.tail), __ATOMIC_SEQ_CST), 1);
	assert_int_equal(__atomic_load_n(&ctl_of(&f)->sq_limit, __ATOMIC_SEQ_CST), 1);
	assert_int_equal(__atomic_load_n(word(&f, f.rep.p.sq_off.head), __ATOMIC_SEQ_CST), 1);
	assert_int_equal(((struct io_uring_sqe *)(f.mem + f.rep.sqes_off))->user_data, 42);
	assert_true(read(f.sq_efd, &cnt, sizeof(cnt)) < 0 && errno == EAGAIN);
	/* the proxy sleeps: the next submission rings */
	__atomic_store_n(word(&f, f.rep.p.sq_off.flags), IORING_SQ_NEED_WAKEUP, __ATOMIC_SEQ_CST);
	ucmd_prep_nop(ucmd_get_sqe(&ring));
	assert_int_equal(ucmd_submit(&ring), 1);
	assert_true(read(f.sq_efd, &cnt, sizeof(cnt)) == sizeof(cnt) && cnt >= 1);
	__atomic_store_n(&tk.stop, true, __ATOMIC_SEQ_CST);
	pthread_join(th, NULL);
	/* a proxy that takes nothing until we reap (sq_blocked): submitted, not waited for */
	__atomic_store_n(word(&f, f.rep.p.sq_off.flags), 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ctl_of(&f)->sq_blocked, 1, __ATOMIC_SEQ_CST);
	ucmd_prep_nop(ucmd_get_sqe(&ring));
	assert_int_equal(ucmd_submit(&ring), 1);
	assert_int_equal(__atomic_load_n(&ctl_of(&f)->sq_limit, __ATOMIC_SEQ_CST), 3);
	assert_int_equal(__atomic_load_n(word(&f, f.rep.p.sq_off.head), __ATOMIC_SEQ_CST), 2);
	__atomic_store_n(word(&f, f.rep.p.sq_off.head), 3, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ctl_of(&f)->sq_blocked, 0, __ATOMIC_SEQ_CST);

	/* a CQE the fake posts is the application's, big_cqe and all */
	post_cqe(&f, 42, 0);
	assert_int_equal(ucmd_wait_cqe(&ring, &cqe), 0);
	assert_int_equal(cqe->user_data, 42);
	ucmd_cqe_seen(&ring, cqe);
	assert_int_equal(*word(&f, f.rep.p.cq_off.head), 1);

	/* nothing comes: a timed wait ends with -ETIME */
	struct __kernel_timespec ts = { .tv_nsec = 5000000 };
	assert_int_equal(ucmd_wait_cqe_timeout(&ring, &cqe, &ts), -ETIME);

	ucmd_queue_exit(&ring);
	assert_true(f.exited);
	fake_stop(&f, e);
}

struct poster {
	struct fake *f;
	bool hang_up;		/* instead of posting, close the socket */
	bool mark_dead;		/* instead of posting, ctl->state = DEAD */
	bool futex;		/* the fake offers the futex: the waiter must sleep on it */
	bool saw_sleep;		/* the waiter said it sleeps the way it was offered */
};

/* The daemon's side of a sleeping waiter: post once it says it sleeps, and wake it. */
static void *poster_main(void *arg)
{
	struct poster *ps = arg;
	struct fake *f = ps->f;
	uint32_t *waiting = ps->futex ? &ctl_of(f)->cq_fwaiting : &ctl_of(f)->cq_waiting;
	uint64_t one = 1;

	/* 10 s: a waiter that sleeps the other way is never seen (it then times out below) */
	for (int i = 0; i < 10000 && !__atomic_load_n(waiting, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	ps->saw_sleep = __atomic_load_n(waiting, __ATOMIC_SEQ_CST);
	if (ps->hang_up) {
		/* no wake-up at all: a killed daemon's; the waiter finds the socket gone */
		shutdown(f->sock, SHUT_RDWR);
		return NULL;
	}
	if (ps->mark_dead)
		__atomic_store_n(&ctl_of(f)->state, UCMDD_RING_DEAD, __ATOMIC_SEQ_CST);
	else
		post_cqe(f, 7, 512);
	if (ps->futex) {
		__atomic_fetch_add(&ctl_of(f)->cq_futex, 1, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, &ctl_of(f)->cq_futex, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
		return NULL;
	}
	if (write(f->cq_efd, &one, sizeof(one)) != sizeof(one))
		return NULL;
	return NULL;
}

static void wait_with(struct poster ps, int expect)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, ps.futex ? FAKE_FUTEX : FAKE_OK);
	struct io_uring_params p = { 0 };
	struct ucmd_ring ring;
	struct io_uring_cqe *cqe = NULL;
	pthread_t t;

	assert_int_equal(ucmd_queue_init_engine(e, 4, &ring, &p), 0);
	ps.f = &f;
	assert_int_equal(pthread_create(&t, NULL, poster_main, &ps), 0);
	assert_int_equal(ucmd_wait_cqe(&ring, &cqe), expect);
	if (!expect) {
		assert_int_equal(cqe->user_data, 7);
		assert_int_equal(cqe->res, 512);
		ucmd_cqe_seen(&ring, cqe);
	}
	pthread_join(t, NULL);
	assert_true(ps.saw_sleep);
	/* the waiter said it no longer sleeps */
	assert_int_equal(ctl_of(&f)->cq_waiting, 0);
	assert_int_equal(ctl_of(&f)->cq_fwaiting, 0);
	if (expect == -ENOTCONN) {
		/* and nothing after it hangs or pretends to work */
		ucmd_prep_nop(ucmd_get_sqe(&ring));
		assert_int_equal(ucmd_submit(&ring), -ENOTCONN);
		assert_int_equal(ucmd_submit_and_wait(&ring, 1), -ENOTCONN);
		assert_int_equal(ucmd_peek_cqe(&ring, &cqe), -ENOTCONN);
	}
	ucmd_queue_exit(&ring);
	fake_stop(&f, e);
}

/*
 * UCMDD_QI_SQES_AT_OFF (ucmd-supervise's rings): the SQEs at offset
 * IORING_OFF_SQES of the memfd, the hole before them not mapped, so the
 * client's view is still base + offset and costs no memory for the hole.
 */
/* A CQE written at the CQ's index i, the tail left where it is (the daemon holds it). */
static void write_cqe_at(struct fake *f, unsigned i, uint64_t user_data)
{
	const struct io_uring_params *p = &f->rep.p;
	unsigned shift = (p->flags & IORING_SETUP_CQE32) ? 1 : 0;
	struct io_uring_cqe *cqe = (struct io_uring_cqe *)(f->mem + p->cq_off.cqes) +
				   ((i & (p->cq_entries - 1)) << shift);

	cqe->user_data = user_data;
	cqe->res = 4096;
	cqe->flags = 0;
}

/* The fake's record n: len bytes at data page pg for the client's addr, published. */
static void bounce_rec(struct fake *f, unsigned n, unsigned pg, void *addr, unsigned len, int v)
{
	struct ucmdd_bounce_ctl *ctl = (struct ucmdd_bounce_ctl *)f->bmem;
	struct ucmdd_bounce_rec *r = (struct ucmdd_bounce_rec *)(f->bmem + f->brep.recs_off);

	memset(f->bmem + f->brep.data_off + pg * 4096, v, len);
	r[n] = (struct ucmdd_bounce_rec){ (uint64_t)(uintptr_t)addr, pg * 4096, len };
	__atomic_store_n(&ctl->tail, n + 1, __ATOMIC_SEQ_CST);
}

/*
 * The read bounce area, the client's side: entering the ring copies the
 * records out (a bad address faults into nothing, never the program), says
 * done, and shows the CQEs the daemon vouched for (ctl->cq) once every
 * record they may need is copied -- by us, or by the daemon (taken) --
 * and not one more.
 */
static void test_bounce_area(void **state)
{
	struct fake f;
	struct ucmd_engine *e;
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct ucmd_ring ring;
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = { .tv_nsec = 2000000 };
	struct ucmdd_bounce_ctl *ctl;
	unsigned *ktail;
	char *a = malloc(4096), *b = malloc(4096);

	(void)state;
	e = fake_start(&f, FAKE_BOUNCE);
	assert_int_equal(ucmd_queue_init_engine(e, 4, &ring, &p), 0);
	assert_non_null(f.bmem);
	ctl = (struct ucmdd_bounce_ctl *)f.bmem;
	ktail = word(&f, f.rep.p.cq_off.tail);
	memset(a, 0, 4096);
	memset(b, 0, 4096);

	/* three reads done, their CQEs written and held: one into unmapped memory */
	bounce_rec(&f, 0, 0, a, 4096, 0x11);
	bounce_rec(&f, 1, 1, (void *)(uintptr_t)0x1000, 4096, 0x22);
	bounce_rec(&f, 2, 2, b + 100, 3000, 0x33);
	for (unsigned i = 0; i < 3; i++)
		write_cqe_at(&f, i, 10 + i);
	__atomic_store_n(&ctl->cq, (uint64_t)3 << 32 | 3, __ATOMIC_SEQ_CST);
	assert_int_equal(ucmd_wait_cqe(&ring, &cqe), 0);
	assert_int_equal(cqe->user_data, 10);
	assert_int_equal(__atomic_load_n(ktail, __ATOMIC_SEQ_CST), 3);
	assert_int_equal(ctl->claim, 3);
	assert_int_equal(ctl->done, 3);
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal((unsigned char)a[i], 0x11);
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal((unsigned char)b[i], i >= 100 && i < 3100 ? 0x33 : 0);
	ucmd_cq_advance(&ring, 3);

	/* a CQE that may need a record not yet published (recs 5, tail 4): not shown */
	bounce_rec(&f, 3, 0, a, 4096, 0x44);
	write_cqe_at(&f, 3, 13);
	write_cqe_at(&f, 4, 14);
	__atomic_store_n(&ctl->cq, (uint64_t)5 << 32 | 5, __ATOMIC_SEQ_CST);
	assert_int_equal(ucmd_wait_cqe_timeout(&ring, &cqe, &ts), -ETIME);
	assert_int_equal(ctl->done, 4);
	assert_int_equal(__atomic_load_n(ktail, __ATOMIC_SEQ_CST), 3);
	/* it comes: both show */
	bounce_rec(&f, 4, 1, b, 4096, 0x55);
	assert_int_equal(ucmd_wait_cqe_nr(&ring, &cqe, 2), 0);
	assert_int_equal(__atomic_load_n(ktail, __ATOMIC_SEQ_CST), 5);
	assert_int_equal((unsigned char)a[0], 0x44);
	assert_int_equal((unsigned char)b[4095], 0x55);
	ucmd_cq_advance(&ring, 2);

	/* the daemon took record 5 (claim moved): shown only once it says taken */
	bounce_rec(&f, 5, 2, a, 4096, 0x66);
	__atomic_store_n(&ctl->claim, 6, __ATOMIC_SEQ_CST);
	write_cqe_at(&f, 5, 15);
	__atomic_store_n(&ctl->cq, (uint64_t)6 << 32 | 6, __ATOMIC_SEQ_CST);
	assert_int_equal(ucmd_wait_cqe_timeout(&ring, &cqe, &ts), -ETIME);
	bounce_rec(&f, 6, 3, b, 4096, 0x77);
	write_cqe_at(&f, 6, 16);
	__atomic_store_n(&ctl->cq, (uint64_t)7 << 32 | 7, __ATOMIC_SEQ_CST);
	assert_int_equal(ucmd_wait_cqe_timeout(&ring, &cqe, &ts), -ETIME);
	assert_int_equal(__atomic_load_n(ktail, __ATOMIC_SEQ_CST), 5);
	__atomic_store_n(&ctl->taken, 6, __ATOMIC_SEQ_CST);
	bounce_rec(&f, 7, 0, b, 8, 0x78);
	write_cqe_at(&f, 7, 17);
	__atomic_store_n(&ctl->cq, (uint64_t)8 << 32 | 8, __ATOMIC_SEQ_CST);
	assert_int_equal(ucmd_wait_cqe_nr(&ring, &cqe, 3), 0);
	assert_int_equal(__atomic_load_n(ktail, __ATOMIC_SEQ_CST), 8);
	assert_int_equal((unsigned char)b[0], 0x78);
	assert_int_equal((unsigned char)b[8], 0x77);
	/* never back: a tail the daemon moved further stays */
	__atomic_store_n(ktail, 9, __ATOMIC_SEQ_CST);
	(void)ucmd_wait_cqe_timeout(&ring, &cqe, &ts);
	assert_int_equal(__atomic_load_n(ktail, __ATOMIC_SEQ_CST), 9);

	ucmd_queue_exit(&ring);
	munmap(f.bmem, 6 * 4096);
	fake_stop(&f, e);
	free(a);
	free(b);
}

/* The fake's write record at SQ position pos, or NULL when the client wrote none there. */
static struct ucmdd_bounce_wrec *wrec_at(struct fake *f, unsigned pos)
{
	struct ucmdd_bounce_wrec *w = (struct ucmdd_bounce_wrec *)(f->bmem + f->brep.wrecs_off) +
				      (pos & (f->brep.nr_wrecs - 1));

	return w->pos == pos && w->len ? w : NULL;
}

static void wsubmit(struct ucmd_ring *ring, const void *buf, unsigned len, uint64_t ud,
		    unsigned flags)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(ring);

	assert_non_null(sqe);
	ucmd_prep_write(sqe, 0, buf, len, 0);
	sqe->user_data = ud;
	sqe->flags |= (uint8_t)flags;
}

/*
 * Writes from plain memory, the client's side: their data goes into the
 * area and a record names them by SQ position before the daemon may take
 * the SQE; not a write linked behind another, nor one whose buffer cannot
 * be read (the daemon's read then fails it), nor one too large; a record
 * slot or data still the daemon's (below its wdone) is never reused: such
 * writes go the old way.
 */
static void test_bounce_writes(void **state)
{
	struct fake f;
	struct ucmd_engine *e;
	struct io_uring_params p = { 0 };
	struct ucmd_ring ring;
	struct taker tk = { .f = &f };
	struct ucmdd_bounce_ctl *ctl;
	struct ucmdd_bounce_wrec *w;
	unsigned char *wdata;
	char *a = malloc(4096), *b = malloc(8192);
	pthread_t t;

	(void)state;
	/* cmocka's own SIGSEGV handler displaced the guard's: in front again */
	assert_int_equal(ucmd_uaccess_init(), 0);
	e = fake_start(&f, FAKE_BOUNCE_W);
	assert_int_equal(ucmd_queue_init_engine(e, 8, &ring, &p), 0);
	assert_non_null(f.bmem);
	ctl = (struct ucmdd_bounce_ctl *)f.bmem;
	wdata = (unsigned char *)f.bmem + f.brep.wdata_off;
	assert_int_equal(pthread_create(&t, NULL, taker_main, &tk), 0);
	memset(a, 0x41, 4096);
	memset(b, 0x42, 8192);

	/* one write: its record and its data, then the program may change its buffer */
	wsubmit(&ring, a, 4096, 1, 0);
	assert_int_equal(ucmd_submit(&ring), 1);
	memset(a, 0x99, 4096);
	w = wrec_at(&f, 0);
	assert_non_null(w);
	assert_int_equal(w->len, 4096);
	assert_ptr_equal((void *)(uintptr_t)w->addr, a);
	assert_int_equal(w->user_data, 1);
	assert_true(w->off + 4096 <= f.brep.wdata_len);
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal(wdata[w->off + i], 0x41);

	/* a linked pair: the head has one, the write behind it reads the buffer at issue */
	wsubmit(&ring, b, 4096, 2, IOSQE_IO_LINK);
	wsubmit(&ring, b + 4096, 4096, 3, 0);
	/*
	 * unreadable (the kernel's half: refused without a fault; under
	 * ThreadSanitizer a second guarded fault in this process, after
	 * test_bounce_area's, killed it), too large (over a quarter of the
	 * data area)
	 */
	wsubmit(&ring, (void *)(uintptr_t)0xffff800000001000ull, 4096, 4, 0);
	wsubmit(&ring, b, 8192, 5, 0);
	assert_int_equal(ucmd_submit(&ring), 4);
	assert_non_null(wrec_at(&f, 1));
	assert_null(wrec_at(&f, 2));
	assert_null(wrec_at(&f, 3));
	assert_null(wrec_at(&f, 4));

	/*
	 * The daemon still may read everything from position 0 (wdone 0): the
	 * slot of position 8 is position 0's, and the data holds 8 KiB in use
	 */
	for (unsigned i = 0; i < 3; i++)
		wsubmit(&ring, a, 4096, 6 + i, 0);
	assert_int_equal(ucmd_submit(&ring), 3);
	assert_non_null(wrec_at(&f, 5));
	assert_non_null(wrec_at(&f, 6));
	/* 16 KiB: 0, 1, 5, 6 fill it */
	assert_null(wrec_at(&f, 7));
	wsubmit(&ring, a, 4096, 9, 0);
	assert_int_equal(ucmd_submit(&ring), 1);
	assert_null(wrec_at(&f, 8));
	assert_non_null(wrec_at(&f, 0));

	/* the daemon passed them all: slots and data are the client's again */
	__atomic_store_n(&ctl->wdone, 9, __ATOMIC_SEQ_CST);
	memset(a, 0x55, 4096);
	wsubmit(&ring, a, 4096, 10, 0);
	assert_int_equal(ucmd_submit(&ring), 1);
	w = wrec_at(&f, 9);
	assert_non_null(w);
	assert_int_equal(w->user_data, 10);
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal(wdata[w->off + i], 0x55);

	__atomic_store_n(&tk.stop, true, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	ucmd_queue_exit(&ring);
	munmap(f.bmem, f.brep.size);
	fake_stop(&f, e);
	free(a);
	free(b);
}

/* The fake's record of several ranges (a table) at pos, or NULL. */
static const struct ucmdd_bounce_wseg *wtable_at(struct fake *f, unsigned pos, unsigned *nr)
{
	struct ucmdd_bounce_wrec *w = (struct ucmdd_bounce_wrec *)(f->bmem + f->brep.wrecs_off) +
				      (pos & (f->brep.nr_wrecs - 1));

	if (w->pos != pos || !w->nr)
		return NULL;
	assert_int_equal(w->len, 0);
	assert_int_equal(w->addr, 0);
	assert_int_equal(w->off % 8, 0);
	*nr = w->nr;
	return (const struct ucmdd_bounce_wseg *)(f->bmem + f->brep.wdata_off + w->off);
}

/* Range i of a table holds [addr, addr + len) with the bytes of p. */
static void wseg_check(struct fake *f, const struct ucmdd_bounce_wseg *t, const void *addr,
		       unsigned len, const void *p)
{
	assert_ptr_equal((void *)(uintptr_t)t->addr, addr);
	assert_int_equal(t->len, len);
	assert_true(t->off + len <= f->brep.wdata_len);
	assert_memory_equal(f->bmem + f->brep.wdata_off + t->off, p, len);
}

/*
 * Vectored writes from plain memory: one record whose table names the
 * iovec array and each segment (empty ones left out), all copied at
 * submit; an NVMe Write's separate metadata is a range of its record. An
 * array we cannot read, or more ranges than a table holds: no record.
 */
static void test_bounce_wvec(void **state)
{
	struct fake f;
	struct ucmd_engine *e;
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	struct ucmd_ring ring;
	struct taker tk = { .f = &f };
	const struct ucmdd_bounce_wseg *t;
	struct iovec iov[3], many[UCMDD_BOUNCE_WSEG_MAX];
	struct nvme_uring_cmd u;
	struct io_uring_sqe *sqe;
	char *a = malloc(100), *b = malloc(200), *m = malloc(16), *snap = malloc(300);
	unsigned nr = 0;
	pthread_t th;

	(void)state;
	assert_int_equal(ucmd_uaccess_init(), 0);
	e = fake_start(&f, FAKE_BOUNCE_W);
	assert_int_equal(ucmd_queue_init_engine(e, 8, &ring, &p), 0);
	assert_non_null(f.bmem);
	assert_int_equal(pthread_create(&th, NULL, taker_main, &tk), 0);
	memset(a, 0x61, 100);
	memset(b, 0x62, 200);
	memset(m, 0x6d, 16);
	memcpy(snap, a, 100);
	memcpy(snap + 100, b, 200);
	iov[0] = (struct iovec){ a, 100 };
	iov[1] = (struct iovec){ b, 0 };
	iov[2] = (struct iovec){ b, 200 };

	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_writev(sqe, 0, iov, 3, 0);
	sqe->user_data = 21;
	/* an NVMe Write of one segment with separate metadata */
	memset(&u, 0, sizeof(u));
	u.opcode = 0x01;
	u.addr = (uint64_t)(uintptr_t)b;
	u.data_len = 200;
	u.metadata = (uint64_t)(uintptr_t)m;
	u.metadata_len = 16;
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_nvme_cmd(sqe, 0, NVME_URING_CMD_IO, &u);
	sqe->user_data = 22;
	/* an NVMe vectored Write whose array cannot be read */
	u.addr = 0xffff800000001000ull;
	u.data_len = 2;
	u.metadata = 0;
	u.metadata_len = 0;
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_nvme_cmd(sqe, 0, NVME_URING_CMD_IO_VEC, &u);
	sqe->user_data = 23;
	/* the array and 64 segments: one range too many */
	for (unsigned i = 0; i < UCMDD_BOUNCE_WSEG_MAX; i++)
		many[i] = (struct iovec){ a + i, 1 };
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_writev(sqe, 0, many, UCMDD_BOUNCE_WSEG_MAX, 0);
	sqe->user_data = 24;
	assert_int_equal(ucmd_submit(&ring), 4);
	/* what the program does after the submit returned changes nothing in the records */
	memset(a, 0x99, 100);
	memset(b, 0x99, 200);
	memset(m, 0x99, 16);

	t = wtable_at(&f, 0, &nr);
	assert_non_null(t);
	assert_int_equal(nr, 3);
	wseg_check(&f, &t[0], iov, sizeof(iov), iov);
	wseg_check(&f, &t[1], a, 100, snap);
	wseg_check(&f, &t[2], b, 200, snap + 100);
	t = wtable_at(&f, 1, &nr);
	assert_non_null(t);
	assert_int_equal(nr, 2);
	wseg_check(&f, &t[0], b, 200, snap + 100);
	memset(snap, 0x6d, 16);
	wseg_check(&f, &t[1], m, 16, snap);
	assert_null(wtable_at(&f, 2, &nr));
	assert_null(wrec_at(&f, 2));
	assert_null(wtable_at(&f, 3, &nr));
	assert_null(wrec_at(&f, 3));

	__atomic_store_n(&tk.stop, true, __ATOMIC_SEQ_CST);
	pthread_join(th, NULL);
	ucmd_queue_exit(&ring);
	munmap(f.bmem, f.brep.size);
	fake_stop(&f, e);
	free(a);
	free(b);
	free(m);
	free(snap);
}

/*
 * Reads into plain memory: a record (UCMDD_BOUNCE_WREC_READ, no data)
 * says the buffer was writeable at submit; none for a buffer that is not
 * (probed without changing a byte), a vectored read, or a read linked
 * behind another SQE.
 */
static void test_bounce_read_records(void **state)
{
	struct fake f;
	struct ucmd_engine *e;
	struct io_uring_params p = { 0 };
	struct ucmd_ring ring;
	struct taker tk = { .f = &f };
	struct ucmdd_bounce_wrec *w;
	struct io_uring_sqe *sqe;
	struct iovec iov = { 0 };
	char *a = malloc(4096);
	/*
	 * not writeable: the kernel's half, refused without a fault (under
	 * ThreadSanitizer a second guarded fault in this process killed it,
	 * test_bounce_writes says)
	 */
	char *ro = (char *)(uintptr_t)0xffff800000001000ull;
	pthread_t t;

	(void)state;
	assert_int_equal(ucmd_uaccess_init(), 0);
	e = fake_start(&f, FAKE_BOUNCE_W);
	assert_int_equal(ucmd_queue_init_engine(e, 8, &ring, &p), 0);
	assert_non_null(f.bmem);
	assert_int_equal(pthread_create(&t, NULL, taker_main, &tk), 0);
	memset(a, 0x41, 4096);
	iov.iov_base = a;
	iov.iov_len = 4096;

	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_read(sqe, 0, a, 4096, 0);
	sqe->user_data = 41;
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_read(sqe, 0, ro, 4096, 0);
	sqe->user_data = 42;
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_readv(sqe, 0, &iov, 1, 0);
	sqe->user_data = 43;
	sqe->flags |= IOSQE_IO_LINK;
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_read(sqe, 0, a, 4096, 0);
	sqe->user_data = 44;
	assert_int_equal(ucmd_submit(&ring), 4);

	w = (struct ucmdd_bounce_wrec *)(f.bmem + f.brep.wrecs_off);
	assert_int_equal(w[0].pos, 0);
	assert_int_equal(w[0].nr, UCMDD_BOUNCE_WREC_READ);
	assert_ptr_equal((void *)(uintptr_t)w[0].addr, a);
	assert_int_equal(w[0].len, 4096);
	assert_int_equal(w[0].user_data, 41);
	/* the probe changed nothing */
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal(a[i], 0x41);
	assert_false(w[1].pos == 1 && w[1].user_data == 42);
	assert_false(w[2].pos == 2 && w[2].user_data == 43);
	assert_false(w[3].pos == 3 && w[3].user_data == 44);

	__atomic_store_n(&tk.stop, true, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	ucmd_queue_exit(&ring);
	munmap(f.bmem, f.brep.size);
	fake_stop(&f, e);
	free(a);
}

/*
 * Memory shared with the daemon (ucmd_buf_alloc's): the daemon reads and
 * writes it through its own mapping before it looks for a record, so the
 * submit leaves no record and copies nothing into the area for it, a
 * read's or a write's; plain memory beside it still gets both. Once the
 * buffer is freed, the same addresses are plain memory again.
 */
static void test_bounce_shared_buffers(void **state)
{
	struct fake f;
	struct ucmd_engine *e;
	struct io_uring_params p = { 0 };
	struct ucmd_ring ring;
	struct taker tk = { .f = &f };
	struct io_uring_sqe *sqe;
	unsigned char *wdata;
	char *a = malloc(4096), *s;
	pthread_t t;

	(void)state;
	assert_int_equal(ucmd_uaccess_init(), 0);
	e = fake_start(&f, FAKE_BOUNCE_W);
	assert_int_equal(ucmd_queue_init_engine(e, 8, &ring, &p), 0);
	assert_non_null(f.bmem);
	wdata = (unsigned char *)f.bmem + f.brep.wdata_off;
	memset(wdata, 0, f.brep.wdata_len);
	s = ucmd_buf_alloc(e, 8192);
	assert_non_null(s);
	assert_int_equal(pthread_create(&t, NULL, taker_main, &tk), 0);
	memset(s, 0x5a, 8192);
	memset(a, 0x41, 4096);

	wsubmit(&ring, s, 4096, 1, 0);			/* 0: a write from the shared buffer */
	sqe = ucmd_get_sqe(&ring);			/* 1: a read into it */
	ucmd_prep_read(sqe, 0, s + 4096, 4096, 0);
	sqe->user_data = 2;
	wsubmit(&ring, s + 4196, 3996, 3, 0);		/* 2: to its last byte */
	wsubmit(&ring, a, 4096, 4, 0);			/* 3: plain memory beside it */
	sqe = ucmd_get_sqe(&ring);			/* 4 */
	ucmd_prep_read(sqe, 0, a, 4096, 0);
	sqe->user_data = 5;
	assert_int_equal(ucmd_submit(&ring), 5);
	assert_null(wrec_at(&f, 0));
	assert_null(wrec_at(&f, 1));
	assert_null(wrec_at(&f, 2));
	assert_non_null(wrec_at(&f, 3));
	assert_int_equal(wrec_at(&f, 3)->user_data, 4);
	assert_non_null(wrec_at(&f, 4));
	assert_int_equal(wrec_at(&f, 4)->nr, UCMDD_BOUNCE_WREC_READ);
	/* only the plain write's data went into the area */
	for (unsigned i = 0; i < f.brep.wdata_len; i++)
		assert_int_not_equal(wdata[i], 0x5a);

	/* freed: the same addresses, mapped again as plain memory, are recorded */
	ucmd_buf_free(e, s);
	assert_ptr_equal(mmap(s, 8192, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0), s);
	memset(s, 0x66, 8192);
	__atomic_store_n(&((struct ucmdd_bounce_ctl *)f.bmem)->wdone, 5, __ATOMIC_SEQ_CST);
	wsubmit(&ring, s, 4096, 6, 0);			/* 5 */
	sqe = ucmd_get_sqe(&ring);			/* 6 */
	ucmd_prep_read(sqe, 0, s + 4096, 4096, 0);
	sqe->user_data = 7;
	assert_int_equal(ucmd_submit(&ring), 2);
	assert_non_null(wrec_at(&f, 5));
	assert_int_equal(wrec_at(&f, 5)->user_data, 6);
	assert_int_equal(wdata[wrec_at(&f, 5)->off], 0x66);
	assert_non_null(wrec_at(&f, 6));
	assert_int_equal(wrec_at(&f, 6)->nr, UCMDD_BOUNCE_WREC_READ);

	__atomic_store_n(&tk.stop, true, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	ucmd_queue_exit(&ring);
	munmap(f.bmem, f.brep.size);
	munmap(s, 8192);
	fake_stop(&f, e);
	free(a);
}

/* A read into buf at the ring's next SQ position: did it leave a record? */
static bool read_recorded(struct fake *f, struct ucmd_ring *ring, void *buf)
{
	unsigned pos = *ring->sq.ktail;
	struct io_uring_sqe *sqe = ucmd_get_sqe(ring);

	/* every earlier position is the daemon's no more: the slot is free */
	__atomic_store_n(&((struct ucmdd_bounce_ctl *)f->bmem)->wdone, pos, __ATOMIC_SEQ_CST);
	ucmd_prep_read(sqe, 0, buf, 4096, 0);
	sqe->user_data = 900 + pos;
	assert_int_equal(ucmd_submit(ring), 1);
	return wrec_at(f, pos) != NULL;
}

/*
 * The table of shared ranges keeps DC_SHARED_MAX of them: a buffer past
 * it is recorded as plain memory is (the daemon still maps it: only the
 * record is spent), and a freed buffer's slot serves the next one.
 */
static void test_bounce_shared_table_full(void **state)
{
	struct fake f;
	struct ucmd_engine *e;
	struct io_uring_params p = { 0 };
	struct ucmd_ring ring;
	struct taker tk = { .f = &f };
	char *s[DC_SHARED_MAX + 1], *more;
	pthread_t t;

	(void)state;
	assert_int_equal(ucmd_uaccess_init(), 0);
	e = fake_start(&f, FAKE_BOUNCE_W);
	assert_int_equal(ucmd_queue_init_engine(e, 8, &ring, &p), 0);
	assert_non_null(f.bmem);
	assert_int_equal(pthread_create(&t, NULL, taker_main, &tk), 0);
	for (unsigned i = 0; i <= DC_SHARED_MAX; i++) {
		s[i] = ucmd_buf_alloc(e, 4096);
		assert_non_null(s[i]);
	}
	for (unsigned i = 0; i < DC_SHARED_MAX; i++)
		assert_false(read_recorded(&f, &ring, s[i]));
	assert_true(read_recorded(&f, &ring, s[DC_SHARED_MAX]));
	ucmd_buf_free(e, s[3]);
	more = ucmd_buf_alloc(e, 4096);
	assert_non_null(more);
	assert_false(read_recorded(&f, &ring, more));
	assert_false(read_recorded(&f, &ring, s[DC_SHARED_MAX - 1]));

	__atomic_store_n(&tk.stop, true, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	ucmd_queue_exit(&ring);
	munmap(f.bmem, f.brep.size);
	for (unsigned i = 0; i <= DC_SHARED_MAX; i++)
		if (i != 3)
			ucmd_buf_free(e, s[i]);
	ucmd_buf_free(e, more);
	fake_stop(&f, e);
}

static void test_ring_sqes_at_off(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_OK);
	struct io_uring_params p = { 0 };
	struct ucmd_ring ring;
	struct io_uring_sqe *sqe;
	char smaps[64], line[256];
	unsigned long rss_kb = 0, v;
	FILE *fp;

	(void)state;
	assert_int_equal(dc_queue_init_flags(e, 4, &ring, &p, UCMDD_QI_SQES_AT_OFF), 0);
	assert_ptr_equal((char *)ring.sq.sqes - (char *)ring.sq.ring_ptr, IORING_OFF_SQES);
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_nop(sqe);
	sqe->user_data = 77;
	/* the same page the fake daemon sees at that offset of its memfd */
	assert_int_equal(((struct io_uring_sqe *)(f.mem + IORING_OFF_SQES))->user_data, 77);
	/* the hole was not populated: our whole process holds far less than 256 MiB */
	snprintf(smaps, sizeof(smaps), "/proc/%d/status", (int)getpid());
	fp = fopen(smaps, "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "RssShmem: %lu", &v) == 1)
			rss_kb = v;
	fclose(fp);
	assert_true(rss_kb < 64 * 1024);
	ucmd_queue_exit(&ring);
	fake_stop(&f, e);
}

/* ---- UCMDD_QI_SUBMIT_COPY: the program's SQ, copied at submit ---- */

/* The program's view of a UCMDD_QI_SUBMIT_COPY ring, from what setup told it. */
struct psq {
	unsigned *head, *tail, *array;
	struct io_uring_sqe *sqes;
	/* the ring's (the proxy's) SQ, in the fake's mapping */
	unsigned *ehead, *etail, *earray;
	struct io_uring_sqe *esqes;
};

static void psq_of(struct fake *f, const struct ucmd_ring *ring, const struct io_uring_params *p,
		   struct psq *q)
{
	char *b = ring->sq.ring_ptr;

	q->head = (unsigned *)(b + p->sq_off.head);
	q->tail = (unsigned *)(b + p->sq_off.tail);
	q->array = (unsigned *)(b + p->sq_off.array);
	q->sqes = (struct io_uring_sqe *)(b + p->sq_off.resv2);
	q->ehead = word(f, f->rep.p.sq_off.head);
	q->etail = word(f, f->rep.p.sq_off.tail);
	q->earray = word(f, f->rep.p.sq_off.array);
	q->esqes = (struct io_uring_sqe *)(f->mem + f->rep.sqes_off);
}

/* The program publishes one NOP with user_data ud in SQE slot `slot`. */
static void psq_push(struct psq *q, unsigned mask, unsigned slot, uint64_t ud)
{
	unsigned t = *q->tail;

	memset(&q->sqes[slot], 0, sizeof(q->sqes[slot]));
	q->sqes[slot].opcode = IORING_OP_NOP;
	q->sqes[slot].user_data = ud;
	q->array[t & mask] = slot;
	__atomic_store_n(q->tail, t + 1, __ATOMIC_RELEASE);
}

/* The program publishes a write of len bytes from buf, SQE flags flags. */
static void psq_push_write(struct psq *q, unsigned mask, unsigned slot, uint64_t ud,
			   const void *buf, unsigned len, unsigned flags)
{
	unsigned t = *q->tail;

	memset(&q->sqes[slot], 0, sizeof(q->sqes[slot]));
	ucmd_prep_write(&q->sqes[slot], 0, buf, len, 0);
	q->sqes[slot].user_data = ud;
	q->sqes[slot].flags = (uint8_t)flags;
	q->array[t & mask] = slot;
	__atomic_store_n(q->tail, t + 1, __ATOMIC_RELEASE);
}

/* divert: takes the SQEs whose user_data is odd (the preload's own-fd forwarding) */
static bool divert_odd(const struct io_uring_sqe *sqe, unsigned pos, void *ctx)
{
	unsigned *seen = ctx;

	(void)pos;
	(*seen)++;
	return sqe->user_data & 1;
}

/*
 * dc_enter_divert: the SQEs divert takes count as submitted but take no
 * slot of the ring's SQ, and the others keep their order; dc_post_cqes
 * puts NOPs after them that post user_data, res and flags (nop_flags
 * UCMD_NOP_INJECT_RESULT | UCMD_NOP_CQE_FLAGS), as many as fit.
 */
static void test_submit_divert_post(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_OK);
	struct io_uring_params p = { 0 };
	struct io_uring_cqe c[4] = { { .user_data = 91, .res = -9, .flags = 0x2 },
				     { .user_data = 92, .res = 4096, .flags = 0 },
				     { .user_data = 93, .res = 1, .flags = 0 },
				     { .user_data = 94, .res = 1, .flags = 0 } };
	struct ucmd_ring ring;
	unsigned seen = 0;
	struct psq q;

	(void)state;
	assert_int_equal(dc_queue_init_flags(e, 4, &ring, &p, UCMDD_QI_SUBMIT_COPY), 0);
	psq_of(&f, &ring, &p, &q);
	psq_push(&q, 3, 0, 10);
	psq_push(&q, 3, 1, 11);
	psq_push(&q, 3, 2, 13);
	psq_push(&q, 3, 3, 12);
	assert_int_equal(dc_enter_divert(&ring, 4, 0, 0, divert_odd, &seen), 4);
	assert_int_equal(seen, 4);
	assert_int_equal(*q.head, 4);
	assert_int_equal(*q.etail, 2);	/* 10 and 12 only */
	assert_int_equal(q.esqes[q.earray[0]].user_data, 10);
	assert_int_equal(q.esqes[q.earray[1]].user_data, 12);
	/* two slots left in the ring's SQ: two of the four CQEs go */
	assert_int_equal(dc_post_cqes(&ring, c, 4), 2);
	assert_int_equal(*q.etail, 4);
	for (unsigned i = 0; i < 2; i++) {
		const struct io_uring_sqe *s = &q.esqes[q.earray[2 + i]];

		assert_int_equal(s->opcode, IORING_OP_NOP);
		assert_int_equal(s->user_data, c[i].user_data);
		assert_int_equal((int32_t)s->len, c[i].res);
		assert_int_equal(s->addr3, c[i].flags);
		assert_int_equal(s->rw_flags, UCMD_NOP_INJECT_RESULT | UCMD_NOP_CQE_FLAGS);
		assert_int_equal(s->flags, 0);
	}
	assert_int_equal(dc_post_cqes(&ring, c + 2, 2), 0);	/* full */
	ucmd_queue_exit(&ring);
	fake_stop(&f, e);
}

/* plain: the preload's plain_sqe, fd >= 100 standing for the program's own */
static bool plain_low(const struct io_uring_sqe *sqe, void *ctx)
{
	unsigned *asked = ctx;

	(*asked)++;
	return (sqe->flags & IOSQE_FIXED_FILE) || sqe->fd < 100;
}

/* The program publishes a NOP on fd with SQE flags flags (user_data: fd). */
static void psq_push_fd(struct psq *q, unsigned slot, int fd, unsigned flags)
{
	psq_push(q, 15, slot, (uint64_t)fd);
	q->sqes[slot].fd = fd;
	q->sqes[slot].flags = (uint8_t)flags;
}

static void see_ud(const struct io_uring_sqe *sqe, unsigned pos, void *ctx)
{
	uint64_t **out = ctx;

	(void)pos;
	*(*out)++ = sqe->user_data;
}

/* user_data of the ring's SQ's copies from position from on, n of them, in its order */
static void assert_copies(const struct psq *q, unsigned from, const uint64_t *ud, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(q->esqes[q->earray[(from + i) & 15]].user_data, ud[i]);
}

/*
 * dc_enter_plain: the SQEs plain lets go are copied in SQ order in the one
 * walk that asks it (a fixed file's among them), a run of SQEs alike
 * asked about once; the copy stops before the first chain holding one it
 * refuses, however far into the chain that one is, and leaves it and the
 * rest published in the program's SQ (left), returning at once what it
 * copied; the rest then goes its other way, in order. Only the SQEs this
 * enter submits are asked about.
 */
static void test_submit_plain(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_OK);
	struct io_uring_params p = { 0 };
	struct ucmd_ring ring;
	unsigned asked = 0;
	struct dc_plain pl = { .fn = plain_low, .ctx = &asked };
	uint64_t seen[8], *sp = seen;
	struct psq q;

	(void)state;
	assert_int_equal(dc_queue_init_flags(e, 16, &ring, &p, UCMDD_QI_SUBMIT_COPY), 0);
	psq_of(&f, &ring, &p, &q);

	/* all plain, one a fixed file's (150: its index), a run on fd 3: asked 3 times */
	psq_push_fd(&q, 0, 1, 0);
	psq_push_fd(&q, 1, 150, IOSQE_FIXED_FILE);
	psq_push_fd(&q, 2, 3, 0);
	psq_push_fd(&q, 3, 3, 0);
	psq_push_fd(&q, 4, 3, 0);
	assert_int_equal(dc_enter_plain(&ring, 5, 0, 0, &pl), 5);
	assert_int_equal(pl.left, 0);
	assert_true(pl.walked);
	assert_int_equal(asked, 3);
	assert_int_equal(*q.head, 5);
	assert_int_equal(*q.etail, 5);
	assert_copies(&q, 0, (const uint64_t[]){ 1, 150, 3, 3, 3 }, 5);

	/* fd 150 not fixed is the program's own: the copy stops right before it */
	psq_push_fd(&q, 5, 4, 0);
	psq_push_fd(&q, 6, 150, 0);
	psq_push_fd(&q, 7, 5, 0);
	asked = 0;
	assert_int_equal(dc_enter_plain(&ring, 3, 0, 0, &pl), 1);
	assert_int_equal(pl.left, 2);
	assert_int_equal(asked, 2);	/* 5 is never asked */
	assert_int_equal(*q.head, 6);
	assert_int_equal(*q.etail, 6);
	assert_copies(&q, 5, (const uint64_t[]){ 4 }, 1);
	/* the rest, the other way (dc_enter_divert with nothing diverted), in order */
	assert_int_equal(dc_enter_divert(&ring, pl.left, 0, 0, NULL, NULL), 2);
	assert_int_equal(*q.etail, 8);
	assert_copies(&q, 6, (const uint64_t[]){ 150, 5 }, 2);

	/* an own SQE at a chain's end: the whole chain stays, from its first */
	psq_push_fd(&q, 8, 9, 0);
	psq_push_fd(&q, 9, 6, IOSQE_IO_LINK);
	psq_push_fd(&q, 10, 7, IOSQE_IO_HARDLINK);
	psq_push_fd(&q, 11, 102, 0);
	psq_push_fd(&q, 12, 8, 0);
	assert_int_equal(dc_enter_plain(&ring, 5, 0, 0, &pl), 1);
	assert_int_equal(pl.left, 4);
	assert_int_equal(*q.head, 9);
	assert_int_equal(*q.etail, 9);
	assert_copies(&q, 8, (const uint64_t[]){ 9 }, 1);
	/* the other way sees them all, the chain whole, in SQ order */
	dc_psq_each_sqe(&ring, pl.left, see_ud, &sp);
	assert_int_equal(sp - seen, 4);
	assert_int_equal(seen[0], 6);
	assert_int_equal(seen[1], 7);
	assert_int_equal(seen[2], 102);
	assert_int_equal(seen[3], 8);
	/* stopped at its first SQE: nothing copied, no -EAGAIN, nothing moved */
	assert_int_equal(dc_enter_plain(&ring, 4, 0, 0, &pl), 0);
	assert_int_equal(pl.left, 4);
	assert_int_equal(*q.head, 9);
	assert_int_equal(dc_enter(&ring, 4, 0, 0), 4);
	assert_copies(&q, 9, (const uint64_t[]){ 6, 7, 102, 8 }, 4);

	/* a plain chain, a bad index inside it: all go, the bad one as it is */
	psq_push_fd(&q, 13, 10, IOSQE_IO_LINK);
	psq_push_fd(&q, 14, 11, 0);
	q.array[14] = 99;
	psq_push_fd(&q, 15, 12, 0);
	assert_int_equal(dc_enter_plain(&ring, 3, 0, 0, &pl), 3);
	assert_int_equal(pl.left, 0);
	assert_int_equal(*q.etail, 16);
	assert_int_equal(q.esqes[q.earray[13]].user_data, 10);
	assert_int_equal(q.earray[14], 99);
	assert_int_equal(q.esqes[q.earray[15]].user_data, 12);

	/* nothing published: nothing asked, nothing submitted */
	asked = 0;
	assert_int_equal(dc_enter_plain(&ring, 2, 0, 0, &pl), 0);
	assert_int_equal(pl.left, 0);
	assert_int_equal(asked, 0);
	ucmd_queue_exit(&ring);
	fake_stop(&f, e);
}

/*
 * A UCMDD_QI_SUBMIT_COPY ring (a program under ucmd exec): the write's
 * data and record go into the area as its SQE is copied into the ring's
 * SQ, named by the ring's SQ position; the write linked behind it gets
 * none.
 */
static void test_submit_copy_writes(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_BOUNCE_W);
	struct io_uring_params p = { 0 };
	struct ucmd_ring ring;
	struct ucmdd_bounce_wrec *w;
	unsigned char *wdata;
	char *a = malloc(4096);
	struct psq q;

	(void)state;
	assert_int_equal(dc_queue_init_flags(e, 4, &ring, &p, UCMDD_QI_SUBMIT_COPY), 0);
	assert_non_null(f.bmem);
	wdata = (unsigned char *)f.bmem + f.brep.wdata_off;
	psq_of(&f, &ring, &p, &q);
	memset(a, 0x61, 4096);
	psq_push_write(&q, 3, 1, 21, a, 4096, IOSQE_IO_LINK);
	psq_push_write(&q, 3, 2, 22, a, 4096, 0);
	assert_int_equal(dc_enter(&ring, 2, 0, 0), 2);
	memset(a, 0x62, 4096);
	w = wrec_at(&f, 0);
	assert_non_null(w);
	assert_int_equal(w->user_data, 21);
	assert_ptr_equal((void *)(uintptr_t)w->addr, a);
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal(wdata[w->off + i], 0x61);
	assert_null(wrec_at(&f, 1));
	ucmd_queue_exit(&ring);
	munmap(f.bmem, f.brep.size);
	fake_stop(&f, e);
	free(a);
}

/*
 * The program's SQ is its own, where setup said (after the control page),
 * and its submit copies from it into the ring's and returns at once: the
 * fake daemon takes nothing, yet the program's head moves and its slots
 * are free again (overwriting one does not touch the copy). Only what was
 * published goes, to_submit at most; an index outside the SQE array goes
 * as it is, for the proxy to drop and count.
 */
static void test_submit_copy(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_OK);
	struct io_uring_params p = { 0 };
	struct ucmd_ring ring;
	struct psq q;

	(void)state;
	assert_int_equal(dc_queue_init_flags(e, 4, &ring, &p, UCMDD_QI_SUBMIT_COPY), 0);
	assert_int_equal(p.sq_off.head, f.rep.ctl_off + UCMDD_PSQ_HEAD);
	assert_int_equal(p.sq_off.tail, f.rep.ctl_off + UCMDD_PSQ_TAIL);
	assert_int_equal(p.sq_off.array, f.rep.ctl_off + UCMDD_PSQ_ARRAY);
	assert_int_equal(p.sq_off.resv2, f.rep.ctl_off + ucmdd_psq_sqes(4));
	assert_int_equal(p.sq_off.resv2 % 4096, 0);
	/* flags, dropped, mask and the CQ are the ring's own */
	assert_int_equal(p.sq_off.flags, f.rep.p.sq_off.flags);
	assert_int_equal(p.sq_off.dropped, f.rep.p.sq_off.dropped);
	assert_int_equal(p.cq_off.cqes, f.rep.p.cq_off.cqes);
	psq_of(&f, &ring, &p, &q);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(q.array[i], i);

	psq_push(&q, 3, 2, 11);
	psq_push(&q, 3, 3, 12);
	assert_int_equal(dc_enter(&ring, 1, 0, 0), 1);
	assert_int_equal(*q.head, 1);
	assert_int_equal(*q.etail, 1);
	assert_int_equal(*q.ehead, 0);	/* nobody took it */
	assert_int_equal(q.earray[0], 0);
	assert_int_equal(q.esqes[0].user_data, 11);
	assert_int_equal(q.esqes[0].opcode, IORING_OP_NOP);
	q.sqes[2].user_data = 99;
	assert_int_equal(q.esqes[0].user_data, 11);

	/* a bad index behind the second: both go, the bad one as it is */
	q.array[2 & 3] = 9;
	__atomic_store_n(q.tail, 3, __ATOMIC_RELEASE);
	assert_int_equal(dc_enter(&ring, 10, 0, 0), 2);
	assert_int_equal(*q.head, 3);
	assert_int_equal(*q.etail, 3);
	assert_int_equal(q.earray[1], 1);
	assert_int_equal(q.esqes[1].user_data, 12);
	assert_int_equal(q.earray[2], 9);
	/* nothing more published: nothing submitted */
	assert_int_equal(dc_enter(&ring, 5, 0, 0), 0);
	assert_int_equal(*q.etail, 3);
	ucmd_queue_exit(&ring);
	fake_stop(&f, e);
}

/*
 * The doorbell while the daemon sleeps (NEED_WAKEUP), one SQE per enter as
 * fio's default job submits, on a copy ring (the enter does not wait for
 * the take). A daemon with the bell (UCMDD_CTL_SQ_BELL) is rung once until
 * it empties the eventfd and clears the bell, then once again; one
 * without it, every time, as before (it never clears the bell: a client
 * that waited for that would never ring again).
 */
static void bell_run(enum fake_mode mode, uint64_t want_first, uint64_t want_again)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, mode);
	struct io_uring_params p = { 0 };
	struct ucmd_ring ring;
	struct psq q;
	uint64_t cnt = 0;

	assert_int_equal(dc_queue_init_flags(e, 16, &ring, &p, UCMDD_QI_SUBMIT_COPY), 0);
	psq_of(&f, &ring, &p, &q);
	__atomic_store_n(word(&f, f.rep.p.sq_off.flags), IORING_SQ_NEED_WAKEUP, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < 6; i++) {
		psq_push(&q, 15, i, i);
		assert_int_equal(dc_enter(&ring, 1, 0, 0), 1);
	}
	assert_int_equal(read(f.sq_efd, &cnt, sizeof(cnt)), sizeof(cnt));
	assert_int_equal(cnt, want_first);
	/* the daemon woke: emptied the eventfd (above), then cleared the bell */
	if (mode == FAKE_BELL)
		__atomic_store_n(&ctl_of(&f)->sq_bell, 0, __ATOMIC_SEQ_CST);
	for (unsigned i = 6; i < 9; i++) {
		psq_push(&q, 15, i, i);
		assert_int_equal(dc_enter(&ring, 1, 0, 0), 1);
	}
	assert_int_equal(read(f.sq_efd, &cnt, sizeof(cnt)), sizeof(cnt));
	assert_int_equal(cnt, want_again);
	assert_int_equal(*q.etail, 9);
	ucmd_queue_exit(&ring);
	fake_stop(&f, e);
}

static void test_doorbell_once(void **state)
{
	(void)state;
	bell_run(FAKE_BELL, 1, 1);
	bell_run(FAKE_OK, 6, 3);
}

/*
 * A daemon that refuses UCMDD_QI_SUBMIT_COPY (one before it): the ring is
 * made again with the shared SQ, and the program is told of that one.
 * SQPOLL never asks for it.
 */
static void test_submit_copy_fallback(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_NO_COPY);
	struct io_uring_params p = { 0 };
	struct ucmd_ring ring;
	unsigned before = f.nreq;

	(void)state;
	assert_int_equal(dc_queue_init_psq(e, 4, &ring, &p), 0);
	assert_int_equal(f.nreq - before, 3);	/* refused, the shared SQ, its read bounce area */
	assert_int_equal(p.sq_off.head, f.rep.p.sq_off.head);
	assert_int_equal(p.sq_off.array, f.rep.p.sq_off.array);
	ucmd_queue_exit(&ring);
	fake_stop(&f, e);

	e = fake_start(&f, FAKE_OK);
	p = (struct io_uring_params){ .flags = IORING_SETUP_SQPOLL };
	before = f.nreq;
	assert_int_equal(dc_queue_init_psq(e, 4, &ring, &p), 0);
	assert_int_equal(f.nreq - before, 1);
	assert_int_equal(p.sq_off.head, f.rep.p.sq_off.head);
	ucmd_queue_exit(&ring);
	fake_stop(&f, e);
}

/*
 * A ring without an SQ array has the program's own SQ too: no array told
 * of, its head and tail UCMDD_PSQ_NOARRAY_OFF past the ring's (in the
 * rings the program maps), its SQEs taken at tail & mask and copied into
 * the ring's SQ in order at the enter, the ring's head and tail untouched
 * by the program's.
 */
static void test_submit_copy_no_sqarray(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_OK);
	struct io_uring_params p = { .flags = IORING_SETUP_NO_SQARRAY };
	struct ucmd_ring ring;
	unsigned *head, *tail, *etail;
	struct io_uring_sqe *sqes, *esqes;
	char *b;

	(void)state;
	assert_int_equal(dc_queue_init_psq(e, 4, &ring, &p), 0);
	assert_true(dc_psq_own(&ring));
	assert_int_equal(p.sq_off.array, 0);
	assert_int_equal(p.sq_off.head, f.rep.p.sq_off.head + UCMDD_PSQ_NOARRAY_OFF);
	assert_int_equal(p.sq_off.tail, f.rep.p.sq_off.tail + UCMDD_PSQ_NOARRAY_OFF);
	b = ring.sq.ring_ptr;
	head = (unsigned *)(b + p.sq_off.head);
	tail = (unsigned *)(b + p.sq_off.tail);
	sqes = (struct io_uring_sqe *)(b + p.sq_off.resv2);
	etail = word(&f, f.rep.p.sq_off.tail);
	esqes = (struct io_uring_sqe *)(f.mem + f.rep.sqes_off);
	for (unsigned round = 0; round < 3; round++) {
		for (unsigned i = 0; i < 3; i++) {
			unsigned t = *tail;

			memset(&sqes[t & 3], 0, sizeof(sqes[0]));
			sqes[t & 3].opcode = IORING_OP_NOP;
			sqes[t & 3].user_data = 70 + t;
			__atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
		}
		assert_int_equal(*etail, round * 3);
		assert_int_equal(dc_enter(&ring, 3, 0, 0), 3);
		assert_int_equal(*head, round * 3 + 3);
		assert_int_equal(*etail, round * 3 + 3);
		for (unsigned i = 0; i < 3; i++)
			assert_int_equal(esqes[(round * 3 + i) & 3].user_data, 70 + round * 3 + i);
		/* the proxy took them */
		__atomic_store_n(word(&f, f.rep.p.sq_off.head), *etail, __ATOMIC_RELEASE);
	}
	ucmd_queue_exit(&ring);
	fake_stop(&f, e);
}

/* A daemon that takes the flag but makes no room for the program's SQ: -EPROTO, the ring given back. */
static void test_submit_copy_short(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_SHORT_COPY);
	struct io_uring_params p = { 0 };
	struct ucmd_ring ring;

	(void)state;
	assert_int_equal(dc_queue_init_psq(e, 4, &ring, &p), -EPROTO);
	assert_true(f.exited);
	assert_int_equal(ring.ring_fd, -1);
	fake_stop(&f, e);
}

struct late_taker {
	struct fake *f;
	struct psq *q;
	unsigned take;		/* move the ring's head by this much */
	bool mark_dead;		/* instead, ctl->state = DEAD */
};

/* A proxy that comes late: after the submitter found the ring's SQ full. */
static void *late_main(void *arg)
{
	struct late_taker *lt = arg;

	usleep(30000);
	if (lt->mark_dead)
		__atomic_store_n(&ctl_of(lt->f)->state, UCMDD_RING_DEAD, __ATOMIC_SEQ_CST);
	else
		__atomic_store_n(lt->q->ehead, *lt->q->ehead + lt->take, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The ring's SQ full: a proxy that takes nothing until the program reaps
 * (sq_blocked) makes the submit -EAGAIN with nothing copied (the program's
 * head stays); one that takes late is waited for; a daemon that dies
 * meanwhile is -ENOTCONN, never a hang.
 */
static void test_submit_copy_full(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_OK);
	struct io_uring_params p = { 0 };
	struct ucmd_ring ring;
	struct late_taker lt = { .f = &f };
	struct psq q;
	pthread_t t;

	(void)state;
	assert_int_equal(dc_queue_init_flags(e, 4, &ring, &p, UCMDD_QI_SUBMIT_COPY), 0);
	psq_of(&f, &ring, &p, &q);
	lt.q = &q;
	for (unsigned i = 0; i < 4; i++)
		psq_push(&q, 3, i, 100 + i);
	assert_int_equal(dc_enter(&ring, 4, 0, 0), 4);
	assert_int_equal(*q.etail, 4);
	/* the program may reuse every slot now */
	psq_push(&q, 3, 0, 104);
	__atomic_store_n(&ctl_of(&f)->sq_blocked, 1, __ATOMIC_RELEASE);
	assert_int_equal(dc_enter(&ring, 1, 0, 0), -EAGAIN);
	assert_int_equal(*q.head, 4);
	assert_int_equal(*q.etail, 4);
	assert_int_equal(q.esqes[0].user_data, 100);
	/* unblocked, but the proxy takes two only a little later: the submit waits for it */
	__atomic_store_n(&ctl_of(&f)->sq_blocked, 0, __ATOMIC_RELEASE);
	lt.take = 2;
	assert_int_equal(pthread_create(&t, NULL, late_main, &lt), 0);
	assert_int_equal(dc_enter(&ring, 1, 0, 0), 1);
	pthread_join(t, NULL);
	assert_int_equal(*q.head, 5);
	assert_int_equal(*q.etail, 5);
	assert_int_equal(q.esqes[0].user_data, 104);
	/* full again (tail 6, head 2), and the daemon dies while we wait */
	psq_push(&q, 3, 1, 105);
	assert_int_equal(dc_enter(&ring, 1, 0, 0), 1);
	psq_push(&q, 3, 2, 106);
	lt.mark_dead = true;
	assert_int_equal(pthread_create(&t, NULL, late_main, &lt), 0);
	assert_int_equal(dc_enter(&ring, 1, 0, 0), -ENOTCONN);
	pthread_join(t, NULL);
	assert_int_equal(*q.head, 6);
	ucmd_queue_exit(&ring);
	fake_stop(&f, e);
}

#define CP_THREADS 4
#define CP_PER_THREAD 2000

struct cp_shared {
	struct fake *f;
	struct ucmd_ring *ring;
	struct psq *q;
	pthread_mutex_t prog_lock;	/* the program's own lock round its SQ */
	unsigned char seen[CP_THREADS * CP_PER_THREAD];
	atomic_bool bad;
};

struct cp_thread {
	struct cp_shared *sh;
	unsigned id;
};

/* The proxy's side: take each SQE the ring's SQ publishes, once. */
static void *cp_proxy(void *arg)
{
	struct cp_shared *sh = arg;
	unsigned head = 0, want = CP_THREADS * CP_PER_THREAD;

	while (head != want) {
		unsigned tail = __atomic_load_n(sh->q->etail, __ATOMIC_ACQUIRE);

		if (tail == head) {
			sched_yield();
			continue;
		}
		for (; head != tail; head++) {
			unsigned idx = sh->q->earray[head & 7];
			uint64_t ud = idx < 8 ? sh->q->esqes[idx].user_data : ~0ull;

			if (ud >= want || sh->seen[ud])
				atomic_store(&sh->bad, true);
			else
				sh->seen[ud] = 1;
		}
		__atomic_store_n(sh->q->ehead, head, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* A program thread: under the program's lock, an SQE in a free slot; then enter. */
static void *cp_submitter(void *arg)
{
	struct cp_thread *ct = arg;
	struct cp_shared *sh = ct->sh;

	for (unsigned i = 0; i < CP_PER_THREAD; i++) {
		uint64_t ud = (uint64_t)ct->id * CP_PER_THREAD + i;
		int ret;

		for (;;) {
			pthread_mutex_lock(&sh->prog_lock);
			unsigned t = *sh->q->tail;

			if (t - __atomic_load_n(sh->q->head, __ATOMIC_ACQUIRE) < 8) {
				psq_push(sh->q, 7, t & 7, ud);
				pthread_mutex_unlock(&sh->prog_lock);
				break;
			}
			pthread_mutex_unlock(&sh->prog_lock);
			/* full: someone's enter will copy them; ours may too */
			(void)dc_enter(sh->ring, 8, 0, 0);
		}
		ret = dc_enter(sh->ring, 1, 0, 0);
		if (ret < 0)
			atomic_store(&sh->bad, true);
	}
	return NULL;
}

/*
 * Threads of one program entering one ring at once (as Linux allows,
 * under its uring_lock): every SQE they published reaches the ring's SQ
 * exactly once, whichever enter copied it.
 */
static void test_submit_copy_threads(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_OK);
	struct io_uring_params p = { 0 };
	struct ucmd_ring ring;
	struct psq q;
	struct cp_shared *sh = calloc(1, sizeof(*sh));
	struct cp_thread ct[CP_THREADS];
	pthread_t proxy, th[CP_THREADS];

	(void)state;
	assert_non_null(sh);
	assert_int_equal(dc_queue_init_flags(e, 8, &ring, &p, UCMDD_QI_SUBMIT_COPY), 0);
	psq_of(&f, &ring, &p, &q);
	sh->f = &f;
	sh->ring = &ring;
	sh->q = &q;
	pthread_mutex_init(&sh->prog_lock, NULL);
	assert_int_equal(pthread_create(&proxy, NULL, cp_proxy, sh), 0);
	for (unsigned i = 0; i < CP_THREADS; i++) {
		ct[i] = (struct cp_thread){ .sh = sh, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, cp_submitter, &ct[i]), 0);
	}
	for (unsigned i = 0; i < CP_THREADS; i++)
		pthread_join(th[i], NULL);
	/* what the last enters left published goes with one more */
	while (__atomic_load_n(q.head, __ATOMIC_ACQUIRE) != *q.tail)
		assert_true(dc_enter(&ring, 8, 0, 0) >= 0);
	pthread_join(proxy, NULL);
	assert_false(atomic_load(&sh->bad));
	for (unsigned i = 0; i < CP_THREADS * CP_PER_THREAD; i++)
		assert_int_equal(sh->seen[i], 1);
	pthread_mutex_destroy(&sh->prog_lock);
	free(sh);
	ucmd_queue_exit(&ring);
	fake_stop(&f, e);
}

static void test_wait_wakes(void **state)
{
	(void)state;
	wait_with((struct poster){ 0 }, 0);
}

static void test_wait_daemon_hangs_up(void **state)
{
	(void)state;
	wait_with((struct poster){ .hang_up = true }, -ENOTCONN);
}

static void test_wait_ring_dead(void **state)
{
	(void)state;
	wait_with((struct poster){ .mark_dead = true }, -ENOTCONN);
}

/* A daemon that offers the futex: the waiter sleeps on it, not on the cq eventfd. */
static void test_wait_futex_wakes(void **state)
{
	(void)state;
	wait_with((struct poster){ .futex = true }, 0);
}

/* Killed without marking the ring dead: nobody wakes the futex, the socket's hang-up tells. */
static void test_wait_futex_daemon_hangs_up(void **state)
{
	(void)state;
	wait_with((struct poster){ .futex = true, .hang_up = true }, -ENOTCONN);
}

static void test_wait_futex_ring_dead(void **state)
{
	(void)state;
	wait_with((struct poster){ .futex = true, .mark_dead = true }, -ENOTCONN);
}

static void test_register(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_OK);
	struct io_uring_params p = { 0 };
	struct ucmd_ring ring;
	struct io_uring_probe *probe;
	int files[2] = { 3, 4 };
	int efd = eventfd(0, EFD_CLOEXEC);

	(void)state;
	assert_int_equal(ucmd_queue_init_engine(e, 4, &ring, &p), 0);
	/* the eventfd itself travels, as SCM_RIGHTS */
	assert_int_equal(ucmd_register_eventfd(&ring, efd), 0);
	assert_int_equal(f.reg_opcode, IORING_REGISTER_EVENTFD);
	assert_true(f.reg_fd_is_eventfd);
	/* the daemon's errno */
	assert_int_equal(ucmd_register_files(&ring, files, 2), -EBADF);
	assert_int_equal(f.reg_opcode, IORING_REGISTER_FILES);
	assert_int_equal(f.reg_nr, 2);
	assert_int_equal(ucmd_unregister_personality(&ring, 3), 0);
	assert_int_equal(f.reg_opcode, IORING_UNREGISTER_PERSONALITY);
	assert_int_equal(f.reg_nr, 3);
	/* the probe is the reply's payload */
	probe = ucmd_get_probe_ring(&ring);
	assert_non_null(probe);
	assert_true(ucmd_opcode_supported(probe, 0));
	assert_false(ucmd_opcode_supported(probe, 1));
	assert_true(ucmd_opcode_supported(probe, 2));
	assert_false(ucmd_opcode_supported(probe, 3));
	ucmd_free_probe(probe);
	/* ring fds are kept here, as liburing keeps them */
	unsigned before = f.nreq;
	assert_int_equal(ucmd_register_ring_fd(&ring), 1);
	assert_int_equal(ucmd_register_ring_fd(&ring), -EEXIST);
	assert_int_equal(ucmd_unregister_ring_fd(&ring), 1);
	assert_int_equal(ucmd_unregister_ring_fd(&ring), -EINVAL);
	assert_int_equal(f.nreq, before);
	ucmd_queue_exit(&ring);
	close(efd);
	fake_stop(&f, e);
}

/* A shared buffer is the same pages on both sides, and cannot be shrunk under the daemon. */
static void test_buf_shared(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_OK);
	unsigned char *b;

	(void)state;
	b = ucmd_buf_alloc(e, 5000);
	assert_non_null(b);
	assert_true(f.region_sealed);
	assert_int_equal(f.region_addr, (uint64_t)(uintptr_t)b);
	assert_int_equal(f.region_len, 8192);
	assert_int_equal((uintptr_t)b & 4095, 0);
	/* the fake wrote 0xa5 through its own mapping */
	assert_int_equal(b[0], 0xa5);
	assert_int_equal(b[8191], 0xa5);
	ucmd_buf_free(e, b);
	assert_true(f.region_del);
	ucmd_buf_free(e, NULL);
	assert_null(ucmd_buf_alloc(e, 0));
	assert_int_equal(errno, EINVAL);
	fake_stop(&f, e);
}

/* ucmd_daemon_ana_state: the request as the daemon reads it, its answer back. */
static void test_ana_state(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_OK), *native = ucmd_engine_new();

	(void)state;
	assert_int_equal(ucmd_daemon_ana_state(e, 1, 1, 0), 1);
	assert_int_equal(ucmd_daemon_ana_state(e, 1, 7, 3), 3);
	assert_int_equal(f.ana.port, 1);
	assert_int_equal(f.ana.grpid, 7);
	assert_int_equal(f.ana.state, 3);
	assert_int_equal(f.ana.pad, 0);
	assert_int_equal(ucmd_daemon_ana_state(e, 2, 1, 0), -ENODEV);
	/* an in-process engine has no daemon to ask */
	assert_int_equal(ucmd_daemon_ana_state(native, 1, 1, 0), -EOPNOTSUPP);
	ucmd_engine_free(native);
	fake_stop(&f, e);
}

/* ucmd_nvme_regs_read on a daemon's engine: the request, the bytes back, bounds kept here. */
static void test_regs_read(void **state)
{
	struct fake f;
	struct ucmd_engine *e = fake_start(&f, FAKE_OK), *native = ucmd_engine_new();
	uint8_t buf[0x1000];
	int fd;

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(ucmd_nvme_regs_read(e, 5, 0x10, buf, 0x40), 0);
	assert_int_equal(f.regs.fd, 5);
	assert_int_equal(f.regs.off, 0x10);
	assert_int_equal(f.regs.len, 0x40);
	assert_int_equal(f.regs.pad, 0);
	for (unsigned i = 0; i < 0x40; i++)
		assert_int_equal(buf[i], (uint8_t)(0x10 + i));
	assert_int_equal(buf[0x40], 0xee);	/* nothing past len */
	assert_int_equal(ucmd_nvme_regs_read(e, 7, 0, buf, 4), -ENOTTY);
	/* a reply shorter than asked is the daemon's fault: never half a register file */
	assert_int_equal(ucmd_nvme_regs_read(e, 6, 0, buf, 8), -EPROTO);
	/* out of bounds: refused before anything is sent */
	f.regs.fd = -1;
	assert_int_equal(ucmd_nvme_regs_read(e, 5, 2, buf, 4), -EINVAL);
	assert_int_equal(ucmd_nvme_regs_read(e, 5, 0, buf, 6), -EINVAL);
	assert_int_equal(ucmd_nvme_regs_read(e, 5, 0x1000, buf, 4), -EINVAL);
	assert_int_equal(ucmd_nvme_regs_read(e, 5, 0xffc, buf, 8), -EINVAL);
	assert_int_equal(ucmd_nvme_regs_read(e, 5, 0, NULL, 4), -EINVAL);
	assert_int_equal(f.regs.fd, -1);
	/* in process: an fd that is none, a device that is no controller */
	assert_int_equal(ucmd_nvme_regs_read(native, 99, 0, buf, 4), -EBADF);
	fd = ucmd_open(native, "null", O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(ucmd_nvme_regs_read(native, fd, 0, buf, 4), -ENOTTY);
	ucmd_engine_free(native);
	fake_stop(&f, e);
}

/* The in-process engine's buffers: page-aligned and zeroed. */
static void test_buf_native(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	unsigned char *b;

	(void)state;
	assert_non_null(e);
	b = ucmd_buf_alloc(e, 100);
	assert_non_null(b);
	assert_int_equal((uintptr_t)b & 4095, 0);
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal(b[i], 0);
	ucmd_buf_free(e, b);
	ucmd_engine_free(e);
}

static void test_connect_path(void **state)
{
	struct ucmd_engine *e = NULL;

	(void)state;
	unsetenv("UCMD_DAEMON");
	assert_int_equal(ucmd_engine_connect(NULL, &e), -EINVAL);
	assert_non_null(strstr(ucmd_last_error(), "UCMD_DAEMON"));
	assert_int_equal(ucmd_engine_connect("/nonexistent/ucmdd.sock", &e), -ENOENT);
	setenv("UCMD_DAEMON", "/nonexistent/other.sock", 1);
	assert_int_equal(ucmd_engine_connect(NULL, &e), -ENOENT);
	assert_non_null(strstr(ucmd_last_error(), "/nonexistent/other.sock"));
	unsetenv("UCMD_DAEMON");
	assert_null(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_framing_and_errors),
		cmocka_unit_test(test_old_version),
		cmocka_unit_test(test_bad_seq),
		cmocka_unit_test(test_peer_gone),
		cmocka_unit_test(test_no_sigpipe_on_send),
		cmocka_unit_test(test_ring_mapping),
		cmocka_unit_test(test_ring_sqes_at_off),
		cmocka_unit_test(test_submit_copy),
		cmocka_unit_test(test_doorbell_once),
		cmocka_unit_test(test_submit_plain),
		cmocka_unit_test(test_submit_copy_full),
		cmocka_unit_test(test_submit_copy_threads),
		cmocka_unit_test(test_submit_copy_fallback),
		cmocka_unit_test(test_submit_copy_short),
		cmocka_unit_test(test_bounce_area),
		cmocka_unit_test(test_bounce_writes),
		cmocka_unit_test(test_bounce_wvec),
		cmocka_unit_test(test_bounce_read_records),
		cmocka_unit_test(test_bounce_shared_buffers),
		cmocka_unit_test(test_bounce_shared_table_full),
		cmocka_unit_test(test_submit_copy_writes),
		cmocka_unit_test(test_submit_divert_post),
		cmocka_unit_test(test_submit_copy_no_sqarray),
		cmocka_unit_test(test_wait_wakes),
		cmocka_unit_test(test_wait_daemon_hangs_up),
		cmocka_unit_test(test_wait_ring_dead),
		cmocka_unit_test(test_wait_futex_wakes),
		cmocka_unit_test(test_wait_futex_daemon_hangs_up),
		cmocka_unit_test(test_wait_futex_ring_dead),
		cmocka_unit_test(test_register),
		cmocka_unit_test(test_buf_shared),
		cmocka_unit_test(test_buf_native),
		cmocka_unit_test(test_ana_state),
		cmocka_unit_test(test_regs_read),
		cmocka_unit_test(test_connect_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
