/* SPDX-License-Identifier: MIT */
/*
 * ucmd: an nvme-cli style tool over ucmd's engine. With no device path it
 * works on the embedded default: the controller in --ctrl DIR (which must
 * exist unless --create), else $UCMD_CTRL, else ./ucmd-ctrl (these two are
 * created on first use); with --daemon SOCKET (or $UCMD_DAEMON), on the
 * controllers of ucmdd through its socket. Every command goes through a
 * ring and IORING_OP_URING_CMD.
 *
 * Order matters for safety: the command's options are parsed with its
 * table (cmd_tab.c) BEFORE any session is opened, so that --help, an
 * unknown option or a bad value never reach a device.
 *
 * Exit status: 0 success, 1 the command failed (an errno or NVMe status,
 * printed), 2 a usage error (unknown command or option, bad value).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"

#define DEFAULT_NS_BLOCKS ((1ull << 30) / 512)

static const struct {
	const char *name;
	cli_fn fn;
} impls[] = {
	{ "run", cmd_run },
	{ "list", cmd_list },
	{ "list-subsys", cmd_list_subsys },
	{ "show-topology", cmd_show_topology },
	{ "id-ctrl", cmd_id_ctrl },
	{ "id-ns", cmd_id_ns },
	{ "nvm-id-ns", cmd_nvm_id_ns },
	{ "ns-descs", cmd_ns_descs },
	{ "smart-log", cmd_smart_log },
	{ "error-log", cmd_error_log },
	{ "effects-log", cmd_effects_log },
	{ "fw-log", cmd_fw_log },
	{ "sanitize-log", cmd_sanitize_log },
	{ "self-test-log", cmd_self_test_log },
	{ "get-log", cmd_get_log },
	{ "get-feature", cmd_get_feature },
	{ "set-feature", cmd_set_feature },
	{ "format", cmd_format },
	{ "create-ns", cmd_create_ns },
	{ "delete-ns", cmd_delete_ns },
	{ "attach-ns", cmd_attach_ns },
	{ "detach-ns", cmd_detach_ns },
	{ "read", cmd_read },
	{ "write", cmd_write },
	{ "compare", cmd_compare },
	{ "write-zeroes", cmd_write_zeroes },
	{ "write-uncor", cmd_write_uncor },
	{ "verify", cmd_verify },
	{ "dsm", cmd_dsm },
	{ "copy", cmd_copy },
	{ "flush", cmd_flush },
	{ "sanitize", cmd_sanitize },
	{ "device-self-test", cmd_device_self_test },
	{ "fw-download", cmd_fw_download },
	{ "fw-commit", cmd_fw_commit },
	{ "reset", cmd_reset },
	{ "ana-state", cmd_ana_state },
	{ "port-state", cmd_port_state },
	{ "ana-log", cmd_ana_log },
	{ "show-regs", cmd_show_regs },
	{ "io-passthru", cmd_io_passthru },
	{ "admin-passthru", cmd_admin_passthru },
	{ "bench", cmd_bench },
	{ "policy", cmd_policy },
	{ "exec", cmd_exec },
	{ "create-ctrl", cmd_create_ctrl },
	{ "zns id-ctrl", cmd_zns_id_ctrl },
	{ "zns id-ns", cmd_zns_id_ns },
	{ "zns report-zones", cmd_zns_report_zones },
	{ "zns reset-zone", cmd_zns_reset_zone },
	{ "zns close-zone", cmd_zns_close_zone },
	{ "zns finish-zone", cmd_zns_finish_zone },
	{ "zns open-zone", cmd_zns_open_zone },
	{ "zns offline-zone", cmd_zns_offline_zone },
	{ "zns set-zone-desc", cmd_zns_set_zone_desc },
	{ "zns changed-zone-list", cmd_zns_changed_zone_list },
	{ "zns zone-mgmt-recv", cmd_zns_zone_mgmt_recv },
	{ "zns zone-mgmt-send", cmd_zns_zone_mgmt_send },
	{ "zns zone-append", cmd_zns_zone_append },
	{ "fdp configs", cmd_fdp_configs },
	{ "fdp usage", cmd_fdp_usage },
	{ "fdp stats", cmd_fdp_stats },
	{ "fdp events", cmd_fdp_events },
	{ "fdp status", cmd_fdp_status },
	{ "fdp update", cmd_fdp_update },
	{ "fdp set-events", cmd_fdp_set_events },
	{ "fdp feature", cmd_fdp_feature },
	{ "version", cmd_version },
	{ "help", cmd_help },
};

static cli_fn impl_of(const char *name)
{
	for (size_t i = 0; i < sizeof(impls) / sizeof(impls[0]); i++)
		if (!strcmp(impls[i].name, name))
			return impls[i].fn;
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ucmd [--ctrl DIR [--create] | --ctrl nvme-tcp://HOST[:PORT]/SUBNQN\n"
		   "            [--hostnqn NQN] | --daemon SOCKET] [--namespace-id N]\n"
		   "            [--output-format normal|json|binary] [--policy FILE] [--audit FILE|-]\n"
		   "            COMMAND [/dev/DEVICE] [OPTIONS]\n"
		   "       ucmd --version | ucmd help [COMMAND] | ucmd COMMAND --help\n\n"
		   "Without a /dev path the command works on the embedded controller in --ctrl DIR\n"
		   "(it must exist: --create or `ucmd --ctrl DIR create-ctrl` makes it), else in\n"
		   "$UCMD_CTRL, else in ./ucmd-ctrl (these two are created on first use). With a\n"
		   "/dev path, on that real device through the kernel's io_uring. --daemon SOCKET\n"
		   "sends it to ucmdd's controllers instead, as the user you are, under the daemon's\n"
		   "policy; $UCMD_DAEMON does the same when neither --ctrl nor a /dev path is given.\n"
		   "--ctrl nvme-tcp://HOST:PORT/SUBNQN attaches ucmd's driver to that remote\n"
		   "NVMe/TCP controller instead (options ?hdgst&ddgst for digests,\n"
		   "&reconnect_delay=S&ctrl_loss_tmo=S after a lost connection, Linux's 10 and\n"
		   "600 by default; &icresp_timeout=S&admin_timeout=S&io_timeout=S, the deadlines\n"
		   "of a silent controller, Linux's 10, 60 and 30; --hostnqn, else\n"
		   "/etc/nvme/hostnqn, else generated). --ctrl URL,URL[,...]: controllers of one\n"
		   "subsystem as Linux's native multipath (&iopolicy=numa|round-robin|queue-depth).\n"
		   "Command\n"
		   "options (nvme-cli's, e.g. -n, -o, -H, -b) go after the command; -n and -o\n"
		   "before it still set the defaults.\n"
		   "Exit status: 0 success, 1 the command failed, 2 usage error.\n"
		   "\ncommands:\n");
	for (const struct cmd_spec *c = cli_specs; c->name; c++)
		fprintf(f, "  %-18s %s\n", c->name, c->summary);
}

/* `ucmd zns` (fdp) alone, with help, or with an option first: the plugin's commands */
static int plugin_usage(const char *plugin, int argc, char **argv)
{
	bool help = argc == 0;
	size_t n = strlen(plugin);

	for (int i = 0; i < argc; i++)
		help |= !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") ||
			!strcmp(argv[i], "help");
	fprintf(help ? stdout : stderr, "usage: ucmd %s <command> [<args>]\n\n%s\n\ncommands:\n",
		plugin, !strcmp(plugin, "zns") ? "Zoned Namespace Command Set (nvme-cli's zns plugin)"
		: "Flexible Data Placement (nvme-cli's fdp plugin)");
	for (const struct cmd_spec *c = cli_specs; c->name; c++)
		if (!strncmp(c->name, plugin, n) && c->name[n] == ' ')
			fprintf(help ? stdout : stderr, "  %-18s %s\n", c->name + n + 1, c->summary);
	return help ? 0 : 2;
}

