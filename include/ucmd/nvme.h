/* SPDX-License-Identifier: MIT */
/*
 * The NVMe host driver: attaches to an emulated controller (struct
 * ucmd_ctrl) the way nvme-pci attaches to a PCIe function, and registers
 * the devices Linux would create for it on an engine:
 *   nvme<X>     controller character device (NVME_URING_CMD_ADMIN[_VEC])
 *   ng<X>n<Y>   generic namespace character device (NVME_URING_CMD_IO[_VEC])
 *   nvme<X>n<Y> block device (READ/WRITE family)
 *
 * Interrupts: the controller's irq callback is fixed when it is created, so
 * the two are joined by an interrupt line: create the controller with
 * params.irq = ucmd_nvme_irq and params.irq_arg = &line, and pass the same
 * line in opts.irq. Detach disconnects the line, so no interrupt reaches a
 * detached host.
 */
#ifndef UCMD_NVME_H
#define UCMD_NVME_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

struct ucmd_engine;
struct ucmd_ctrl;
struct ucmd_nvme_host;

struct ucmd_nvme_irq_line {
	pthread_rwlock_t lock;
	struct ucmd_nvme_host *host;	/* NULL while nothing is attached */
};

void ucmd_nvme_irq_line_init(struct ucmd_nvme_irq_line *line);
void ucmd_nvme_irq_line_destroy(struct ucmd_nvme_irq_line *line);
/* The controller's irq callback; arg is the struct ucmd_nvme_irq_line. */
void ucmd_nvme_irq(void *arg, uint16_t vector);

struct ucmd_nvme_host_opts {
	unsigned instance;		/* X in nvmeX, ngXnY */
	unsigned nr_io_queues;		/* interrupt-driven queue pairs; 0: 2 */
	unsigned nr_poll_queues;	/* queue pairs without interrupts (IOPOLL) */
	unsigned queue_depth;		/* per I/O queue; 0: 64 */
	struct ucmd_nvme_irq_line *irq;	/* required */
};

/* Enable the controller, create queues, scan namespaces, add the devices. */
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
