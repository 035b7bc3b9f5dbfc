/* SPDX-License-Identifier: MIT */
/*
 * nvme-fabrics for the host, whatever the transport (Linux's
 * nvme-fabrics.h): the options of a connection to a remote controller,
 * parsed from its URL, and what fabrics.c keeps for a controller (its
 * controller ID, the keep-alive). A fabrics transport's controller holds a
 * struct nvmf_ctrl beside its struct nvme_host (tcp.h).
 */
#ifndef UCMD_NVME_HOST_FABRICS_H
#define UCMD_NVME_HOST_FABRICS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "host.h"

#define NVMF_NQN_MAX			(NVMF_NQN_SIZE + 1)
#define NVMF_DEFAULT_KATO_MS		5000u	/* Linux's NVME_DEFAULT_KATO, 5 s */
/* Linux's nvme-fabrics defaults: reconnect every 10 s, give up after 600 s */
#define NVMF_DEFAULT_RECONNECT_MS	10000u
#define NVMF_DEFAULT_CTRL_LOSS_MS	600000
/*
 * Linux's deadlines: admin commands (Connect on the admin queue included)
 * within 60 s (nvme_core.admin_timeout), I/O commands and an I/O queue's
 * Connect within 30 s (nvme_core.io_timeout)
 */
#define NVMF_DEFAULT_ADMIN_MS		60000u
#define NVMF_DEFAULT_IO_MS		30000u

/* Linux's struct nvmf_ctrl_options, the part ucmd uses. */
struct nvmf_ctrl_options {
	char traddr[256];		/* host name or address ([v6] without brackets) */
	char trsvcid[16];		/* port */
	char subsysnqn[NVMF_NQN_MAX];
	char hostnqn[NVMF_NQN_MAX];
	uint8_t hostid[16];
	bool hdr_digest, data_digest;	/* asked for (transports with digests) */
	uint32_t kato_ms;
	uint32_t reconnect_delay_ms;
	int64_t ctrl_loss_tmo_ms;	/* -1: forever; 0: never reconnect */
	/* the deadline for the transport's connection handshake (TCP: ICResp) */
	uint32_t handshake_tmo_ms;
	uint32_t admin_tmo_ms, io_tmo_ms;
	int iopolicy;			/* a path list's: enum nvme_iopolicy + 1; 0: not given */
};

/* What fabrics.c keeps for one controller. */
struct nvmf_ctrl {
	struct nvme_host *host;
	struct nvmf_ctrl_options opts;
	uint16_t cntlid;		/* from the admin queue's Connect */
	/* keep-alive: a thread sending Keep Alive every KATO/2 */
	pthread_t ka_thread;
	bool ka_started, ka_stop;
	pthread_mutex_t ka_lock;
	pthread_cond_t ka_cond;
	atomic_ulong ka_sent;
};

/*
 * "nvme-tcp://HOST[:PORT]/SUBNQN[?OPTION[&OPTION...]]" into o: host
 * ([v6] allowed), port (default_port if none), subsystem NQN, options.
 * 0 or -EINVAL (with the reason in *why).
 */
int nvmf_parse_url(struct nvmf_ctrl_options *o, const char *url, unsigned default_port,
		   const char **why);
/* The host NQN and host ID: given, else /etc/nvme/hostnqn|hostid, else generated. */
int nvmf_host_identity(struct nvmf_ctrl_options *o, const char *hostnqn, const char *hostid);
/*
 * The Connect SQE and its data for queue qid (cntlid 0xffff for the admin
 * queue), with attributes cattr (NVMF_CONNECT_DISABLE_SQFLOW).
 */
void nvmf_build_connect(const struct nvmf_ctrl *f, uint16_t qid, uint16_t sqsize, uint8_t cattr,
			struct ucmd_nvme_sqe *sqe, struct nvmf_connect_data *data);
/* The registers as Property Get/Set on the admin queue (Linux's nvmf_reg_*). */
int  nvmf_reg_read32(struct nvme_host *h, uint32_t off, uint32_t *val);
int  nvmf_reg_read64(struct nvme_host *h, uint32_t off, uint64_t *val);
int  nvmf_reg_write32(struct nvme_host *h, uint32_t off, uint32_t val);
int  nvmf_start_keep_alive(struct nvmf_ctrl *f);
void nvmf_stop_keep_alive(struct nvmf_ctrl *f);

#endif
