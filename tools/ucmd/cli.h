/* SPDX-License-Identifier: MIT */
/* The ucmd command-line tool: shared state and helpers. */
#ifndef UCMD_CLI_H
#define UCMD_CLI_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "args.h"
#include "print.h"
#include "ucmd/ctrl.h"
#include "ucmd/ucmd.h"

struct ucmd_ctrl;
struct ucmd_nvme_host;
struct ucmd_nvme_subsys;
struct ucmd_kernel_nvme;

struct session {
	const char *dir;
	struct ucmd_engine *e;
	struct ucmd_ctrl *ctrl;
	struct ucmd_nvme_host *host;
	struct ucmd_nvme_subsys *subsys;	/* --ctrl URL,URL: a multipath subsystem */
	struct ucmd_ring ring;
	int ctrl_fd;		/* nvme0 */
	int ns_fd;		/* ng0n<nsid> */
	uint32_t nsid;
	uint32_t lba_size;
	uint16_t meta_size;
	uint8_t lbaf;		/* the namespace's LBA format in use */
	bool extended;		/* its metadata at the end of each block's data */
	uint64_t nsze;
	bool kernel;		/* a real device through the kernel backend */
	bool reported;		/* session_open printed why it failed: no second line */
	bool daemon;		/* the controllers of ucmdd, through its socket (dir) */
	bool security;		/* security modules set up on the engine */
	struct ucmd_kernel_nvme *kn;
};

struct cli {
	enum out_fmt fmt;
	const char *ctrl_dir;
	bool ctrl_given;	/* --ctrl on the command line */
	const char *daemon;	/* --daemon SOCKET, or $UCMD_DAEMON (main.c) */
	const char *device;	/* a /dev path: the kernel backend */
	const char *policy;	/* NULL: the default policy (Linux's rules) */
	const char *audit;	/* NULL: no audit trail; "-": stderr */
	const char *hostnqn;	/* --hostnqn: nvme-tcp:// controllers; NULL: the system's */
	bool create;		/* --create: make --ctrl DIR if it does not exist */
	uint32_t nsid;		/* global -n (before the command) */
	const struct cmd_spec *spec;	/* the command's table */
	struct cmd_args a;	/* the command's options, parsed before any session */
	struct session s;
	bool session_open;
};

/*
 * A command's implementation; its options are in cli->a (parsed with its
 * table in cmd_tab.c), argv is the command's own (argv[0] its name) for
 * the commands that parse their own (bench, policy, exec, help).
 */
typedef int (*cli_fn)(struct cli *cli, int argc, char **argv);

/* session.c */
/* --hostnqn: the host NQN of an nvme-tcp:// controller (NULL: /etc/nvme/hostnqn or generated) */
extern const char *session_hostnqn;
/* create-ctrl: the first namespace's format and zones (NULL: 512-byte blocks, not zoned) */
extern const struct ucmd_ns_params *session_bootstrap_ns;
/* create-ctrl --fdp: the endurance group of the controller made now */
extern const struct ucmd_fdp_params *session_bootstrap_fdp;
/* create-ctrl --controllers: a new directory's subsystem has this many (0: 1) */
extern unsigned session_bootstrap_controllers;
/*
 * The controller in dir. bootstrap_blocks 0: it must exist (-ENOENT
 * otherwise, said on stderr); else a directory without a controller is
 * created with one namespace of that many 512-byte blocks.
 */
int session_open(struct session *s, const char *dir, uint32_t nsid, const char *policy,
		 const char *audit, bool only_reads, uint64_t bootstrap_blocks);
/* The device names as `ucmd exec` shows them: nvme0, nvme0n<nsid>, ng0n<nsid>. */
const char *session_devname(const struct session *s, char *buf, size_t len);
/* The kernel backend: a real /dev/ngXnY, /dev/nvmeXnY or /dev/nvmeX. */
int session_open_kernel(struct session *s, const char *path, uint32_t nsid);
/* ucmdd's controllers through its socket (<ucmd/daemon.h>). */
int session_open_daemon(struct session *s, const char *sock, uint32_t nsid, bool only_reads);
/* 0, or -errno when the controller's state could not be saved (ucmd_last_error() says why) */
int  session_close(struct session *s);
/* Synchronous passthrough through the ring: returns cqe.res, *result = big_cqe[0]. */
int session_passthru(struct session *s, bool admin, const struct nvme_uring_cmd *cmd,
		     uint64_t *result);
int session_namespace_info(struct session *s, uint32_t nsid);

/* subsys_paths.c: the session's subsystem's controllers, for list-subsys */
struct subsys_path {
	unsigned inst;		/* nvme<inst> */
	int fd;			/* its device, open on the session's engine; -1: the session's */
	uint16_t cntlid;
	bool ana;		/* it reports ANA (CMIC bit 3) */
};
/* Up to max into p, nvme0 (the session's controller) among them: how many (1 or more) */
unsigned subsys_paths(struct cli *cli, const struct nvme_id_ctrl *id0, struct subsys_path *p,
		      unsigned max);
