/* SPDX-License-Identifier: MIT */
/* One [rule] section's keys (policy_rule.c), used by the parser. */
#ifndef UCMD_SECURITY_POLICY_PARSE_H
#define UCMD_SECURITY_POLICY_PARSE_H

#include <stddef.h>

#include "security/policy_int.h"

void pol_rule_init(struct ucmd_policy_rule *r, const char *file, unsigned line);
/* Apply name = value to r; on error returns -EINVAL and says why. */
int pol_rule_key(struct ucmd_policy_rule *r, const char *name, const char *value, char *why,
		 size_t whylen);
/* The checks that need every key of the rule: NULL, or the problem. */
const char *pol_rule_check(const struct ucmd_policy_rule *r);

#endif
