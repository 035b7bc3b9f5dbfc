/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the policy parser. The input is the text of a policy
 * file; it must parse or be refused with "fuzz.ini:LINE: problem", never
 * crash or leak. A policy that parses is evaluated for a few subjects, so
 * the rules it built are walked too. The line an error names is one of the
 * input's. The parser reads lines of any length up to 64 KiB (its own,
 * not libinih's 200 bytes): the input is also parsed as the value of one
 * long key line, stretched past that limit when its first byte is odd.
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
	policy_desc_for_verb(&d, verb);
	d.has_range = true;
	d.slba = 4096;
	d.nlb = 8;
	d.offset = 4096 * 512;
	d.length = 8 * 512;
	d.has_select = true;
	policy_eval(p, &s, &v);
	if (!strchr(v.rule, ':'))
		abort();	/* every verdict names its file and line (or default) */
}

static void load(const char *text, size_t size)
{
	struct ucmd_policy *p = NULL;
	unsigned long lines = 1, line;
	char err[256], *end;

	for (size_t i = 0; i < size; i++)
		lines += text[i] == '\n';
	if (ucmd_policy_load_string("fuzz.ini", text, size, &p, err, sizeof(err))) {
		/* refusals name the file and a line of the input: "fuzz.ini:N: ..." */
		if (strncmp(err, "fuzz.ini:", 9) || p)
			abort();
		line = strtoul(err + 9, &end, 10);
		if (end == err + 9 || *end != ':' || !line || line > lines)
			abort();
		return;
	}
	for (int h = 0; h < 4; h++)
		for (int verb = 0; verb < UCMD_VERB_NR; verb += 5)
			judge(p, (enum ucmd_security_hook)h, (enum ucmd_verb)verb, verb & 1);
	ucmd_policy_put(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char head[] = "[rule long]\nhostnqn = ";
	static const char tail[] = "\naction = allow\n";
	/* the key line's length without the input: "hostnqn = " */
	const size_t key = sizeof(head) - 1 - (size_t)(strchr(head, '\n') + 1 - head);
	size_t fill = 0, len, want;
	char *text;

	load((const char *)data, size);
	/* the input as one key's value, stretched to within 4 bytes of the limit */
	if (size && (data[0] & 1)) {
		want = 65536 + (data[0] >> 1) % 8 - 4;
		fill = want > key + size ? want - key - size : 0;
	}
	len = sizeof(head) - 1 + size + fill + sizeof(tail) - 1;
	text = malloc(len);
	if (!text)
		return 0;
	memcpy(text, head, sizeof(head) - 1);
	memcpy(text + sizeof(head) - 1, data, size);
	memset(text + sizeof(head) - 1 + size, 'n', fill);
	memcpy(text + len - (sizeof(tail) - 1), tail, sizeof(tail) - 1);
	load(text, len);
	free(text);
	return 0;
}
