/* SPDX-License-Identifier: MIT */
/*
 * The controllers of an emulated NVM subsystem (a controller directory
 * made with several: ucmd_ctrl_controllers()) as paths of one subsystem:
 * each attached as a PCI function of its own with its namespaces hidden,
 * and multipath.c makes the heads, as Linux does for a dual-ported SSD.
 */
#include <stdio.h>
#include <string.h>

#include "lib/error.h"
#include "multipath.h"
#include "ucmd/ucmd.h"

int ucmd_nvme_attach_multipath(struct ucmd_engine *e, struct ucmd_ctrl *ctrl,
			       const struct ucmd_nvme_host_opts *opts,
			       struct ucmd_nvme_subsys **out)
{
	static const char fn[] = "ucmd_nvme_attach_multipath";
	struct nvme_host *paths[NVME_MPATH_MAX_PATHS] = { 0 };
	struct ucmd_nvme_host_opts ho = { 0 };
	struct nvme_subsys *s = NULL;
	unsigned nr, done = 0;
	int ret = 0;

	last_error_clear();
	if (!e || !ctrl || !out)
		return last_error_set(-EINVAL, "%s: %s is NULL", fn,
				      !e ? "the engine" : !ctrl ? "the controller" : "out");
	nr = ucmd_ctrl_controllers(ctrl);
	if (nr > NVME_MPATH_MAX_PATHS)
		return last_error_set(-EINVAL, "%s: %u controllers (at most %u paths)", fn, nr,
				      NVME_MPATH_MAX_PATHS);
	if (opts)
		ho = *opts;
	for (; done < nr; done++) {
		char why[256];

		ho.instance = (opts ? opts->instance : 0) + done;
		ret = nvme_pci_attach(e, ucmd_ctrl_controller(ctrl, done), &ho, true,
				      (struct ucmd_nvme_host **)&paths[done]);
		if (ret) {
			snprintf(why, sizeof(why), "%s", ucmd_last_error());
			last_error_set(ret, "%s: controller %u: %s", fn, done + 1, why);
			goto out;
		}
	}
	ret = nvme_mpath_create(e, paths, nr, NVME_IOPOLICY_NUMA, &s);
	if (ret) {
		last_error_set(ret, "%s: making the namespace heads", fn);
		goto out;
	}
	*out = (struct ucmd_nvme_subsys *)s;
out:
	if (ret)
		while (done)
			ucmd_nvme_detach((struct ucmd_nvme_host *)paths[--done]);
	return ret;
}
