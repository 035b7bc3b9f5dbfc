/* SPDX-License-Identifier: MIT */
/*
 * Every command's options, as nvme-cli 2.3 names them (long and short, in
 * the same position: after the command name) with nvme-cli's defaults. The
 * generic parser (args.c), the help, the completion and docs/cli.md's check
 * (tests/system/cli_docs.sh, through `ucmd help --dump-options`) all read
 * these tables, so a command cannot accept what its help does not show.
 */
#include <stddef.h>
#include <string.h>

#include "args.h"
#include "ucmd/ctrl.h"

#define F(field) offsetof(struct cmd_args, field)
#define END { NULL, 0, OPT_FLAG, 0, 0, 0, 0, NULL, NULL }

#define NSID(h) { "namespace-id", 'n', OPT_U32, F(nsid), 0, 0, OPT_NONZERO, "NUM", h }
/* max: the last out_fmt accepted (list and list-subsys have no binary form) */
#define FMT(m, h) { "output-format", 'o', OPT_FMT, F(fmt), m, 0, 0, "FMT", h }
#define FMT3 FMT(OUT_BINARY, "Output format: normal|json|binary")
#define FMT2 FMT(OUT_JSON, "Output format: normal|json")
#define BIN(h) { "raw-binary", 'b', OPT_FLAG, F(raw), 0, 0, 0, NULL, h }
#define HUMAN(h) { "human-readable", 'H', OPT_FLAG, F(human), 0, 0, 0, NULL, h }
#define FLAG(l, s, field, h) { l, s, OPT_FLAG, F(field), 0, 0, 0, NULL, h }
#define U32(l, s, field, max, def, h) { l, s, OPT_U32, F(field), max, def, 0, "NUM", h }
#define U64(l, s, field, h) { l, s, OPT_U64, F(field), 0, 0, 0, "IONUM", h }
#define REQ32(l, s, field, max, h) { l, s, OPT_U32, F(field), max, 0, OPT_REQUIRED, "NUM", h }
#define LIST(l, s, field, max, h) { l, s, OPT_LIST, F(field), max, 0, 0, "LIST", h }
#define STR(l, s, field, meta, h) { l, s, OPT_STR, F(field), 0, 0, 0, meta, h }

static const struct opt none[] = { END };

static const struct opt list_opts[] = {
	FMT2, FLAG("verbose", 'v', verbose, "Increase output verbosity"), END };

static const struct opt topology_opts[] = {
	FMT3, FLAG("verbose", 'v', verbose, "Increase output verbosity"),
	{ "ranking", 'r', OPT_RANKING, F(ranking), 0, 0, 0, "FMT", "Ranking order: namespace|ctrl" },
	END };

static const struct opt id_ctrl_opts[] = {
	FLAG("vendor-specific", 'v', vs, "dump binary vendor field"),
	FMT3, BIN("show identify in binary format"),
	HUMAN("show identify in readable format"), END };

static const struct opt id_ns_opts[] = {
	NSID("identifier of desired namespace"),
	FLAG("force", 0, force, "Return this namespace, even if not attached"),
	FLAG("vendor-specific", 'v', vs, "dump binary vendor fields"),
	BIN("show identify in binary format"), FMT3,
	HUMAN("show identify in readable format"), END };

static const struct opt ns_descs_opts[] = {
	NSID("identifier of desired namespace"), FMT3,
	BIN("show descriptors in binary format"), END };

static const struct opt smart_opts[] = {
	NSID("(optional) desired namespace"), FMT3, BIN("output in binary format"),
	HUMAN("show info in readable format"), END };

static const struct opt error_log_opts[] = {
	{ "log-entries", 'e', OPT_U32, F(log_entries), 256, 64, OPT_NONZERO, "NUM",
	  "number of entries to retrieve (1..256)" },
	FMT3, BIN("dump in binary format"), END };

static const struct opt effects_opts[] = {
	FMT3, HUMAN("show log in readable format"), BIN("show log in binary format"), END };

static const struct opt fw_log_opts[] = { FMT3, BIN("use binary output"), END };

static const struct opt sanitize_log_opts[] = {
	FLAG("rae", 'r', rae, "Retain an Asynchronous Event"), FMT3,
	HUMAN("show log in readable format"), BIN("show log in binary format"), END };

