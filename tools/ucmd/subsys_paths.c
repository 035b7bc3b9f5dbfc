/* SPDX-License-Identifier: MIT */
/*
 * The controllers of the session's NVM subsystem as `ucmd exec` shows them
 * in sysfs (src/preload/sysfs_mpath.c), for list-subsys: the engine's
 * controller devices (nvmeK) that say, in Identify Controller, that they
 * are one of several (CMIC) of the session controller's subsystem NQN,
 * in their names' order (libnvme's scandir); a namespace's path through
 * each that has it attached, with the ANA state that controller's ANA log
 * gives it. The same through a controller directory in this process and
 * through ucmdd.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nvme/types.h>

#include "cli.h"

/* An admin command on controller device fd of the session's engine: 0, a status or -errno */
static int admin_on(struct cli *cli, int fd, struct nvme_uring_cmd *c)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(&cli->s.ring);
	struct io_uring_cqe *cqe;
	int ret;

	if (!sqe)
		return -EBUSY;
	ucmd_prep_nvme_cmd(sqe, fd, NVME_URING_CMD_ADMIN, c);
	ret = ucmd_submit_and_wait(&cli->s.ring, 1);
	if (ret < 0)
		return ret;
	ret = ucmd_wait_cqe(&cli->s.ring, &cqe);
	if (ret < 0)
		return ret;
	ret = cqe->res;
	ucmd_cqe_seen(&cli->s.ring, cqe);
	return ret;
}

static int identify_on(struct cli *cli, int fd, struct nvme_id_ctrl *id)
{
	struct nvme_uring_cmd c = { .opcode = nvme_admin_identify, .cdw10 = NVME_IDENTIFY_CNS_CTRL,
				    .addr = (uint64_t)(uintptr_t)id, .data_len = sizeof(*id) };

	return admin_on(cli, fd, &c);
}

static bool same_subsys(const struct nvme_id_ctrl *a, const struct nvme_id_ctrl *b)
{
	return (a->cmic & NVME_CTRL_CMIC_MULTI_CTRL) && (b->cmic & NVME_CTRL_CMIC_MULTI_CTRL) &&
	       !memcmp(a->subnqn, b->subnqn, sizeof(a->subnqn)) && a->subnqn[0];
}

unsigned subsys_paths(struct cli *cli, const struct nvme_id_ctrl *id0, struct subsys_path *p,
		      unsigned max)
{
	const char *names[256];
	int n = cli->s.kernel ? 0 : ucmd_device_names(cli->s.e, names, 256);
	struct nvme_id_ctrl *id = cli_zalloc(sizeof(*id));
	/* one controller of several: the others are its subsystem's */
	bool multi = same_subsys(id0, id0);
	unsigned nr = 0;

	/* the session's own controller, nvme0, always */
	p[nr++] = (struct subsys_path){ .inst = 0, .fd = -1, .cntlid = le16toh(id0->cntlid),
					.ana = id0->cmic & NVME_CTRL_CMIC_MULTI_ANA_REPORTING };
	for (int i = 0; multi && id && i < n && i < 256 && nr < max; i++) {
		unsigned inst;
		char tail;
		int fd;

		if (sscanf(names[i], "nvme%u%c", &inst, &tail) != 1 || !inst)
			continue;
		fd = ucmd_open(cli->s.e, names[i], O_RDWR);
		if (fd < 0)
			continue;	/* not ours to open: not shown */
		if (identify_on(cli, fd, id) || !same_subsys(id0, id)) {
			ucmd_close(cli->s.e, fd);
			continue;
		}
		p[nr++] = (struct subsys_path){ .inst = inst, .fd = fd, .cntlid = le16toh(id->cntlid),
						.ana = id->cmic & NVME_CTRL_CMIC_MULTI_ANA_REPORTING };
	}
	free(id);
	/* libnvme reads /sys/class/nvme in alphasort order: nvme10 before nvme2 */
	for (unsigned i = 1; i < nr; i++)
		for (unsigned j = i; j > 0; j--) {
			char a[16], b[16];

			snprintf(a, sizeof(a), "nvme%u", p[j - 1].inst);
			snprintf(b, sizeof(b), "nvme%u", p[j].inst);
			if (strcmp(a, b) <= 0)
				break;
			struct subsys_path t = p[j];
			p[j] = p[j - 1];
			p[j - 1] = t;
		}
	return nr;
}

