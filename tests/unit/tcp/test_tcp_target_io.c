// SPDX-License-Identifier: MIT
/*
 * ucmdd's NVMe/TCP target (src/nvme/target) run in this process, on a RAM
 * controller of its own engine and a loopback port, with ucmd's NVMe/TCP
 * host transport (another engine, also here) as its peer: what the
 * target's receive loop does with its socket, counted through recv,
 * sendmsg and poll defined in this binary (the target's and the host's
 * sockets are told apart by the target's port).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <cmocka.h>

#include <nvme/types.h>
#include "nvme/target/tcp.h"
#include "ucmd/ctrl.h"
#include "ucmd/nvme.h"
#include "ucmd/ucmd.h"

#define NS_BYTES	(4u << 20)
#define LBA		4096u

static _Atomic uint16_t target_port;	/* 0: nothing is counted */

/* Whether fd is a connection of the target (its local port is the target's). */
static bool target_sock(int fd)
{
	struct sockaddr_in a;
	socklen_t l = sizeof(a);
	uint16_t port = atomic_load(&target_port);

	return port && !getsockname(fd, (struct sockaddr *)&a, &l) && a.sin_family == AF_INET &&
	       ntohs(a.sin_port) == port;
}

/*
 * The counting needs this binary's recv/sendmsg/poll in place of libc's;
 * TSan's own interceptors would be displaced: it skips there.
 */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#if !defined(__SANITIZE_THREAD__) && !defined(UNDER_TSAN)
#define COUNTS_SYSCALLS 1
/*
 * The fd whose last recv on this thread took less than it asked for,
 * until the thread polls: a recv on it before that is one that did not
 * wait (unwaited_recvs; those that found nothing, needless_recvs).
 */
static __thread int short_fd = -1;
static atomic_uint needless_recvs, unwaited_recvs, target_recvs, target_polls;
/*
 * By the target's fd: its recvs that took data, and those that slept
 * until the socket's receive timeout (an idle admin queue's do, each
 * second, to look at its keep-alive)
 */
#define MAX_FD	1024
static atomic_uint fd_recvs[MAX_FD], fd_timeouts[MAX_FD];
/* ...and its polls that returned at their timeout, nothing having woken them */
static atomic_uint fd_poll_timeouts[MAX_FD];
/*
 * The host's next sendmsg on its I/O connection stops after split_at
 * bytes and pauses, so that the target's recv gets a piece of the PDU;
 * the host's send loop sends the rest.
 */
static atomic_uint split_at;
static atomic_uint splits_done;

ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	long r = syscall(SYS_recvfrom, fd, buf, n, flags, NULL, NULL);
	int e = errno;

	if (fd == short_fd && target_sock(fd)) {
		atomic_fetch_add(&unwaited_recvs, 1);
		if (r < 0 && e == EAGAIN)
			atomic_fetch_add(&needless_recvs, 1);
	}
	if (r >= 0 && target_sock(fd))
		atomic_fetch_add(&target_recvs, 1);
	if (fd >= 0 && fd < MAX_FD && r > 0 && target_sock(fd))
		atomic_fetch_add(&fd_recvs[fd], 1);
	if (fd >= 0 && fd < MAX_FD && r < 0 && e == EAGAIN && !(flags & MSG_DONTWAIT) &&
	    target_sock(fd))
		atomic_fetch_add(&fd_timeouts[fd], 1);
	short_fd = r > 0 && (size_t)r < n ? fd : -1;
	errno = e;
	return r;
}

ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	unsigned cut = atomic_load(&split_at);
	struct iovec v[64];
	struct msghdr part;
	size_t total = 0;
	long r;

	if (!cut || target_sock(fd) || m->msg_iovlen > 64)
		return syscall(SYS_sendmsg, fd, m, flags);
	for (size_t i = 0; i < m->msg_iovlen; i++)
		total += m->msg_iov[i].iov_len;
	if (total <= cut || !atomic_compare_exchange_strong(&split_at, &cut, 0))
		return syscall(SYS_sendmsg, fd, m, flags);
	/* the first cut bytes now, the rest when the caller sends again */
	part = *m;
	part.msg_iov = v;
	part.msg_iovlen = 0;
	for (size_t i = 0, left = cut; left; i++) {
		size_t l = m->msg_iov[i].iov_len < left ? m->msg_iov[i].iov_len : left;

		v[part.msg_iovlen++] = (struct iovec){ m->msg_iov[i].iov_base, l };
		left -= l;
	}
	r = syscall(SYS_sendmsg, fd, &part, flags);
	atomic_fetch_add(&splits_done, 1);
	usleep(2000);	/* the target takes the piece alone (a pause, not a bound) */
	return r;
}