static const struct opt self_test_log_opts[] = {
	U32("dst-entries", 'e', dst_entries, 20, 20,
	    "how many DST log entries to retrieve (default all 20)"),
	FMT3, FLAG("verbose", 'v', verbose, "Increase output verbosity"), END };

static const struct opt get_log_opts[] = {
	NSID("desired namespace"),
	REQ32("log-id", 'i', log_id, 0xff, "identifier of log to retrieve (required)"),
	REQ32("log-len", 'l', log_len, 1u << 24, "how many bytes to retrieve (required)"),
	U64("lpo", 'o', lpo, "log page offset, in bytes"),
	U32("lsp", 's', lsp, 0x7f, 0, "log specific field"),
	U32("lsi", 'S', lsi, 0xffff, 0, "log specific identifier"),
	FLAG("rae", 'r', rae, "Retain an Asynchronous Event"),
	BIN("output in raw format"),
	U32("csi", 'y', csi, 0xff, 0, "command set identifier"), END };

static const struct opt get_feature_opts[] = {
	REQ32("feature-id", 'f', fid, 0xff, "feature identifier (required)"),
	NSID("identifier of desired namespace"),
	U32("sel", 's', sel, 3, 0, "[0-3]: current/default/saved/supported"),
	U32("data-len", 'l', data_len, 4096, 0, "buffer len if data is returned"),
	BIN("show feature in binary format"),
	U32("cdw11", 'c', cdw11, 0, 0, "feature specific dword 11"),
	HUMAN("show feature in readable format"), END };

static const struct opt set_feature_opts[] = {
	NSID("desired namespace"),
	REQ32("feature-id", 'f', fid, 0xff, "feature identifier (required)"),
	{ "value", 'v', OPT_U32, F(value), 0, 0, OPT_REQUIRED, "IONUM",
	  "new value of feature (required)" },
	U32("cdw12", 'c', cdw12, 0, 0, "feature cdw12, if used"),
	FLAG("save", 's', save, "specifies that the controller shall save the attribute"),
	END };

static const struct opt format_opts[] = {
	NSID("identifier of desired namespace"),
	U32("timeout", 't', timeout, 0, 0, "timeout value, in milliseconds"),
	U32("lbaf", 'l', lbaf, 63, 0, "LBA format to apply (default: the current one)"),
	U32("ses", 's', ses, 7, 0, "[0-2]: secure erase"),
	U32("pi", 'i', pi, 3, 0, "[0-3]: protection info off/Type 1/Type 2/Type 3"),
	U32("pil", 'p', pil, 1, 0, "[0-1]: protection info location last/first 8 bytes"),
	U32("ms", 'm', ms, 1, 0, "[0-1]: extended format off/on"),
	FLAG("reset", 'r', reset, "Automatically reset the controller after the format"),
	FLAG("force", 0, force, "The \"I know what I'm doing\" flag: no 10 s delay"),
	END };

static const struct opt create_ns_opts[] = {
	{ "nsze", 's', OPT_U64, F(nsze), 0, 0, OPT_REQUIRED | OPT_NONZERO, "IONUM",
	  "size of ns (NSZE), in blocks (required)" },
	U64("ncap", 'c', ncap, "capacity of ns (NCAP), default NSZE"),
	U32("flbas", 'f', flbas, 0xff, 0, "Formatted LBA size (FLBAS)"),
	U32("dps", 'd', dps, 0xff, 0, "data protection settings (DPS): PI type 1-3, +8 PI first"),
	U32("timeout", 't', timeout, 0, 0, "timeout value, in milliseconds"),
	U32("csi", 'y', csi, 0xff, 0, "command set identifier (CSI): 0 NVM, 2 zoned"),
	U64("lbstm", 'l', lbstm, "logical block storage tag mask (LBSTM)"), END };

static const struct opt delete_ns_opts[] = {
	{ "namespace-id", 'n', OPT_U32, F(nsid), 0, 0, OPT_REQUIRED | OPT_NONZERO, "NUM",
	  "namespace to delete (required)" },
	U32("timeout", 't', timeout, 0, 0, "timeout value, in milliseconds"), END };

static const struct opt attach_opts[] = {
	{ "namespace-id", 'n', OPT_U32, F(nsid), 0, 0, OPT_REQUIRED | OPT_NONZERO, "NUM",
	  "namespace to attach or detach (required)" },
	LIST("controllers", 'c', ctrls, 0xffff, "comma-sep controller list (default this one)"),
	END };

