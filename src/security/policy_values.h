/* SPDX-License-Identifier: MIT */
/* Parsers for policy values (policy_values.c). */
#ifndef UCMD_SECURITY_POLICY_VALUES_H
#define UCMD_SECURITY_POLICY_VALUES_H

#include "security/policy_int.h"

enum pv_kind { PV_PLAIN, PV_SIZE, PV_USER, PV_GROUP };

int pv_split(char *s, char **items, unsigned max);
int pv_number(const char *s, bool sizes, uint64_t *out);
int pv_range(char *s, bool sizes, struct pol_range *r);
int pv_set(char *s, enum pv_kind kind, uint64_t max, struct pol_set *set, const char **bad);
int pv_bool(const char *s, bool *out);
/* A UUID (8-4-4-4-12 hex digits, either case) into out, lowercase; 0 or -EINVAL. */
int pv_uuid(const char *s, char out[UCMD_HOSTID_LEN]);
int pv_names(char *s, const char *const *names, unsigned nnames, uint32_t *mask,
	     const char **bad);
bool pv_set_has(const struct pol_set *set, uint64_t v);

#endif
