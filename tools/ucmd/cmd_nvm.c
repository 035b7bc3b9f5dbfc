/* SPDX-License-Identifier: MIT */
/*
 * NVM commands without a data file: write-zeroes, write-uncor, verify, dsm
 * (deallocate) and copy, with nvme-cli's option names.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "cli.h"

#define MAX_RANGES 256

/* Comma-separated list of numbers ("0,8,64"); returns the count or -EINVAL. */
static int parse_list(const char *s, uint64_t *out, int max)
{
	char buf[4096], *save = NULL;
	int n = 0;

	if (!s || snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -EINVAL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max || parse_u64(tok, &out[n]))
			return -EINVAL;
		n++;
	}
	return n ? n : -EINVAL;
}

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
	static const struct option opts[] = {
		{ "start-block", required_argument, 0, 's' },
		{ "block-count", required_argument, 0, 'c' },
		{ "deac", no_argument, 0, 'd' },
		{ 0, 0, 0, 0 },
	};
	uint64_t slba = 0;
	uint32_t nlb = 0;
	bool deac = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:c:d", opts, NULL)) != -1) {
		switch (c) {
		case 's': if (parse_u64(optarg, &slba)) goto bad; break;
		case 'c': if (parse_u32(optarg, &nlb) || nlb > 0xffff) goto bad; break;
		case 'd': if (!allow_deac) goto bad; deac = true; break;
		default: goto bad;
		}
	}
	struct nvme_uring_cmd cmd = { .opcode = opcode };
	cmd.cdw10 = (uint32_t)slba;
	cmd.cdw11 = (uint32_t)(slba >> 32);
	cmd.cdw12 = nlb | (deac ? 1u << 25 : 0);
	return run_io(cli, what, &cmd);
bad:
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
	static const struct option opts[] = {
		{ "slbs", required_argument, 0, 's' },
		{ "blocks", required_argument, 0, 'b' },
		{ "ad", no_argument, 0, 'd' },
		{ 0, 0, 0, 0 },
	};
	uint64_t slbs[MAX_RANGES], blocks[MAX_RANGES];
	int ns = -1, nb = -1, c;
	bool ad = false;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:b:d", opts, NULL)) != -1) {
		switch (c) {
		case 's': ns = parse_list(optarg, slbs, MAX_RANGES); break;
		case 'b': nb = parse_list(optarg, blocks, MAX_RANGES); break;
		case 'd': ad = true; break;
		default: ns = -1; break;
		}
	}
	if (ns < 1 || ns != nb) {
		fprintf(stderr, "usage: ucmd dsm --slbs=A,B,... --blocks=N,M,... [--ad]\n");
		return 1;
	}
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
	cmd.cdw11 = ad ? NVME_DSMGMT_AD : 0;
	int ret = run_io(cli, "dsm", &cmd);
	free(r);
	return ret;
}

/* copy --sdlba=D --slbs=a,b --blocks=x,y (0-based counts), source format 0 */
int cmd_copy(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sdlba", required_argument, 0, 'd' },
		{ "slbs", required_argument, 0, 's' },
		{ "blocks", required_argument, 0, 'b' },
		{ 0, 0, 0, 0 },
	};
	uint64_t slbs[MAX_RANGES], blocks[MAX_RANGES], sdlba = 0;
	int ns = -1, nb = -1, c;
	bool have_d = false;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:s:b:", opts, NULL)) != -1) {
		switch (c) {
		case 'd': have_d = !parse_u64(optarg, &sdlba); break;
		case 's': ns = parse_list(optarg, slbs, MAX_RANGES); break;
		case 'b': nb = parse_list(optarg, blocks, MAX_RANGES); break;
		default: ns = -1; break;
		}
	}
	if (!have_d || ns < 1 || ns != nb) {
		fprintf(stderr, "usage: ucmd copy --sdlba=DEST --slbs=A,B,... --blocks=N,M,... "
				"(0-based counts)\n");
		return 1;
	}
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
	cmd.cdw10 = (uint32_t)sdlba;
	cmd.cdw11 = (uint32_t)(sdlba >> 32);
	cmd.cdw12 = (uint32_t)ns - 1;	/* NR, 0-based; descriptor format 0 */
	int ret = run_io(cli, "copy", &cmd);
	free(r);
	return ret;
}
