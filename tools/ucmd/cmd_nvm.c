/* SPDX-License-Identifier: MIT */
/*
 * NVM commands without a data file: write-zeroes, write-uncor, verify, dsm
 * (deallocate) and copy, with nvme-cli's option names.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "cli.h"

static int run_io(struct cli *cli, const char *what, struct nvme_uring_cmd *c)
{
	c->nsid = cli->s.nsid;
	int res = session_passthru(&cli->s, false, c, NULL);
	if (res) {
		print_status_error(what, res);
		return 1;
	}
	fprintf(stderr, "NVMe %s: success\n", what);
	return 0;
}

/* -s SLBA -c NLB(0-based) [--deac] [--fua] [PI]: one LBA range, no data */
static int range_cmd(struct cli *cli, uint8_t opcode, const char *what)
{
	const struct cmd_args *a = &cli->a;
	struct nvme_uring_cmd cmd = { .opcode = opcode };

	cmd.cdw10 = (uint32_t)a->slba;
	cmd.cdw11 = (uint32_t)(a->slba >> 32);
	cmd.cdw12 = a->nlb | (a->deac ? 1u << 25 : 0) | (a->fua ? 1u << 30 : 0);
	/* write-uncor has no PI options: its fields stay 0 */
	if (cli_pi_fields(cli, what, &cmd))
		return 2;
	return run_io(cli, what, &cmd);
}

int cmd_write_zeroes(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return range_cmd(cli, nvme_cmd_write_zeroes, "write-zeroes");
}

int cmd_write_uncor(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return range_cmd(cli, nvme_cmd_write_uncor, "write-uncor");
}

int cmd_verify(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return range_cmd(cli, nvme_cmd_verify, "verify");
}

/* --slbs and --blocks of equal length */
static int ranges(const char *what, const struct cmd_args *a)
{
	if (a->slbs.n < 1 || a->slbs.n != a->blocks.n) {
		fprintf(stderr, "%s: --slbs and --blocks need the same number of entries, "
			"at least one\n", what);
		return -EINVAL;
	}
	return a->slbs.n;
}

/* dsm --slbs=a,b --blocks=x,y [--ad] [--idw] [--idr] */
int cmd_dsm(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	int ns = ranges("dsm", a);

	(void)argc;
	(void)argv;
	if (ns < 0)
		return 2;
	struct nvme_dsm_range *r = cli_zalloc(4096);
	if (!r)
		return 1;
	for (int i = 0; i < ns; i++) {
		r[i].slba = a->slbs.v[i];
		r[i].nlb = (uint32_t)a->blocks.v[i];
	}
	struct nvme_uring_cmd cmd = { .opcode = nvme_cmd_dsm };
	cmd.addr = (uint64_t)(uintptr_t)r;
	cmd.data_len = (uint32_t)(ns * sizeof(*r));
	cmd.cdw10 = (uint32_t)ns - 1;
	cmd.cdw11 = (a->ad ? NVME_DSMGMT_AD : 0) | (a->idw ? NVME_DSMGMT_IDW : 0) |
		    (a->idr ? NVME_DSMGMT_IDR : 0);
	int ret = run_io(cli, "dsm", &cmd);
	free(r);
	return ret;
}

/* copy --sdlba=D --slbs=a,b --blocks=x,y (0-based counts), source format 0 */
int cmd_copy(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	int ns = ranges("copy", a);

	(void)argc;
	(void)argv;
	if (ns < 0)
		return 2;
	struct nvme_copy_range *r = cli_zalloc(8192);
	if (!r)
		return 1;
	for (int i = 0; i < ns; i++) {
		r[i].slba = a->slbs.v[i];
		r[i].nlb = (uint16_t)a->blocks.v[i];
	}
	struct nvme_uring_cmd cmd = { .opcode = nvme_cmd_copy };
	cmd.addr = (uint64_t)(uintptr_t)r;
	cmd.data_len = (uint32_t)(ns * sizeof(*r));
	cmd.cdw10 = (uint32_t)a->sdlba;
	cmd.cdw11 = (uint32_t)(a->sdlba >> 32);
	cmd.cdw12 = ((uint32_t)ns - 1) | (a->fua ? 1u << 30 : 0);	/* NR, 0-based; format 0 */
	int ret = run_io(cli, "copy", &cmd);
	free(r);
	return ret;
}