/* end-to-end protection, as nvme-cli: the storage tag's letter differs per command */
#define PI_OPTS(stag) \
	U32("prinfo", 'p', prinfo, 0xff, 0, "PI and check field"), \
	U64("ref-tag", 'r', ref_tag, "reference tag (for end to end PI)"), \
	U32("app-tag-mask", 'm', lbatm, 0xffff, 0, "app tag mask (for end to end PI)"), \
	U32("app-tag", 'a', lbat, 0xffff, 0, "app tag (for end to end PI)"), \
	U64("storage-tag", stag, storage_tag, "storage tag (for end to end PI)"), \
	FLAG("storage-tag-check", 'C', stag_check, \
	     "the storage tag is checked (STC; ignored by a format without storage tag)")

static const struct opt rw_opts[] = {
	NSID("identifier of desired namespace"),
	U64("start-block", 's', slba, "64-bit addr of first block to access"),
	U32("block-count", 'c', nlb, 0xffff, 0, "number of blocks (zeroes based)"),
	U64("data-size", 'z', data_size, "size of data in bytes"),
	U64("metadata-size", 'y', metadata_size, "size of metadata in bytes"),
	STR("data", 'd', data, "FILE", "data file (default stdin/stdout)"),
	STR("metadata", 'M', metadata, "FILE", "metadata file"),
	PI_OPTS('g'),
	FLAG("force-unit-access", 'f', fua, "force device to commit data before command completes"),
	FLAG("show-command", 'v', show_cmd, "show command before sending"), END };

static const struct opt flush_opts[] = { NSID("identifier of desired namespace"), END };

static const struct opt dsm_opts[] = {
	NSID("identifier of desired namespace"),
	LIST("blocks", 'b', blocks, 0xffffffffu, "Comma separated list of the number of blocks"),
	LIST("slbs", 's', slbs, 0, "Comma separated list of the starting blocks"),
	FLAG("ad", 'd', ad, "Attribute Deallocate"),
	FLAG("idw", 'w', idw, "Attribute Integral Dataset for Write"),
	FLAG("idr", 'r', idr, "Attribute Integral Dataset for Read"), END };

static const struct opt copy_opts[] = {
	NSID("identifier of desired namespace"),
	{ "sdlba", 'd', OPT_U64, F(sdlba), 0, 0, OPT_REQUIRED, "IONUM",
	  "64-bit addr of first destination block (required)" },
	LIST("slbs", 's', slbs, 0, "64-bit addr of first block per range"),
	LIST("blocks", 'b', blocks, 0xffff, "number of blocks per range (zeroes based)"),
	FLAG("force-unit-access", 'f', fua, "force unit access"), END };

static const struct opt wz_opts[] = {
	NSID("desired namespace"),
	U64("start-block", 's', slba, "64-bit LBA of first block to access"),
	U32("block-count", 'c', nlb, 0xffff, 0, "number of blocks (zeroes based)"),
	FLAG("deac", 'd', deac, "Set DEAC bit, requesting the controller to deallocate"),
	FLAG("force-unit-access", 'f', fua, "force device to commit data"), PI_OPTS('S'), END };

static const struct opt verify_opts[] = {
	NSID("desired namespace"),
	U64("start-block", 's', slba, "64-bit LBA of first block to access"),
	U32("block-count", 'c', nlb, 0xffff, 0, "number of blocks (zeroes based)"),
	PI_OPTS('S'), END };

static const struct opt range_opts[] = {
	NSID("desired namespace"),
	U64("start-block", 's', slba, "64-bit LBA of first block to access"),
	U32("block-count", 'c', nlb, 0xffff, 0, "number of blocks (zeroes based)"), END };

#define CDW(n, s) U32("cdw" #n, s, cdw[n], 0, 0, "command dword " #n " value")
static const struct opt passthru_opts[] = {
	REQ32("opcode", 'o', opcode, 0xff, "opcode (required)"),
	U32("flags", 'f', flags, 0xff, 0, "command flags"),
	{ "namespace-id", 'n', OPT_U32, F(nsid), 0, 0, 0, "NUM", "desired namespace" },
	U32("data-len", 'l', data_len, 64u << 20, 0, "data I/O length (bytes)"),
	U32("timeout", 't', timeout, 0, 0, "timeout value, in milliseconds"),
	CDW(2, '2'), CDW(3, '3'), CDW(10, '4'), CDW(11, '5'), CDW(12, '6'), CDW(13, '7'),
	CDW(14, '8'), CDW(15, '9'),
	STR("input-file", 'i', data, "FILE", "data input file (default stdin)"),
	BIN("dump output in binary format"),
	FLAG("show-command", 's', show_cmd, "print command before sending"),
	FLAG("read", 'r', rd, "set dataflow direction to receive"),
	FLAG("write", 'w', wr, "set dataflow direction to send"), END };

