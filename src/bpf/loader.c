// SPDX-License-Identifier: MIT
/*
 * Loading, replacing and removing the BPF LSM program. The first load opens
 * the skeleton, fills rule set 0, attaches both hooks and pins the links and
 * maps under UCMD_BPF_PIN_DIR, so the program outlives the loader. A later
 * load writes the other rule set completely, then flips conf[0].active in
 * one map update: a command is judged by one set, and a policy that does not
 * compile never reaches the maps. Unload removes the pins; the links go
 * with their last reference, and Linux's own checks are all that remain.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "devices.h"
#include "loader.h"
#include "ucmd_bpf.h"
#include "ucmd_lsm.h"
#include "ucmd_lsm.skel.h"

#define BPF_FS_MAGIC_ 0xcafe4a11

static const char *const map_names[] = {
	"conf", "rules", "devs", "effects", "stats", "events", "labels",
};
static const char *const link_names[] = { "link_uring_cmd", "link_file_ioctl" };

/* libbpf's last words, for an error message that says why */
static char libbpf_msg[512];

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[512];

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = 0;
	if (*line)
		snprintf(libbpf_msg, sizeof(libbpf_msg), "%s", line);
	return 0;
}

static void pin_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", UCMD_BPF_PIN_DIR, name);
}

int ul_pinned_map(const char *name)
{
	char path[256];

	pin_path(path, sizeof(path), name);
	return bpf_obj_get(path);
}

static bool read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return true;
}

/* Why this kernel cannot run the program, before libbpf says it less clearly. */
static int kernel_can(char *err, size_t errlen)
{
	struct statfs sfs;
	char lsm[256], lockdown[128];

	if (geteuid() != 0) {
		snprintf(err, errlen, "not root: loading a BPF LSM program needs CAP_BPF and "
			 "CAP_SYS_ADMIN (run as root)");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(err, errlen, "the kernel has no BTF (/sys/kernel/btf/vmlinux, "
			 "CONFIG_DEBUG_INFO_BTF): the program cannot be loaded");
		return -EOPNOTSUPP;
	}
	if (read_file("/sys/kernel/security/lsm", lsm, sizeof(lsm))) {
		char *t, *save, copy[256];
		bool bpf = false;

		snprintf(copy, sizeof(copy), "%s", lsm);
		for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
			bpf |= !strcmp(t, "bpf");
		if (!bpf) {
			snprintf(err, errlen, "the BPF LSM is not active (lsm=%s): add bpf to the "
				 "kernel's lsm= command line (CONFIG_BPF_LSM=y)", lsm);
			return -EOPNOTSUPP;
		}
	}
	if (read_file("/sys/kernel/security/lockdown", lockdown, sizeof(lockdown)) &&
	    strstr(lockdown, "[confidentiality]")) {
		snprintf(err, errlen, "kernel lockdown is in confidentiality mode: BPF may not "
			 "read kernel memory, which the program needs");
		return -EPERM;
	}
	if (statfs("/sys/fs/bpf", &sfs) || sfs.f_type != BPF_FS_MAGIC_) {
		snprintf(err, errlen, "/sys/fs/bpf is not a BPF file system: mount -t bpf bpf "
			 "/sys/fs/bpf (the program is pinned there to outlive the loader)");
		return -ENOENT;
	}
	return 0;
}

struct map_fds {
	int fd[sizeof(map_names) / sizeof(map_names[0])];
};

enum { M_CONF, M_RULES, M_DEVS, M_EFFECTS, M_STATS, M_EVENTS, M_LABELS };

