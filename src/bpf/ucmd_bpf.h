/* SPDX-License-Identifier: MIT */
/*
 * ucmd's policy on Linux's own devices: a BPF LSM program (ucmd_lsm.bpf.c)
 * on uring_cmd and file_ioctl, fed with a policy compiled into maps. The
 * CLI's `ucmd policy load|unload|status|audit --bpf` call these. Uses
 * libucmd's public API only (the policy's parse is the engine's).
 */
#ifndef UCMD_BPF_H
#define UCMD_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the program, its links and its maps are pinned (bpffs). */
#define UCMD_BPF_PIN_DIR "/sys/fs/bpf/ucmd"

/*
 * Compile path and put it in force: loads and pins the program the first
 * time, else swaps the rule set in one map update. On any error (invalid
 * policy, a rule the program cannot hold, a kernel that cannot run it) the
 * policy in force stays and err says why. 0 or -errno.
 */
int bpf_lsm_load(const char *path, char *err, size_t errlen);
/* Detach and unpin: Linux's own checks alone from then on. 0, -ENOENT, -errno. */
int bpf_lsm_unload(char *err, size_t errlen);

struct bpf_lsm_status {
	bool loaded;
	char file[256];
	unsigned nrules, ndevices;
	uint32_t gen;
	uint64_t allowed, denied, lost;
	/* with kernel.bpf_stats_enabled=1: runs and ns in each program */
	uint64_t uring_runs, uring_ns, ioctl_runs, ioctl_ns;
};
int bpf_lsm_status(struct bpf_lsm_status *st, char *err, size_t errlen);

/*
 * Read the program's ring buffer into the JSON-lines trail path ("-":
 * stderr), the engine's audit records. Stops after max records (0: no
 * limit) or when idle_ms pass with nothing (0: never). 0 or -errno.
 */
int bpf_lsm_audit(const char *path, unsigned long max, unsigned idle_ms, char *err,
		   size_t errlen);

/* ---- internal to src/bpf ---------------------------------------------------- */

struct ul_rule;
struct ul_conf;

/* A device as the loader found it. */
struct ucmd_bpf_dev {
	char name[32];
	uint32_t dev;		/* kernel dev_t */
	bool blk;
	unsigned kind;		/* UL_DEV_* */
	uint32_t nsid, ctrl, lba_shift;
};

/* What one rule set is made of, ready to be written into the maps. */
struct ucmd_bpf_image {
	unsigned nrules;
	struct ul_rule *rules;		/* UL_MAX_RULES */
	char (*labels)[128];		/* UL_MAX_RULES + 1, the last the default's */
	bool default_allow, audit_default;
};

/* Compile policy file path against devs; -EINVAL with err on a policy it cannot hold. */
int bpf_lsm_compile(const char *path, const struct ucmd_bpf_dev *devs, unsigned ndevs,
		     struct ucmd_bpf_image *img, char *err, size_t errlen);
void bpf_lsm_image_free(struct ucmd_bpf_image *img);

#endif