/*
 * glibc declares poll's fds write-only (__attr_access), so GCC takes a
 * read of them here for a read of uninitialised memory: it is not.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
int poll(struct pollfd *pfs, nfds_t n, int timeout)
{
	int fd = n ? pfs[0].fd : -1;
	bool target = fd >= 0 && target_sock(fd);
	int r;

	short_fd = -1;
	if (target)
		atomic_fetch_add(&target_polls, 1);
	r = (int)syscall(SYS_poll, pfs, n, timeout);
	if (target && !r && fd < MAX_FD)
		atomic_fetch_add(&fd_poll_timeouts[fd], 1);
	return r;
}
#pragma GCC diagnostic pop
#endif

/* ---- the rig: target and host in this process ---- */

struct rig {
	struct ucmd_engine *te, *he;	/* the target's engine, the host's */
	struct ucmd_ctrl *ctrl;
	struct ucmd_nvme_host *local, *host;
	struct nvmet_tcp_port *port;
	struct ucmd_ring ring;
	int ng;
};

static uint16_t free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
	close(fd);
	return ntohs(a.sin_port);
}

static void rig_up_mode(struct rig *r, const char *opts, enum ucmd_ctrl_mode mode)
{
	struct ucmd_ctrl_params cp = { .mode = mode, .ram_capacity = NS_BYTES };
	struct ucmd_ns_params np = { .nsze = NS_BYTES / LBA, .lbaf = 4,
				     .store = UCMD_NS_STORE_RAM, .attach = true };
	struct ucmd_nvme_host_opts ho = { .nr_io_queues = 1, .queue_depth = 64 };
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	unsigned inst = 0;
	char addr[64], url[512], err[256];
	uint16_t port = free_port();

	memset(r, 0, sizeof(*r));
	assert_int_equal(ucmd_engine_create(&r->te), 0);
	assert_int_equal(ucmd_ctrl_create(&cp, &r->ctrl), 0);
	assert_true(ucmd_ctrl_ns_create(r->ctrl, &np) > 0);
	assert_int_equal(ucmd_nvme_attach(r->te, r->ctrl, NULL, &r->local), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	if (nvmet_tcp_start(r->te, addr, 1, &inst, 1, NULL, &r->port, err, sizeof(err)))
		fail_msg("nvmet_tcp_start: %s", err);
	atomic_store(&target_port, port);
	snprintf(url, sizeof(url), "nvme-tcp://127.0.0.1:%u/%s%s", port, r->port->subsys[0].nqn,
		 opts);
	assert_int_equal(ucmd_engine_create(&r->he), 0);
	if (ucmd_nvme_attach_tcp(r->he, url, &ho, NULL, &r->host))
		fail_msg("attach %s: %s", url, ucmd_last_error());
	assert_int_equal(ucmd_queue_init_engine(r->he, 64, &r->ring, &p), 0);
	r->ng = ucmd_open(r->he, "ng0n1", O_RDWR);
	assert_true(r->ng >= 0);
}

/* ucmdd's --ram controller: inline, a command completes inside its submission */
static void rig_up(struct rig *r, const char *opts)
{
	rig_up_mode(r, opts, UCMD_CTRL_INLINE);
}

static void rig_down(struct rig *r)
{
	ucmd_queue_exit(&r->ring);
	ucmd_close(r->he, r->ng);
	ucmd_nvme_detach(r->host);
	ucmd_engine_free(r->he);
	atomic_store(&target_port, 0);
	nvmet_tcp_stop(r->port);
	ucmd_nvme_detach(r->local);
	ucmd_ctrl_destroy(r->ctrl);
	ucmd_engine_free(r->te);
}

static void prep(struct rig *r, uint8_t opcode, void *buf, uint32_t blocks, uint64_t slba,
		 uint64_t ud)
{
	struct nvme_uring_cmd c = { .opcode = opcode, .nsid = 1, .addr = (uintptr_t)buf,
				    .data_len = blocks * LBA, .cdw10 = (uint32_t)slba,
				    .cdw11 = (uint32_t)(slba >> 32), .cdw12 = blocks - 1 };
	struct io_uring_sqe *sqe = ucmd_get_sqe(&r->ring);

	assert_non_null(sqe);
	ucmd_prep_nvme_cmd(sqe, r->ng, NVME_URING_CMD_IO, &c);
	sqe->user_data = ud;
}

/* One command, submitted and waited for: its status. */
static int io1(struct rig *r, uint8_t opcode, void *buf, uint32_t blocks, uint64_t slba)
{
	struct io_uring_cqe *cqe;
	int ret;

	prep(r, opcode, buf, blocks, slba, 0);
	assert_int_equal(ucmd_submit_and_wait(&r->ring, 1), 1);
	assert_int_equal(ucmd_wait_cqe(&r->ring, &cqe), 0);
	ret = cqe->res;
	ucmd_cqe_seen(&r->ring, cqe);
	return ret;
}

static void fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 13 + seed * 7 + (i >> 12));
}