void subsys_paths_close(struct cli *cli, struct subsys_path *p, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (p[i].fd >= 0)
			ucmd_close(cli->s.e, p[i].fd);
}

unsigned subsys_paths_attached(struct cli *cli, const struct subsys_path *p, unsigned n,
			       uint32_t nsid)
{
	uint16_t *list = cli_zalloc(4096);
	struct nvme_uring_cmd c = { .opcode = nvme_admin_identify, .nsid = nsid,
				    .cdw10 = NVME_IDENTIFY_CNS_NS_CTRL_LIST,
				    .addr = (uint64_t)(uintptr_t)list, .data_len = 4096 };
	unsigned mask = 0;

	if (!list)
		return 0;
	if (!admin_on(cli, cli->s.ctrl_fd, &c))
		for (unsigned k = 1; k <= le16toh(list[0]) && k < 2048; k++)
			for (unsigned i = 0; i < n && i < 32; i++)
				if (p[i].cntlid == le16toh(list[k]))
					mask |= 1u << i;
	free(list);
	return mask;
}

const char *subsys_ana_name(unsigned state)
{
	switch (state) {
	case NVME_ANA_STATE_OPTIMIZED: return "optimized";
	case NVME_ANA_STATE_NONOPTIMIZED: return "non-optimized";
	case NVME_ANA_STATE_INACCESSIBLE: return "inaccessible";
	case NVME_ANA_STATE_PERSISTENT_LOSS: return "persistent-loss";
	case NVME_ANA_STATE_CHANGE: return "change";
	default: return "invalid";
	}
}

const char *subsys_path_ana(struct cli *cli, const struct subsys_path *p, uint32_t nsid)
{
	uint8_t *buf = cli_zalloc(4096);
	struct nvme_uring_cmd c = { .opcode = nvme_admin_get_log_page, .nsid = NVME_NSID_ALL,
				    .cdw10 = NVME_LOG_LID_ANA | ((4096 / 4 - 1) << 16),
				    .addr = (uint64_t)(uintptr_t)buf, .data_len = 4096 };
	/* a controller that reports no ANA: Linux's default */
	const char *state = "optimized";
	size_t off = sizeof(struct nvme_ana_log);

	if (!buf || !p->ana || admin_on(cli, p->fd >= 0 ? p->fd : cli->s.ctrl_fd, &c)) {
		free(buf);
		return state;
	}
	for (unsigned g = 0; g < le16toh(((struct nvme_ana_log *)(void *)buf)->ngrps) &&
			     off + sizeof(struct nvme_ana_group_desc) <= 4096; g++) {
		struct nvme_ana_group_desc *d = (void *)(buf + off);
		uint32_t nn = le32toh(d->nnsids);

		off += sizeof(*d);
		for (uint32_t k = 0; k < nn && off + 4 <= 4096; k++, off += 4) {
			uint32_t id;

			memcpy(&id, buf + off, 4);
			if (le32toh(id) == nsid)
				state = subsys_ana_name(d->state & 0xf);
		}
	}
	free(buf);
	return state;
}

/*
 * Controller x's PCI function as `ucmd exec` shows it in sysfs
 * (src/preload/sysfs.c, pci_name): the x-th device number of bus 0 that
 * the host's own PCI functions leave free, then domains 1, 2... whole.
 */
void subsys_pci_addr(unsigned x, char *out, size_t len)
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

int subsys_nsids(struct cli *cli, uint32_t *nsid, int max)
{
	const char *names[256];
	int n = ucmd_device_names(cli->s.e, names, 256), nr = 0;

	for (int i = 0; i < n && i < 256 && nr < max; i++) {
		char tail;

		if (sscanf(names[i], "ng0n%u%c", &nsid[nr], &tail) == 1)
			nr++;
	}
	return nr;
}
