/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: ucmdd's reading of /proc/loadavg's runnable count
 * (srv_crowd_parse, src/server/crowd.c), on any text the file could hold.
 *
 * Input: the text, cut at its first NUL (libFuzzer's copy is exactly as
 * long as the input, so ASan sees a read past the string's end).
 *
 * Invariants: the answer is -EINVAL or a count from 0 to 1 << 30, and is
 * what an independent model says: the fourth field of the line (fields
 * are separated by runs of spaces, leading spaces skipped) must start
 * with decimal digits followed by '/', and their value (leading zeros
 * allowed) is the count; anything else is -EINVAL. The same text gets the
 * same answer twice.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/crowd.h"

static int model(const char *s, size_t len)
{
	size_t i = 0, start = 0;
	unsigned long long v = 0;
	int field = 0;

	/* the start of the fourth field */
	for (;;) {
		while (i < len && s[i] == ' ')
			i++;
		if (i == len)
			return -EINVAL;
		if (field == 3) {
			start = i;
			break;
		}
		while (i < len && s[i] != ' ')
			i++;
		field++;
	}
	for (i = start; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		v = v * 10 + (unsigned)(s[i] - '0');
		if (v > 1u << 30)
			v = (1u << 30) + 1;	/* too many either way: no overflow */
	}
	if (i == start || i == len || s[i] != '/' || v > 1u << 30)
		return -EINVAL;
	return (int)v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	size_t len;
	int r;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	len = strlen(s);
	/* the parser sees exactly the string: no byte past its NUL */
	if (len < size)
		s = realloc(s, len + 1);
	if (!s)
		abort();
	r = srv_crowd_parse(s);
	if (r != -EINVAL && (r < 0 || r > 1 << 30))
		abort();
	if (r != model(s, len))
		abort();
	if (srv_crowd_parse(s) != r)
		abort();
	free(s);
	return 0;
}
