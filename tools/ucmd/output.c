/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/util.h>

#include "cli.h"

/* cqe.res: negative errno, or a positive NVMe status named by libnvme */
void print_status_error(const char *what, int res)
{
	if (res < 0)
		fprintf(stderr, "%s: %s (%d)\n", what, strerror(-res), res);
	else
		fprintf(stderr, "%s: NVMe status: %s (0x%x)\n", what,
			nvme_status_to_string(res, false), res);
}

void json_print(struct json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;

	if (parse_u64(s, &v) || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* The low 64 bits of a 128-bit little-endian SMART counter. */
uint64_t le128_lo(const uint8_t v[16])
{
	uint64_t r = 0;

	for (int i = 7; i >= 0; i--)
		r = (r << 8) | v[i];
	return r;
}
