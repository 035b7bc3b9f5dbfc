// SPDX-License-Identifier: MIT
/*
 * ASYNC_CANCEL and TIMEOUT_REMOVE find a request wherever it is in the
 * ring, as on Linux:
 *
 *   uring_cancel
 *
 * On one ring (liburing, nothing of ucmd's): a RECV on a socketpair or a
 * pipe waiting for data (under `ucmd exec` the program's own descriptors:
 * the preload's kernel ring, src/preload/uring_own.c) cancelled by
 * user_data (in a submission of its own and in the RECV's), by descriptor,
 * by registered file, all of a descriptor's, any; a TIMEOUT linked to a
 * RECV (so on the kernel ring too) removed by TIMEOUT_REMOVE and cancelled
 * by ASYNC_CANCEL, updated by TIMEOUT_UPDATE; a TIMEOUT of the ring's own (the daemon's under ucmd)
 * cancelled, and one cancelled with a RECV by
 * IORING_ASYNC_CANCEL_ANY; a cancel that finds nothing. Prints one line per
 * check, "name ok" or what came, exit 1 on any failure. Under ucmd before,
 * the cancels of the kernel ring's requests found nothing (-ENOENT, -EBADF
 * by descriptor) and the RECVs waited on. Runs the same without ucmd:
 * Linux's answers.
 */
#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define NUD 64
#define UNSET 0x7fffffff

static struct io_uring ring;
static int res[NUD];
static int sv[2], pfd[2];
static int failed;

static void die(const char *what, int err)
{
	printf("%s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

/* reap CQEs until user_data ud's came */
static void wait_for(unsigned ud)
{
	while (res[ud] == UNSET) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_wait_cqe(&ring, &cqe);

		if (ret)
			die("wait_cqe", ret);
		if (cqe->user_data >= NUD || res[cqe->user_data] != UNSET) {
			printf("unexpected CQE %llu res %d\n", (unsigned long long)cqe->user_data,
			       cqe->res);
			exit(1);
		}
		res[cqe->user_data] = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
	}
}

static struct io_uring_sqe *sqe_get(unsigned ud)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

	if (!sqe)
		die("get_sqe", EBUSY);
	res[ud] = UNSET;
	sqe->user_data = ud;
	return sqe;
}

static void submit(unsigned n)
{
	int ret = io_uring_submit(&ring);

	if (ret != (int)n) {
		printf("submit %d, want %u\n", ret, n);
		exit(1);
	}
}

static char rbuf[NUD][16];

