/* SPDX-License-Identifier: MIT */
/*
 * ucmd: an nvme-cli style tool over ucmd's engine. With no device path it
 * works on the embedded default: the controller in --ctrl DIR (default
 * $UCMD_CTRL, else ./ucmd-ctrl), created on first use; with --daemon
 * SOCKET (or $UCMD_DAEMON), on the controllers of ucmdd through its socket.
 * Every command goes through a ring and IORING_OP_URING_CMD.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"

const struct cli_cmd cli_cmds[] = {
	{ "run", "the main job: write, verify, read, identify, SMART log", cmd_run },
	{ "list", "list the devices of the controller", cmd_list, .only_reads = true },
	{ "id-ctrl", "Identify Controller", cmd_id_ctrl, .only_reads = true },
	{ "id-ns", "Identify Namespace", cmd_id_ns, .only_reads = true },
	{ "smart-log", "SMART / health information log", cmd_smart_log, .only_reads = true },
	{ "read", "read blocks to a file or stdout", cmd_read, .only_reads = true },
	{ "write", "write blocks from a file or stdin", cmd_write },
	{ "ns-descs", "namespace identification descriptors", cmd_ns_descs, .only_reads = true },
	{ "error-log", "error information log", cmd_error_log, .only_reads = true },
	{ "effects-log", "commands supported and effects log", cmd_effects_log, .only_reads = true },
	{ "get-feature", "Get Features", cmd_get_feature, .only_reads = true },
	{ "set-feature", "Set Features", cmd_set_feature },
	{ "format", "Format NVM", cmd_format },
	{ "create-ns", "Namespace Management: create", cmd_create_ns },
	{ "delete-ns", "Namespace Management: delete", cmd_delete_ns },
	{ "attach-ns", "Namespace Attachment: attach", cmd_attach_ns },
	{ "detach-ns", "Namespace Attachment: detach", cmd_detach_ns },
	{ "compare", "compare blocks with a file", cmd_compare, .only_reads = true },
	{ "write-zeroes", "Write Zeroes", cmd_write_zeroes },
	{ "write-uncor", "Write Uncorrectable", cmd_write_uncor },
	{ "dsm", "Dataset Management (deallocate)", cmd_dsm },
	{ "verify", "Verify", cmd_verify, .only_reads = true },
	{ "copy", "Copy", cmd_copy },
	{ "flush", "flush the volatile write cache", cmd_flush },
	{ "bench", "fio-style workload: IOPS, bandwidth, latency percentiles", cmd_bench },
	{ "policy", "check or explain a security policy", cmd_policy, true },
	{ "io-passthru", "any I/O command", cmd_io_passthru },
	{ "admin-passthru", "any admin command", cmd_admin_passthru },
	{ "exec", "run a program with the controller's devices (LD_PRELOAD)", cmd_exec,
	  .no_session = true },
	/* WIRE: temporary, until h-cli's commands land */
	{ "fw-log", "firmware slot log", cmd_fw_log, .only_reads = true },
	{ "get-log", "any log page", cmd_get_log, .only_reads = true },
	{ "sanitize-log", "sanitize status log", cmd_sanitize_log, .only_reads = true },
	{ "self-test-log", "device self-test log", cmd_self_test_log, .only_reads = true },
	{ "list-subsys", "the NVM subsystem and its controllers", cmd_list_subsys,
	  .only_reads = true },
	{ NULL, NULL, NULL },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ucmd [--ctrl DIR | --ctrl nvme-tcp://HOST[:PORT]/SUBNQN [--hostnqn NQN]\n"
		   "            | --daemon SOCKET] [--namespace-id N]\n"
		   "            [--output-format normal|json] [--policy FILE] [--audit FILE|-]\n"
		   "            COMMAND [/dev/DEVICE] [ARGS]\n\n"
		   "Without a /dev path the command works on the embedded controller in --ctrl DIR\n"
		   "(default $UCMD_CTRL, else ./ucmd-ctrl); with one, on that real device through\n"
		   "the kernel's io_uring. --daemon SOCKET sends it to ucmdd's controllers instead,\n"
		   "as the user you are, under the daemon's policy; $UCMD_DAEMON does the same when\n"
		   "neither --ctrl nor a /dev path is given. --ctrl nvme-tcp://HOST:PORT/SUBNQN\n"
		   "attaches ucmd's driver to that remote NVMe/TCP controller instead (options\n"
		   "?hdgst&ddgst for digests; --hostnqn, else /etc/nvme/hostnqn, else generated).\n"
		   "\ncommands:\n");
	for (const struct cli_cmd *c = cli_cmds; c->name; c++)
		fprintf(f, "  %-16s %s\n", c->name, c->help);
}

