// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * ucmd's policy enforced by Linux: a BPF LSM program on uring_cmd (the
 * io_uring path to /dev/ngXnY and /dev/nvmeX) and on file_ioctl (nvme-cli's
 * synchronous path). It describes the NVMe command as ucmd's NVMe host
 * driver does (src/nvme/host/describe.c) and walks the rules the loader
 * compiled from the INI policy (src/bpf/compile.c) in file order: the first
 * that matches decides, as src/security/policy_eval.c does.
 *
 * What it cannot read it treats as ucmd's engine treats a range it cannot
 * list: Copy and Dataset Management range lists (user memory) are "range
 * unknown"; a caller with more supplementary groups than it reads, or a
 * device of an NVMe major that the loader did not see, fails closed.
 *
 * CO-RE: struct io_uring_cmd points at the command (6.1: ->cmd) or at the
 * SQE (newer kernels: ->sqe, the command at sqe->cmd); kernel_cap_t is two
 * u32 (6.1) or one u64 (6.3+), the same 8 bytes on little endian.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "ucmd_lsm.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 + UL_SETS);
	__type(key, __u32);
	__type(value, struct ul_conf);
} conf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UL_SETS * UL_MAX_RULES);
	__type(key, __u32);
	__type(value, struct ul_rule);
} rules SEC(".maps");

/* "file:line name" of each rule, for the audit reader (the program never reads it) */
struct label {
	char s[UL_LABEL_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UL_SETS * (UL_MAX_RULES + 1));
	__type(key, __u32);
	__type(value, struct label);
} labels SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UL_SETS * UL_MAX_DEVS);
	__type(key, struct ul_dev_key);
	__type(value, struct ul_dev);
} devs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UL_SETS * UL_EFFECTS_PER_SET);
	__type(key, __u32);
	__type(value, __u32);
} effects SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UL_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* Newer kernels: the SQE, not the command (CO-RE picks the layout). */
struct io_uring_cmd___sqe {
	const struct io_uring_sqe *sqe;
} __attribute__((preserve_access_index));

/* judge_file(): the command has no nsid, it is the file's namespace's */
#define UL_HOOK_OWN_NS 0x80

#define EACCES_ 13
#define ENOTTY_ 25
#define FMODE_READ_ 1u
#define FMODE_WRITE_ 2u
#define S_IFMT_ 0170000
#define S_IFCHR_ 0020000
#define S_IFBLK_ 0060000

/* NVMe ioctls and uring_cmd ops: type 'N', by number (sizes differ) */
#define NVME_NR_ADMIN_CMD	0x41
#define NVME_NR_SUBMIT_IO	0x42
#define NVME_NR_IO_CMD		0x43
#define NVME_NR_ADMIN64_CMD	0x47
#define NVME_NR_IO64_CMD	0x48
#define NVME_NR_IO64_CMD_VEC	0x49
#define NVME_NR_URING_IO	0x80
#define NVME_NR_URING_IO_VEC	0x81
#define NVME_NR_URING_ADMIN	0x82
#define NVME_NR_URING_ADMIN_VEC	0x83

#define EFF_CSUPP	(1u << 0)
#define EFF_LBCC	(1u << 1)
#define EFF_UUID_SEL	(1u << 19)

/* The command fields a policy needs (struct nvme_passthru_cmd's offsets). */
struct nvme_fields {
	__u8 opcode;
	__u8 flags;
	__u16 rsvd1;
	__u32 nsid;
	__u32 cdw2, cdw3;
	__u64 metadata, addr;
	__u32 metadata_len, data_len;
	__u32 cdw10, cdw11, cdw12, cdw13, cdw14, cdw15;
};

struct desc {
	__u64 slba, nlb, offset, length;
	__u32 nsid, select, cmd_op;
	__u8 opcode, verb, dir, admin, destructive, intrusive;
	__u8 has_select, has_range, range_unknown, decoded;
};

