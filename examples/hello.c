#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucmd/ctrl.h>
#include <ucmd/nvme.h>
#include <ucmd/ucmd.h>

int main(void)
{
	struct ucmd_engine *e;
	struct ucmd_ctrl *ctrl;
	struct ucmd_nvme_host *host;
	struct ucmd_ring ring;
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct io_uring_cqe *cqe;

	/* an emulated controller with a 64 MiB RAM namespace, and its driver */
	struct ucmd_ctrl_params cp = { .mode = UCMD_CTRL_INLINE };
	struct ucmd_ns_params np = { .nsze = 131072, .store = UCMD_NS_STORE_RAM, .attach = true };
	if (ucmd_engine_create(&e) || ucmd_ctrl_create(&cp, &ctrl) ||
	    ucmd_ctrl_ns_create(ctrl, &np) < 0 || ucmd_nvme_attach(e, ctrl, NULL, &host) ||
	    ucmd_queue_init_engine(e, 8, &ring, &p)) {
		fprintf(stderr, "setup: %s\n", ucmd_last_error());
		return 1;
	}

	/* the framework's own cost: uring_cmd on the null device */
	int null_fd = ucmd_open(e, "null", O_RDWR);
	ucmd_prep_uring_cmd(ucmd_get_sqe(&ring), 0, null_fd);
	ucmd_submit_and_wait(&ring, 1);
	ucmd_wait_cqe(&ring, &cqe);
	printf("null uring_cmd: res %d\n", cqe->res);
	ucmd_cqe_seen(&ring, cqe);

	/* NVMe Read of LBA 0 through the generic namespace device ng0n1 */
	int ng = ucmd_open(e, "ng0n1", O_RDWR);
	void *buf = aligned_alloc(4096, 4096);	/* C11: size a multiple of the alignment */
	struct nvme_uring_cmd cmd = {
		.opcode = 0x02, .nsid = 1, .addr = (unsigned long)buf, .data_len = 512,
	};
	ucmd_prep_nvme_cmd(ucmd_get_sqe(&ring), ng, NVME_URING_CMD_IO, &cmd);
	ucmd_submit_and_wait(&ring, 1);
	ucmd_wait_cqe(&ring, &cqe);
	printf("nvme read: res %d (NVMe status or -errno), result %llu\n", cqe->res,
	       (unsigned long long)cqe->big_cqe[0]);
	ucmd_cqe_seen(&ring, cqe);

	/* the same read, synchronously: ioctl(2)'s NVME_IOCTL_IO64_CMD */
	struct nvme_passthru_cmd64 sync = {
		.opcode = 0x02, .nsid = 1, .addr = (unsigned long)buf, .data_len = 512,
	};
	printf("nvme ioctl read: %d\n", ucmd_ioctl(e, ng, NVME_IOCTL_IO64_CMD, &sync));

	ucmd_queue_exit(&ring);
	ucmd_close(e, ng);
	ucmd_close(e, null_fd);
	ucmd_nvme_detach(host);
	ucmd_ctrl_destroy(ctrl);
	ucmd_engine_free(e);
	free(buf);
	return 0;
}
