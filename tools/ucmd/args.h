/* SPDX-License-Identifier: MIT */
/*
 * The CLI's option parsing: argv to plain structs, with no device, file or
 * session touched, so that it can be tested and fuzzed on its own
 * (tests/fuzz/fuzz_cli_args.c). Every command declares its options in a
 * table (nvme-cli's long and short names and defaults, cmd_tab.c); ONE
 * generic parser reads any command's argv with its table, before any
 * session is opened, so that --help and a bad option never reach a device.
 * Strings in the structs point into argv.
 */
#ifndef UCMD_CLI_ARGS_H
#define UCMD_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ucmd/security.h"
#include "ucmd/uapi/nvme_ioctl.h"
#include "print.h"

struct cli;

/*
 * Global options, up to the command name. Returns the index of the command
 * name in argv, 0 when --help (or --version: *version set) was asked, or
 * -EINVAL with a reason in *why.
 */
int cli_global_parse(struct cli *cli, int argc, char **argv, const char **why, bool *version);

#define CLI_MAX_RANGES 256
#define CLI_MAX_OPTS 40

/* A comma-separated list of numbers (--slbs, --blocks, --controllers). */
struct u64_list {
	int n;
	uint64_t v[CLI_MAX_RANGES];
};

enum opt_type {
	OPT_FLAG,	/* no argument: bool */
	OPT_U32,	/* uint32_t, 0..max */
	OPT_U64,	/* uint64_t, 0..max */
	OPT_STR,	/* const char * */
	OPT_FMT,	/* enum out_fmt: normal|json|binary */
	OPT_LIST,	/* struct u64_list, each 0..max */
	OPT_SANACT,	/* uint32_t: 1..4 or nvme-cli's action names */
	OPT_SIZE,	/* uint64_t bytes, 0..max, with a K, M, G or T suffix (binary) */
	OPT_RANKING,	/* enum topo_ranking: nvme-cli's show-topology "namespace" or "ctrl" */
};

/* flags of an option */
#define OPT_REQUIRED	(1u << 0)
#define OPT_NONZERO	(1u << 1)	/* 0 is refused (a namespace id) */

/*
 * Everything any command takes, one field per option meaning; a command's
 * table says which it accepts, under which names and defaults.
 */
struct cmd_args {
	const char *dev;		/* a /dev path among the arguments */
	uint32_t nsid;			/* -n: 0 = the session's (global -n or 1) */
	bool nsid_given;		/* -n after the command */
	enum out_fmt fmt;		/* -o: default the global -o */
	bool human, verbose, raw, vs, force, show_cmd;
	/* read/write/compare, ranges */
	uint64_t slba, data_size, sdlba, lpo, nsze, ncap, size;
	uint32_t nlb, timeout;
	const char *data;
	bool fua, deac, ad, idw, idr, stag_check;
	struct u64_list slbs, blocks, ctrls;
	/* passthru */
	uint32_t opcode, flags, data_len, cdw[16];	/* cdw[2..15] */
	bool rd, wr;
	/* logs */
	uint32_t log_entries, dst_entries, log_id, log_len, lsp, lsi, csi;
	bool rae;
	/* features */
	uint32_t fid, sel, value, cdw11, cdw12;
	bool save;
	/* format, create-ns */
	uint32_t lbaf, ses, pi, pil, ms, flbas, dps;
	uint64_t lbstm;
	bool reset;
	/* sanitize, self-test, firmware */
	uint32_t sanact, owpass, ovrpat, stc, xfer, fw_offset, slot, action, bpid;
	bool ause, oipbp, no_dealloc, wait;
	const char *fw;
	/* create-ctrl */
	bool create;
	bool zns, cross_read;
	uint64_t zone_size, zone_cap, zd_ext_size;	/* bytes */
	uint32_t max_open, max_active, zasl, nr_conv;
	bool fdp, fdp_initially;
	uint32_t controllers;	/* create-ctrl: controllers of the subsystem */
	/* fdp (nvme-cli's fdp plugin) */
	uint32_t endgrp_id, placement_handle, conf_idx;	/* conf_idx 256: not given */
	bool host_events, fdp_enable, fdp_disable;
	struct u64_list pids, event_types;
	uint32_t fdp_ruhs, fdp_rgs, fdp_op, fdp_rutl;
	uint64_t fdp_ru_size;				/* bytes */
	/* zns (nvme-cli's zns plugin) */
	uint32_t descs, state, zsa, zra, zrasf, prinfo, lbat, lbatm;
	uint64_t ref_tag, storage_tag, metadata_size;
	bool extended, partial, select_all, zsaso, zrwaa, limited_retry, piremap, latency;
	const char *metadata;
	/* ana-state */
	uint32_t port, anagrp;
	bool ana_groups;		/* ana-log --groups: RGO */
	const char *ana_state;
	const char *ana_ctrl;		/* ana-state --controller nvmeX */
	enum topo_ranking ranking;	/* show-topology -r */
	/* which options the command line gave, by table index */
	bool seen[CLI_MAX_OPTS];
};

struct opt {
	const char *lname;	/* long name, without -- */
	char sname;		/* short name, 0 if none */
	enum opt_type type;
	size_t off;		/* offsetof(struct cmd_args, field) */
	uint64_t max;		/* largest accepted value; 0: the type's */
	uint64_t def;		/* default (numbers, flags) */
	unsigned flags;
	const char *meta;	/* NUM, FILE, LIST... */
	const char *help;
};

struct cmd_spec {
	const char *name;
	const char *summary;	/* one line for `ucmd help` */
	const char *desc;	/* a paragraph for `ucmd CMD --help`; NULL: summary */
	const struct opt *opts;	/* NULL-terminated; NULL: the command parses its own */
	bool no_session;	/* works without a controller */
	bool only_reads;	/* changes nothing: opens the controller read-only */
	bool no_device;		/* takes no /dev path (run, bench, exec, policy) */
	/*
	 * With --ctrl or --daemon its /dev path names a device of that
	 * session's view (list-subsys /dev/nvme0n1, nvme-cli's filter), not
	 * a real device to open.
	 */
	bool dev_in_view;
};

/* The command table, in `ucmd help` order; NULL name ends it. */
extern const struct cmd_spec cli_specs[];
const struct cmd_spec *cli_spec_find(const char *name);
/* The closest command name within 2 edits (a typo), or NULL. */
const char *cli_spec_suggest(const char *name);

/*
 * Parse a command's argv (argv[0] is its name) with its table: a fills
 * with the table's defaults (nsid and fmt from the global options given
 * in a on entry), then the arguments. Returns 0, 1 when -h/--help was
 * given (nothing else checked), or -EINVAL with a one-line reason in err
 * naming the option.
 */
int cli_args_parse(const struct cmd_spec *c, struct cmd_args *a, int argc, char **argv,
		   char *err, size_t errlen);
/* Whether the command line gave the option of that long name. */
bool cli_args_given(const struct cmd_spec *c, const struct cmd_args *a, const char *lname);
/* The command's help, from its table, in nvme-cli's layout. */
void cli_args_help(FILE *f, const struct cmd_spec *c);
/* `ucmd help --dump-options`: every table as "CMD --long -s TYPE" lines. */
void cli_args_dump(FILE *f);
/* `ucmd help --complete CWORD WORDS...`: the candidates for WORDS[CWORD]. */
void cli_args_complete(FILE *f, int cword, int nwords, char **words);

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