static void recv_on(int fd, unsigned ud, bool fixed)
{
	struct io_uring_sqe *sqe = sqe_get(ud);

	io_uring_prep_recv(sqe, fd, rbuf[ud], sizeof(rbuf[ud]), 0);
	if (fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
}

static void read_on(int fd, unsigned ud)
{
	io_uring_prep_read(sqe_get(ud), fd, rbuf[ud], sizeof(rbuf[ud]), 0);
}

/* what data a check sent and no request took is not for the next check */
static void drain(void)
{
	for (char c; recv(sv[0], &c, 1, MSG_DONTWAIT) == 1;)
		;
	for (struct pollfd p = { .fd = pfd[0], .events = POLLIN };
	     poll(&p, 1, 0) == 1 && read(pfd[0], rbuf[0], sizeof(rbuf[0])) > 0;)
		;
}

/*
 * The cancel ud came with want and each victim with -ECANCELED. When the
 * cancel found nothing the victims still wait: data is sent for them so
 * that they end (a timeout ends by itself).
 */
static void expect(const char *name, unsigned ud, int want, const unsigned *victims, unsigned nv)
{
	bool ok;

	wait_for(ud);
	ok = res[ud] == want;
	if (!ok) {
		for (unsigned i = 0; i < nv; i++) {
			if (write(sv[1], "x", 1) != 1 || write(pfd[1], "x", 1) != 1)
				die("write", errno);
		}
	}
	for (unsigned i = 0; i < nv; i++) {
		wait_for(victims[i]);
		ok &= res[victims[i]] == -ECANCELED;
	}
	if (ok) {
		printf("%s ok\n", name);
		return;
	}
	printf("%s: cancel %d (want %d)", name, res[ud], want);
	for (unsigned i = 0; i < nv; i++)
		printf(", request %u %d (want %d)", victims[i], res[victims[i]], -ECANCELED);
	printf("\n");
	failed = 1;
	drain();
}

static void timeout_on(unsigned ud, struct __kernel_timespec *ts, bool link)
{
	struct io_uring_sqe *sqe = sqe_get(ud);

	io_uring_prep_timeout(sqe, ts, 0, 0);
	if (link)
		sqe->flags |= IOSQE_IO_LINK;
}

int main(void)
{
	struct __kernel_timespec ts = { .tv_sec = 5 };
	struct io_uring_sqe *sqe;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || pipe(pfd))
		die("socketpair", errno);
	ret = io_uring_queue_init(32, &ring, 0);
	if (ret)
		die("queue_init", ret);

	/* a RECV waiting, cancelled by user_data in a submission of its own */
	recv_on(sv[0], 1, false);
	submit(1);
	io_uring_prep_cancel64(sqe_get(2), 1, 0);
	submit(1);
	expect("cancel_user_data", 2, 0, (unsigned[]){ 1 }, 1);

	/* the same in the RECV's submission: the cancel comes after it */
	recv_on(sv[0], 3, false);
	io_uring_prep_cancel64(sqe_get(4), 3, 0);
	submit(2);
	expect("cancel_same_submit", 4, 0, (unsigned[]){ 3 }, 1);

	/* a pipe READ, cancelled by its descriptor */
	read_on(pfd[0], 5);
	submit(1);
	io_uring_prep_cancel_fd(sqe_get(6), pfd[0], 0);
	submit(1);
	expect("cancel_fd", 6, 0, (unsigned[]){ 5 }, 1);

	/* two RECVs, all of the descriptor's: how many */
	recv_on(sv[0], 7, false);
	recv_on(sv[0], 8, false);
	submit(2);
	io_uring_prep_cancel_fd(sqe_get(9), sv[0], IORING_ASYNC_CANCEL_ALL);
	submit(1);
	expect("cancel_fd_all", 9, 2, (unsigned[]){ 7, 8 }, 2);

	/* a RECV on a registered file, cancelled by its index */
	ret = io_uring_register_files(&ring, &sv[0], 1);
	if (ret)
		die("register_files", ret);
	recv_on(0, 10, true);
	submit(1);
	io_uring_prep_cancel_fd(sqe_get(11), 0, IORING_ASYNC_CANCEL_FD_FIXED);
	submit(1);
	expect("cancel_fd_fixed", 11, 0, (unsigned[]){ 10 }, 1);
	io_uring_unregister_files(&ring);

	/* a RECV and a pipe READ, any request: how many */
	recv_on(sv[0], 12, false);
	read_on(pfd[0], 13);
	submit(2);
	io_uring_prep_cancel64(sqe_get(14), 0, IORING_ASYNC_CANCEL_ANY);
	submit(1);
	expect("cancel_any", 14, 2, (unsigned[]){ 12, 13 }, 2);

	/* nothing of that user_data anywhere */
	io_uring_prep_cancel64(sqe_get(15), 63, 0);
	submit(1);
	expect("cancel_none", 15, -ENOENT, NULL, 0);

	/* a TIMEOUT linked to a RECV (with it, on ucmd's kernel ring): removed, its RECV too */
	timeout_on(16, &ts, true);
	recv_on(sv[0], 17, false);
	submit(2);
	io_uring_prep_timeout_remove(sqe_get(18), 16, 0);
	submit(1);
	expect("timeout_remove_linked", 18, 0, (unsigned[]){ 16, 17 }, 2);

	/* the same cancelled by ASYNC_CANCEL */
	timeout_on(19, &ts, true);
	recv_on(sv[0], 20, false);
	submit(2);
	io_uring_prep_cancel64(sqe_get(21), 19, 0);
	submit(1);
	expect("cancel_timeout_linked", 21, 0, (unsigned[]){ 19, 20 }, 2);

	/* the same updated to fire now (TIMEOUT_UPDATE): it ends -ETIME, its RECV cancelled */
	{
		struct __kernel_timespec now = { .tv_nsec = 1000000 };

		timeout_on(32, &ts, true);
		recv_on(sv[0], 33, false);
		submit(2);
		io_uring_prep_timeout_update(sqe_get(34), &now, 32, 0);
		submit(1);
		wait_for(34);
		if (res[34] != 0 && write(sv[1], "x", 1) != 1)
			die("write", errno);
		wait_for(32);
		wait_for(33);
		drain();
		if (res[34] == 0 && res[32] == -ETIME && res[33] == -ECANCELED) {
			printf("timeout_update_linked ok\n");
		} else {
			printf("timeout_update_linked: update %d, timeout %d, recv %d\n", res[34],
			       res[32], res[33]);
			failed = 1;
		}
	}

	/*
	 * a TIMEOUT alone (the daemon's ring under ucmd) cancelled (its
	 * TIMEOUT_REMOVE is -EOPNOTSUPP there: docs/liburing-parity.md)
	 */
	timeout_on(24, &ts, false);
	submit(1);
	io_uring_prep_cancel64(sqe_get(25), 24, 0);
	submit(1);
	expect("cancel_timeout", 25, 0, (unsigned[]){ 24 }, 1);

	/*
	 * a TIMEOUT alone and a RECV, any request: both cancelled (under ucmd
	 * the count is the kernel ring's, docs/compat.md: at least the RECV)
	 */
	timeout_on(26, &ts, false);
	recv_on(sv[0], 27, false);
	submit(2);
	io_uring_prep_cancel64(sqe_get(28), 0, IORING_ASYNC_CANCEL_ANY);
	submit(1);
	wait_for(28);
	wait_for(26);
	/* a RECV the cancel did not find takes it, one it cancelled cannot */
	if (write(sv[1], "x", 1) != 1)
		die("write", errno);
	wait_for(27);
	drain();
	if (res[28] >= 1 && res[26] == -ECANCELED && res[27] == -ECANCELED) {
		printf("cancel_any_both ok\n");
	} else {
		printf("cancel_any_both: cancel %d, timeout %d, recv %d\n", res[28], res[26],
		       res[27]);
		failed = 1;
	}

	/* a cancel skipping its success posts nothing; the RECV's still comes */
	recv_on(sv[0], 29, false);
	submit(1);
	sqe = sqe_get(30);
	io_uring_prep_cancel64(sqe, 29, 0);
	sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
	io_uring_prep_nop(sqe_get(31));
	submit(2);
	wait_for(31);
	if (write(sv[1], "x", 1) != 1)
		die("write", errno);
	wait_for(29);
	drain();
	if (res[29] == -ECANCELED && res[30] == UNSET) {
		printf("cancel_skip_success ok\n");
	} else {
		printf("cancel_skip_success: recv %d, cancel %d\n", res[29], res[30]);
		failed = 1;
	}

	io_uring_queue_exit(&ring);
	printf("%s\n", failed ? "FAILED" : "all ok");
	return failed;
}
