/* SPDX-License-Identifier: MIT */
/*
 * ucmd policy load --bpf FILE     compile FILE into the BPF LSM program and
 *                                 put it in force on Linux's /dev/ngXnY and
 *                                 /dev/nvmeX (loads and pins it the first time)
 * ucmd policy unload --bpf        remove it: Linux's own checks alone
 * ucmd policy status --bpf        what is loaded, and its counters
 * ucmd policy audit --bpf FILE [--count N] [--idle-ms MS]
 *                                 the program's decisions as audit records
 * Exit status: 0 done, 1 refused or failed (the reason on stderr), 2 usage.
 * The work is in src/bpf/ (ucmd_bpf.h); docs/security.md says what the
 * program enforces and how it differs from the engine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifdef UCMD_HAVE_BPF_LSM
#include "ucmd_bpf.h"

static int usage(void)
{
	fprintf(stderr, "usage: ucmd policy load --bpf FILE\n"
			"       ucmd policy unload --bpf\n"
			"       ucmd policy status --bpf\n"
			"       ucmd policy audit --bpf FILE [--count N] [--idle-ms MS]\n");
	return 2;
}

static int bpf_load(int argc, char **argv)
{
	char err[512] = "";

	if (argc != 1)
		return usage();
	if (bpf_lsm_load(argv[0], err, sizeof(err))) {
		fprintf(stderr, "ucmd policy load --bpf: %s\n", err);
		return 1;
	}
	printf("%s: in force (BPF LSM, pinned in %s)\n", argv[0], UCMD_BPF_PIN_DIR);
	return 0;
}

static int bpf_unload(int argc, char **argv)
{
	char err[512] = "";

	(void)argv;
	if (argc)
		return usage();
	if (bpf_lsm_unload(err, sizeof(err))) {
		fprintf(stderr, "ucmd policy unload --bpf: %s\n", err);
		return 1;
	}
	printf("BPF policy unloaded\n");
	return 0;
}

static int bpf_status(struct cli *cli, int argc, char **argv)
{
	struct bpf_lsm_status st;
	char err[512] = "";

	(void)argv;
	if (argc)
		return usage();
	if (bpf_lsm_status(&st, err, sizeof(err))) {
		fprintf(stderr, "ucmd policy status --bpf: %s\n", err);
		return 1;
	}
	if (cli->fmt == OUT_JSON) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "loaded", json_object_new_boolean(st.loaded));
		if (st.loaded) {
			json_object_object_add(o, "policy", json_object_new_string(st.file));
			json_object_object_add(o, "generation", json_object_new_int64(st.gen));
			json_object_object_add(o, "rules", json_object_new_int64(st.nrules));
			json_object_object_add(o, "devices", json_object_new_int64(st.ndevices));
			json_object_object_add(o, "allowed", json_object_new_uint64(st.allowed));
			json_object_object_add(o, "denied", json_object_new_uint64(st.denied));
			json_object_object_add(o, "audit_lost", json_object_new_uint64(st.lost));
			json_object_object_add(o, "uring_cmd_runs", json_object_new_uint64(st.uring_runs));
			json_object_object_add(o, "uring_cmd_ns", json_object_new_uint64(st.uring_ns));
			json_object_object_add(o, "file_ioctl_runs", json_object_new_uint64(st.ioctl_runs));
			json_object_object_add(o, "file_ioctl_ns", json_object_new_uint64(st.ioctl_ns));
		}
		json_print(o);
	} else if (!st.loaded) {
		printf("no BPF policy loaded\n");
	} else {
		printf("BPF policy %s (generation %u): %u rules, %u devices; %llu allowed, "
		       "%llu denied, %llu audit records lost\n", st.file, st.gen, st.nrules,
		       st.ndevices, (unsigned long long)st.allowed, (unsigned long long)st.denied,
		       (unsigned long long)st.lost);
		/* only counted while kernel.bpf_stats_enabled is 1 */
		if (st.uring_runs)
			printf("lsm/uring_cmd: %llu runs, %llu ns each\n",
			       (unsigned long long)st.uring_runs,
			       (unsigned long long)(st.uring_ns / st.uring_runs));
		if (st.ioctl_runs)
			printf("lsm/file_ioctl: %llu runs, %llu ns each\n",
			       (unsigned long long)st.ioctl_runs,
			       (unsigned long long)(st.ioctl_ns / st.ioctl_runs));
	}
	return 0;
}

static int bpf_audit(int argc, char **argv)
{
	unsigned long count = 0, idle = 0;
	char err[512] = "", *end;

	if (argc < 1 || argc % 2 == 0)
		return usage();
	for (int i = 1; i + 1 < argc; i += 2) {
		unsigned long *v = !strcmp(argv[i], "--count") ? &count :
				   !strcmp(argv[i], "--idle-ms") ? &idle : NULL;

		if (!v || argv[i + 1][0] == '-')
			return usage();
		*v = strtoul(argv[i + 1], &end, 10);
		if (*end || end == argv[i + 1] || *v > 0xffffffffUL)
			return usage();
	}
	if (bpf_lsm_audit(argv[0], count, (unsigned)idle, err, sizeof(err))) {
		fprintf(stderr, "ucmd policy audit --bpf: %s\n", err);
		return 1;
	}
	return 0;
}

int cmd_policy_bpf(struct cli *cli, int argc, char **argv)
{
	const char *sub = argc ? argv[0] : "";
	char *rest[16];
	int n = 0;

	/* argv: the subcommand and its arguments, --bpf anywhere among them */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bpf"))
			continue;
		if (n == 16)
			return usage();
		rest[n++] = argv[i];
	}
	if (!strcmp(sub, "load"))
		return bpf_load(n, rest);
	if (!strcmp(sub, "unload"))
		return bpf_unload(n, rest);
	if (!strcmp(sub, "status"))
		return bpf_status(cli, n, rest);
	if (!strcmp(sub, "audit"))
		return bpf_audit(n, rest);
	return usage();
}
#else
int cmd_policy_bpf(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	(void)argc;
	(void)argv;
	fprintf(stderr, "ucmd: built without the BPF LSM enforcer (meson -Dbpf=enabled)\n");
	return 1;
}
#endif
