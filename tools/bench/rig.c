/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "rig.h"
#include "ucmd/ctrl.h"
#include "ucmd/nvme.h"

struct bench_rig {
	struct ucmd_engine *e;
	struct ucmd_ctrl *ctrl;
	struct ucmd_nvme_host *host;
};

int bench_rig_open(const struct bench_rig_params *p, struct bench_rig **out,
		   struct bench_target *t)
{
	struct bench_rig *r = calloc(1, sizeof(*r));
	unsigned qs = p->nr_io_queues + p->nr_poll_queues;
	unsigned depth = p->queue_depth ? p->queue_depth : 64;
	int ret, nsid;

	if (!r)
		return -ENOMEM;
	ret = ucmd_engine_create(&r->e);
	if (ret)
		goto fail;
	struct ucmd_ctrl_params cp = {
		.mode = p->thread_mode ? UCMD_CTRL_THREAD : UCMD_CTRL_INLINE,
		.db_trap = p->db_trap,
		.max_io_queues = (uint16_t)(qs > 2 ? qs : 2),
		/* the queue holds depth commands plus the slot that tells full from empty */
		.mqes = (uint16_t)(depth < 1023 ? 1023 : depth),
		.fdp = { .enable = p->fdp },
	};
	ret = ucmd_ctrl_create(&cp, &r->ctrl);
	if (ret)
		goto fail;
	struct ucmd_ns_params np = {
		.nsze = p->bytes / p->lba_size,
		.lbaf = p->lba_size == 4096 ? 4 : 0,
		.store = UCMD_NS_STORE_RAM,
		.attach = true,
	};
	nsid = ucmd_ctrl_ns_create(r->ctrl, &np);
	if (nsid < 0) {
		ret = nsid;
		goto fail;
	}
	struct ucmd_nvme_host_opts ho = {
		.instance = 0,
		.nr_io_queues = p->nr_io_queues ? p->nr_io_queues : 1,
		.nr_poll_queues = p->nr_poll_queues,
		.queue_depth = depth,
	};
	ret = ucmd_nvme_attach(r->e, r->ctrl, &ho, &r->host);
	if (ret)
		goto fail;
	*t = (struct bench_target){
		.engine = r->e, .nsid = (uint32_t)nsid, .lba_size = p->lba_size,
		.nsze = np.nsze,
	};
	snprintf(t->ng, sizeof(t->ng), "ng0n%d", nsid);
	snprintf(t->bdev, sizeof(t->bdev), "nvme0n%d", nsid);
	*out = r;
	return 0;
fail:
	bench_rig_close(r);
	return ret;
}

void bench_rig_close(struct bench_rig *r)
{
	if (!r)
		return;
	if (r->host)
		ucmd_nvme_detach(r->host);
	if (r->ctrl)
		ucmd_ctrl_destroy(r->ctrl);
	if (r->e)
		ucmd_engine_free(r->e);
	free(r);
}

void bench_rig_stats(struct bench_rig *r, uint64_t *doorbells, uint64_t *wakeups,
		     uint64_t *commands)
{
	struct ucmd_ctrl_stats st;

	ucmd_ctrl_get_stats(r->ctrl, &st);
	*doorbells = st.doorbells;
	*wakeups = st.wakeups;
	*commands = st.commands;
}
