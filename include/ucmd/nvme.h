/* SPDX-License-Identifier: MIT */
/*
 * The NVMe host driver: attaches to an emulated controller (struct
 * ucmd_ctrl) the way nvme-pci attaches to a PCIe function, and registers
 * the devices Linux would create for it on an engine:
 *   nvme<X>     controller character device (NVME_URING_CMD_ADMIN[_VEC])
 *   ng<X>n<Y>   generic namespace character device (NVME_URING_CMD_IO[_VEC])
 *   nvme<X>n<Y> block device (READ/WRITE family)
 *
 * Interrupts: attach makes the host its controller's interrupt target, and
 * detach disconnects it, so no interrupt reaches a detached host. A
 * controller has one host at a time.
 *
 * Lifetime: detach every host before destroying its controller or engine.
 * Errors are negative errno values; ucmd_nvme_attach() also leaves the
 * reason in ucmd_last_error().
 */
#ifndef UCMD_NVME_H
#define UCMD_NVME_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

struct ucmd_engine;
struct ucmd_ctrl;
struct ucmd_nvme_host;

struct ucmd_nvme_host_opts {
	unsigned instance;		/* X in nvmeX, ngXnY */
	unsigned nr_io_queues;		/* interrupt-driven queue pairs; 0: 2 */
	unsigned nr_poll_queues;	/* queue pairs without interrupts (IOPOLL) */
	unsigned queue_depth;		/* per I/O queue; 0: 64 */
};

/*
 * Enable the controller, create queues, scan namespaces, add the devices;
 * *out is the host until ucmd_nvme_detach(). opts NULL: all defaults
 * (instance 0). -EINVAL for a NULL e, ctrl or out,
 * -EBUSY when the controller already has a host, -EEXIST when the engine
 * already has devices of that instance, or the error of bring-up.
 */
int  ucmd_nvme_attach(struct ucmd_engine *e, struct ucmd_ctrl *ctrl,
		      const struct ucmd_nvme_host_opts *opts, struct ucmd_nvme_host **out);
/* Remove the devices, cancel what is in flight, disable the controller. */
void ucmd_nvme_detach(struct ucmd_nvme_host *host);

/* Statistics of I/O queue qid (1-based) for tests: dispatched requests and batches. */
int ucmd_nvme_queue_stats(struct ucmd_nvme_host *host, unsigned qid, unsigned long *dispatched,
			  unsigned long *batches);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif /* UCMD_NVME_H */
