/* SPDX-License-Identifier: MIT */
/*
 * Path strings as paths.c judges them: no system call, no state, so that
 * fuzz_preload_path can feed them anything a program may pass to open().
 */
#include <stddef.h>
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