/* Empty set's device entries, then fill set with img and devs (not yet in force). */
static int write_set(const struct map_fds *m, __u32 set, const struct ucmd_bpf_image *img,
		     const struct ucmd_bpf_dev *devs, unsigned ndevs, const uint32_t *eff,
		     const struct ul_conf *hdr, char *err, size_t errlen)
{
	struct ul_dev_key k, next, *prev = NULL;
	struct ul_dev_key stale[UL_SETS * UL_MAX_DEVS];
	unsigned nstale = 0;
	__u32 key;

	while (!bpf_map_get_next_key(m->fd[M_DEVS], prev, &next)) {
		if (next.set == set && nstale < UL_SETS * UL_MAX_DEVS)
			stale[nstale++] = next;
		k = next;
		prev = &k;
	}
	for (unsigned i = 0; i < nstale; i++)
		bpf_map_delete_elem(m->fd[M_DEVS], &stale[i]);
	for (unsigned i = 0; i < ndevs; i++) {
		struct ul_dev v = { .index = i, .nsid = devs[i].nsid, .ctrl = devs[i].ctrl,
				    .lba_shift = devs[i].lba_shift, .kind = devs[i].kind };

		memset(&k, 0, sizeof(k));
		k.dev = devs[i].dev;
		k.set = (__u16)set;
		k.blk = devs[i].blk;
		memcpy(v.name, devs[i].name, sizeof(v.name));
		if (bpf_map_update_elem(m->fd[M_DEVS], &k, &v, BPF_ANY))
			goto fail;
	}
	for (unsigned i = 0; i < UL_EFFECTS_PER_SET; i++) {
		key = set * UL_EFFECTS_PER_SET + i;
		if (bpf_map_update_elem(m->fd[M_EFFECTS], &key, &eff[i], BPF_ANY))
			goto fail;
	}
	for (unsigned i = 0; i < img->nrules; i++) {
		key = set * UL_MAX_RULES + i;
		if (bpf_map_update_elem(m->fd[M_RULES], &key, &img->rules[i], BPF_ANY))
			goto fail;
	}
	for (unsigned i = 0; i <= UL_MAX_RULES; i++) {
		key = set * (UL_MAX_RULES + 1) + i;
		if (bpf_map_update_elem(m->fd[M_LABELS], &key, img->labels[i], BPF_ANY))
			goto fail;
	}
	key = 1 + set;
	if (bpf_map_update_elem(m->fd[M_CONF], &key, hdr, BPF_ANY))
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "writing the BPF maps: %s", strerror(errno));
	return -errno;
}

/* Put set in force: the one update a command sees. */
static int flip(const struct map_fds *m, __u32 set, char *err, size_t errlen)
{
	struct ul_conf c = { 0 };
	__u32 zero = 0;

	c.active = set;
	if (bpf_map_update_elem(m->fd[M_CONF], &zero, &c, BPF_ANY)) {
		snprintf(err, errlen, "switching the BPF rule set: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static int pinned_maps(struct map_fds *m)
{
	for (unsigned i = 0; i < sizeof(map_names) / sizeof(map_names[0]); i++) {
		m->fd[i] = ul_pinned_map(map_names[i]);
		if (m->fd[i] < 0) {
			int ret = -errno;

			while (i--)
				close(m->fd[i]);
			return ret;
		}
	}
	return 0;
}

/* The pinned maps are this build's layout (another ucmd's program may be loaded). */
static bool same_layout(const struct map_fds *m)
{
	static const struct { unsigned idx; __u32 size; } want[] = {
		{ M_CONF, sizeof(struct ul_conf) }, { M_RULES, sizeof(struct ul_rule) },
		{ M_DEVS, sizeof(struct ul_dev) }, { M_LABELS, UL_LABEL_LEN },
	};

	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);

		if (bpf_obj_get_info_by_fd(m->fd[want[i].idx], &info, &len) ||
		    info.value_size != want[i].size)
			return false;
	}
	return true;
}

static void close_maps(struct map_fds *m)
{
	for (unsigned i = 0; i < sizeof(map_names) / sizeof(map_names[0]); i++)
		close(m->fd[i]);
}

static void unpin_all(void)
{
	char path[256];

	for (unsigned i = 0; i < sizeof(link_names) / sizeof(link_names[0]); i++) {
		pin_path(path, sizeof(path), link_names[i]);
		unlink(path);
	}
	for (unsigned i = 0; i < sizeof(map_names) / sizeof(map_names[0]); i++) {
		pin_path(path, sizeof(path), map_names[i]);
		unlink(path);
	}
	rmdir(UCMD_BPF_PIN_DIR);
}

/* First load: the skeleton, set 0 in force, attached, pinned. */
static int first_load(const struct ucmd_bpf_image *img, const struct ucmd_bpf_dev *devs,
		      unsigned ndevs, const uint32_t *eff, const struct ul_conf *hdr, char *err,
		      size_t errlen)
{
	struct bpf_map *maps[7];
	struct ucmd_lsm *s;
	struct map_fds m;
	char path[256];
	int ret;

	libbpf_set_print(libbpf_print);
	libbpf_msg[0] = 0;
	s = ucmd_lsm__open_and_load();
	if (!s) {
		ret = -errno;
		snprintf(err, errlen, "the kernel refused the BPF program (%s)%s%s", strerror(-ret),
			 *libbpf_msg ? ": " : "", libbpf_msg);
		return ret;
	}
	maps[M_CONF] = s->maps.conf;
	maps[M_RULES] = s->maps.rules;
	maps[M_DEVS] = s->maps.devs;
	maps[M_EFFECTS] = s->maps.effects;
	maps[M_STATS] = s->maps.stats;
	maps[M_EVENTS] = s->maps.events;
	maps[M_LABELS] = s->maps.labels;
	for (unsigned i = 0; i < 7; i++)
		m.fd[i] = bpf_map__fd(maps[i]);
	ret = write_set(&m, 0, img, devs, ndevs, eff, hdr, err, errlen);
	if (!ret)
		ret = flip(&m, 0, err, errlen);
	if (ret)
		goto out;
	if (ucmd_lsm__attach(s)) {
		ret = -errno;
		snprintf(err, errlen, "attaching to lsm/uring_cmd and lsm/file_ioctl: %s%s%s",
			 strerror(-ret), *libbpf_msg ? ": " : "", libbpf_msg);
		goto out;
	}
	if (mkdir(UCMD_BPF_PIN_DIR, 0700) && errno != EEXIST) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", UCMD_BPF_PIN_DIR, strerror(-ret));
		goto out;
	}
	for (unsigned i = 0; i < 7 && !ret; i++) {
		pin_path(path, sizeof(path), map_names[i]);
		if (bpf_map__pin(maps[i], path))
			ret = -errno;
	}
	if (!ret) {
		pin_path(path, sizeof(path), link_names[0]);
		if (bpf_link__pin(s->links.ucmd_uring_cmd, path))
			ret = -errno;
	}
	if (!ret) {
		pin_path(path, sizeof(path), link_names[1]);
		if (bpf_link__pin(s->links.ucmd_file_ioctl, path))
			ret = -errno;
	}
	if (ret) {
		snprintf(err, errlen, "pinning under %s: %s", UCMD_BPF_PIN_DIR, strerror(-ret));
		unpin_all();
	}
out:
	/* the pins keep what is attached; without them this detaches it */
	ucmd_lsm__destroy(s);
	return ret;
}