void subsys_paths_close(struct cli *cli, struct subsys_path *p, unsigned n);
/* Bit i: namespace nsid is attached to p[i] (Identify CNS 12h); 0 if none or unknown */
unsigned subsys_paths_attached(struct cli *cli, const struct subsys_path *p, unsigned n,
			       uint32_t nsid);
/* nsid's ANA state through p, as Linux's ana_state names it ("optimized" without ANA) */
const char *subsys_path_ana(struct cli *cli, const struct subsys_path *p, uint32_t nsid);
/* Linux's sysfs ana_state names (nvme_ana_state_names) of an ANA state */
const char *subsys_ana_name(unsigned state);
/* Controller nvme<x>'s PCI address as `ucmd exec`'s sysfs shows it ("0000:00:06.0") */
void subsys_pci_addr(unsigned x, char *out, size_t len);
/* The session's namespaces (its ng0nY devices), up to max, in the engine's order: how many */
int subsys_nsids(struct cli *cli, uint32_t *nsid, int max);

/* subsys_tcp.c: the paths of an nvme-tcp:// session (--ctrl URL[,URL...]) */
struct subsys_tcp_path {
	unsigned inst;		/* nvme<inst> */
	char address[400];	/* Linux's sysfs "address" of an nvme-tcp controller */
	const char *state;	/* "live", "connecting" */
	const char *ana;	/* the head's ANA state of the path for nsid; NULL: never
				 * connected, no path of any namespace */
};
/* One per URL, in their order, up to max: how many; 0 for a session not over nvme-tcp:// */
unsigned subsys_tcp_paths(struct cli *cli, uint32_t nsid, struct subsys_tcp_path *p,
			  unsigned max);
/*
 * The host NQN and host ID the session's nvme-tcp:// controllers were
 * connected with (Linux's sysfs hostnqn and hostid, which nvme-cli groups
 * them by): false for a session not over nvme-tcp://, or none connected.
 */
bool subsys_tcp_host(struct cli *cli, char *nqn, size_t nqn_len, char *id, size_t id_len);

/* The output a command's options ask for: -b is binary whatever -o says. */
static inline enum out_fmt cli_fmt(const struct cli *cli)
{
	return cli->a.raw ? OUT_BINARY : cli->a.fmt;
}

static inline unsigned cli_pflags(const struct cli *cli)
{
	return (cli->a.human ? PRINT_HUMAN : 0) | (cli->a.verbose ? PRINT_VERBOSE : 0) |
	       (cli->a.vs ? PRINT_VS : 0);
}

/* output.c */
void print_status_error(const char *what, int res);
void json_print(struct json_object *o);
int parse_u64(const char *s, uint64_t *out);
int parse_u32(const char *s, uint32_t *out);
/* a 4 KiB-aligned zeroed buffer of len bytes (rounded up), free() it */
void *cli_zalloc(size_t len);
/* one admin command; prints the status as what on failure */
int cli_admin(struct cli *cli, const char *what, struct nvme_uring_cmd *c, uint64_t *result);
/* Get Log Page of len bytes into buf */
int cli_get_log(struct cli *cli, const char *what, uint8_t lid, uint32_t nsid, void *buf,
		uint32_t len);
/* Identify into a 4 KiB buffer (NULL on failure, status printed) */
void *cli_identify(struct cli *cli, const char *what, uint32_t cns, uint32_t nsid);
/* The same for the I/O command set csi (CDW11's CSI: the command-set specific CNS values). */
void *cli_identify_csi(struct cli *cli, const char *what, uint32_t cns, uint8_t csi, uint32_t nsid);
uint64_t le128_lo(const uint8_t v[16]);

