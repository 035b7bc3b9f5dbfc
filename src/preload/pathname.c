/* SPDX-License-Identifier: MIT */
/*
 * Path strings as paths.c judges them: no system call, no state, so that
 * fuzz_preload_path can feed them anything a program may pass to open().
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preload/preload.h"

bool pl_path_dev_name(const char *s)
{
	if (!strncmp(s, "nvme", 4))
		s += 4;
	else if (!strncmp(s, "ng", 2))
		s += 2;
	else
		return false;
	/* only these names are worth asking devinfo about: /dev/null must cost nothing */
	return *s >= '0' && *s <= '9' && !strchr(s, '/');
}

bool pl_path_under(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(p, dir, n) && (p[n] == '\0' || p[n] == '/');
}

void pl_path_fold(char *out, const char *p)
{
	char *o = out;

	while (*p) {
		if (p[0] == '/' && p[1] == '/') {
			p++;
			continue;
		}
		if (p[0] == '/' && p[1] == '.' && (p[2] == '/' || p[2] == '\0')) {
			p += 2;
			continue;
		}
		*o++ = *p++;
	}
	if (o == out)
		*o++ = '/';
	*o = '\0';
}

bool pl_pci_class_nvme(const char *class_text)
{
	char *end;
	unsigned long c;

	if (!class_text || strncmp(class_text, "0x", 2))
		return false;
	c = strtoul(class_text + 2, &end, 16);
	if (end == class_text + 2 || (*end && *end != '\n'))
		return false;
	/* base class 01h (mass storage), subclass 08h (non-volatile memory): any interface */
	return (c >> 8) == 0x0108;
}

/* struct linux_dirent64, as getdents64 writes it */
struct dirent64_rec {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

size_t pl_dirent64_len(const char *name)
{
	return (offsetof(struct dirent64_rec, d_name) + strlen(name) + 1 + 7) & ~(size_t)7;
}

void pl_dirent64_put(void *rec, size_t reclen, uint64_t ino, int64_t off, unsigned char type,
		     const char *name)
{
	struct dirent64_rec *r = rec;

	memset(r, 0, reclen);
	r->d_ino = ino;
	r->d_off = off;
	r->d_reclen = (unsigned short)reclen;
	r->d_type = type;
	memcpy(r->d_name, name, strlen(name) + 1);
}

/*
 * struct linux_dirent, as the old getdents writes it (x86-64's call 78):
 * d_ino and d_off are longs, the name follows d_reclen, and d_type is the
 * record's last byte, after the name's NUL and the padding.
 */
struct linux_dirent_rec {
	unsigned long d_ino;
	unsigned long d_off;
	unsigned short d_reclen;
	char d_name[];
};

size_t pl_linux_dirent_len(const char *name)
{
	/* the name, its NUL and d_type, long-aligned: fs/readdir.c's filldir */
	return (offsetof(struct linux_dirent_rec, d_name) + strlen(name) + 2 + sizeof(long) - 1) &
	       ~(sizeof(long) - 1);
}

void pl_linux_dirent_put(void *rec, size_t reclen, uint64_t ino, int64_t off,
			 unsigned char type, const char *name)
{
	struct linux_dirent_rec *r = rec;

	memset(r, 0, reclen);
	r->d_ino = (unsigned long)ino;
	r->d_off = (unsigned long)off;
	r->d_reclen = (unsigned short)reclen;
	memcpy(r->d_name, name, strlen(name) + 1);
	((unsigned char *)rec)[reclen - 1] = type;
}

size_t pl_dirent_rec_len(bool old, const char *name)
{
	return old ? pl_linux_dirent_len(name) : pl_dirent64_len(name);
}

void pl_dirent_rec_put(bool old, void *rec, size_t reclen, uint64_t ino, int64_t off,
		       unsigned char type, const char *name)
{
	if (old)
		pl_linux_dirent_put(rec, reclen, ino, off, type, name);
	else
		pl_dirent64_put(rec, reclen, ino, off, type, name);
}

/* Does the "Character devices:" (or "Block devices:") section of text name major as NVMe's? */
bool pl_proc_devices_nvme(const char *text, bool block, unsigned major)
{
	const char *want = block ? "Block devices:" : "Character devices:";
	bool in = false;

	if (!text)
		return false;
	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		char line[128], name[64];
		unsigned m;

		if (len < sizeof(line)) {
			memcpy(line, l, len);
			line[len] = '\0';
			if (line[0] && line[0] != ' ' && (line[0] < '0' || line[0] > '9'))
				in = !strcmp(line, want);	/* a section's heading */
			else if (in && sscanf(line, "%u %63s", &m, name) == 2 && m == major &&
				 (!strcmp(name, "nvme") || !strcmp(name, "nvme-generic")))
				return true;
		}
		l += len + (nl ? 1 : 0);
	}
	return false;
}

/* "nvme" digits ("c" digits) "n" digits, then nothing or "p" digits: a namespace (or partition) */
static bool nvme_ns_component(const char *s, size_t len)
{
	const char *e = s + len, *p = s + 4;

	if (len < 7 || strncmp(s, "nvme", 4))
		return false;
#define DIGITS() do { const char *d = p; while (p < e && *p >= '0' && *p <= '9') p++; \
		      if (p == d) return false; } while (0)
	DIGITS();
	if (p < e && *p == 'c') {
		p++;
		DIGITS();
	}
	if (p >= e || *p++ != 'n')
		return false;
	DIGITS();
	if (p < e && *p == 'p') {
		p++;
		DIGITS();
	}
#undef DIGITS
	return p == e;
}

/* a component nvmeXnY (nvmeXcYnZ, their partitions) or nvme-subsysN: native multipath's head */
bool pl_sysfs_block_nvme(const char *target)
{
	if (!target)
		return false;
	for (const char *c = target; *c;) {
		size_t len = strcspn(c, "/");

		if (nvme_ns_component(c, len) ||
		    (len > 11 && !strncmp(c, "nvme-subsys", 11) &&
		     strspn(c + 11, "0123456789") == len - 11))
			return true;
		c += len;
		while (*c == '/')
			c++;
	}
	return false;
}

bool pl_test_majors_has(const char *spec, bool block, unsigned major)
{
	char kind = block ? 'b' : 'c';

	if (!spec)
		return false;
	for (const char *p = spec; *p;) {
		char *end;
		unsigned long m;

		if ((p[0] == 'b' || p[0] == 'c') && p[1] == ':' && p[2] >= '0' && p[2] <= '9') {
			m = strtoul(p + 2, &end, 10);
			if (p[0] == kind && m == major && (*end == ',' || *end == '\0'))
				return true;
			p = end;
		}
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	return false;
}
