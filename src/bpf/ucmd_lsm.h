/* SPDX-License-Identifier: MIT */
/*
 * What the BPF LSM program (ucmd_lsm.bpf.c) and its loader (loader.c) share:
 * a policy compiled into fixed-size rules, the devices it names, the
 * controllers' effects, and the audit event. Included by the BPF program
 * (types from vmlinux.h) and by user space (<linux/types.h>).
 */
#ifndef UCMD_BPF_LSM_H
#define UCMD_BPF_LSM_H

#define UL_MAX_RULES	128	/* per rule set */
#define UL_MAX_DEVS	64	/* devices a policy can tell apart (bit per device) */
#define UL_MAX_CTRLS	8	/* controllers whose effects log is kept */
#define UL_SET_MAX	8	/* values or ranges in a uid, gid or nsid key */
#define UL_MAX_GROUPS	32	/* supplementary groups read; past that, fail closed */
#define UL_SETS		2	/* rule sets: the one in force and the next */

#define UL_EFFECTS_PER_SET	(UL_MAX_CTRLS * 512)

/* device kinds */
#define UL_DEV_NG	0	/* /dev/ngXnY: namespace character device */
#define UL_DEV_CTRL	1	/* /dev/nvmeX: controller character device */
#define UL_DEV_BLK	2	/* /dev/nvmeXnY: namespace block device */

/* hooks in audit events */
#define UL_HOOK_URING_CMD	0
#define UL_HOOK_FILE_IOCTL	1

/* stats[] slots */
#define UL_STAT_ALLOW	0
#define UL_STAT_DENY	1
#define UL_STAT_LOST	2	/* audit events the ring buffer had no room for */
#define UL_STAT_NR	4

/* Verbs, in the policy language's order (the loader checks the names). */
enum ul_verb {
	UL_VERB_READ, UL_VERB_WRITE, UL_VERB_FLUSH, UL_VERB_TRIM, UL_VERB_WRITE_ZEROES,
	UL_VERB_WRITE_UNCOR, UL_VERB_COMPARE, UL_VERB_VERIFY, UL_VERB_COPY, UL_VERB_IDENTIFY,
	UL_VERB_GET_LOG, UL_VERB_GET_FEATURE, UL_VERB_SET_FEATURE, UL_VERB_FORMAT,
	UL_VERB_SANITIZE, UL_VERB_FIRMWARE, UL_VERB_NS_MANAGE, UL_VERB_NS_ATTACH,
	UL_VERB_QUEUE_MANAGE, UL_VERB_ABORT, UL_VERB_ASYNC_EVENT, UL_VERB_VENDOR,
	UL_VERB_UNKNOWN, UL_VERB_NR,
};

struct ul_range {
	__u64 lo, hi;	/* inclusive */
};

struct ul_rule {
	__u64 devmask;		/* bit per device index; has_dev: the rule names devices */
	__u64 opcodes[4];	/* bit per opcode; has_opcode */
	__u64 selects[4];	/* bit per sub-selector 0..255; has_select */
	struct ul_range uid[UL_SET_MAX], gid[UL_SET_MAX], nsid[UL_SET_MAX];
	struct ul_range bytes, lba;
	__u32 verbs;		/* 0: any */
	__u32 index;		/* in the policy, for the audit label */
	__u8 nuid, ngid, nnsid;
	__u8 has_dev, has_opcode, has_select;
	__u8 dirs, modes;	/* 0: any */
	__s8 cap, destructive, intrusive, admin;	/* -1 any, 0 no, 1 yes */
	__u8 has_bytes, has_lba, allow, audit;
};

/* conf[0].active: the set in force; conf[1 + set]: that set's header */
struct ul_conf {
	__u32 active;
	__u32 nrules;
	__u32 ng_major, ctrl_major;	/* char majors of nvme-generic and nvme: fail closed on unknown minors */
	__u32 gen;			/* policy generation, for status */
	__s32 deny_errno;		/* the errno a denial returns (positive) */
	__u8 default_allow, audit_default, valid;
	__u8 pad[5];
	char file[256];			/* the policy file, for status */
};

#define UL_LABEL_LEN	128	/* labels[set * (UL_MAX_RULES + 1) + i]; i == UL_MAX_RULES: default */

struct ul_dev_key {
	__u32 dev;	/* kernel dev_t: major << 20 | minor */
	__u16 set;
	__u16 blk;	/* 1: block device */
};

struct ul_dev {
	__u32 index;
	__u32 nsid;	/* the namespace, 0 for a controller */
	__u32 ctrl;	/* controller slot in the effects map */
	__u32 lba_shift;
	__u32 kind;	/* UL_DEV_* */
	char name[32];
};

struct ul_event {
	__u64 boot_ns;		/* bpf_ktime_get_boot_ns() */
	__u32 pid, uid, gid;
	__u32 cmd_op;
	__u32 nsid;
	__s32 rule;		/* index in the compiled set, -1: the default */
	__u32 gen;		/* the set's generation when judged */
	__u32 set;
	__s32 err;		/* 0 or the errno returned */
	__u64 slba, nlb, offset, length;
	__u8 hook, cap, allow, admin;
	__u8 opcode, verb, dir, destructive;
	__u8 has_range, range_unknown, has_select, unknown_dev;
	__u32 select;
	char device[32];
};

#endif