int bpf_lsm_load(const char *path, char *err, size_t errlen)
{
	static struct ucmd_bpf_dev devs[UL_MAX_DEVS];
	struct ucmd_bpf_image img;
	struct ul_conf hdr = { 0 }, old = { 0 };
	struct map_fds m;
	uint32_t *eff;
	unsigned ndevs = 0;
	bool loaded;
	int ret;

	ret = ul_find_devices(devs, &ndevs);
	if (ret) {
		snprintf(err, errlen, "more than %u NVMe devices: the BPF program tells %u apart",
			 UL_MAX_DEVS, UL_MAX_DEVS);
		return ret;
	}
	/* the policy first: an invalid one changes nothing, loaded or not */
	ret = bpf_lsm_compile(path, devs, ndevs, &img, err, errlen);
	if (ret)
		return ret;
	ret = kernel_can(err, errlen);
	if (ret)
		goto out_img;
	eff = calloc(UL_EFFECTS_PER_SET, sizeof(*eff));
	if (!eff) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out_img;
	}
	for (unsigned x = 0; x < UL_MAX_CTRLS; x++)
		ul_read_effects(x, eff + x * 512);
	for (unsigned i = 0; i < ndevs; i++)
		if (devs[i].ctrl >= UL_MAX_CTRLS) {
			snprintf(err, errlen, "%s: controller %u; the BPF program keeps the effects "
				 "of controllers 0-%u", devs[i].name, devs[i].ctrl, UL_MAX_CTRLS - 1);
			ret = -E2BIG;
			goto out_eff;
		}
	hdr.nrules = img.nrules;
	hdr.ng_major = ul_char_major("nvme-generic");
	hdr.ctrl_major = ul_char_major("nvme");
	hdr.default_allow = img.default_allow;
	hdr.audit_default = img.audit_default;
	hdr.deny_errno = EACCES;
	hdr.valid = 1;
	snprintf(hdr.file, sizeof(hdr.file), "%s", path);
	loaded = !pinned_maps(&m);
	if (!loaded) {
		hdr.gen = 1;
		ret = first_load(&img, devs, ndevs, eff, &hdr, err, errlen);
	} else if (!same_layout(&m)) {
		close_maps(&m);
		ret = -EPROTO;
		snprintf(err, errlen, "the BPF program pinned in %s is another ucmd build's "
			 "(different map layout): ucmd policy unload --bpf first", UCMD_BPF_PIN_DIR);
	} else {
		__u32 zero = 0, set, k;

		bpf_map_lookup_elem(m.fd[M_CONF], &zero, &old);
		set = !(old.active & 1);
		k = 1 + (old.active & 1);
		bpf_map_lookup_elem(m.fd[M_CONF], &k, &old);
		hdr.gen = old.gen + 1;
		ret = write_set(&m, set, &img, devs, ndevs, eff + 0, &hdr, err, errlen);
		if (!ret)
			ret = flip(&m, set, err, errlen);
		close_maps(&m);
	}
