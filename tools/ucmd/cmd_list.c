/* SPDX-License-Identifier: MIT */
/*
 * list and list-subsys: the session's controllers and namespaces as
 * nvme-cli 2.3 sees them through `ucmd exec`'s sysfs (libnvme's scan), for
 * print_list()/print_list_subsys() (print.h).
 *
 * list-subsys DEVICE is nvme-cli's filter: nvmeXnY names subsystem X's
 * head namespace Y, and the subsystem's paths are those of that namespace,
 * each with its ANA state; a name of another form is refused. Without a
 * device, or naming a namespace that is not there, libnvme's scan order
 * shows through: the paths of the subsystem's namespace that sorts last
 * by name (its list is built by head insertion), else its controllers in
 * the reverse of their names' order. Controllers reached over NVMe/TCP
 * show as Linux's nvme-tcp ones (subsys_tcp.c), the others as PCIe
 * functions.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/fabrics.h>
#include <nvme/types.h>

#include <ucmd/ctrl.h>
#include <ucmd/kernel.h>

#include "cli.h"

#define LIST_MAX_NS 64

/* What list-subsys shows of the subsystem: which namespace's paths, how. */
struct subsys_view {
	bool hidden;		/* the device names another subsystem: the host alone */
	bool show_ana;		/* a device was named (nvme-cli: nsid != NVME_NSID_ALL) */
	int ns;			/* index of the namespace whose paths show; -1: none */
};

/*
 * nvme-cli 2.3's list-subsys filter: "nvme%dn%d" (sscanf's reading) on the
 * device's base name, X the subsystem, the namespace matched by name.
 * names[i] are the namespaces' "nvme0n<nsid>". 0, or -EINVAL (said).
 */
static int subsys_filter(const char *dev, char names[][32], int nr, struct subsys_view *v)
{
	const char *base = strrchr(dev, '/') ? strrchr(dev, '/') + 1 : dev;
	int x, nsid;

	v->hidden = false;
	v->show_ana = false;
	v->ns = -1;
	if (sscanf(base, "nvme%dn%d", &x, &nsid) != 2) {
		fprintf(stderr, "Invalid device name %s\n", base);
		return -EINVAL;
	}
	/* ucmd's subsystem is nvme-subsys0 */
	v->hidden = x != 0;
	v->show_ana = (uint32_t)nsid != NVME_NSID_ALL;
	for (int i = 0; i < nr; i++)
		if (!strcmp(names[i], base))
			v->ns = i;
	return 0;
}

/* Without a device: the namespace whose name sorts last (alphasort) */
static int last_by_name(char names[][32], int nr)
{
	int last = -1;

	for (int i = 0; i < nr; i++)
		if (last < 0 || strcmp(names[i], names[last]) > 0)
			last = i;
	return last;
}