struct judge {
	const struct desc *d;
	__u32 set, nrules, devidx, mode;
	__u32 uid, gid, ngroups;
	__u32 groups[UL_MAX_GROUPS];
	__u8 cap, has_dev, groups_cut;
	__s32 match;	/* index of the deciding rule in the set, -1 none */
};

/* verb and flags of an opcode, as describe.c's tables */
#define D_RANGE 1
#define D_DESTR 2
#define D_KNOWN 4

static __always_inline __u32 nvm_op(__u8 op)
{
	switch (op) {
	case 0x00: return UL_VERB_FLUSH << 8 | D_KNOWN;
	case 0x01: return UL_VERB_WRITE << 8 | D_KNOWN | D_RANGE | D_DESTR;
	case 0x02: return UL_VERB_READ << 8 | D_KNOWN | D_RANGE;
	case 0x04: return UL_VERB_WRITE_UNCOR << 8 | D_KNOWN | D_RANGE | D_DESTR;
	case 0x05: return UL_VERB_COMPARE << 8 | D_KNOWN | D_RANGE;
	case 0x08: return UL_VERB_WRITE_ZEROES << 8 | D_KNOWN | D_RANGE | D_DESTR;
	case 0x0c: return UL_VERB_VERIFY << 8 | D_KNOWN | D_RANGE;
	case 0x12: return UL_VERB_READ << 8 | D_KNOWN;		/* I/O mgmt receive (FDP) */
	case 0x19: return UL_VERB_COPY << 8 | D_KNOWN | D_DESTR;
	case 0x1d: return UL_VERB_WRITE << 8 | D_KNOWN;		/* I/O mgmt send (FDP) */
	case 0x79: return UL_VERB_WRITE << 8 | D_KNOWN | D_DESTR;	/* zone mgmt send */
	case 0x7a: return UL_VERB_READ << 8 | D_KNOWN;		/* zone mgmt receive */
	case 0x7d: return UL_VERB_WRITE << 8 | D_KNOWN | D_DESTR;	/* zone append */
	}
	return 0;
}

static __always_inline __u32 admin_op(__u8 op)
{
	switch (op) {
	case 0x00: case 0x01: case 0x04: case 0x05: return UL_VERB_QUEUE_MANAGE << 8 | D_KNOWN;
	case 0x02: return UL_VERB_GET_LOG << 8 | D_KNOWN;
	case 0x06: return UL_VERB_IDENTIFY << 8 | D_KNOWN;
	case 0x08: return UL_VERB_ABORT << 8 | D_KNOWN;
	case 0x09: return UL_VERB_SET_FEATURE << 8 | D_KNOWN;
	case 0x0a: return UL_VERB_GET_FEATURE << 8 | D_KNOWN;
	case 0x0c: return UL_VERB_ASYNC_EVENT << 8 | D_KNOWN;
	case 0x0d: return UL_VERB_NS_MANAGE << 8 | D_KNOWN;
	case 0x10: case 0x11: return UL_VERB_FIRMWARE << 8 | D_KNOWN;
	case 0x15: return UL_VERB_NS_ATTACH << 8 | D_KNOWN;
	case 0x80: return UL_VERB_FORMAT << 8 | D_KNOWN | D_DESTR;
	case 0x84: return UL_VERB_SANITIZE << 8 | D_KNOWN | D_DESTR;
	case 0x86: return UL_VERB_GET_LOG << 8 | D_KNOWN;	/* Get LBA Status */
	}
	return 0;
}

static __always_inline __u64 lba_bytes(__u64 n, __u32 shift)
{
	shift &= 63;
	return n > (~0ULL >> shift) ? ~0ULL : n << shift;
}

