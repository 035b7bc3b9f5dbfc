// SPDX-License-Identifier: MIT
// The public headers compile as C++ (extern "C", no C-only constructs in the
// inline helpers), and the helpers do the same there.
#include <fcntl.h>
#include <cstdio>
#include <ucmd/ucmd.h>
#include <ucmd/kernel.h>

int main()
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring ring;
	struct io_uring_params p = {};
	struct io_uring_cqe *cqe;
	struct nvme_uring_cmd cmd = {};

	if (!e || ucmd_queue_init_engine(e, 4, &ring, &p) != 0)
		return 1;
	int fd = ucmd_open(e, "null", O_RDWR);
	struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);
	if (fd < 0 || !sqe)
		return 2;
	if (ucmd_prep_cmd(&ring, sqe, 0, fd, &cmd, 16) != 0 ||
	    ucmd_prep_cmd(&ring, sqe, 0, fd, &cmd, 17) != -EINVAL)
		return 3;
	ucmd_sqe_set_data64(sqe, 7);
	if (ucmd_submit_and_wait(&ring, 1) != 1 || ucmd_peek_cqe(&ring, &cqe) != 0)
		return 4;
	int ok = cqe->user_data == 7 && cqe->res == 0;
	ucmd_cqe_seen(&ring, cqe);
	ucmd_queue_exit(&ring);
	ucmd_close(e, fd);
	ucmd_engine_free(e);
	if (!ok)
		std::fprintf(stderr, "C++: null uring_cmd did not complete with 0\n");
	return ok ? 0 : 5;
}
