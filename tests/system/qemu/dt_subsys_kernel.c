/* SPDX-License-Identifier: MIT */
/* The multipath sequence on Linux's devices, through the kernel backend. */
#include <fcntl.h>

#include "dt_subsys.h"
#include "ucmd/kernel.h"

/* Linux's nvme_dev_user_cmd: the controller's only namespace, on that controller */
static int kpath_io(struct dt_mp *m, unsigned i, struct nvme_passthru_cmd *c, uint32_t *result)
{
	int ret = ucmd_ioctl(m->e, m->ctrl_fd[i], NVME_IOCTL_IO_CMD, c);

	*result = c->result;
	return ret;
}

static void kclose_mp(struct dt_mp *m)
{
	ucmd_close(m->e, m->head_fd);
	for (unsigned i = 0; i < DT_MP_PATHS; i++)
		ucmd_close(m->e, m->ctrl_fd[i]);
	ucmd_engine_free(m->e);
}

int dt_open_kernel_mp(struct dt_mp *m, const char *head, char *const *ctrls)
{
	int ret;

	m->e = ucmd_engine_new_kernel();
	if (!m->e)
		return -ENOMEM;
	m->head_fd = ucmd_open(m->e, head, O_RDWR);
	if (m->head_fd < 0)
		return m->head_fd;
	for (unsigned i = 0; i < DT_MP_PATHS; i++) {
		m->ctrl_fd[i] = ucmd_open(m->e, ctrls[i], O_RDWR);
		if (m->ctrl_fd[i] < 0)
			return m->ctrl_fd[i];
	}
	ret = ucmd_ioctl(m->e, m->head_fd, NVME_IOCTL_ID, NULL);
	if (ret <= 0)
		return ret < 0 ? ret : -ENODEV;
	m->nsid = (uint32_t)ret;
	m->path_io = kpath_io;
	m->close = kclose_mp;
	return 0;
}
