/* SPDX-License-Identifier: MIT */
/*
 * The CLI's printers: one per report, in nvme-cli's layouts (same keys,
 * nesting, value types and normal-output lines as Debian's nvme-cli, which
 * tests/system/cli_nvme_cli.sh runs under `ucmd exec` on the same
 * controller and compares key by key). The commands (cmd_*.c) fetch the
 * data and call exactly one printer; printers never touch a session, so
 * that they can be unit-tested on fixed structures.
 *
 * Data is in NVMe wire format (little endian), as libnvme's <nvme/types.h>
 * structures; printers convert. Output goes to stdout; OUT_BINARY writes
 * the raw structure as nvme-cli's `-o binary` does.
 */
#ifndef UCMD_CLI_PRINT_H
#define UCMD_CLI_PRINT_H

#include <stdint.h>

#include <nvme/types.h>

enum out_fmt { OUT_NORMAL, OUT_JSON, OUT_BINARY };

/* flags */
#define PRINT_HUMAN	(1u << 0)	/* -H / --human-readable: decode fields */
#define PRINT_VERBOSE	(1u << 1)	/* -v / --verbose (list, list-subsys) */
#define PRINT_VS	(1u << 2)	/* -V / --vendor-specific (id-ctrl, id-ns) */

/* One namespace of a controller, for list and list-subsys. */
struct print_ns {
	uint32_t nsid;
	const struct nvme_id_ns *id;	/* Identify Namespace of nsid */
	const char *blkdev;	/* "/dev/nvme0n1" */
	const char *gendev;	/* "/dev/ng0n1" */
};

/* One controller as nvme-cli's list/list-subsys see it through sysfs. */
struct print_ctrl {
	const char *name;	/* "nvme0" */
	const char *subsys;	/* "nvme-subsys0"; NULL: filtered out, only its host shows */
	const char *transport;	/* "pcie", "tcp" */
	const char *address;	/* "0000:00:04.0", "traddr=...,trsvcid=..." */
	const char *state;	/* "live" */
	const char *hostnqn;	/* may be NULL */
	const char *hostid;	/* may be NULL */
	const struct nvme_id_ctrl *id;
	int nr_ns;
	const struct print_ns *ns;
	/*
	 * list-subsys: NULL, shown as a controller of its subsystem; else as
	 * a path of a namespace (nvme-cli's "+- nvme0 pcie ADDR live STATE"),
	 * with this ANA state when it is not "" (JSON "ANAState").
	 */
	const char *ana_state;
};

/* show-topology -r: the tree's first level, as nvme-cli's enum nvme_cli_topo_ranking */
enum topo_ranking { TOPO_NAMESPACE, TOPO_CTRL };

/*
 * show-topology: one subsystem as libnvme's tree holds it. ctrl[] are its
 * controllers in their names' order (libnvme's scandir), which is the
 * order of a namespace's paths; the subsystem's own list of controllers
 * is the reverse (head insertion), and so is nsid[] (the namespaces in the
 * subsystem's list order, given so). ana[i * nr_ctrl + k] is the ANA state
 * of namespace i's path through ctrl[k], NULL where there is no path; ana
 * NULL: no multipath head (one controller), the namespaces are the
 * controller's own.
 */
struct print_topo {
	const char *hostnqn, *hostid;	/* may be NULL */
	const char *name, *nqn;		/* "nvme-subsys0", its NQN */
	int nr_ctrl;
	const struct print_ctrl *ctrl;	/* name, transport, address, state */
	int nr_ns;
	const uint32_t *nsid;
	const char *const *ana;
};

void print_list(const struct print_ctrl *c, int nr, enum out_fmt f, unsigned flags);
void print_list_subsys(const struct print_ctrl *c, int nr, enum out_fmt f, unsigned flags);
/* show-topology; OUT_BINARY is the text, as nvme-cli prints it */
void print_topology(const struct print_topo *t, enum out_fmt f, enum topo_ranking r);
void print_id_ctrl(const struct nvme_id_ctrl *id, enum out_fmt f, unsigned flags);
void print_id_ns(const struct nvme_id_ns *ns, uint32_t nsid, enum out_fmt f, unsigned flags);
/* buf: the 4096-byte Namespace Identification Descriptor list (CNS 03h) */
void print_ns_descs(const void *buf, uint32_t nsid, enum out_fmt f);
void print_smart_log(const struct nvme_smart_log *s, uint32_t nsid, const char *devname,
		     enum out_fmt f, unsigned flags);
void print_error_log(const struct nvme_error_log_page *e, int nr, const char *devname,
		     enum out_fmt f);
void print_effects_log(const struct nvme_cmd_effects_log *e, enum out_fmt f, unsigned flags);
void print_fw_log(const struct nvme_firmware_slot *fw, const char *devname, enum out_fmt f);
/* the ANA log page (0Ch), len bytes of it */
void print_ana_log(const void *buf, size_t len, const char *devname, enum out_fmt f);
void print_sanitize_log(const struct nvme_sanitize_log_page *s, const char *devname,
			enum out_fmt f, unsigned flags);
void print_self_test_log(const struct nvme_self_test_log *l, uint32_t nr_entries,
			 const char *devname, enum out_fmt f);
/* the same with flags: PRINT_VERBOSE is self-test-log -v (results and codes named) */
void print_self_test_log_flags(const struct nvme_self_test_log *l, uint32_t nr_entries,
			       const char *devname, enum out_fmt f, unsigned flags);
/*
 * get-feature: result is CQE dword 0; data (may be NULL, len 0) the
 * feature's data buffer for the features that have one; sel the select
 * field (0 current, 1 default, 2 saved, 3 supported capabilities).
 */
void print_feature(uint8_t fid, uint8_t sel, uint32_t result, const void *data, uint32_t len,
		   enum out_fmt f, unsigned flags);
/* get-log with a raw log id: nvme-cli's header line and hex dump (or binary) */
void print_get_log(const char *devname, uint8_t lid, uint32_t nsid, const void *buf,
		   uint32_t len, enum out_fmt f);
/* show-regs: bar is the controller's register file from offset 0 (0x1000 bytes) */
void print_show_regs(const void *bar, enum out_fmt f, unsigned flags);

#endif