/* The one controller of the session, or the subsystem's, as nvme-cli sees them through ucmd exec's sysfs. */
static int list_common(struct cli *cli, bool subsys)
{
	struct print_ns ns[LIST_MAX_NS];
	char blk[LIST_MAX_NS][32], gen[LIST_MAX_NS][32];
	/* as nvme-cli shows them for a PCIe controller: libnvme's /etc/nvme files, or none */
	char *hostnqn = nvmf_hostnqn_from_file(), *hostid = nvmf_hostid_from_file();
	struct nvme_id_ctrl *id;
	int nr = 0, ret = 1;
	struct subsys_view v = { .ns = -1 };

	memset(ns, 0, sizeof(ns));
	id = cli_identify(cli, subsys ? "list-subsys" : "list", NVME_IDENTIFY_CNS_CTRL, 0);
	if (!id)
		goto out;
	uint32_t nsids[LIST_MAX_NS];
	int nns = subsys_nsids(cli, nsids, LIST_MAX_NS);

	for (int i = 0; i < nns; i++) {
		uint32_t nsid = nsids[i];

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
	char nsname[LIST_MAX_NS][32];

	for (int i = 0; i < nr; i++)
		snprintf(nsname[i], sizeof(nsname[i]), "nvme0n%u", ns[i].nsid);
	if (subsys && cli->a.dev) {
		/* a real device: the session's own namespace, named as ucmd shows it */
		char own[32];

		snprintf(own, sizeof(own), "nvme0n%u", cli->s.nsid);
		if (cli->s.kernel && cli->s.kn && !cli->s.kn->nsid) {
			const char *slash = strrchr(cli->a.dev, '/');

			fprintf(stderr, "Invalid device name %s\n", slash ? slash + 1 : cli->a.dev);
			ret = 2;
			goto out;
		}
		if (subsys_filter(cli->s.kernel ? own : cli->a.dev, nsname, nr, &v)) {
			ret = 2;
			goto out;
		}
	} else if (subsys) {
		v.ns = last_by_name(nsname, nr);
	}
	/*
	 * A subsystem of several controllers (a directory of several, in
	 * this process or in ucmdd) has a path per controller (nvme0,
	 * nvme1...), as exec's sysfs shows it (src/preload/sysfs_mpath.c);
	 * list shows the head's namespaces once.
	 */
	struct subsys_path sp[UCMD_CTRL_MAX_CONTROLLERS] = { { .fd = -1 } };
	/* over NVMe/TCP: a path per URL, as Linux's nvme-tcp controllers */
	struct subsys_tcp_path tp[UCMD_CTRL_MAX_CONTROLLERS];
	unsigned ntcp = subsys_tcp_paths(cli, v.ns >= 0 ? ns[v.ns].nsid : 0, tp,
					 UCMD_CTRL_MAX_CONTROLLERS);
	unsigned nctl = !subsys ? 1 : ntcp ? ntcp : subsys_paths(cli, id, sp, UCMD_CTRL_MAX_CONTROLLERS);
	struct print_ctrl c[UCMD_CTRL_MAX_CONTROLLERS];
	char addr[UCMD_CTRL_MAX_CONTROLLERS][16], name[UCMD_CTRL_MAX_CONTROLLERS][16];
	char tnqn[224], tid[40];
	/* a fabrics controller's host is the one it connected as (libnvme's scan) */
	bool thost = ntcp && subsys_tcp_host(cli, tnqn, sizeof(tnqn), tid, sizeof(tid));
	unsigned mask = 0;
	int np = 0;

	/* paths exist only in a subsystem of several (Linux's multipath layout) */
	if (subsys && nctl > 1 && v.ns >= 0)
		mask = ntcp ? (1u << ntcp) - 1 : subsys_paths_attached(cli, sp, nctl, ns[v.ns].nsid);
	for (unsigned k = 0; k < nctl; k++) {
		/* paths in their controllers' order; controllers alone in the reverse */
		unsigned i = mask ? k : nctl - 1 - k;
		const char *ana = NULL;

		if (mask && !(mask & 1u << i))
			continue;
		if (mask && ntcp)
			ana = v.show_ana && tp[i].ana ? tp[i].ana : "";
		else if (mask)
			ana = v.show_ana ? subsys_path_ana(cli, &sp[i], ns[v.ns].nsid) : "";
		if (!ntcp)
			subsys_pci_addr(sp[i].inst, addr[i], sizeof(addr[i]));
		snprintf(name[i], sizeof(name[i]), "nvme%u", ntcp ? tp[i].inst : sp[i].inst);
		c[np++] = (struct print_ctrl){
			.name = name[i],
			.subsys = v.hidden ? NULL : "nvme-subsys0",
			.transport = ntcp ? "tcp" : "pcie",
			.address = ntcp ? tp[i].address : addr[i],
			.state = ntcp ? tp[i].state : "live",
			.hostnqn = thost ? tnqn : hostnqn,
			.hostid = thost ? tid : hostid,
			.id = id,
			.nr_ns = nr,
			.ns = ns,
			.ana_state = ana,
		};
	}
	/* only those subsys_paths() filled in (it opened their devices) */
	subsys_paths_close(cli, sp, subsys && !ntcp ? nctl : 1);
	if (subsys)
		print_list_subsys(c, np, cli_fmt(cli), cli_pflags(cli));
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
