/* SPDX-License-Identifier: MIT */
/*
 * The kernel backend: ucmd's API on a real Linux device. An engine made by
 * ucmd_engine_new_kernel() opens devices with open(2) ("ng0n1" means
 * "/dev/ng0n1"; absolute paths are taken as they are) and its rings are real
 * io_urings set up by liburing. The ring memory has the same layout as
 * ucmd's, so ucmd_get_sqe(), ucmd_for_each_cqe() and friends work unchanged;
 * ucmd_enter() and the registration calls go to the kernel.
 *
 * ucmd's own security hooks do not run on kernel rings: the kernel's own
 * checks (nvme_cmd_allowed(), LSMs) decide there.
 */
#ifndef UCMD_KERNEL_H
#define UCMD_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "ucmd/ucmd.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/*
 * A kernel engine into *out: 0 or -errno, the reason in ucmd_last_error().
 * ucmd_engine_new_kernel() is the same returning NULL on failure.
 */
int ucmd_engine_create_kernel(struct ucmd_engine **out);
struct ucmd_engine *ucmd_engine_new_kernel(void);
bool ucmd_engine_is_kernel(const struct ucmd_engine *e);

/* A controller and one of its namespaces, opened for passthrough. */
struct ucmd_kernel_nvme {
	int ctrl_fd;		/* /dev/nvmeX (NVME_URING_CMD_ADMIN) */
	int ns_fd;		/* /dev/ngXnY (NVME_URING_CMD_IO); -1 if none */
	uint32_t nsid;		/* Y, as the kernel reports it (NVME_IOCTL_ID) */
	char ctrl_path[64];
	char ns_path[64];
};

/*
 * Open what a command line names: a namespace ("/dev/ngXnY", or the block
 * device "/dev/nvmeXnY", whose generic twin ngXnY is used) together with its
 * controller, or a controller ("/dev/nvmeX") with namespace nsid (0: 1).
 * For a namespace path, nsid must be 0 or match. Returns 0 or -errno;
 * release with ucmd_kernel_nvme_close().
 */
int ucmd_kernel_nvme_open(struct ucmd_engine *e, const char *path, uint32_t nsid, int flags,
			  struct ucmd_kernel_nvme *out);
void ucmd_kernel_nvme_close(struct ucmd_engine *e, struct ucmd_kernel_nvme *kn);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* UCMD_KERNEL_H */
