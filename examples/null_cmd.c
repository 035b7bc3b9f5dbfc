/*
 * The smallest ucmd program: an engine, a ring, and uring_cmds to the null
 * device, which completes each with 0 (the framework's own cost). It needs
 * nothing but the installed headers and the library:
 *   cc null_cmd.c $(pkg-config --cflags --libs ucmd)
 */
#include <fcntl.h>
#include <stdio.h>
#include <ucmd/ucmd.h>

int main(void)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	struct ucmd_ring ring;
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;

	if (!e || ucmd_queue_init_engine(e, 8, &ring, &p))
		return 1;
	int fd = ucmd_open(e, "null", O_RDWR);
	if (fd < 0)
		return 1;

	/* one command, waited for */
	ucmd_prep_uring_cmd(ucmd_get_sqe(&ring), 0, fd);
	ucmd_submit_and_wait(&ring, 1);
	ucmd_wait_cqe(&ring, &cqe);
	printf("null uring_cmd: res %d\n", cqe->res);
	ucmd_cqe_seen(&ring, cqe);

	/* a batch of four, told apart by user_data */
	for (unsigned i = 0; i < 4; i++) {
		struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);

		ucmd_prep_uring_cmd(sqe, 0, fd);
		ucmd_sqe_set_data64(sqe, 100 + i);
	}
	ucmd_submit_and_wait(&ring, 4);
	ucmd_for_each_cqe(&ring, head, cqe) {
		printf("batch: user_data %llu res %d\n",
		       (unsigned long long)ucmd_cqe_get_data64(cqe), cqe->res);
		seen++;
	}
	ucmd_cq_advance(&ring, seen);

	ucmd_queue_exit(&ring);
	ucmd_close(e, fd);
	ucmd_engine_free(e);
	return 0;
}
