/* SPDX-License-Identifier: MIT */
/*
 * The multipath sequence on ucmd's side: the subsystem of a directory made
 * by create-ctrl --controllers 2, under ucmd's multipath host (head ng0n1,
 * paths nvme0 and nvme1), as ucmdd and the CLI attach it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_subsys.h"
#include "ucmd/ctrl.h"
#include "ucmd/nvme.h"

struct emu_mp {
	struct ucmd_ctrl *ctrl;
	struct ucmd_nvme_subsys *s;
};

static const struct ucmd_nvme_host_opts host_opts = { .instance = 0, .nr_poll_queues = 1 };

static void head_down(struct dt_mp *m)
{
	struct emu_mp *p = m->priv;

	if (!p->s)
		return;
	ucmd_close(m->e, m->head_fd);
	for (unsigned i = 0; i < DT_MP_PATHS; i++)
		ucmd_close(m->e, m->ctrl_fd[i]);
	ucmd_nvme_subsys_detach(p->s);
	p->s = NULL;
}

/*
 * Written before ucmd's engine served NVME_IOCTL_IO_CMD on a controller's
 * device, and kept, as the kernel's results compared with it are: the
 * head goes, and controller i is attached alone, its namespace 1 read
 * through its own ng0n1 (the same command, on that controller only).
 */
static int epath_io(struct dt_mp *m, unsigned i, struct nvme_passthru_cmd *c, uint32_t *result)
{
	struct emu_mp *p = m->priv;
	struct ucmd_ctrl *ctrl = ucmd_ctrl_controller(p->ctrl, i);
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_nvme_host *host = NULL;
	struct nvme_passthru_cmd64 c64;
	int fd, ret;

	head_down(m);
	*result = 0;
	if (!ctrl || !e)
		return -ENODEV;
	ret = ucmd_nvme_attach(e, ctrl, &host_opts, &host);
	if (ret < 0) {
		fprintf(stderr, "difftest: controller %u alone: %s\n", i, ucmd_last_error());
		ucmd_engine_free(e);
		return ret;
	}
	fd = ucmd_open(e, "ng0n1", O_RDWR);
	if (fd < 0) {
		ret = fd;
	} else {
		memset(&c64, 0, sizeof(c64));
		c64.opcode = c->opcode;
		c64.nsid = c->nsid;
		c64.addr = c->addr;
		c64.data_len = c->data_len;
		c64.cdw10 = c->cdw10;
		c64.cdw11 = c->cdw11;
		c64.cdw12 = c->cdw12;
		ret = ucmd_ioctl(e, fd, NVME_IOCTL_IO64_CMD, &c64);
		*result = (uint32_t)c64.result;
		ucmd_close(e, fd);
	}
	ucmd_nvme_detach(host);
	ucmd_engine_free(e);
	return ret;
}

static void eclose_mp(struct dt_mp *m)
{
	struct emu_mp *p = m->priv;

	head_down(m);
	ucmd_ctrl_destroy(p->ctrl);
	ucmd_engine_free(m->e);
	free(p);
}

int dt_open_emulated_mp(struct dt_mp *m, const char *dir)
{
	struct ucmd_ctrl_params cp = { .dir = dir, .mode = UCMD_CTRL_THREAD };
	struct emu_mp *p = calloc(1, sizeof(*p));
	char name[32];
	int ret;

	if (!p)
		return -ENOMEM;
	m->e = ucmd_engine_new();
	if (!m->e)
		return -ENOMEM;
	if ((ret = ucmd_ctrl_create(&cp, &p->ctrl)) < 0 ||
	    (ret = ucmd_nvme_attach_multipath(m->e, p->ctrl, &host_opts, &p->s)) < 0) {
		fprintf(stderr, "difftest: %s\n", ucmd_last_error());
		return ret;
	}
	m->head_fd = ucmd_open(m->e, "ng0n1", O_RDWR);
	for (unsigned i = 0; i < DT_MP_PATHS; i++) {
		snprintf(name, sizeof(name), "nvme%u", i);
		m->ctrl_fd[i] = ucmd_open(m->e, name, O_RDWR);
		if (m->ctrl_fd[i] < 0)
			return -ENOENT;
	}
	if (m->head_fd < 0)
		return -ENOENT;
	m->nsid = 1;
	m->path_io = epath_io;
	m->close = eclose_mp;
	m->priv = p;
	return 0;
}