static const struct opt sanitize_opts[] = {
	FLAG("no-dealloc", 'd', no_dealloc, "No deallocate after sanitize"),
	FLAG("oipbp", 'i', oipbp, "Overwrite invert pattern between passes"),
	U32("owpass", 'n', owpass, 15, 0, "Overwrite pass count (0 means 16)"),
	FLAG("ause", 'u', ause, "Allow unrestricted sanitize exit"),
	{ "sanact", 'a', OPT_SANACT, F(sanact), 4, 0, OPT_REQUIRED, "STRING",
	  "Sanitize action: 1|exit-failure, 2|start-block-erase, 3|start-overwrite, "
	  "4|start-crypto-erase (required)" },
	U32("ovrpat", 'p', ovrpat, 0, 0, "Overwrite pattern"), END };

static const struct opt dst_opts[] = {
	{ "namespace-id", 'n', OPT_U32, F(nsid), 0, 0, 0, "NUM",
	  "namespace to test (default all: 0xffffffff)" },
	REQ32("self-test-code", 's', stc, 0xf,
	      "1h short, 2h extended, eh vendor specific, fh abort (required)"),
	END };

static const struct opt fw_download_opts[] = {
	{ "fw", 'f', OPT_STR, F(fw), 0, 0, OPT_REQUIRED, "FILE", "firmware file (required)" },
	U32("xfer", 'x', xfer, 1u << 20, 4096, "transfer chunksize limit (bytes, multiple of 4)"),
	U32("offset", 'o', fw_offset, 0, 0, "starting dword offset, default 0"), END };

static const struct opt fw_commit_opts[] = {
	U32("slot", 's', slot, 7, 0, "[0-7]: firmware slot for commit action"),
	U32("action", 'a', action, 7, 0, "[0-7]: commit action"),
	U32("bpid", 'b', bpid, 1, 0, "[0,1]: boot partition identifier, if applicable"), END };

static const struct opt show_regs_opts[] = {
	FMT3, HUMAN("show info in readable format"), END };

static const struct opt run_opts[] = {
	U64("size", 's', size, "bytes to write, verify and read (multiple of 128 KiB)"), END };

#define SIZE(l, field, h) { l, 0, OPT_SIZE, F(field), 0, 0, 0, "SIZE", h }
static const struct opt create_ctrl_opts[] = {
	U64("nsze", 's', nsze, "blocks of the first namespace (default 1 GiB of them)"),
	{ "controllers", 0, OPT_U32, F(controllers), 8, 0, OPT_NONZERO, "NUM",
	  "controllers of the subsystem, namespace 1 shared by all (default 1)" },
	U32("lbaf", 'l', lbaf, UCMD_NR_LBAF - 1, 0,
	    "LBA format of the first namespace: 0 512 B, 4 4 KiB ... (docs/cli.md)"),
	FLAG("zns", 0, zns, "make namespace 1 zoned (Zoned Namespace Command Set)"),
	SIZE("zone-size", zone_size, "zone size in bytes (default 128M; any block multiple)"),
	SIZE("zone-cap", zone_cap, "writable bytes of each zone (default: the zone size)"),
	U32("max-open", 0, max_open, 0, 0, "zones open at once (default 0: no limit)"),
	U32("max-active", 0, max_active, 0, 0, "open or closed zones (default 0: no limit)"),
	U32("zasl", 0, zasl, 255, 0, "zone append size limit, 2^N 4 KiB pages (0: MDTS)"),
	U32("nr-conv", 0, nr_conv, 0, 0, "must be 0: ZNS zones are sequential write required"),
	FLAG("cross-read", 0, cross_read, "reads may cross zone boundaries"),
	SIZE("zd-ext-size", zd_ext_size, "zone descriptor extension bytes (multiple of 64)"),
	FLAG("fdp", 0, fdp, "Flexible Data Placement in endurance group 1 (docs/fdp.md)"),
	U32("fdp-ruhs", 0, fdp_ruhs, 128, 0, "reclaim unit handles (default 8)"),
	U32("fdp-rgs", 0, fdp_rgs, 16, 0, "reclaim groups (default 1)"),
	SIZE("fdp-ru-size", fdp_ru_size, "reclaim unit bytes (default 1M; multiple of 4K)"),
	U32("fdp-op", 0, fdp_op, 100, 0, "overprovisioning in percent (default 7)"),
	FLAG("fdp-initially-isolated", 0, fdp_initially,
	     "handles initially, not persistently, isolated"),
	U32("fdp-ru-time-limit", 0, fdp_rutl, 0, 0,
	    "seconds a reclaim unit stays active after its first write (default 0: no limit)"),
	END };

