/* SPDX-License-Identifier: MIT */
/*
 * The CLI's option parsing: argv to plain structs, with no device, file or
 * session touched, so that it can be tested and fuzzed on its own
 * (tests/fuzz/fuzz_cli_args.c). Each parser takes argv as the command sees
 * it (argv[0] is the command name), resets getopt fully (it may be called
 * more than once in a process) and returns 0 or -EINVAL; the command prints
 * its usage. Strings in the structs point into argv.
 */
#ifndef UCMD_CLI_ARGS_H
#define UCMD_CLI_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "ucmd/security.h"
#include "ucmd/uapi/nvme_ioctl.h"

struct cli;

/*
 * Global options, up to the command name. Returns the index of the command
 * name in argv, 0 when --help was asked, or -EINVAL with a reason in *why.
 */
int cli_global_parse(struct cli *cli, int argc, char **argv, const char **why);

/* read, write, compare: -s SLBA -c NLB(0-based) [-z SIZE] [-d FILE] [-f] */
struct rw_args {
	uint64_t slba, size;
	uint32_t nlb;
	const char *path;
	bool fua;
};
int rw_args_parse(struct rw_args *a, int argc, char **argv);

/* io-passthru, admin-passthru: nvme-cli's options, into cmd */
struct passthru_args {
	struct nvme_uring_cmd cmd;
	bool have_nsid, rd, wr, raw;
	const char *in;
};
int passthru_args_parse(struct passthru_args *a, int argc, char **argv);

/* write-zeroes, write-uncor, verify: -s SLBA -c NLB(0-based) [--deac] */
struct range_args {
	uint64_t slba;
	uint32_t nlb;
	bool deac;
};
int range_args_parse(struct range_args *a, int argc, char **argv, bool allow_deac);

/* dsm --slbs=A,B --blocks=N,M [--ad]; copy --sdlba=D --slbs=... --blocks=... */
#define CLI_MAX_RANGES 256
struct ranges_args {
	int n;
	uint64_t slbs[CLI_MAX_RANGES], blocks[CLI_MAX_RANGES];
	uint64_t sdlba;
	bool ad;
};
int dsm_args_parse(struct ranges_args *a, int argc, char **argv);
int copy_args_parse(struct ranges_args *a, int argc, char **argv);

/* error-log [--log-entries 1..256] */
int error_log_args_parse(uint32_t *entries, int argc, char **argv);

/* get-feature -f FID [-s SEL] [--cdw11 V]; set-feature -f FID -V VALUE [--save] */
struct feature_args {
	uint32_t fid, sel, cdw11;
	bool save;
};
int feature_args_parse(struct feature_args *a, int argc, char **argv, bool set);

/* format [--lbaf 0..63] [--ses 0..7] [--ms 0|1] */
struct format_args {
	uint32_t lbaf, ses, ms;
};
int format_args_parse(struct format_args *a, int argc, char **argv);

/* create-ns --nsze N [--ncap N] [--flbas F] */
struct create_ns_args {
	uint64_t nsze, ncap;
	uint32_t flbas;
};
int create_ns_args_parse(struct create_ns_args *a, int argc, char **argv);

/* attach-ns, detach-ns [--controllers=ID,...] */
struct attach_args {
	uint32_t ids[32], n;
};
int attach_args_parse(struct attach_args *a, int argc, char **argv);

/* run [--size BYTES]: a non-zero multiple of chunk */
int run_args_parse(uint64_t *bytes, uint64_t chunk, int argc, char **argv);

/*
 * policy explain [...]: a.x comes filled with the defaults
 * (ucmd_explain_init); the verb is checked by ucmd_policy_explain().
 */
struct explain_args {
	struct ucmd_explain x;
	struct ucmd_lba_range ranges[UCMD_EXPLAIN_RANGES_MAX];	/* --range */
	const char *policy;
	bool cap_given;
	const char *bad;	/* an option refused: its value, or "" */
};
int explain_args_parse(struct explain_args *a, int argc, char **argv);

#endif
