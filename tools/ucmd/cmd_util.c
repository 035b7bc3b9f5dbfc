/* SPDX-License-Identifier: MIT */
/* Helpers the commands share: aligned buffers, one admin command, logs, identify. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "cli.h"

void *cli_zalloc(size_t len)
{
	size_t n = (len + 4095) & ~(size_t)4095;
	void *p = aligned_alloc(4096, n ? n : 4096);

	if (p)
		memset(p, 0, n ? n : 4096);
	return p;
}

int cli_admin(struct cli *cli, const char *what, struct nvme_uring_cmd *c, uint64_t *result)
{
	int res = session_passthru(&cli->s, true, c, result);

	if (res)
		print_status_error(what, res);
	return res;
}

int cli_get_log(struct cli *cli, const char *what, uint8_t lid, uint32_t nsid, void *buf,
		uint32_t len)
{
	uint32_t numd = len / 4 - 1;
	struct nvme_uring_cmd c = { .opcode = nvme_admin_get_log_page, .nsid = nsid };

	c.addr = (uint64_t)(uintptr_t)buf;
	c.data_len = len;
	c.cdw10 = ((numd & 0xffff) << 16) | lid;	/* NUMDL, LID */
	c.cdw11 = numd >> 16;				/* NUMDU */
	return cli_admin(cli, what, &c, NULL);
}

void *cli_identify(struct cli *cli, const char *what, uint32_t cns, uint32_t nsid)
{
	return cli_identify_csi(cli, what, cns, NVME_CSI_NVM, nsid);
}

void *cli_identify_csi(struct cli *cli, const char *what, uint32_t cns, uint8_t csi, uint32_t nsid)
{
	void *buf = cli_zalloc(4096);
	struct nvme_uring_cmd c = { .opcode = nvme_admin_identify, .nsid = nsid, .cdw10 = cns,
				    .cdw11 = (uint32_t)csi << 24 };

	if (!buf)
		return NULL;
	c.addr = (uint64_t)(uintptr_t)buf;
	c.data_len = 4096;
	if (cli_admin(cli, what, &c, NULL)) {
		free(buf);
		return NULL;
	}
	return buf;
}