/* nvme-cli 2.3's zns plugin */
#define ZSLBA(l) U64(l, 's', slba, "starting LBA of the zone for this command")
#define ZALL FLAG("select-all", 'a', select_all, "send command to all zones")
#define ZTIMEOUT U32("timeout", 't', timeout, 0, 0, "timeout value, in milliseconds")
static const struct opt zns_id_ctrl_opts[] = { FMT3, END };
static const struct opt nvm_id_ns_opts[] = {
	NSID("identifier of desired namespace"), FMT3, END };
static const struct opt zns_id_ns_opts[] = {
	NSID("identifier of desired namespace"),
	FLAG("vendor-specific", 'v', vs, "dump binary vendor fields"), FMT3,
	HUMAN("show identify in readable format"), END };
static const struct opt zns_report_opts[] = {
	NSID("identifier of desired namespace"), ZSLBA("start-lba"),
	U32("descs", 'd', descs, 0, UINT32_MAX, "number of descriptors to report (default all)"),
	U32("state", 'S', state, 7, 0, "state of zones to list"), FMT2,
	FLAG("verbose", 'v', verbose, "show report zones verbosity"),
	FLAG("extended", 'e', extended, "set to use the extended report zones"),
	FLAG("partial", 'p', partial, "set to use the partial report"), END };
static const struct opt zns_action_opts[] = {
	NSID("identifier of desired namespace"), ZSLBA("start-lba"), ZALL, ZTIMEOUT, END };
static const struct opt zns_open_opts[] = {
	NSID("identifier of desired namespace"), ZSLBA("start-lba"),
	FLAG("zrwaa", 'r', zrwaa, "Allocate Zone Random Write Area to zone"), ZALL, ZTIMEOUT, END };
static const struct opt zns_set_desc_opts[] = {
	NSID("identifier of desired namespace"), ZSLBA("start-lba"),
	FLAG("zrwaa", 'r', zrwaa, "Allocate Zone Random Write Area to zone"),
	STR("data", 'd', data, "FILE", "optional file for data (default stdin)"), ZTIMEOUT, END };
static const struct opt zns_send_opts[] = {
	NSID("identifier of desired namespace"), ZSLBA("start-lba"),
	FLAG("zsaso", 'o', zsaso, "Zone Send Action Specific Option"), ZALL,
	U32("zsa", 'z', zsa, 0xff, 0, "Zone Send Action"),
	U32("data-len", 'l', data_len, 1u << 24, 0, "buffer length if data required"),
	STR("data", 'd', data, "FILE", "optional file for data (default stdin)"), ZTIMEOUT, END };
static const struct opt zns_recv_opts[] = {
	FMT3, NSID("identifier of desired namespace"), ZSLBA("start-lba"),
	U32("zra", 'z', zra, 0xff, 0, "Zone Receive Action"),
	U32("zrasf", 'S', zrasf, 0xff, 0, "Zone Receive Action Specific Field"),
	FLAG("partial", 'p', partial, "Zone Receive Action Specific Features(Partial Report)"),
	U32("data-len", 'l', data_len, 1u << 24, 0, "length of data in bytes"), END };