/* describe.c's nvme_describe_cmd(), without the range lists (user memory) */
static __always_inline void describe(const struct nvme_fields *c, bool admin, const struct ul_dev *dv,
				     __u32 set, struct desc *d)
{
	__u32 od = admin ? admin_op(c->opcode) : nvm_op(c->opcode);
	__u32 key, *e, eff = 0;

	d->decoded = 1;
	d->opcode = c->opcode;
	d->admin = admin;
	d->nsid = c->nsid;
	d->dir = c->opcode & 3;	/* none, to-device, from-device, bidirectional */
	d->verb = UL_VERB_UNKNOWN;
	if (od & D_KNOWN) {
		d->verb = od >> 8;
		d->destructive = !!(od & D_DESTR);
	} else if (!admin && c->opcode == 0x09 && (c->cdw11 & 4)) {
		d->verb = UL_VERB_TRIM;
		d->destructive = 1;
	} else if ((admin && c->opcode >= 0xc0) || (!admin && c->opcode >= 0x80)) {
		d->verb = UL_VERB_VENDOR;
	}
	if (admin && c->opcode == 0x0d && (c->cdw10 & 0xf) == 1)
		d->destructive = 1;
	if (admin && (c->opcode == 0x06 || c->opcode == 0x02 || c->opcode == 0x0a ||
		      c->opcode == 0x09)) {
		d->has_select = 1;
		d->select = c->cdw10 & 0xff;
	}
	/* the controller's effects log, read by the loader, as the host driver reads it */
	key = set * UL_EFFECTS_PER_SET + (dv->ctrl % UL_MAX_CTRLS) * 512 + (admin ? 0 : 256) +
	      c->opcode;
	e = bpf_map_lookup_elem(&effects, &key);
	if (e)
		eff = *e;
	d->intrusive = !(eff & EFF_CSUPP) ||
		       (eff & ~(EFF_CSUPP | EFF_LBCC | EFF_UUID_SEL | (0xfffu << 20)));
	if (eff & EFF_LBCC)
		d->destructive = 1;
	if (!admin && (od & D_RANGE)) {
		d->has_range = 1;
		d->slba = (__u64)c->cdw10 | (__u64)c->cdw11 << 32;
		d->nlb = (__u64)(c->cdw12 & 0xffff) + 1;
		if (dv->kind != UL_DEV_CTRL) {
			d->offset = lba_bytes(d->slba, dv->lba_shift);
			d->length = lba_bytes(d->nlb, dv->lba_shift);
		}
	} else if (!admin && (c->opcode == 0x09 || c->opcode == 0x19 || c->opcode == 0x79 ||
			      c->opcode == 0x7d || d->verb == UL_VERB_UNKNOWN ||
			      d->verb == UL_VERB_VENDOR)) {
		/* Copy and DSM lists live in user memory, zone commands write
		 * where the write pointer is: judged as any range */
		d->range_unknown = 1;
	} else if (admin && d->destructive) {
		d->range_unknown = 1;
	}
}

static __always_inline bool in_set(const struct ul_range *r, __u8 n, __u64 v)
{
	for (int i = 0; i < UL_SET_MAX; i++) {
		if (i >= n)
			break;
		if (v >= r[i].lo && v <= r[i].hi)
			return true;
	}
	return false;
}

static __always_inline bool tri_ok(__s8 t, bool v)
{
	return t < 0 || (t == 1) == v;
}

static __always_inline bool bit_ok(const __u64 *bits, __u32 v)
{
	return (bits[(v >> 6) & 3] >> (v & 63)) & 1;
}

static __always_inline bool range_ok(const struct ul_range *r, __u64 start, __u64 count, bool allow)
{
	__u64 end = start + (count ? count - 1 : 0);

	if (end < start)
		end = ~0ULL;
	if (allow)
		return start >= r->lo && end <= r->hi;
	return start <= r->hi && end >= r->lo;
}

static __always_inline bool ranges_match(const struct ul_range *r, const struct desc *d, bool allow,
					 bool bytes)
{
	if (d->range_unknown)
		return !allow;
	if (bytes ? (d->has_range || d->length) : d->has_range) {
		if (range_ok(r, bytes ? d->offset : d->slba, bytes ? d->length : d->nlb, allow) != allow)
			return !allow;
		return allow;
	}
	return false;
}

