// SPDX-License-Identifier: MIT
/*
 * IORING_REGISTER_PERSONALITY on SQEs that are the program's own (under
 * `ucmd exec`, run on the preload's kernel ring, src/preload/uring_own.c):
 *
 *   uring_personality     (as root, with CAP_NET_RAW; exit 77 without)
 *
 * Registers root's credentials as a personality, drops to uid/gid 65534,
 * then asks the ring for a raw socket (IORING_OP_SOCKET, which needs
 * CAP_NET_RAW when it runs): without the personality -EPERM; with it a
 * socket, as Linux runs it as the registered credentials; with an id never
 * registered, or unregistered since, -EINVAL (Linux's answer). A STATX,
 * which the preload runs itself as the calling thread, with a personality:
 * -EOPNOTSUPP (ucmd's, docs/compat.md), never run as the wrong one. Under
 * ucmd before, the id went to the kernel ring unchanged (-EINVAL there)
 * and the STATX ran as the thread. Prints one line per check and "all ok";
 * exit 1 on a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static struct io_uring ring;
static int failed;

/* one SQE, submitted alone: its CQE's res */
static int run(struct io_uring_sqe *sqe, unsigned short pers)
{
	struct io_uring_cqe *cqe;
	int res;

	sqe->personality = pers;
	sqe->user_data = 7;
	if (io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe)) {
		printf("submit or wait failed\n");
		_exit(1);
	}
	res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	return res;
}

static int raw_socket(unsigned short pers)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

	io_uring_prep_socket(sqe, AF_INET, SOCK_RAW, IPPROTO_ICMP, 0);
	return run(sqe, pers);
}

static void check(const char *name, int ok, int res)
{
	printf(ok ? "%s ok\n" : "%s: res %d\n", name, res);
	failed |= !ok;
}

int main(void)
{
	struct statx stx;
	struct io_uring_sqe *sqe;
	int fd, id, res;

	fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	if (fd < 0) {
		printf("skip: no raw socket as root (%s)\n", strerror(errno));
		return 77;
	}
	close(fd);
	if (io_uring_queue_init(8, &ring, 0)) {
		printf("queue_init failed\n");
		return 1;
	}
	id = io_uring_register_personality(&ring);
	check("register", id > 0, id);
	if (id <= 0)
		return 1;
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534)) {
		printf("drop: %s\n", strerror(errno));
		return 1;
	}
	res = raw_socket(0);
	check("as_submitter_eperm", res == -EPERM, res);
	res = raw_socket((unsigned short)id);
	check("as_personality", res >= 0, res);
	if (res >= 0)
		close(res);
	res = raw_socket((unsigned short)(id + 1));
	check("unknown_personality", res == -EINVAL, res);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_statx(sqe, AT_FDCWD, "/", 0, STATX_TYPE, &stx);
	res = run(sqe, (unsigned short)id);
	check("local_refused", res == -EOPNOTSUPP, res);
	res = io_uring_unregister_personality(&ring, id);
	check("unregister", res == 0, res);
	res = raw_socket((unsigned short)id);
	check("unregistered_personality", res == -EINVAL, res);
	if (failed)
		return 1;
	printf("all ok\n");
	io_uring_queue_exit(&ring);
	return 0;
}