static const struct opt zns_append_opts[] = {
	NSID("identifier of desired namespace"), ZSLBA("zslba"),
	U64("data-size", 'z', data_size, "size of data in bytes"),
	U64("metadata-size", 'y', metadata_size, "size of metadata in bytes"),
	STR("data", 'd', data, "FILE", "data file"),
	STR("metadata", 'M', metadata, "FILE", "metadata file"),
	FLAG("limited-retry", 'l', limited_retry, "limit media access attempts"),
	FLAG("force-unit-access", 'f', fua, "force device to commit data before command "
	     "completes"),
	U64("ref-tag", 'r', ref_tag, "reference tag (for end to end PI)"),
	U32("app-tag-mask", 'm', lbatm, 0xffff, 0, "app tag mask (for end to end PI)"),
	U32("app-tag", 'a', lbat, 0xffff, 0, "app tag (for end to end PI)"),
	U32("prinfo", 'p', prinfo, 0xff, 0, "protection information action and checks field"),
	FLAG("piremap", 'P', piremap, "protection information remap (for type 1 PI)"),
	FLAG("latency", 't', latency, "output latency statistics"), END };
static const struct opt zns_changed_opts[] = {
	NSID("identifier of desired namespace"), FMT3,
	FLAG("rae", 'r', rae, "retain an asynchronous event"), END };

static const struct opt ana_log_opts[] = {
	FLAG("groups", 'g', ana_groups, "Return ANA groups only."), FMT3, END };

static const struct opt ana_state_opts[] = {
	{ "port", 'p', OPT_U32, F(port), 0xffff, 0, OPT_NONZERO, "NUM",
	  "NVMe/TCP port: ucmdd's --nvme-tcp listeners from 1 in order" },
	STR("controller", 'c', ana_ctrl, "NAME", "or a controller of a directory of several "
	    "(nvmeX), a port of its own"),
	{ "group", 'g', OPT_U32, F(anagrp), 0xffffffff, 1, OPT_NONZERO, "NUM",
	  "ANA group (default 1)" },
	STR("state", 's', ana_state, "STATE", "set it: optimized, non-optimized, inaccessible, "
	    "persistent-loss or change (default: show it)"), END };
static const struct opt port_state_opts[] = {
	{ "port", 'p', OPT_U32, F(port), 0xffff, 0, OPT_REQUIRED | OPT_NONZERO, "NUM",
	  "NVMe/TCP port: ucmdd's --nvme-tcp listeners from 1 in order (required)" },
	STR("state", 's', ana_state, "STATE", "set it: up or down (default: show it)"), END };
/* nvme-cli 2.3's fdp plugin */
#define EGID U32("endgrp-id", 'e', endgrp_id, 0xffff, 0, "Endurance group identifier")
static const struct opt fdp_configs_opts[] = {
	EGID, FMT3, BIN("use binary output"), HUMAN("show log in readable format"), END };
static const struct opt fdp_log_opts[] = { EGID, FMT3, BIN("use binary output"), END };
static const struct opt fdp_events_opts[] = {
	EGID, FLAG("host-events", 'E', host_events, "Get host events"), FMT3,
	BIN("use binary output"), END };
static const struct opt fdp_status_opts[] = {
	NSID("Namespace identifier"), FMT3, BIN("use binary output"), END };
static const struct opt fdp_update_opts[] = {
	NSID("Namespace identifier"),
	LIST("pids", 'p', pids, 0xffff, "Comma-separated list of placement identifiers to update"),
	END };
static const struct opt fdp_set_events_opts[] = {
	NSID("Namespace identifier"),
	U32("placement-handle", 'p', placement_handle, 0xffff, 0, "Placement Handle"),
	FLAG("enable", 'e', fdp_enable, "Enable/disable event"),
	LIST("event-types", 't', event_types, 0xff, "Comma-separated list of event types"), END };
static const struct opt fdp_feature_opts[] = {
	EGID, U32("enable-conf-idx", 'c', conf_idx, 256, 256, "FDP configuration index to enable"),
	FLAG("disable", 'd', fdp_disable, "Disable current FDP configuration"),
	FLAG("verbose", 'v', verbose, "Increase output verbosity"), END };

