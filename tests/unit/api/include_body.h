/* SPDX-License-Identifier: MIT */
/*
 * The body shared by test_include_before.c and test_include_after.c: liburing's
 * inline SQE helpers (with the (__u64) casts user code writes) and ucmd's on
 * one ring of the native engine, run against its null device. Included after
 * <ucmd/ucmd.h> and <liburing.h>, in whichever order the including file chose.
 */
#include <stdio.h>

static int include_order_run(void)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring ring;
	struct io_uring_cqe *cqe;
	char buf[64];
	int fd, ret, seen = 0;

	if (!e)
		return 1;
	ret = ucmd_queue_init_engine(e, 8, &ring, &(struct io_uring_params){ 0 });
	fd = ucmd_open(e, "null", O_RDWR);
	if (ret || fd < 0)
		return 2;
	/* liburing's helper on ucmd's SQE: the same struct */
	io_uring_prep_read(ucmd_get_sqe(&ring), fd, buf, sizeof(buf), (__u64)0);
	io_uring_sqe_set_data64(ring.sq.sqes, (__u64)1);
	ucmd_prep_write(ucmd_get_sqe(&ring), fd, buf, sizeof(buf), (__u64)0);
	ucmd_sqe_set_data64(&ring.sq.sqes[1], 2);
	if (ucmd_submit_and_wait(&ring, 2) != 2)
		return 3;
	while (seen < 2 && ucmd_peek_cqe(&ring, &cqe) == 0) {
		/* /dev/null: a read sees end of file, a write succeeds whole */
		if (io_uring_cqe_get_data64(cqe) == 1 && cqe->res != 0)
			return 4;
		if (cqe->user_data == 2 && cqe->res != (int)sizeof(buf))
			return 5;
		ucmd_cqe_seen(&ring, cqe);
		seen++;
	}
	ucmd_queue_exit(&ring);
	ucmd_close(e, fd);
	ucmd_engine_free(e);
	return seen == 2 ? 0 : 6;
}
