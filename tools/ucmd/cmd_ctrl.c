/* SPDX-License-Identifier: MIT */
/*
 * Identify and health: list, list-subsys, id-ctrl, id-ns, smart-log. Each
 * fetches its data and hands it to one printer (print.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nvme/fabrics.h>
#include <nvme/types.h>

#include <ucmd/ctrl.h>

#include "cli.h"

int cmd_id_ctrl(struct cli *cli, int argc, char **argv)
{
	struct nvme_id_ctrl *id = cli_identify(cli, "id-ctrl", NVME_IDENTIFY_CNS_CTRL, 0);

	(void)argc;
	(void)argv;
	if (!id)
		return 1;
	print_id_ctrl(id, cli_fmt(cli), cli_pflags(cli));
	free(id);
	return 0;
}

int cmd_id_ns(struct cli *cli, int argc, char **argv)
{
	uint32_t nsid = cli->s.nsid;
	/* --force: the namespace even when it is not attached (allocated list) */
	uint32_t cns = cli->a.force ? NVME_IDENTIFY_CNS_ALLOCATED_NS : NVME_IDENTIFY_CNS_NS;
	struct nvme_id_ns *id = cli_identify(cli, "id-ns", cns, nsid);

	(void)argc;
	(void)argv;
	if (!id)
		return 1;
	if (!id->nsze) {
		fprintf(stderr, "id-ns: namespace %u is not active%s\n", nsid,
			cli->a.force ? " nor allocated" : " (--force shows an allocated one)");
		free(id);
		return 1;
	}
	print_id_ns(id, nsid, cli_fmt(cli), cli_pflags(cli));
	free(id);
	return 0;
}

int cmd_smart_log(struct cli *cli, int argc, char **argv)
{
	struct nvme_smart_log *log = cli_zalloc(sizeof(*log));
	/* nvme-cli: the controller's log unless -n names a namespace */
	uint32_t nsid = cli->a.nsid_given ? cli->a.nsid : NVME_NSID_ALL;
	int ret = 1;

	(void)argc;
	(void)argv;
	if (log && !cli_get_log(cli, "smart-log", NVME_LOG_LID_SMART, nsid, log, sizeof(*log))) {
		print_smart_log(log, nsid, "nvme0", cli_fmt(cli), cli_pflags(cli));
		ret = 0;
	}
	free(log);
	return ret;
}

#define LIST_MAX_NS 64

/*
 * Controller x's PCI function as `ucmd exec` shows it in sysfs
 * (src/preload/sysfs.c, pci_name): the x-th device number of bus 0 that
 * the host's own PCI functions leave free, then domains 1, 2... whole.
 */
static void pci_addr(unsigned x, char *out, size_t len)
{
	unsigned dom = 0, slot = 0, free_seen = 0;
	struct stat st;

	for (;;) {
		char path[64];

		if (++slot > 31) {
			dom++;
			slot = 1;
		}
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%04x:00:%02x.0", dom, slot);
		if (!dom && !lstat(path, &st))
			continue;	/* the host's */
		if (free_seen++ == x)
			break;
	}
	snprintf(out, len, "%04x:00:%02x.0", dom, slot);
}

/* The one controller of the session, as nvme-cli sees it through ucmd exec's sysfs. */
static int list_common(struct cli *cli, bool subsys)
{
	struct print_ns ns[LIST_MAX_NS];
	char blk[LIST_MAX_NS][32], gen[LIST_MAX_NS][32];
	/* as nvme-cli shows them for a PCIe controller: libnvme's /etc/nvme files, or none */
	char *hostnqn = nvmf_hostnqn_from_file(), *hostid = nvmf_hostid_from_file();
	const char *names[256];
	struct nvme_id_ctrl *id;
	int n = ucmd_device_names(cli->s.e, names, 256), nr = 0, ret = 1;

	memset(ns, 0, sizeof(ns));
	id = cli_identify(cli, subsys ? "list-subsys" : "list", NVME_IDENTIFY_CNS_CTRL, 0);
	if (!id)
		goto out;
	for (int i = 0; i < n && i < 256 && nr < LIST_MAX_NS; i++) {
		uint32_t nsid;
		char tail;

		if (sscanf(names[i], "ng0n%u%c", &nsid, &tail) != 1)
			continue;
		ns[nr].id = cli_identify(cli, "list", NVME_IDENTIFY_CNS_NS, nsid);
		if (!ns[nr].id)
			goto out;
		ns[nr].nsid = nsid;
		snprintf(blk[nr], sizeof(blk[nr]), "/dev/nvme0n%u", nsid);
		snprintf(gen[nr], sizeof(gen[nr]), "/dev/ng0n%u", nsid);
		ns[nr].blkdev = blk[nr];
		ns[nr].gendev = gen[nr];
		nr++;
	}
	/*
	 * A directory of several controllers is one subsystem with a path
	 * per controller (nvme0, nvme1...), as exec's sysfs shows it
	 * (src/preload/sysfs_mpath.c); list shows the head's namespaces once.
	 */
	unsigned nctl = subsys && cli->s.ctrl ? ucmd_ctrl_controllers(cli->s.ctrl) : 1;
	struct print_ctrl c[UCMD_CTRL_MAX_CONTROLLERS];
	char addr[UCMD_CTRL_MAX_CONTROLLERS][16], name[UCMD_CTRL_MAX_CONTROLLERS][16];

	if (nctl < 1 || nctl > UCMD_CTRL_MAX_CONTROLLERS)
		nctl = 1;
	for (unsigned i = 0; i < nctl; i++) {
		pci_addr(i, addr[i], sizeof(addr[i]));
		snprintf(name[i], sizeof(name[i]), "nvme%u", i);
		c[i] = (struct print_ctrl){
			.name = name[i],
			.subsys = "nvme-subsys0",
			.transport = "pcie",
			.address = addr[i],
			.state = "live",
			.hostnqn = hostnqn,
			.hostid = hostid,
			.id = id,
			.nr_ns = nr,
			.ns = ns,
		};
	}
	if (subsys)
		print_list_subsys(c, (int)nctl, cli_fmt(cli), cli_pflags(cli));
	else
		print_list(c, 1, cli_fmt(cli), cli_pflags(cli));
	ret = 0;
out:
	for (int i = 0; i < LIST_MAX_NS; i++)
		free((void *)ns[i].id);
	free(id);
	free(hostnqn);
	free(hostid);
	return ret;
}

int cmd_list(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return list_common(cli, false);
}

int cmd_list_subsys(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return list_common(cli, true);
}