const struct cmd_spec cli_specs[] = {
	{ "run", "the main job: write, verify, read, identify, SMART log", NULL, run_opts,
	  .no_device = true },
	{ "list", "List all NVMe devices and namespaces of the controller", NULL, list_opts,
	  .only_reads = true },
	{ "list-subsys", "List nvme subsystems", NULL, list_opts, .only_reads = true,
	  .dev_in_view = true },
	{ "show-topology", "Show the topology",
	  "The subsystem's namespaces and their paths (a controller each, with its\n"
	  "state and the path's ANA state), or with --ranking ctrl each controller and\n"
	  "the namespaces it is a path of: a directory of several controllers, here or\n"
	  "in ucmdd, or nvme-tcp:// URLs of one subsystem, as nvme-cli shows Linux's.",
	  topology_opts, .only_reads = true, .no_device = true },
	{ "id-ctrl", "Send NVMe Identify Controller", NULL, id_ctrl_opts, .only_reads = true },
	{ "nvm-id-ns", "Send NVMe Identify Namespace NVM Command Set, display structure", NULL,
	  nvm_id_ns_opts, .only_reads = true },
	{ "id-ns", "Send NVMe Identify Namespace, display structure", NULL, id_ns_opts,
	  .only_reads = true },
	{ "ns-descs", "Send NVMe Namespace Descriptor List, display structure", NULL,
	  ns_descs_opts, .only_reads = true },
	{ "smart-log", "Retrieve SMART Log, show it", NULL, smart_opts, .only_reads = true },
	{ "error-log", "Retrieve Error Log, show it", NULL, error_log_opts, .only_reads = true },
	{ "effects-log", "Retrieve Command Effects Log, show it", NULL, effects_opts,
	  .only_reads = true },
	{ "fw-log", "Retrieve FW Log, show it", NULL, fw_log_opts, .only_reads = true },
	{ "sanitize-log", "Retrieve sanitize log, show it", NULL, sanitize_log_opts,
	  .only_reads = true },
	{ "self-test-log", "Retrieve the SELF-TEST Log, show it", NULL, self_test_log_opts,
	  .only_reads = true },
	{ "ana-log", "Retrieve ANA Log, show it", NULL, ana_log_opts, .only_reads = true },
	{ "get-log", "Generic NVMe get log, returns log in raw format", NULL, get_log_opts,
	  .only_reads = true },
	{ "get-feature", "Get feature and show the resulting value", NULL, get_feature_opts,
	  .only_reads = true },
	{ "set-feature", "Set a feature and show the resulting value", NULL, set_feature_opts },
	{ "format", "Format namespace with new block format",
	  "Re-format a namespace: all its data is erased. Unless --force is given, ucmd\n"
	  "names the device and waits 10 seconds first (Ctrl-C cancels).", format_opts },
	{ "create-ns", "Creates a namespace with the provided parameters", NULL, create_ns_opts },
	{ "delete-ns", "Deletes a namespace from the controller", NULL, delete_ns_opts },
	{ "attach-ns", "Attaches a namespace to requested controller(s)", NULL, attach_opts },
	{ "detach-ns", "Detaches a namespace from requested controller(s)", NULL, attach_opts },
	{ "read", "Submit a read command, return results", NULL, rw_opts, .only_reads = true },
	{ "write", "Submit a write command, return results", NULL, rw_opts },
	{ "compare", "Submit a Compare command, return results", NULL, rw_opts,
	  .only_reads = true },
	{ "write-zeroes", "Submit a write zeroes command, return results", NULL, wz_opts },
	{ "write-uncor", "Submit a write uncorrectable command, return results", NULL,
	  range_opts },
	{ "verify", "Submit a verify command, return results", NULL, verify_opts,
	  .only_reads = true },
	{ "dsm", "Submit a Data Set Management command, return results", NULL, dsm_opts },
	{ "copy", "Submit a Simple Copy command, return results", NULL, copy_opts },
	{ "flush", "Submit a Flush command, return results", NULL, flush_opts },
	{ "sanitize", "Submit a sanitize command", NULL, sanitize_opts },
	{ "device-self-test", "Start or abort a device self-test", NULL, dst_opts },
	{ "fw-download", "Download new firmware", NULL, fw_download_opts },
	{ "fw-commit", "Verify and commit firmware to a specific slot", NULL, fw_commit_opts },
	{ "reset", "Resets the controller", NULL, none },
	{ "ana-state", "Show or set an ANA group's state on a port: an NVMe/TCP listener or a controller",
	  "As nvmet's configfs ana_state: ucmdd's --nvme-tcp listeners (--port, needs\n"
	  "--daemon) are the ports of every subsystem it exports, and each controller of a\n"
	  "directory of several (--controller nvmeX, in ucmdd or here with --ctrl DIR) is\n"
	  "a port of its own, its state kept in the directory; hosts see the change in the\n"
	  "ANA log page, an ANA Change event, and the status of I/O through the port.",
	  ana_state_opts, .no_device = true },
	{ "port-state", "Show, take down or bring back one of ucmdd's NVMe/TCP ports",
	  "Down, the port listens no more and every connection made through it is\n"
	  "closed (its hosts lose their associations, as when a link goes down); up, it\n"
	  "listens again on its address and hosts reconnect. Needs --daemon.",
	  port_state_opts, .no_device = true },
	{ "show-regs", "Shows the controller registers", NULL, show_regs_opts,
	  .only_reads = true },
	{ "io-passthru", "Submit an arbitrary IO command, return results", NULL, passthru_opts },
	{ "admin-passthru", "Submit an arbitrary admin command, return results", NULL,
	  passthru_opts },
	{ "bench", "fio-style workload: IOPS, bandwidth, latency percentiles (own RAM namespace)",
	  NULL, NULL, .no_device = true },
	{ "policy", "check or explain a security policy", NULL, NULL, .no_session = true,
	  .no_device = true },
	{ "exec", "run a program with the controller's devices (LD_PRELOAD)", NULL, NULL,
	  .no_session = true, .no_device = true },
	{ "zns id-ctrl", "Send NVMe Identify Zoned Namespace Controller, display structure",
	  NULL, zns_id_ctrl_opts, .only_reads = true },
	{ "zns id-ns", "Send NVMe Identify Zoned Namespace Namespace, display structure", NULL,
	  zns_id_ns_opts, .only_reads = true },
	{ "zns report-zones", "Report zones associated to a Zoned Namespace", NULL,
	  zns_report_opts, .only_reads = true },
	{ "zns reset-zone", "Reset one or more zones", NULL, zns_action_opts },
	{ "zns close-zone", "Close one or more zones", NULL, zns_action_opts },
	{ "zns finish-zone", "Finish one or more zones", NULL, zns_action_opts },
	{ "zns open-zone", "Open one or more zones", NULL, zns_open_opts },
	{ "zns offline-zone", "Offline one or more zones", NULL, zns_action_opts },
	{ "zns set-zone-desc", "Attach zone descriptor extension data to a zone", NULL,
	  zns_set_desc_opts },
	{ "zns changed-zone-list", "Retrieve the changed zone list log", NULL, zns_changed_opts },
	{ "zns zone-mgmt-recv", "Send the zone management receive command", NULL, zns_recv_opts,
	  .only_reads = true },
	{ "zns zone-mgmt-send", "Send the zone management send command", NULL, zns_send_opts },
	{ "fdp configs", "List configurations", NULL, fdp_configs_opts, .only_reads = true },
	{ "fdp usage", "Show reclaim unit handle usage", NULL, fdp_log_opts, .only_reads = true },
	{ "fdp stats", "Show statistics", NULL, fdp_log_opts, .only_reads = true },
	{ "fdp events", "List events affecting reclaim units and media usage", NULL,
	  fdp_events_opts, .only_reads = true },
	{ "fdp status", "Show reclaim unit handle status", NULL, fdp_status_opts,
	  .only_reads = true },
	{ "fdp update", "Update a reclaim unit handle", NULL, fdp_update_opts },
	{ "fdp set-events", "Enabled or disable events", NULL, fdp_set_events_opts },
	{ "fdp feature", "Show, enable or disable the FDP configuration", NULL, fdp_feature_opts },
	{ "zns zone-append", "Append data and metadata (if applicable) to a zone", NULL,
	  zns_append_opts },
	{ "create-ctrl", "create the controller directory (--ctrl DIR) with one namespace",
	  NULL, create_ctrl_opts, .no_session = true, .no_device = true },
	{ "version", "Shows the program version", NULL, none, .no_session = true,
	  .no_device = true },
	{ "help", "Display this help, or a command's", NULL, NULL, .no_session = true,
	  .no_device = true },
	{ NULL },
};

const struct cmd_spec *cli_spec_find(const char *name)
{
	for (const struct cmd_spec *c = cli_specs; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* Levenshtein distance, two rows; names are short */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[64], cur[64];

	if (la >= 64 || lb >= 64)
		return 64;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, sizeof(prev));
	}
	return prev[lb];
}

const char *cli_spec_suggest(const char *name)
{
	const char *best = NULL;
	size_t bd = 3;

	for (const struct cmd_spec *c = cli_specs; c->name; c++) {
		size_t d = edit_distance(name, c->name);

		if (d < bd) {
			bd = d;
			best = c->name;
		}
	}
	return best;
}
