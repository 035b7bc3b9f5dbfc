/* SPDX-License-Identifier: MIT */
/*
 * Path strings as paths.c judges them: no system call, no state, so that
 * fuzz_preload_path can feed them anything a program may pass to open().
 */
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
