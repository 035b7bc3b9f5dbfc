/* SPDX-License-Identifier: MIT */
/*
 * The differential test's emulated target: ucmd's controller, set up like
 * the QEMU device the guest sees (serial, two namespaces of the same sizes
 * and formats, one polled queue), and ucmd's host driver on top. Also the
 * remote one: ucmd's host driver over NVMe/TCP to a controller of that
 * shape exported by a target (ucmdd --nvme-tcp, or Linux's nvmet-tcp).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "difftest.h"
#include "ucmd/ctrl.h"
#include "ucmd/nvme.h"

struct emu {
	struct ucmd_ctrl *ctrl;
	struct ucmd_nvme_host *host;
};

static void eclose(struct dt_target *t)
{
	struct emu *m = t->priv;

	for (int i = 0; i < t->nr_ns; i++)
		ucmd_close(t->e, t->ns_fd[i]);
	ucmd_close(t->e, t->ctrl_fd);
	ucmd_nvme_detach(m->host);
	ucmd_ctrl_destroy(m->ctrl);
	ucmd_engine_free(t->e);
	free(m);
}

int dt_open_emulated(struct dt_target *t)
{
	struct emu *m = calloc(1, sizeof(*m));
	struct ucmd_ctrl_params cp = { .serial = "ucmd0001", .mode = UCMD_CTRL_THREAD };
	struct ucmd_ns_params ns1 = { .nsze = DT_NS1_BLOCKS, .lbaf = 0,
				      .store = UCMD_NS_STORE_RAM, .attach = true };
	struct ucmd_ns_params ns2 = { .nsze = DT_NS2_BLOCKS, .lbaf = 5,	/* 4096+8 */
				      .store = UCMD_NS_STORE_RAM, .attach = true };
	struct ucmd_nvme_host_opts ho = { .instance = 0, .nr_poll_queues = 1 };
	int ret;

	if (!m)
		return -ENOMEM;
	t->e = ucmd_engine_new();
	if (!t->e)
		return -ENOMEM;
	if ((ret = ucmd_ctrl_create(&cp, &m->ctrl)) < 0)
		return ret;
	if ((ret = ucmd_ctrl_ns_create(m->ctrl, &ns1)) < 0 ||
	    (ret = ucmd_ctrl_ns_create(m->ctrl, &ns2)) < 0)
		return ret;
	if ((ret = ucmd_nvme_attach(t->e, m->ctrl, &ho, &m->host)) < 0)
		return ret;
	t->ctrl_fd = ucmd_open(t->e, "nvme0", O_RDWR);
	t->ns_fd[0] = ucmd_open(t->e, "ng0n1", O_RDWR);
	t->ns_fd[1] = ucmd_open(t->e, "ng0n2", O_RDWR);
	if (t->ctrl_fd < 0 || t->ns_fd[0] < 0 || t->ns_fd[1] < 0)
		return -ENOENT;
	t->nsid[0] = 1;
	t->nsid[1] = 2;
	t->nr_ns = 2;
	t->priv = m;
	t->close = eclose;
	return 0;
}

int dt_open_emulated_dir(struct dt_target *t, const char *dir, int n)
{
	struct emu *m = calloc(1, sizeof(*m));
	struct ucmd_ctrl_params cp = { .dir = dir, .mode = UCMD_CTRL_THREAD };
	struct ucmd_nvme_host_opts ho = { .instance = 0, .nr_poll_queues = 1 };
	char name[32];
	int ret;

	if (!m)
		return -ENOMEM;
	t->e = ucmd_engine_new();
	if (!t->e)
		return -ENOMEM;
	if ((ret = ucmd_ctrl_create(&cp, &m->ctrl)) < 0) {
		fprintf(stderr, "difftest: %s\n", ucmd_last_error());
		return ret;
	}
	if ((ret = ucmd_nvme_attach(t->e, m->ctrl, &ho, &m->host)) < 0)
		return ret;
	t->ctrl_fd = ucmd_open(t->e, "nvme0", O_RDWR);
	if (t->ctrl_fd < 0)
		return -ENOENT;
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "ng0n%d", i + 1);
		t->ns_fd[i] = ucmd_open(t->e, name, O_RDWR);
		if (t->ns_fd[i] < 0)
			return -ENOENT;
		t->nsid[i] = (uint32_t)i + 1;
		t->nr_ns = i + 1;
	}
	t->priv = m;
	t->close = eclose;
	return 0;
}

static void tclose(struct dt_target *t)
{
	struct emu *m = t->priv;

	for (int i = 0; i < t->nr_ns; i++)
		ucmd_close(t->e, t->ns_fd[i]);
	ucmd_close(t->e, t->ctrl_fd);
	ucmd_nvme_detach(m->host);
	ucmd_engine_free(t->e);
	free(m);
}

int dt_open_tcp(struct dt_target *t, const char *url)
{
	struct emu *m = calloc(1, sizeof(*m));
	struct ucmd_nvme_host_opts ho = { .instance = 0, .nr_poll_queues = 1 };
	int ret;

	if (!m)
		return -ENOMEM;
	t->e = ucmd_engine_new();
	if (!t->e)
		return -ENOMEM;
	if ((ret = ucmd_nvme_attach_tcp(t->e, url, &ho, NULL, &m->host)) < 0) {
		fprintf(stderr, "difftest: %s\n", ucmd_last_error());
		return ret;
	}
	t->ctrl_fd = ucmd_open(t->e, "nvme0", O_RDWR);
	t->ns_fd[0] = ucmd_open(t->e, "ng0n1", O_RDWR);
	t->ns_fd[1] = ucmd_open(t->e, "ng0n2", O_RDWR);
	if (t->ctrl_fd < 0 || t->ns_fd[0] < 0 || t->ns_fd[1] < 0)
		return -ENOENT;
	t->nsid[0] = 1;
	t->nsid[1] = 2;
	t->nr_ns = 2;
	t->priv = m;
	t->close = tclose;
	return 0;
}
