// SPDX-License-Identifier: MIT
/*
 * runas UID GID[,GROUP...] [+sys_admin] PROG [ARG...]
 * The guest has no login tools (busybox's setpriv cannot change ids): run
 * PROG as another user with exactly these groups and, with +sys_admin,
 * CAP_SYS_ADMIN kept across the exec (ambient), so the BPF LSM tests can
 * act as the callers of a policy table.
 */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int parse_id(const char *s, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > 0xfffffffeUL)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int keep_sys_admin(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { { 0 } };
	unsigned bit = 1u << CAP_SYS_ADMIN;

	d[0].effective = d[0].permitted = d[0].inheritable = bit;
	if (syscall(SYS_capset, &h, d))
		return -1;
	return prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_SYS_ADMIN, 0, 0);
}

int main(int argc, char **argv)
{
	gid_t groups[32];
	unsigned uid, gid, ng = 0, v;
	char *s, *tok;
	int a = 3;
	int cap = 0;

	if (argc < 4 || parse_id(argv[1], &uid)) {
		fprintf(stderr, "usage: runas UID GID[,GROUP...] [+sys_admin] PROG [ARG...]\n");
		return 125;
	}
	s = argv[2];
	for (tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
		if (parse_id(tok, &v) || ng == 32) {
			fprintf(stderr, "runas: bad group list\n");
			return 125;
		}
		groups[ng++] = v;
	}
	if (!ng) {
		fprintf(stderr, "runas: no gid\n");
		return 125;
	}
	gid = groups[0];
	if (!strcmp(argv[a], "+sys_admin")) {
		cap = 1;
		a++;
	}
	if (a >= argc) {
		fprintf(stderr, "runas: no program\n");
		return 125;
	}
	if (setgroups(ng - 1, groups + 1) || setresgid(gid, gid, gid) ||
	    (cap && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0)) || setresuid(uid, uid, uid) ||
	    (cap && keep_sys_admin())) {
		perror("runas");
		return 125;
	}
	execvp(argv[a], argv + a);
	perror(argv[a]);
	return 127;
}