/*
 * The target's receive loop asks the socket again only after a wait when
 * its last recv took less than it asked for: that recv emptied the
 * socket. It used to recv once more first (after sending the pass's
 * responses), which mostly found nothing, at the end of each pass (a
 * system call each). Reads at QD8, each completion answered with the next
 * submission, as bench_tcp's job.
 */
#ifdef COUNTS_SYSCALLS
struct counts {
	unsigned needless, unwaited, recvs, polls;
};

/*
 * Reads at QD8, each completion answered with the next submission (as
 * bench_tcp's job), every one checked: what the target's thread did
 * meanwhile.
 */
static struct counts read_loop(struct rig *r, unsigned total)
{
	uint8_t *bufs = malloc(8 * LBA), *w = malloc(LBA);
	unsigned done = 0, sent = 0;
	struct counts k;

	for (unsigned b = 0; b < 16; b++) {
		fill(w, LBA, b);
		assert_int_equal(io1(r, nvme_cmd_write, w, 1, b), 0);
	}
	k = (struct counts){ atomic_load(&needless_recvs), atomic_load(&unwaited_recvs),
			     atomic_load(&target_recvs), atomic_load(&target_polls) };
	for (; sent < 8; sent++)
		prep(r, nvme_cmd_read, bufs + sent * LBA, 1, sent % 16, sent);
	assert_int_equal(ucmd_submit(&r->ring), 8);
	while (done < total) {
		struct io_uring_cqe *cqe;
		unsigned slot;

		assert_int_equal(ucmd_wait_cqe(&r->ring, &cqe), 0);
		assert_int_equal(cqe->res, 0);
		slot = (unsigned)cqe->user_data % 8;
		fill(w, LBA, (unsigned)(cqe->user_data % 16));
		assert_memory_equal(bufs + slot * LBA, w, LBA);
		ucmd_cqe_seen(&r->ring, cqe);
		done++;
		if (sent < total) {
			prep(r, nvme_cmd_read, bufs + slot * LBA, 1, sent % 16, sent);
			sent++;
			assert_int_equal(ucmd_submit(&r->ring), 1);
		}
	}
	k = (struct counts){ atomic_load(&needless_recvs) - k.needless,
			     atomic_load(&unwaited_recvs) - k.unwaited,
			     atomic_load(&target_recvs) - k.recvs,
			     atomic_load(&target_polls) - k.polls };
	printf("target: %u recvs that took data, %u polls, %u recvs right after a short one "
	       "with no poll between (%u of them found nothing), in %u reads\n", k.recvs,
	       k.polls, k.unwaited, k.needless, total);
	free(bufs);
	free(w);
	return k;
}
#endif

/*
 * With nothing in flight in the engine (the inline RAM controller
 * completes each read inside its submission), the target's thread sleeps
 * in its recv: one system call per pass, no poll, and no recv that finds
 * nothing. It used to recv once more after each pass's responses (which
 * mostly found nothing), then poll, then recv.
 */
static void test_no_recv_after_drain(void **state)
{
#ifdef COUNTS_SYSCALLS
	struct rig r;
	struct counts k;

	(void)state;
	rig_up(&r, "");
	k = read_loop(&r, 400);
	assert_true(k.recvs > 0);
	assert_int_equal(k.needless, 0);
	assert_int_equal(k.polls, 0);
	rig_down(&r);
#else
	(void)state;
	skip();
#endif
}

/*
 * A controller on its own thread completes a command after its
 * submission returns, and the engine hands that completion to the ring's
 * owner, the target's thread, as task work. That thread must not sleep
 * in its recv then (the host sends nothing more before the completion,
 * which would wait for the recv's timeout, a second), but in poll, on the
 * socket and on the ring's eventfd, which the engine writes when it
 * queues the task work; woken, the thread runs it and sends the answer.
 * Reads one at a time, each checked: the I/O queue's thread polled (the
 * completions were late), and none of its polls or recvs ended at their
 * timeout. Before, every such poll did: the eventfd was written only
 * when a CQE was posted, which the task work it waited for does
 * (0.2-0.5 s per read in this rig).
 */