int main(int argc, char **argv)
{
	struct cli cli = { .fmt = OUT_NORMAL };
	const char *why;
	int cmdi;

	cli.ctrl_dir = getenv("UCMD_CTRL");
	if (!cli.ctrl_dir || !*cli.ctrl_dir)
		cli.ctrl_dir = "./ucmd-ctrl";
	cmdi = cli_global_parse(&cli, argc, argv, &why);
	if (cmdi == 0) {
		usage(stdout);
		return 0;
	}
	if (cmdi < 0) {
		if (why)
			fprintf(stderr, "ucmd: %s\n", why);
		else
			usage(stderr);
		return 2;
	}
	const char *name = argv[cmdi];
	const struct cli_cmd *cmd = NULL;
	for (const struct cli_cmd *x = cli_cmds; x->name; x++)
		if (!strcmp(x->name, name))
			cmd = x;
	if (!cmd) {
		fprintf(stderr, "ucmd: unknown command '%s'\n", name);
		usage(stderr);
		return 2;
	}
	if (cmd->no_session)
		return cmd->fn(&cli, argc - cmdi, argv + cmdi);
	/* nvme-cli style: a device path right after the command name */
	if (cmdi + 1 < argc && !strncmp(argv[cmdi + 1], "/dev/", 5)) {
		cli.device = argv[cmdi + 1];
		argv[cmdi + 1] = argv[cmdi];
		cmdi++;
	}
	/*
	 * Where the command goes: --daemon; else --ctrl or a /dev path; else
	 * $UCMD_DAEMON when set; else $UCMD_CTRL or ./ucmd-ctrl.
	 */
	if (cli.daemon && (cli.ctrl_given || cli.device)) {
		fprintf(stderr, "ucmd: --daemon and %s exclude each other\n",
			cli.device ? "a /dev path" : "--ctrl");
		return 2;
	}
	if (!cli.daemon && !cli.ctrl_given && !cli.device) {
		const char *env = getenv("UCMD_DAEMON");

		if (env && *env)
			cli.daemon = env;
	}
	if (cli.daemon && (cli.policy || cli.audit)) {
		fprintf(stderr, "ucmd: --policy and --audit are for a controller in this process "
			"(--ctrl DIR); through ucmdd (%s) the daemon's policy and audit apply\n",
			cli.daemon);
		return 2;
	}
	/* the option parser stays apart from sessions (fuzz_cli_args links it alone) */
	session_hostnqn = cli.hostnqn;
	int ret = cli.device ? session_open_kernel(&cli.s, cli.device, cli.nsid)
		  : cli.daemon ? session_open_daemon(&cli.s, cli.daemon, cli.nsid, cmd->only_reads)
			       : session_open(&cli.s, cli.ctrl_dir, cli.nsid, cli.policy, cli.audit,
					      cmd->only_reads);
	if (ret) {
		print_status_error(cli.device ? cli.device : cli.daemon ? cli.daemon : cli.ctrl_dir,
				   ret);
		session_close(&cli.s);
		return 1;
	}
	ret = cmd->fn(&cli, argc - cmdi, argv + cmdi);
	session_close(&cli.s);
	return ret;
}