static __always_inline bool gid_ok(const struct ul_rule *r, struct judge *j)
{
	if (!r->ngid)
		return true;
	if (in_set(r->gid, r->ngid, j->gid))
		return true;
	for (int i = 0; i < UL_MAX_GROUPS; i++) {
		if (i >= j->ngroups)
			break;
		if (in_set(r->gid, r->ngid, j->groups[i]))
			return true;
	}
	/* groups past what was read: a deny rule matches, an allow rule does not */
	return j->groups_cut && !r->allow;
}

static __always_inline bool rule_matches(const struct ul_rule *r, struct judge *j)
{
	const struct desc *d = j->d;

	if (r->nuid && !in_set(r->uid, r->nuid, j->uid))
		return false;
	if (!gid_ok(r, j) || !tri_ok(r->cap, j->cap))
		return false;
	if (r->has_dev && (!j->has_dev || !((r->devmask >> (j->devidx & 63)) & 1)))
		return false;
	if (r->nnsid && !in_set(r->nsid, r->nnsid, d->nsid))
		return false;
	if (r->verbs && !((r->verbs >> (d->verb & 31)) & 1))
		return false;
	if (r->dirs && !((r->dirs >> (d->dir & 3)) & 1))
		return false;
	if (r->modes && !(r->modes & j->mode))
		return false;
	if (!tri_ok(r->admin, d->admin) || !tri_ok(r->destructive, d->destructive) ||
	    !tri_ok(r->intrusive, d->intrusive))
		return false;
	if (r->has_select && (!d->has_select || !bit_ok(r->selects, d->select)))
		return false;
	if (r->has_opcode && !bit_ok(r->opcodes, d->opcode))
		return false;
	if (r->has_bytes && !ranges_match(&r->bytes, d, r->allow, true))
		return false;
	if (r->has_lba && !ranges_match(&r->lba, d, r->allow, false))
		return false;
	return true;
}

static long rule_step(__u32 i, void *ctx)
{
	struct judge *j = ctx;
	__u32 key = j->set * UL_MAX_RULES + i;
	struct ul_rule *r;

	if (i >= j->nrules)
		return 1;
	r = bpf_map_lookup_elem(&rules, &key);
	if (!r)
		return 1;
	if (rule_matches(r, j)) {
		j->match = i;
		return 1;
	}
	return 0;
}

static __always_inline void count(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &slot);

	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline void read_cred(struct judge *j)
{
	struct task_struct *t = bpf_get_current_task_btf();
	const struct cred *c = t->cred;
	struct group_info *gi;
	__u64 caps = 0;
	int n;

	j->uid = BPF_CORE_READ(c, euid.val);
	j->gid = BPF_CORE_READ(c, egid.val);
	/* kernel_cap_t: u32[2] (6.1) or u64 (6.3+): the same 8 bytes */
	bpf_probe_read_kernel(&caps, sizeof(caps), &c->cap_effective);
	j->cap = (caps >> 21) & 1;	/* CAP_SYS_ADMIN */
	gi = BPF_CORE_READ(c, group_info);
	n = BPF_CORE_READ(gi, ngroups);
	if (n < 0)
		n = 0;
	if (n > UL_MAX_GROUPS) {
		j->groups_cut = 1;
		n = UL_MAX_GROUPS;
	}
	j->ngroups = n;
	bpf_probe_read_kernel(j->groups, sizeof(j->groups), &gi->gid);
}

