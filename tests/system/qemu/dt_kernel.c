/* SPDX-License-Identifier: MIT */
/* The differential test's kernel target: the real devices through the kernel backend. */
#include <fcntl.h>
#include <stdlib.h>

#include "difftest.h"
#include "ucmd/kernel.h"

static void kclose(struct dt_target *t)
{
	struct ucmd_kernel_nvme *kn = t->priv;

	for (int i = 0; i < t->nr_ns; i++)
		ucmd_kernel_nvme_close(t->e, &kn[i]);
	free(kn);
	ucmd_engine_free(t->e);
}

/* paths: n namespaces of one controller, /dev/ngXnY */
int dt_open_kernel(struct dt_target *t, char *const *paths, int n)
{
	struct ucmd_kernel_nvme *kn = calloc(DT_MAX_NS, sizeof(*kn));
	int ret;

	if (n < 1 || n > DT_MAX_NS)
		return -EINVAL;
	t->e = ucmd_engine_new_kernel();
	if (!t->e || !kn)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		if ((ret = ucmd_kernel_nvme_open(t->e, paths[i], 0, O_RDWR, &kn[i])) < 0)
			return ret;
		t->ns_fd[i] = kn[i].ns_fd;
		t->nsid[i] = kn[i].nsid;
	}
	t->ctrl_fd = kn[0].ctrl_fd;
	t->nr_ns = n;
	t->priv = kn;
	t->close = kclose;
	return 0;
}
