/* SPDX-License-Identifier: MIT */
/* The differential test's kernel target: the real devices through the kernel backend. */
#include <fcntl.h>
#include <stdlib.h>

#include "difftest.h"
#include "ucmd/kernel.h"

static void kclose(struct dt_target *t)
{
	struct ucmd_kernel_nvme *kn = t->priv;

	ucmd_kernel_nvme_close(t->e, &kn[0]);
	ucmd_kernel_nvme_close(t->e, &kn[1]);
	free(kn);
	ucmd_engine_free(t->e);
}

int dt_open_kernel(struct dt_target *t, const char *ns1, const char *ns2)
{
	struct ucmd_kernel_nvme *kn = calloc(2, sizeof(*kn));
	int ret;

	t->e = ucmd_engine_new_kernel();
	if (!t->e || !kn)
		return -ENOMEM;
	ret = ucmd_kernel_nvme_open(t->e, ns1, 0, O_RDWR, &kn[0]);
	if (!ret)
		ret = ucmd_kernel_nvme_open(t->e, ns2, 0, O_RDWR, &kn[1]);
	if (ret)
		return ret;
	t->ctrl_fd = kn[0].ctrl_fd;
	t->ns_fd[0] = kn[0].ns_fd;
	t->ns_fd[1] = kn[1].ns_fd;
	t->nsid[0] = kn[0].nsid;
	t->nsid[1] = kn[1].nsid;
	t->priv = kn;
	t->close = kclose;
	return 0;
}
