/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the policy parser. The input is the text of a policy
 * file; it must parse or be refused with "fuzz.ini:LINE: problem", never
 * crash or leak. A policy that parses is evaluated for a few subjects, so
 * the rules it built are walked too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "security/security.h"

static void judge(const struct ucmd_policy *p, enum ucmd_security_hook hook, enum ucmd_verb verb,
		  bool admin)
{
	struct ucmd_cred c = { .uid = 1000, .euid = 1000, .gid = 6, .egid = 6, .ngroups = 1,
			       .groups = { 100 }, .cap_sys_admin = admin };
	struct ucmd_cmd_desc d;
	struct ucmd_policy_subject s = { .hook = hook, .cred = &c, .new_cred = &c,
					 .f_mode = FMODE_READ, .desc = &d };
	struct ucmd_policy_verdict v;

	ucmd_desc_init(&d, "ng0n1", 0, 0x02);
	ucmd_policy_desc_for_verb(&d, verb);
	d.has_range = true;
	d.slba = 4096;
	d.nlb = 8;
	d.offset = 4096 * 512;
	d.length = 8 * 512;
	d.has_select = true;
	ucmd_policy_eval(p, &s, &v);
	if (!strchr(v.rule, ':'))
		abort();	/* every verdict names its file and line (or default) */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ucmd_policy *p = NULL;
	char err[256];

	if (ucmd_policy_load_string("fuzz.ini", (const char *)data, size, &p, err,
				    sizeof(err))) {
		/* refusals name the file and a line: "fuzz.ini:N: ..." */
		if (strncmp(err, "fuzz.ini:", 9) || p)
			abort();
		return 0;
	}
	for (int h = 0; h < 4; h++)
		for (int verb = 0; verb < UCMD_VERB_NR; verb += 5)
			judge(p, (enum ucmd_security_hook)h, (enum ucmd_verb)verb, verb & 1);
	ucmd_policy_put(p);
	return 0;
}
