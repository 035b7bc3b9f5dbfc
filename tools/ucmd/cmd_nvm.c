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

#include "args.h"
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

/* -s SLBA -c NLB(0-based) [--deac] : one LBA range, no data */
static int range_cmd(struct cli *cli, int argc, char **argv, uint8_t opcode, const char *what,
		     bool allow_deac)
{
	struct range_args a;

	if (!range_args_parse(&a, argc, argv, allow_deac)) {
		struct nvme_uring_cmd cmd = { .opcode = opcode };
		cmd.cdw10 = (uint32_t)a.slba;
		cmd.cdw11 = (uint32_t)(a.slba >> 32);
		cmd.cdw12 = a.nlb | (a.deac ? 1u << 25 : 0);
		return run_io(cli, what, &cmd);
	}
	fprintf(stderr, "usage: ucmd %s -s SLBA -c NLB(0-based)%s\n", what,
		allow_deac ? " [--deac]" : "");
	return 1;
}

int cmd_write_zeroes(struct cli *cli, int argc, char **argv)
{
	return range_cmd(cli, argc, argv, nvme_cmd_write_zeroes, "write-zeroes", true);
}

int cmd_write_uncor(struct cli *cli, int argc, char **argv)
{
	return range_cmd(cli, argc, argv, nvme_cmd_write_uncor, "write-uncor", false);
}

int cmd_verify(struct cli *cli, int argc, char **argv)
{
	return range_cmd(cli, argc, argv, nvme_cmd_verify, "verify", false);
}

/* dsm --slbs=a,b --blocks=x,y --ad : Dataset Management with Deallocate */
int cmd_dsm(struct cli *cli, int argc, char **argv)
{
	struct ranges_args a;
	const uint64_t *slbs = a.slbs, *blocks = a.blocks;
	int ns;

	if (dsm_args_parse(&a, argc, argv)) {
		fprintf(stderr, "usage: ucmd dsm --slbs=A,B,... --blocks=N,M,... [--ad]\n");
		return 1;
	}
	ns = a.n;
	struct nvme_dsm_range *r = aligned_alloc(4096, 4096);
	if (!r)
		return 1;
	memset(r, 0, 4096);
	for (int i = 0; i < ns; i++) {
		if (blocks[i] > UINT32_MAX) {
			fprintf(stderr, "dsm: a range holds at most 2^32-1 blocks\n");
			free(r);
			return 1;
		}
		r[i].slba = slbs[i];
		r[i].nlb = (uint32_t)blocks[i];
	}
	struct nvme_uring_cmd cmd = { .opcode = nvme_cmd_dsm };
	cmd.addr = (uint64_t)(uintptr_t)r;
	cmd.data_len = (uint32_t)(ns * sizeof(*r));
	cmd.cdw10 = (uint32_t)ns - 1;
	cmd.cdw11 = a.ad ? NVME_DSMGMT_AD : 0;
	int ret = run_io(cli, "dsm", &cmd);
	free(r);
	return ret;
}

/* copy --sdlba=D --slbs=a,b --blocks=x,y (0-based counts), source format 0 */
int cmd_copy(struct cli *cli, int argc, char **argv)
{
	struct ranges_args a;
	const uint64_t *slbs = a.slbs, *blocks = a.blocks;
	int ns;

	if (copy_args_parse(&a, argc, argv)) {
		fprintf(stderr, "usage: ucmd copy --sdlba=DEST --slbs=A,B,... --blocks=N,M,... "
				"(0-based counts)\n");
		return 1;
	}
	ns = a.n;
	struct nvme_copy_range *r = aligned_alloc(4096, 8192);
	if (!r)
		return 1;
	memset(r, 0, 8192);
	for (int i = 0; i < ns; i++) {
		if (blocks[i] > 0xffff) {
			fprintf(stderr, "copy: a range holds at most 65536 blocks\n");
			free(r);
			return 1;
		}
		r[i].slba = slbs[i];
		r[i].nlb = (uint16_t)blocks[i];
	}
	struct nvme_uring_cmd cmd = { .opcode = nvme_cmd_copy };
	cmd.addr = (uint64_t)(uintptr_t)r;
	cmd.data_len = (uint32_t)(ns * sizeof(*r));
	cmd.cdw10 = (uint32_t)a.sdlba;
	cmd.cdw11 = (uint32_t)(a.sdlba >> 32);
	cmd.cdw12 = (uint32_t)ns - 1;	/* NR, 0-based; descriptor format 0 */
	int ret = run_io(cli, "copy", &cmd);
	free(r);
	return ret;
}
