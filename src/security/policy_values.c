/* SPDX-License-Identifier: MIT */
/* Values of policy keys: numbers, ranges, lists, names, yes/no. */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "security/policy_values.h"

/* Split s at commas into trimmed items; returns the count or -EINVAL. */
int pv_split(char *s, char **items, unsigned max)
{
	unsigned n = 0;

	for (char *tok = s; tok;) {
		char *comma = strchr(tok, ',');
		char *end;

		if (comma)
			*comma = 0;
		while (isspace((unsigned char)*tok))
			tok++;
		end = tok + strlen(tok);
		while (end > tok && isspace((unsigned char)end[-1]))
			*--end = 0;
		if (!*tok || n == max)
			return -EINVAL;	/* empty item ("a,,b") or too many */
		items[n++] = tok;
		tok = comma ? comma + 1 : NULL;
	}
	return (int)n;
}

/* A number: decimal or 0x hex, with K/M/G/T (powers of 1024) if sizes. */
int pv_number(const char *s, bool sizes, uint64_t *out)
{
	char *end;
	uint64_t v, mul = 1;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	if (sizes && *end) {
		const char *u = strchr("KMGT", toupper((unsigned char)*end));
		if (!u || !*u)
			return -EINVAL;
		mul = 1ull << (10 * (u - "KMGT" + 1));
		end++;
		if (*end == 'i' || *end == 'I')
			end++;	/* "GiB" reads as "G" */
		if (*end == 'b' || *end == 'B')
			end++;
		if (v > UINT64_MAX / mul)
			return -ERANGE;
	}
	if (*end)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

/* "A", "A-B" (inclusive) or "A+N" (N values from A). */
int pv_range(char *s, bool sizes, struct pol_range *r)
{
	char *sep = strpbrk(s, "-+");
	uint64_t a, b;
	char op;
	int rc;

	if (!sep) {
		if (pv_number(s, sizes, &a))
			return -EINVAL;
		r->lo = r->hi = a;
		return 0;
	}
	op = *sep;
	*sep = 0;
	rc = pv_number(s, sizes, &a) || pv_number(sep + 1, sizes, &b) ? -EINVAL : 0;
	*sep = op;	/* whole again, for the error message */
	if (rc)
		return rc;
	if (op == '+') {
		if (b == 0 || a + (b - 1) < a)
			return -ERANGE;
		b = a + (b - 1);
	}
	if (b < a)
		return -ERANGE;
	r->lo = a;
	r->hi = b;
	return 0;
}

static int lookup_id(const char *name, bool group, uint64_t *out)
{
	char buf[4096];
	int rc;

	if (group) {
		struct group g, *res = NULL;
		rc = getgrnam_r(name, &g, buf, sizeof(buf), &res);
		if (rc || !res)
			return -ENOENT;
		*out = res->gr_gid;
	} else {
		struct passwd pw, *res = NULL;
		rc = getpwnam_r(name, &pw, buf, sizeof(buf), &res);
		if (rc || !res)
			return -ENOENT;
		*out = res->pw_uid;
	}
	return 0;
}

/*
 * A list of numbers and ranges into set; kind picks how names read:
 * PV_USER/PV_GROUP look names up, PV_SIZE takes K/M/G/T, PV_PLAIN neither.
 * max bounds every value. On error *bad names the offending item.
 */
int pv_set(char *s, enum pv_kind kind, uint64_t max, struct pol_set *set, const char **bad)
{
	char *items[64];
	int n = pv_split(s, items, 64);

	*bad = s;
	if (n < 0)
		return n;
	set->r = calloc((size_t)n, sizeof(*set->r));
	if (!set->r)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		struct pol_range *r = &set->r[set->n];
		int rc;

		*bad = items[i];
		if ((kind == PV_USER || kind == PV_GROUP) && !isdigit((unsigned char)*items[i])) {
			uint64_t id;
			rc = lookup_id(items[i], kind == PV_GROUP, &id);
			if (rc)
				return rc;
			r->lo = r->hi = id;
		} else {
			rc = pv_range(items[i], kind == PV_SIZE, r);
			if (rc)
				return rc;
		}
		if (r->hi > max)
			return -ERANGE;
		set->n++;
	}
	return 0;
}

int pv_uuid(const char *s, char out[UCMD_HOSTID_LEN])
{
	if (strlen(s) != UCMD_HOSTID_LEN - 1)
		return -EINVAL;
	for (unsigned i = 0; i < UCMD_HOSTID_LEN - 1; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
			return -EINVAL;
		out[i] = (char)tolower((unsigned char)s[i]);
	}
	out[UCMD_HOSTID_LEN - 1] = 0;
	return 0;
}

int pv_bool(const char *s, bool *out)
{
	if (!strcmp(s, "yes") || !strcmp(s, "true") || !strcmp(s, "1")) {
		*out = true;
		return 0;
	}
	if (!strcmp(s, "no") || !strcmp(s, "false") || !strcmp(s, "0")) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

/* Names from a table into a bit mask; *bad names an unknown item. */
int pv_names(char *s, const char *const *names, unsigned nnames, uint32_t *mask,
	     const char **bad)
{
	char *items[64];
	int n = pv_split(s, items, 64);

	*bad = s;
	if (n < 0)
		return n;
	*mask = 0;
	for (int i = 0; i < n; i++) {
		unsigned v;
		for (v = 0; v < nnames; v++)
			if (names[v] && !strcmp(names[v], items[i]))
				break;
		if (v == nnames) {
			*bad = items[i];
			return -EINVAL;
		}
		*mask |= 1u << v;
	}
	return 0;
}

bool pv_set_has(const struct pol_set *set, uint64_t v)
{
	for (unsigned i = 0; i < set->n; i++)
		if (v >= set->r[i].lo && v <= set->r[i].hi)
			return true;
	return false;
}