#define LATE_READS	100
static void test_late_completions_poll(void **state)
{
#ifdef COUNTS_SYSCALLS
	struct rig r;
	uint8_t *w = malloc(LBA), *b = malloc(LBA);
	unsigned polls, timeouts, poll_timeouts, recvs[MAX_FD], slept[MAX_FD], polled[MAX_FD];
	unsigned io_fd = 0;

	(void)state;
	rig_up_mode(&r, "", UCMD_CTRL_THREAD);
	for (unsigned i = 0; i < 8; i++) {
		fill(w, LBA, i);
		assert_int_equal(io1(&r, nvme_cmd_write, w, 1, i), 0);
	}
	polls = atomic_load(&target_polls);
	for (unsigned fd = 0; fd < MAX_FD; fd++) {
		recvs[fd] = atomic_load(&fd_recvs[fd]);
		slept[fd] = atomic_load(&fd_timeouts[fd]);
		polled[fd] = atomic_load(&fd_poll_timeouts[fd]);
	}
	for (unsigned i = 0; i < LATE_READS; i++) {
		memset(b, 0, LBA);
		assert_int_equal(io1(&r, nvme_cmd_read, b, 1, i % 8), 0);
		fill(w, LBA, i % 8);
		assert_memory_equal(b, w, LBA);
	}
	polls = atomic_load(&target_polls) - polls;
	/* the I/O queue's connection: the target's fd that took the reads' capsules */
	for (unsigned fd = 0; fd < MAX_FD; fd++) {
		recvs[fd] = atomic_load(&fd_recvs[fd]) - recvs[fd];
		if (recvs[fd] > recvs[io_fd])
			io_fd = fd;
	}
	assert_true(recvs[io_fd] >= LATE_READS);
	timeouts = atomic_load(&fd_timeouts[io_fd]) - slept[io_fd];
	poll_timeouts = atomic_load(&fd_poll_timeouts[io_fd]) - polled[io_fd];
	printf("target (controller thread): %u polls, %u polls and %u recvs of the I/O queue that "
	       "slept until their timeout, in %u reads one at a time\n", polls, poll_timeouts,
	       timeouts, LATE_READS);
	assert_true(polls > 0);
	assert_int_equal(poll_timeouts, 0);
	assert_int_equal(timeouts, 0);
	rig_down(&r);
	free(w);
	free(b);
#else
	(void)state;
	skip();
#endif
}

/*
 * A capsule that reaches the target in two pieces, cut at each byte of its
 * header (and header digest), then across its in-capsule data and data
 * digest: the receive loop, which now sleeps after a short recv before it
 * asks again, finishes the PDU when the rest comes, and the data are
 * intact. With and without digests.
 */
static void split_writes(struct rig *r, uint32_t pdu_len)
{
	uint8_t *w = malloc(LBA), *b = malloc(LBA);
	unsigned splits = atomic_load(&splits_done), n = 0;

	for (uint32_t cut = 1; cut < pdu_len; cut += cut < 90 ? 1 : cut > pdu_len - 8 ? 1 : 61) {
		uint64_t lba = cut % 64;

		fill(w, LBA, cut);
		atomic_store(&split_at, cut);
		assert_int_equal(io1(r, nvme_cmd_write, w, 1, lba), 0);
		atomic_store(&split_at, 0);
		memset(b, 0, LBA);
		assert_int_equal(io1(r, nvme_cmd_read, b, 1, lba), 0);
		if (memcmp(b, w, LBA))
			fail_msg("a write cut at byte %u of %u reads back other data", cut, pdu_len);
		n++;
	}
	/* every one of them was cut (the capsule was longer than the cut) */
	assert_int_equal(atomic_load(&splits_done) - splits, n);
	free(w);
	free(b);
}

static void test_split_capsules(void **state)
{
#ifdef COUNTS_SYSCALLS
	struct rig r;

	(void)state;
	/* a 4 KiB write travels in the capsule (IOCCSZ): 72-byte header, then the data */
	rig_up(&r, "");
	split_writes(&r, 72 + LBA);
	rig_down(&r);
	rig_up(&r, "?hdgst&ddgst");
	split_writes(&r, 72 + 4 + LBA + 4);
	rig_down(&r);
#else
	(void)state;
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_recv_after_drain),
		cmocka_unit_test(test_late_completions_poll),
		cmocka_unit_test(test_split_capsules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