static __always_inline void emit(struct judge *j, const struct desc *d, const struct ul_dev *dv,
				 __u8 hook, bool allow, __u32 gen, bool unknown_dev)
{
	struct ul_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);

	if (!ev) {
		count(UL_STAT_LOST);
		return;
	}
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->boot_ns = bpf_ktime_get_boot_ns();
	ev->pid = bpf_get_current_pid_tgid() >> 32;
	ev->uid = j->uid;
	ev->gid = j->gid;
	ev->cap = j->cap;
	ev->hook = hook;
	ev->allow = allow;
	ev->err = allow ? 0 : EACCES_;
	ev->rule = j->match;
	ev->gen = gen;
	ev->set = j->set;
	ev->cmd_op = d->cmd_op;
	ev->opcode = d->opcode;
	ev->verb = d->verb;
	ev->dir = d->dir;
	ev->admin = d->admin;
	ev->destructive = d->destructive;
	ev->nsid = d->nsid;
	ev->has_range = d->has_range;
	ev->range_unknown = d->range_unknown;
	ev->slba = d->slba;
	ev->nlb = d->nlb;
	ev->offset = d->offset;
	ev->length = d->length;
	ev->has_select = d->has_select;
	ev->select = d->select;
	ev->unknown_dev = unknown_dev;
	if (dv)
		__builtin_memcpy(ev->device, dv->name, sizeof(ev->device));
	bpf_ringbuf_submit(ev, 0);
}

/*
 * Judge a command on a file: 0 or -EACCES. c is NULL when the command could
 * not be decoded (an op the driver does not know): described like the
 * engine's, by device alone.
 */
static __always_inline int judge_file(struct file *f, const struct nvme_fields *c, bool admin,
				      __u32 cmd_op, __u8 hook)
{
	__u32 zero = 0, k;
	struct ul_conf *act, *hdr;
	struct ul_dev_key dk = {};
	struct ul_dev *dv;
	struct judge j = {};
	struct desc d = {};
	struct inode *ino;
	__u32 fmode, mode, major;
	bool allow, audit, unknown_dev = false;

	act = bpf_map_lookup_elem(&conf, &zero);
	if (!act)
		return 0;
	k = 1 + (act->active & 1);
	hdr = bpf_map_lookup_elem(&conf, &k);
	if (!hdr || !hdr->valid)
		return 0;
	ino = BPF_CORE_READ(f, f_inode);
	mode = BPF_CORE_READ(ino, i_mode) & S_IFMT_;
	dk.dev = BPF_CORE_READ(ino, i_rdev);
	dk.set = act->active & 1;
	dk.blk = mode == S_IFBLK_;
	if (mode != S_IFCHR_ && mode != S_IFBLK_)
		return 0;
	dv = bpf_map_lookup_elem(&devs, &dk);
	if (!dv) {
		major = dk.dev >> 20;
		/*
		 * An NVMe device the loader did not see (it appeared since): fail
		 * closed. That is a char device of the NVMe majors, or a block
		 * device sent an NVMe command (an ioctl or uring_cmd op of type
		 * 'N'); anything else is no NVMe device and not judged.
		 */
		if (mode == S_IFCHR_ && major != hdr->ng_major && major != hdr->ctrl_major)
			return 0;
		if (mode == S_IFBLK_ && !c)
			return 0;
		unknown_dev = true;
	}
	j.d = &d;
	j.set = dk.set;
	j.nrules = hdr->nrules;
	j.match = -1;
	if (dv) {
		j.has_dev = 1;
		j.devidx = dv->index;
	}
	fmode = BPF_CORE_READ(f, f_mode);
	j.mode = (fmode & FMODE_READ_) && (fmode & FMODE_WRITE_) ? 4 : (fmode & FMODE_WRITE_) ? 2 : 1;
	read_cred(&j);
	d.cmd_op = cmd_op;
	d.verb = UL_VERB_UNKNOWN;
	d.admin = admin;
	if (c && dv) {
		describe(c, admin, dv, dk.set, &d);
		if (hook & UL_HOOK_OWN_NS)
			d.nsid = dv->nsid;
	}
	hook &= ~UL_HOOK_OWN_NS;
	if (unknown_dev) {
		allow = false;
		audit = true;
	} else {
		bpf_loop(UL_MAX_RULES, rule_step, &j, 0);
		if (j.match >= 0) {
			__u32 rk = j.set * UL_MAX_RULES + (__u32)j.match;
			struct ul_rule *r = bpf_map_lookup_elem(&rules, &rk);

			if (!r)
				return -EACCES_;
			allow = r->allow;
			audit = r->audit;
		} else {
			allow = hdr->default_allow;
			audit = hdr->audit_default;
		}
	}
	count(allow ? UL_STAT_ALLOW : UL_STAT_DENY);
	if (!allow || audit)
		emit(&j, &d, dv, hook, allow, hdr->gen, unknown_dev);
	return allow ? 0 : -EACCES_;
}