int cmd_version(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	(void)argc;
	(void)argv;
	printf("ucmd version %s\n", UCMD_VERSION);
	return 0;
}

/*
 * help [COMMAND]; hidden: --dump-options (every table, for docs/cli.md's
 * test) and --complete CWORD WORDS... (bash completion, ucmd.bash).
 */
int cmd_help(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			argc = 1;	/* help about help: the general usage */
	if (argc == 1) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--dump-options") && argc == 2) {
		cli_args_dump(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--complete") && argc >= 3) {
		uint32_t cword;

		if (parse_u32(argv[2], &cword))
			return 2;
		cli_args_complete(stdout, (int)cword, argc - 3, argv + 3);
		return 0;
	}
	const struct cmd_spec *c = argc == 2 ? cli_spec_find(argv[1]) : NULL;
	if (!c) {
		const char *s = argc == 2 ? cli_spec_suggest(argv[1]) : NULL;

		fprintf(stderr, "ucmd help: unknown command '%s'%s%s%s\n", argv[1],
			s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
		return 2;
	}
	if (!c->opts && strcmp(c->name, "help")) {
		/* the commands that parse their own print their own help */
		char *av[] = { (char *)c->name, (char *)"--help", NULL };
		return impl_of(c->name)(cli, 2, av);
	}
	cli_args_help(stdout, c);
	return 0;
}

/* Where the command goes and the session it needs; 0 or an exit status. */
static int open_session(struct cli *cli, const struct cmd_spec *spec)
{
	if (cli->daemon && (cli->ctrl_given || cli->device)) {
		fprintf(stderr, "ucmd: --daemon and %s exclude each other\n",
			cli->device ? "a /dev path" : "--ctrl");
		return 2;
	}
	/*
	 * Where the command goes: --daemon; else --ctrl or a /dev path; else
	 * $UCMD_DAEMON when set; else $UCMD_CTRL or ./ucmd-ctrl.
	 */
	if (!cli->daemon && !cli->ctrl_given && !cli->device) {
		const char *env = getenv("UCMD_DAEMON");

		if (env && *env)
			cli->daemon = env;
	}
	if (cli->daemon && (cli->policy || cli->audit)) {
		fprintf(stderr, "ucmd: --policy and --audit are for a controller in this process "
			"(--ctrl DIR); through ucmdd (%s) the daemon's policy and audit apply\n",
			cli->daemon);
		return 2;
	}
	/* the option parser stays apart from sessions (fuzz_cli_args links it alone) */
	session_hostnqn = cli->hostnqn;
	uint32_t nsid = cli->a.nsid ? cli->a.nsid : cli->nsid;
	/* a named --ctrl must exist: a typo must not make a new controller */
	uint64_t boot = !cli->ctrl_given || cli->create ? DEFAULT_NS_BLOCKS : 0;
	int ret = cli->device ? session_open_kernel(&cli->s, cli->device, nsid)
		  : cli->daemon ? session_open_daemon(&cli->s, cli->daemon, nsid, spec->only_reads)
				: session_open(&cli->s, cli->ctrl_dir, nsid, cli->policy, cli->audit,
					       spec->only_reads, boot);
	if (ret) {
		/* once: not again when session_open said why */
		if (!cli->s.reported)
			print_status_error(cli->device ? cli->device : cli->daemon ? cli->daemon
										   : cli->ctrl_dir, ret);
		session_close(&cli->s);
		return 1;
	}
	cli->session_open = true;
	return 0;
}

int main(int argc, char **argv)
{
	struct cli cli = { .fmt = OUT_NORMAL };
	const char *why;
	bool version;
	int cmdi, ret;

	cli.ctrl_dir = getenv("UCMD_CTRL");
	if (!cli.ctrl_dir || !*cli.ctrl_dir)
		cli.ctrl_dir = "./ucmd-ctrl";
	cmdi = cli_global_parse(&cli, argc, argv, &why, &version);
	if (cmdi == 0) {
		if (version)
			return cmd_version(&cli, 0, NULL);
		usage(stdout);
		return 0;
	}
	if (cmdi < 0) {
		fprintf(stderr, "ucmd: %s\n", why ? why : "bad arguments");
		fprintf(stderr, "See 'ucmd help'.\n");
		return 2;
	}
	const char *name = argv[cmdi];
	char plugin[64];

	/* nvme-cli's plugin commands are two words: `ucmd zns report-zones` */
	bool is_plugin = !strcmp(name, "zns") || !strcmp(name, "fdp");

	if (is_plugin && (cmdi + 1 >= argc || argv[cmdi + 1][0] == '-' ||
			  !strcmp(argv[cmdi + 1], "help")))
		return plugin_usage(name, argc - cmdi - 1, argv + cmdi + 1);
	if (is_plugin &&
	    snprintf(plugin, sizeof(plugin), "%s %s", name, argv[cmdi + 1]) < (int)sizeof(plugin)) {
		name = plugin;
		cmdi++;
	}
	const struct cmd_spec *spec = cli_spec_find(name);
	cli_fn fn = spec ? impl_of(name) : NULL;
	if (!fn) {
		const char *s = cli_spec_suggest(name);

		fprintf(stderr, "ucmd: unknown command '%s'\n", name);
		if (s)
			fprintf(stderr, "Did you mean '%s'?\n", s);
		fprintf(stderr, "See 'ucmd help' for the commands.\n");
		return 2;
	}
	int cargc = argc - cmdi;
	char **cargv = argv + cmdi;
	bool needs_session = !spec->no_session;

	cli.spec = spec;
	cli.a.nsid = cli.nsid;
	cli.a.fmt = cli.fmt;
	if (spec->opts) {
		char err[256];

		ret = cli_args_parse(spec, &cli.a, cargc, cargv, err, sizeof(err));
		if (ret == 1) {
			cli_args_help(stdout, spec);
			return 0;
		}
		if (ret) {
			fprintf(stderr, "ucmd %s: %s\n", name, err);
			fprintf(stderr, "See 'ucmd %s --help'.\n", name);
			return 2;
		}
		/* list-subsys /dev/nvme0n1 with --ctrl or --daemon: a name in their view */
		if (!spec->dev_in_view || (!cli.ctrl_given && !cli.daemon))
			cli.device = cli.a.dev;
	} else if (!strcmp(name, "bench")) {
		/* bench: a /dev path right after the name is the kernel backend's device */
		if (cargc > 1 && !strncmp(cargv[1], "/dev/", 5)) {
			cli.device = cargv[1];
			cargv[1] = cargv[0];
			cargc--;
			cargv++;
		}
		ret = bench_pre(&cli, cargc, cargv, &needs_session);
		if (ret)
			return ret > 0 ? 0 : 2;
	}
	if (needs_session && (ret = open_session(&cli, spec)))
		return ret;
	ret = fn(&cli, cargc, cargv);
	/* the command's own result stands, but a state left unsaved is a failure too */
	if (cli.session_open && session_close(&cli.s)) {
		fprintf(stderr, "ucmd: %s\n", ucmd_last_error());
		ret = ret ? ret : 1;
	}
	return ret;
}