/* command implementations */
int cmd_list(struct cli *cli, int argc, char **argv);
int cmd_id_ctrl(struct cli *cli, int argc, char **argv);
int cmd_id_ns(struct cli *cli, int argc, char **argv);
int cmd_smart_log(struct cli *cli, int argc, char **argv);
/* cmd_pi.c: PRINFO, tags (-p -r -a -m -g/-S) into an I/O command; -EINVAL, said, if they are bad */
int cli_pi_fields(struct cli *cli, const char *what, struct nvme_uring_cmd *c);
/* the protection tuple's size in the namespace's format: 8 or 16 */
unsigned cli_pi_tuple_size(struct cli *cli);
int cmd_nvm_id_ns(struct cli *cli, int argc, char **argv);
int cmd_read(struct cli *cli, int argc, char **argv);
int cmd_write(struct cli *cli, int argc, char **argv);
int cmd_flush(struct cli *cli, int argc, char **argv);
int cmd_io_passthru(struct cli *cli, int argc, char **argv);
int cmd_admin_passthru(struct cli *cli, int argc, char **argv);
int cmd_run(struct cli *cli, int argc, char **argv);
int cmd_compare(struct cli *cli, int argc, char **argv);
int cmd_write_zeroes(struct cli *cli, int argc, char **argv);
int cmd_write_uncor(struct cli *cli, int argc, char **argv);
int cmd_verify(struct cli *cli, int argc, char **argv);
int cmd_dsm(struct cli *cli, int argc, char **argv);
int cmd_copy(struct cli *cli, int argc, char **argv);
int cmd_ns_descs(struct cli *cli, int argc, char **argv);
int cmd_error_log(struct cli *cli, int argc, char **argv);
int cmd_effects_log(struct cli *cli, int argc, char **argv);
int cmd_get_feature(struct cli *cli, int argc, char **argv);
int cmd_set_feature(struct cli *cli, int argc, char **argv);
int cmd_format(struct cli *cli, int argc, char **argv);
int cmd_create_ns(struct cli *cli, int argc, char **argv);
int cmd_delete_ns(struct cli *cli, int argc, char **argv);
int cmd_attach_ns(struct cli *cli, int argc, char **argv);
int cmd_detach_ns(struct cli *cli, int argc, char **argv);
int cmd_policy(struct cli *cli, int argc, char **argv);
int cmd_bench(struct cli *cli, int argc, char **argv);
int cmd_exec(struct cli *cli, int argc, char **argv);
int cmd_list_subsys(struct cli *cli, int argc, char **argv);
int cmd_show_topology(struct cli *cli, int argc, char **argv);
int cmd_fw_log(struct cli *cli, int argc, char **argv);
int cmd_sanitize_log(struct cli *cli, int argc, char **argv);
int cmd_self_test_log(struct cli *cli, int argc, char **argv);
int cmd_get_log(struct cli *cli, int argc, char **argv);
int cmd_show_regs(struct cli *cli, int argc, char **argv);
int cmd_reset(struct cli *cli, int argc, char **argv);
int cmd_ana_state(struct cli *cli, int argc, char **argv);
int cmd_port_state(struct cli *cli, int argc, char **argv);
int cmd_ana_log(struct cli *cli, int argc, char **argv);
int cmd_sanitize(struct cli *cli, int argc, char **argv);
int cmd_device_self_test(struct cli *cli, int argc, char **argv);
int cmd_fw_download(struct cli *cli, int argc, char **argv);
int cmd_fw_commit(struct cli *cli, int argc, char **argv);
int cmd_create_ctrl(struct cli *cli, int argc, char **argv);
/* cmd_zns.c: `ucmd zns ...` */
int cmd_zns_id_ctrl(struct cli *cli, int argc, char **argv);
int cmd_zns_id_ns(struct cli *cli, int argc, char **argv);
int cmd_zns_report_zones(struct cli *cli, int argc, char **argv);
int cmd_zns_reset_zone(struct cli *cli, int argc, char **argv);
int cmd_zns_close_zone(struct cli *cli, int argc, char **argv);
int cmd_zns_finish_zone(struct cli *cli, int argc, char **argv);
int cmd_zns_open_zone(struct cli *cli, int argc, char **argv);
int cmd_zns_offline_zone(struct cli *cli, int argc, char **argv);
int cmd_zns_set_zone_desc(struct cli *cli, int argc, char **argv);
int cmd_zns_changed_zone_list(struct cli *cli, int argc, char **argv);
int cmd_zns_zone_mgmt_recv(struct cli *cli, int argc, char **argv);
int cmd_zns_zone_mgmt_send(struct cli *cli, int argc, char **argv);
int cmd_zns_zone_append(struct cli *cli, int argc, char **argv);
int cmd_fdp_configs(struct cli *cli, int argc, char **argv);
int cmd_fdp_usage(struct cli *cli, int argc, char **argv);
int cmd_fdp_stats(struct cli *cli, int argc, char **argv);
int cmd_fdp_events(struct cli *cli, int argc, char **argv);
int cmd_fdp_status(struct cli *cli, int argc, char **argv);
int cmd_fdp_update(struct cli *cli, int argc, char **argv);
int cmd_fdp_set_events(struct cli *cli, int argc, char **argv);
int cmd_fdp_feature(struct cli *cli, int argc, char **argv);
int cmd_version(struct cli *cli, int argc, char **argv);
int cmd_help(struct cli *cli, int argc, char **argv);
/* bench: its options before any session; returns 1 after --help, <0 on error */
int bench_pre(struct cli *cli, int argc, char **argv, bool *needs_session);

#endif