SEC("lsm/uring_cmd")
int BPF_PROG(ucmd_uring_cmd, struct io_uring_cmd *ioucmd, int ret)
{
	struct nvme_fields c = {};
	struct file *f;
	const void *p;
	__u32 op, nr;
	bool admin, known;

	if (ret)
		return ret;
	f = BPF_CORE_READ(ioucmd, file);
	op = BPF_CORE_READ(ioucmd, cmd_op);
	nr = op & 0xff;
	known = ((op >> 8) & 0xff) == 'N' && nr >= NVME_NR_URING_IO && nr <= NVME_NR_URING_ADMIN_VEC;
	admin = nr == NVME_NR_URING_ADMIN || nr == NVME_NR_URING_ADMIN_VEC;
	if (!known)
		return judge_file(f, 0, false, op, UL_HOOK_URING_CMD);
	if (bpf_core_field_exists(ioucmd->cmd)) {
		p = BPF_CORE_READ(ioucmd, cmd);
	} else {
		struct io_uring_cmd___sqe *n = (void *)ioucmd;
		const struct io_uring_sqe *sqe = BPF_CORE_READ(n, sqe);

		p = (const char *)sqe + bpf_core_field_offset(struct io_uring_sqe, cmd);
	}
	/* the command in the SQ ring: user space can still change it (docs/security.md) */
	if (bpf_probe_read_kernel(&c, sizeof(c), p))
		return -EACCES_;
	return judge_file(f, &c, admin, op, UL_HOOK_URING_CMD);
}

SEC("lsm.s/file_ioctl")
int BPF_PROG(ucmd_file_ioctl, struct file *f, unsigned int cmd, unsigned long arg, int ret)
{
	struct nvme_fields c = {};
	__u32 nr = cmd & 0xff;
	struct {
		__u8 opcode, flags;
		__u16 control, nblocks, rsvd;
		__u64 metadata, addr, slba;
	} io = {};
	bool admin;

	if (ret)
		return ret;
	if (((cmd >> 8) & 0xff) != 'N')
		return 0;
	switch (nr) {
	case NVME_NR_ADMIN_CMD:
	case NVME_NR_IO_CMD:
	case NVME_NR_ADMIN64_CMD:
	case NVME_NR_IO64_CMD:
	case NVME_NR_IO64_CMD_VEC:
		admin = nr == NVME_NR_ADMIN_CMD || nr == NVME_NR_ADMIN64_CMD;
		/* user memory, read again by the driver after this check */
		if (bpf_copy_from_user(&c, sizeof(c), (const void *)arg))
			return 0;	/* the driver's own copy fails with -EFAULT */
		return judge_file(f, &c, admin, cmd, UL_HOOK_FILE_IOCTL);
	case NVME_NR_SUBMIT_IO:
		/* struct nvme_user_io: read, write or compare of the file's namespace */
		if (bpf_copy_from_user(&io, sizeof(io), (const void *)arg))
			return 0;
		c.opcode = io.opcode;
		c.cdw10 = (__u32)io.slba;
		c.cdw11 = (__u32)(io.slba >> 32);
		c.cdw12 = io.nblocks;
		/* its namespace is the file's: judge_file() puts it in */
		return judge_file(f, &c, false, cmd, UL_HOOK_FILE_IOCTL | UL_HOOK_OWN_NS);
	}
	return 0;
}
