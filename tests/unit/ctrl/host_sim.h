/* SPDX-License-Identifier: MIT */
/*
 * A minimal NVMe host for controller tests: enables the controller, owns
 * the admin and I/O queues in (identity-mapped) host memory and submits
 * commands the way nvme-pci does, without any of the ucmd host layers.
 */
#ifndef UCMD_TEST_HOST_SIM_H
#define UCMD_TEST_HOST_SIM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "nvme/ctrl/ctrl.h"

#define HOST_MAX_Q	8
#define HOST_ADMIN_QD	32

struct host_q {
	bool live;
	uint16_t qid;
	uint32_t size;
	struct ucmd_nvme_sqe *sq;
	struct ucmd_nvme_cqe *cq;
	uint32_t sq_tail, cq_head;
	uint8_t phase;
	uint16_t next_cid;
	bool auto_ack;		/* write the CQ head doorbell after each pop */
	/* completions host_cmd saw while waiting for another CID */
	struct ucmd_nvme_cqe stash[64];
	unsigned nstash;
};

/* The DMA interface of the next host_create() (then reset); NULL: identity. */
extern const struct ucmd_dma *host_next_dma;

struct host {
	struct ucmd_ctrl *ctrl;
	struct ucmd_ctrl_params params;
	struct host_q q[HOST_MAX_Q];
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t irqs;
	uint64_t irq_vectors;	/* bit per vector seen */
	void **allocs;
	unsigned nallocs, cap_allocs;
};

/* Default params (inline mode, 4 I/O queues, MQES 255) */
void host_default_params(struct ucmd_ctrl_params *p);
/* Create the controller and enable it with a HOST_ADMIN_QD admin queue */
int  host_open(struct host *h, const struct ucmd_ctrl_params *p);
/* Only create the controller (register tests) */
int  host_create(struct host *h, const struct ucmd_ctrl_params *p);
int  host_enable(struct host *h, uint32_t qd);
void host_disable(struct host *h);
void host_close(struct host *h);

/* Page-aligned zeroed memory freed by host_close */
void *host_alloc(struct host *h, size_t len);

/* Create I/O CQ+SQ pair qid; returns the NVMe status of the failing command */
uint16_t host_create_io_queue(struct host *h, uint16_t qid, uint32_t size, bool ien,
			      uint16_t vector);

/* Fill PRP1/PRP2 (allocating PRP lists) for a buffer */
void host_set_prp(struct host *h, struct ucmd_nvme_sqe *sqe, void *buf, size_t len);

/* Queue an SQE without ringing (assigns the CID unless keep_cid); returns the CID */
uint16_t host_push(struct host *h, uint16_t qid, struct ucmd_nvme_sqe *sqe);
void host_ring(struct host *h, uint16_t qid);
/* Take one CQE if present */
bool host_pop(struct host *h, uint16_t qid, struct ucmd_nvme_cqe *cqe);
/* Wait (bounded) for one CQE */
bool host_wait(struct host *h, uint16_t qid, struct ucmd_nvme_cqe *cqe);
void host_ack(struct host *h, uint16_t qid);

/* Submit one command and wait for its completion; returns status (SCT<<8|SC|DNR...) */
uint16_t host_cmd(struct host *h, uint16_t qid, struct ucmd_nvme_sqe *sqe, struct ucmd_nvme_cqe *out);

/* Convenience: admin commands with a 4 KiB data buffer */
uint16_t host_identify(struct host *h, uint8_t cns, uint32_t nsid, uint8_t csi, void *buf4k);
uint16_t host_get_log(struct host *h, uint8_t lid, uint32_t nsid, void *buf, uint32_t len);
uint16_t host_set_feature(struct host *h, uint8_t fid, uint32_t cdw11, bool save, uint32_t *dw0);
uint16_t host_get_feature(struct host *h, uint8_t fid, uint8_t sel, uint32_t cdw11, uint32_t *dw0);

/* Block I/O with PRPs on queue 1: data buffer as the namespace's host layout */
uint16_t host_io(struct host *h, uint8_t opcode, uint32_t nsid, uint64_t slba, uint32_t nlb,
		 void *buf, size_t len, void *meta, uint32_t cdw12_flags);

/* host_open + one namespace from nsp (RAM unless told) + I/O queue 1 (64 entries, vector 1) */
uint32_t host_open_ns(struct host *h, const struct ucmd_ctrl_params *p,
		      const struct ucmd_ns_params *nsp);
/* Fill a buffer with a pattern derived from seed */
void fill_pattern(void *buf, size_t len, unsigned seed);
/* A whole file, NUL-terminated (the caller frees it), its length in *len */
char *slurp(const char *path, size_t *len);
/* Remove a controller directory and everything in it (a test's own, made by mkdtemp) */
int host_rmdir(const char *dir);

#endif
