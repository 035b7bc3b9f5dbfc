/* SPDX-License-Identifier: MIT */
/*
 * show-topology: the session's subsystem as nvme-cli 2.3's show-topology
 * sees it through `ucmd exec`'s sysfs (libnvme's tree), for
 * print_topology() (print.h). The controllers and each namespace's paths
 * come from where list-subsys takes them: the controllers of a directory
 * of several, in this process or in ucmdd (subsys_paths.c: a path where
 * the namespace is attached, its ANA state from that controller's ANA
 * log), or one path per nvme-tcp:// URL (subsys_tcp.c: the host's own
 * view of each path). One controller is no multipath subsystem: its
 * namespaces are its own, as Linux shows a controller without CMIC's
 * multi-controller bit.
 *
 * Unlike nvme-cli under `ucmd exec`, a namespace none of whose paths is
 * usable still shows, with each path's state: libnvme drops such a head
 * because Identify through it fails (EWOULDBLOCK), which hides the very
 * paths one looks at the topology to find.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/fabrics.h>
#include <nvme/types.h>

#include <ucmd/ctrl.h>

#include "cli.h"

#define TOPO_MAX_NS 256
#define TOPO_MAX_CTRL UCMD_CTRL_MAX_CONTROLLERS

/* libnvme's order: scandir's alphasort of the names, reversed by head insertion */
static int ns_cmp(const void *a, const void *b)
{
	char x[24], y[24];

	snprintf(x, sizeof(x), "nvme0n%u", *(const uint32_t *)a);
	snprintf(y, sizeof(y), "nvme0n%u", *(const uint32_t *)b);
	return -strcmp(x, y);
}

struct topo_ctrl {
	struct print_ctrl c;
	char name[16], addr[400];
	const char *ana[TOPO_MAX_NS];	/* its path of each namespace, or NULL */
};

static int ctrl_cmp(const void *a, const void *b)
{
	return strcmp(((const struct topo_ctrl *)a)->name, ((const struct topo_ctrl *)b)->name);
}

/* over nvme-tcp://: a controller per URL, a path of every namespace through each of several */
static unsigned tcp_ctrls(struct cli *cli, const uint32_t *nsid, int nr_ns, struct topo_ctrl *t)
{
	struct subsys_tcp_path p[TOPO_MAX_CTRL];
	unsigned n = subsys_tcp_paths(cli, nr_ns ? nsid[0] : 0, p, TOPO_MAX_CTRL);

	for (unsigned k = 0; k < n; k++) {
		snprintf(t[k].name, sizeof(t[k].name), "nvme%u", p[k].inst);
		snprintf(t[k].addr, sizeof(t[k].addr), "%s", p[k].address);
		t[k].c = (struct print_ctrl){ .transport = "tcp", .state = p[k].state };
	}
	for (int i = 0; n > 1 && i < nr_ns; i++) {
		unsigned m = subsys_tcp_paths(cli, nsid[i], p, TOPO_MAX_CTRL);

		for (unsigned k = 0; k < n && k < m; k++)
			t[k].ana[i] = p[k].ana;
	}
	return n;
}

/* a directory's controllers (here or in ucmdd): a path where the namespace is attached */
static unsigned dir_ctrls(struct cli *cli, const struct nvme_id_ctrl *id, const uint32_t *nsid,
			  int nr_ns, struct topo_ctrl *t)
{
	struct subsys_path sp[TOPO_MAX_CTRL] = { { .fd = -1 } };
	unsigned n = subsys_paths(cli, id, sp, TOPO_MAX_CTRL);

	for (unsigned k = 0; k < n; k++) {
		snprintf(t[k].name, sizeof(t[k].name), "nvme%u", sp[k].inst);
		subsys_pci_addr(sp[k].inst, t[k].addr, sizeof(t[k].addr));
		t[k].c = (struct print_ctrl){ .transport = "pcie", .state = "live" };
	}
	for (int i = 0; n > 1 && i < nr_ns; i++) {
		unsigned mask = subsys_paths_attached(cli, sp, n, nsid[i]);

		for (unsigned k = 0; k < n; k++)
			if (mask & 1u << k)
				t[k].ana[i] = subsys_path_ana(cli, &sp[k], nsid[i]);
	}
	subsys_paths_close(cli, sp, n);
	return n;
}

int cmd_show_topology(struct cli *cli, int argc, char **argv)
{
	uint32_t nsid[TOPO_MAX_NS];
	struct topo_ctrl *t = cli_zalloc(TOPO_MAX_CTRL * sizeof(*t));
	struct print_ctrl pc[TOPO_MAX_CTRL];
	const char **ana = cli_zalloc(TOPO_MAX_NS * TOPO_MAX_CTRL * sizeof(*ana));
	/* a PCIe controller's host is libnvme's /etc/nvme files; a fabrics one, who it connected as */
	char *hostnqn = nvmf_hostnqn_from_file(), *hostid = nvmf_hostid_from_file();
	char tnqn[224], tid[40], nqn[257];
	struct nvme_id_ctrl *id = NULL;
	int nr_ns, ret = 1;
	unsigned n;
	bool thost;

	(void)argc;
	(void)argv;
	if (!t || !ana)
		goto out;
	id = cli_identify(cli, "show-topology", NVME_IDENTIFY_CNS_CTRL, 0);
	if (!id)
		goto out;
	nr_ns = subsys_nsids(cli, nsid, TOPO_MAX_NS);
	qsort(nsid, (size_t)nr_ns, sizeof(nsid[0]), ns_cmp);
	n = tcp_ctrls(cli, nsid, nr_ns, t);
	thost = n && subsys_tcp_host(cli, tnqn, sizeof(tnqn), tid, sizeof(tid));
	if (!n)
		n = dir_ctrls(cli, id, nsid, nr_ns, t);
	qsort(t, n, sizeof(*t), ctrl_cmp);
	for (unsigned k = 0; k < n; k++) {
		pc[k] = t[k].c;
		pc[k].name = t[k].name;
		pc[k].address = t[k].addr;
		for (int i = 0; i < nr_ns; i++)
			ana[i * (int)n + (int)k] = t[k].ana[i];
	}
	/* Identify's SUBNQN as sysfs shows it: up to NUL, trailing spaces cut */
	snprintf(nqn, sizeof(nqn), "%.*s", (int)strnlen(id->subnqn, sizeof(id->subnqn)), id->subnqn);
	for (size_t l = strlen(nqn); l && nqn[l - 1] == ' '; l--)
		nqn[l - 1] = '\0';
	struct print_topo topo = {
		.hostnqn = thost ? tnqn : hostnqn,
		.hostid = thost ? tid : hostid,
		.name = "nvme-subsys0",
		.nqn = nqn,
		.nr_ctrl = (int)n,
		.ctrl = pc,
		.nr_ns = nr_ns,
		.nsid = nsid,
		/* paths exist only in a subsystem of several (Linux's multipath layout) */
		.ana = n > 1 ? ana : NULL,
	};
	print_topology(&topo, cli_fmt(cli), cli->a.ranking);
	ret = 0;
out:
	free(id);
	free(t);
	free(ana);
	free(hostnqn);
	free(hostid);
	return ret;
}