out_eff:
	free(eff);
out_img:
	bpf_lsm_image_free(&img);
	return ret;
}

int bpf_lsm_unload(char *err, size_t errlen)
{
	char path[256];

	pin_path(path, sizeof(path), link_names[0]);
	if (access(path, F_OK)) {
		snprintf(err, errlen, "no ucmd BPF policy is loaded (%s)", UCMD_BPF_PIN_DIR);
		return -ENOENT;
	}
	if (geteuid() != 0) {
		snprintf(err, errlen, "not root: only root may unload the BPF policy");
		return -EPERM;
	}
	unpin_all();
	return 0;
}

/* A pinned link's program's run count and time (kernel.bpf_stats_enabled). */
static void prog_stats(const char *link, uint64_t *runs, uint64_t *ns)
{
	struct bpf_link_info li = { 0 };
	struct bpf_prog_info pi = { 0 };
	__u32 len = sizeof(li);
	char path[256];
	int lfd, pfd;

	pin_path(path, sizeof(path), link);
	lfd = bpf_obj_get(path);
	if (lfd < 0)
		return;
	if (!bpf_obj_get_info_by_fd(lfd, &li, &len)) {
		pfd = bpf_prog_get_fd_by_id(li.prog_id);
		len = sizeof(pi);
		if (pfd >= 0 && !bpf_obj_get_info_by_fd(pfd, &pi, &len)) {
			*runs = pi.run_cnt;
			*ns = pi.run_time_ns;
		}
		if (pfd >= 0)
			close(pfd);
	}
	close(lfd);
}

int bpf_lsm_status(struct bpf_lsm_status *st, char *err, size_t errlen)
{
	struct ul_conf c = { 0 };
	struct ul_dev_key k, *prev = NULL, next;
	struct map_fds m;
	__u32 key = 0;
	__u64 v;

	memset(st, 0, sizeof(*st));
	if (pinned_maps(&m)) {
		if (errno == ENOENT)
			return 0;	/* nothing loaded */
		snprintf(err, errlen, "%s: %s", UCMD_BPF_PIN_DIR, strerror(errno));
		return -errno;
	}
	st->loaded = true;
	bpf_map_lookup_elem(m.fd[M_CONF], &key, &c);
	key = 1 + (c.active & 1);
	bpf_map_lookup_elem(m.fd[M_CONF], &key, &c);
	snprintf(st->file, sizeof(st->file), "%s", c.file);
	st->nrules = c.nrules;
	st->gen = c.gen;
	while (!bpf_map_get_next_key(m.fd[M_DEVS], prev, &next)) {
		if (next.set == key - 1)
			st->ndevices++;
		k = next;
		prev = &k;
	}
	key = UL_STAT_ALLOW;
	if (!bpf_map_lookup_elem(m.fd[M_STATS], &key, &v))
		st->allowed = v;
	key = UL_STAT_DENY;
	if (!bpf_map_lookup_elem(m.fd[M_STATS], &key, &v))
		st->denied = v;
	key = UL_STAT_LOST;
	if (!bpf_map_lookup_elem(m.fd[M_STATS], &key, &v))
		st->lost = v;
	close_maps(&m);
	prog_stats(link_names[0], &st->uring_runs, &st->uring_ns);
	prog_stats(link_names[1], &st->ioctl_runs, &st->ioctl_ns);
	return 0;
}
