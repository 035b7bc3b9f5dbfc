/* SPDX-License-Identifier: MIT */
/* The benches' in-process controller directories (dirctrl.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "dirctrl.h"

void dirctrl_target(struct bench_target *t, struct ucmd_engine *e, uint64_t size)
{
	*t = (struct bench_target){ .engine = e, .ng = "ng0n1", .bdev = "/dev/nvme0n1",
				    .nsid = 1, .lba_size = 4096, .nsze = size / 4096 };
}

static int dirctrl_create(struct dirctrl *c, const char *dir, uint64_t size, const char **what)
{
	struct ucmd_ctrl_params cp = { .dir = dir };
	struct ucmd_ns_params np = {
		.nsze = size / 4096, .lbaf = 4, .store = UCMD_NS_STORE_FILE, .attach = true,
	};
	int ret;

	if (mkdir(dir, 0700)) {
		*what = dir;
		return -errno;
	}
	if ((ret = ucmd_engine_create(&c->e))) {
		*what = "engine";
		return ret;
	}
	if ((ret = ucmd_ctrl_create(&cp, &c->ctrl))) {
		*what = ucmd_last_error();
		return ret;
	}
	if ((ret = ucmd_ctrl_ns_create(c->ctrl, &np)) < 0) {
		*what = "namespace";
		return ret;
	}
	if ((ret = ucmd_nvme_attach(c->e, c->ctrl, NULL, &c->host))) {
		*what = "attach";
		return ret;
	}
	dirctrl_target(&c->t, c->e, size);
	if ((ret = bench_fill(&c->t, size))) {
		*what = "filling the namespace";
		return ret;
	}
	return 0;
}

int dirctrl_twins(const char *top, uint64_t size, char *ddir, size_t len, struct dirctrl *twin,
		  const char **what)
{
	struct dirctrl prep = { 0 };
	char fdir[PATH_MAX];
	int ret;

	snprintf(ddir, len, "%s/ctrl-daemon", top);
	snprintf(fdir, sizeof(fdir), "%s/ctrl-inproc", top);
	ret = dirctrl_create(&prep, ddir, size, what);
	dirctrl_close(&prep);
	return ret ? ret : dirctrl_create(twin, fdir, size, what);
}

void dirctrl_close(struct dirctrl *c)
{
	if (c->host)
		ucmd_nvme_detach(c->host);
	if (c->ctrl)
		ucmd_ctrl_destroy(c->ctrl);
	if (c->e)
		ucmd_engine_free(c->e);
	memset(c, 0, sizeof(*c));
}
