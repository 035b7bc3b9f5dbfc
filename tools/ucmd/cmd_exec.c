// SPDX-License-Identifier: MIT
/*
 * ucmd exec: run an unmodified program with the controller's devices
 * present (/dev/nvme0, /dev/ng0n1, /dev/nvme0n1 and their sysfs), through
 * libucmd-preload.so on ucmdd. With --daemon (or $UCMD_DAEMON) the program
 * uses that daemon; otherwise ucmd starts a private ucmdd on the controller
 * directory for the program's lifetime and stops it afterwards (SIGTERM:
 * it drains and persists), so that every process the program makes shares
 * one controller.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "exec_check.h"

#ifndef UCMD_INSTALL_SBINDIR
#define UCMD_INSTALL_SBINDIR "/usr/local/sbin"
#endif
#ifndef UCMD_INSTALL_LIBDIR
#define UCMD_INSTALL_LIBDIR "/usr/local/lib"
#endif
#ifndef UCMD_INSTALL_LIBEXECDIR
#define UCMD_INSTALL_LIBEXECDIR "/usr/local/libexec"
#endif

/* How long a private daemon may take to accept connections before we give up. */
#define DAEMON_START_MS 30000

static void exec_usage(FILE *f)
{
	fprintf(f, "usage: ucmd exec [--ctrl DIR [--create] | --daemon SOCKET] [--policy FILE]\n"
		   "                 [--audit FILE|-] [--trace] -- PROGRAM [ARGS...]\n\n"
		   "Runs PROGRAM with the controller's devices (/dev/nvme0, /dev/ng0n1,\n"
		   "/dev/nvme0n1...) and their /sys entries, through libucmd-preload.so.\n"
		   "--daemon (or $UCMD_DAEMON): the devices of that ucmdd. Otherwise a private\n"
		   "ucmdd serves --ctrl DIR (which must exist unless --create; default\n"
		   "$UCMD_CTRL, else ./ucmd-ctrl, made on first use) while the\n"
		   "program runs. --trace logs the calls ucmd intercepted but did not handle.\n"
		   "The exit status is PROGRAM's (128+N if signal N killed it).\n");
}

/* rel in the build tree ucmd runs from (<build>/tools/ucmd), if there. */
static char *from_build_tree(const char *rel)
{
	char exe[PATH_MAX], *out;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	static const char tail[] = "/tools/ucmd";
	size_t t = sizeof(tail) - 1;

	if (n <= (ssize_t)t)
		return NULL;
	exe[n] = '\0';
	if (strcmp(exe + n - t, tail))
		return NULL;
	exe[n - t] = '\0';
	if (asprintf(&out, "%s/%s", exe, rel) < 0)
		return NULL;
	if (access(out, F_OK)) {
		free(out);
		return NULL;
	}
	return out;
}

/* $env, else the build tree's, else the installed one. */
static char *locate(const char *env, const char *rel, const char *installed)
{
	const char *e = getenv(env);
	char *p;

	if (e && *e)
		return strdup(e);
	p = from_build_tree(rel);
	return p ? p : strdup(installed);
}

/* A path made absolute against the working directory: the program may chdir. */
static char *absolute(const char *p)
{
	char cwd[PATH_MAX], *out;

	if (p[0] == '/')
		return strdup(p);
	if (!getcwd(cwd, sizeof(cwd)) || asprintf(&out, "%s/%s", cwd, p) < 0)
		return NULL;
	return out;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void rm_rf(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void show_file(const char *path)
{
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(STDERR_FILENO, buf, (size_t)n) != n)
			break;
	close(fd);
}

static bool sock_accepts(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd, ret;

	if (strlen(path) >= sizeof(a.sun_path))
		return false;
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	ret = connect(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return ret == 0;
}

/*
 * The private daemon: its own process group (the terminal's ^C is the
 * program's, not the daemon's, which must outlive it to persist), its
 * messages in log (shown if it fails). 0 once its socket accepts, or -1
 * with the reason shown.
 */
static int start_daemon(pid_t *pid, const char *ucmdd, const char *ctrl, const char *sock,
			const char *log, const char *policy, const char *audit)
{
	const char *argv[12];
	int i = 0, st;

	argv[i++] = ucmdd;
	argv[i++] = "--ctrl";
	argv[i++] = ctrl;
	argv[i++] = "--socket";
	argv[i++] = sock;
	argv[i++] = "--foreground";
	if (policy) {
		argv[i++] = "--policy";
		argv[i++] = policy;
	}
	if (audit) {
		argv[i++] = "--audit";
		argv[i++] = audit;
	}
	argv[i] = NULL;

	*pid = fork();
	if (*pid < 0) {
		fprintf(stderr, "ucmd exec: fork: %s\n", strerror(errno));
		return -1;
	}
	if (*pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		setpgid(0, 0);
		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
		}
		execv(ucmdd, (char *const *)argv);
		fprintf(stderr, "ucmd exec: cannot run %s: %s\n", ucmdd, strerror(errno));
		_exit(127);
	}
	setpgid(*pid, *pid); /* both sides, so that no signal races the child's own call */
	for (int waited = 0; waited < DAEMON_START_MS; waited += 5) {
		if (sock_accepts(sock))
			return 0;
		if (waitpid(*pid, &st, WNOHANG) == *pid) {
			fprintf(stderr, "ucmd exec: the daemon (%s) did not start:\n", ucmdd);
			show_file(log);
			*pid = -1;
			return -1;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000 * 1000 }, NULL);
	}
	fprintf(stderr, "ucmd exec: the daemon (%s) did not accept connections on %s in %d s:\n",
		ucmdd, sock, DAEMON_START_MS / 1000);
	show_file(log);
	return -1;
}

static void stop_daemon(pid_t pid, const char *log)
{
	int st;

	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "ucmd exec: the daemon ended badly (%s %d):\n",
			WIFEXITED(st) ? "status" : "signal",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		show_file(log);
	}
}

static volatile pid_t prog_pid;

/* ucmd exec stays to clean up: a termination request goes to the program. */
static void forward(int sig)
{
	if (prog_pid > 0)
		kill(prog_pid, sig);
}

/*
 * Every program runs under ucmd-supervise: a static one served by it alone
 * (no preload), argv [supervise, --daemon, sock, (--trace), --, argv...];
 * a dynamic one with the preload list ldp, the supervisor serving only its
 * getdents64 calls (the ones its own instruction makes are out of the
 * preload's reach), argv [supervise, --daemon, sock, --dirs, --preload,
 * ldp, --, argv...]. NULL on ENOMEM.
 */
static char **supervised_argv(char **argv, const char *supervise, const char *sock, bool trace,
			      const char *ldp)
{
	size_t n = 0, i = 0;
	char **v;

	while (argv[n])
		n++;
	v = calloc(n + 9, sizeof(*v));
	if (!v)
		return NULL;
	v[i++] = (char *)supervise;
	v[i++] = (char *)"--daemon";
	v[i++] = (char *)sock;
	if (ldp) {
		v[i++] = (char *)"--dirs";
		v[i++] = (char *)"--preload";
		v[i++] = (char *)ldp;
	}
	if (trace)
		v[i++] = (char *)"--trace";
	v[i++] = (char *)"--";
	memcpy(v + i, argv, (n + 1) * sizeof(*v));
	return v;
}

/* LD_PRELOAD for a dynamic program: the preload first, then the caller's; NULL on ENOMEM */
static char *preload_list(const char *preload)
{
	const char *prev = getenv("LD_PRELOAD");
	char *ldp;

	if (prev && *prev)
		return asprintf(&ldp, "%s:%s", preload, prev) < 0 ? NULL : ldp;
	return strdup(preload);
}

static int run_program(char **argv, const char *sock, const char *root, bool trace)
{
	struct sigaction fw = { .sa_handler = forward }, ign = { .sa_handler = SIG_IGN };
	struct sigaction old_int, old_quit, old_term, old_hup;
	int st;

	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	sigaction(SIGTERM, &fw, &old_term);
	sigaction(SIGHUP, &fw, &old_hup);
	prog_pid = fork();
	if (prog_pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
		if (setenv("UCMD_DAEMON", sock, 1) ||
		    setenv("UCMD_EXEC_ROOT", root, 1) ||
		    (trace ? setenv("UCMD_EXEC_TRACE", "1", 1) : unsetenv("UCMD_EXEC_TRACE"))) {
			fprintf(stderr, "ucmd exec: environment: %s\n", strerror(errno));
			_exit(126);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "ucmd exec: %s: %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	if (prog_pid < 0) {
		fprintf(stderr, "ucmd exec: fork: %s\n", strerror(errno));
		return 1;
	}
	while (waitpid(prog_pid, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	prog_pid = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int cmd_exec(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ctrl", required_argument, 0, 'C' },
		{ "daemon", required_argument, 0, 'D' },
		{ "policy", required_argument, 0, 'P' },
		{ "audit", required_argument, 0, 'A' },
		{ "trace", no_argument, 0, 't' },
		{ "create", no_argument, 0, 'c' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *ctrl = cli->ctrl_given ? cli->ctrl_dir : NULL, *daemon = cli->daemon;
	const char *policy = cli->policy, *audit = cli->audit;
	char tmpl[PATH_MAX], *dir = NULL, *root = NULL, *sock = NULL, *log = NULL;
	char *preload = NULL, *ucmdd = NULL, *ctrl_abs = NULL, *supervise = NULL, *ldp = NULL;
	char **v = NULL;
	bool is_static = false, trace = false, create = cli->create, named = cli->ctrl_given;
	pid_t dpid = -1;
	int c, ret = 1;

	/* -h/--help among exec's own arguments (before --) wins, as every command */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			exec_usage(stdout);
			return 0;
		}
	optind = 0; /* a fresh getopt over exec's own arguments */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (c) {
		case 'C': ctrl = optarg; named = true; break;
		case 'c': create = true; break;
		case 'D': daemon = optarg; break;
		case 'P': policy = optarg; break;
		case 'A': audit = optarg; break;
		case 't': trace = true; break;
		case 'h': exec_usage(stdout); return 0;
		case ':':
			fprintf(stderr, "ucmd exec: %s needs an argument\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "ucmd exec: unknown option '%s'\n", argv[optind - 1]);
			exec_usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "ucmd exec: no PROGRAM to run\n");
		exec_usage(stderr);
		return 2;
	}
	if (ctrl && daemon) {
		fprintf(stderr, "ucmd exec: --ctrl and --daemon exclude each other\n");
		return 2;
	}
	if (daemon && !*daemon) {
		fprintf(stderr, "ucmd exec: --daemon needs the daemon's socket path\n");
		return 2;
	}
	if (!ctrl && !daemon) {
		const char *env = getenv("UCMD_DAEMON");

		if (env && *env)
			daemon = env;
		else
			ctrl = cli->ctrl_dir;
	}
	/* the private daemon serves a controller directory; a remote one is ucmdd's */
	if (ctrl && !strncmp(ctrl, "nvme-tcp://", 11)) {
		fprintf(stderr, "ucmd exec: --ctrl takes a controller directory (or --daemon "
			"SOCKET for ucmdd's), not %s: the program's devices are served here, "
			"and a remote controller only by the other commands (ucmd --ctrl %s "
			"id-ctrl)\n", ctrl, ctrl);
		return 2;
	}
	/* as every command: a named --ctrl must exist, a typo must not make a controller */
	if (ctrl && named && !create) {
		char p[PATH_MAX];

		if (snprintf(p, sizeof(p), "%s/ctrl.json", ctrl) >= (int)sizeof(p) ||
		    access(p, F_OK)) {
			if (errno == EACCES) {
				fprintf(stderr, "ucmd exec: %s: permission denied (a directory not "
					"ours to enter): run as its owner, or use its owner's "
					"ucmdd with --daemon\n", ctrl);
				return 2;
			}
			fprintf(stderr, "ucmd exec: %s: no controller there; --create or `ucmd --ctrl "
				"%s create-ctrl` makes one\n", ctrl, ctrl);
			return 2;
		}
	}
	if (daemon && (policy || audit)) {
		fprintf(stderr, "ucmd exec: --policy and --audit are for the private daemon "
			"(--ctrl DIR); through %s the daemon's policy and audit apply\n", daemon);
		return 2;
	}

	if (exec_check_program(argv[optind], &is_static))
		return 126;
	/* a dynamic program needs it too, for the getdents64 of its own instruction */
	supervise = locate("UCMD_SUPERVISE", "src/preload/ucmd-supervise",
			   UCMD_INSTALL_LIBEXECDIR "/ucmd-supervise");
	if (!supervise || access(supervise, X_OK)) {
		fprintf(stderr, "ucmd exec: %s needs the supervisor %s: %s\n", argv[optind],
			supervise ? supervise : "", strerror(supervise ? errno : ENOMEM));
		goto out;
	}
	if (!is_static) {
		preload = locate("UCMD_PRELOAD", "src/preload/libucmd-preload.so",
				 UCMD_INSTALL_LIBDIR "/libucmd-preload.so");
		if (!preload || access(preload, R_OK)) {
			fprintf(stderr, "ucmd exec: the preload library %s: %s\n",
				preload ? preload : "", strerror(preload ? errno : ENOMEM));
			goto out;
		}
	}
	const char *tmp = getenv("TMPDIR");

	if (snprintf(tmpl, sizeof(tmpl), "%s/ucmd-exec.XXXXXX", tmp && *tmp ? tmp : "/tmp") >=
	    (int)sizeof(tmpl) || !mkdtemp(tmpl)) {
		fprintf(stderr, "ucmd exec: a private directory in %s: %s\n",
			tmp && *tmp ? tmp : "/tmp", strerror(errno ? errno : ENAMETOOLONG));
		goto out;
	}
	dir = tmpl;
	if (asprintf(&root, "%s/root", dir) < 0 || mkdir(root, 0700)) {
		fprintf(stderr, "ucmd exec: %s/root: %s\n", dir, strerror(errno));
		goto out;
	}
	if (daemon) {
		sock = absolute(daemon);
	} else {
		ucmdd = locate("UCMD_UCMDD", "src/server/ucmdd", UCMD_INSTALL_SBINDIR "/ucmdd");
		ctrl_abs = absolute(ctrl);
		if (!ucmdd || !ctrl_abs || asprintf(&sock, "%s/sock", dir) < 0 ||
		    asprintf(&log, "%s/ucmdd.log", dir) < 0) {
			fprintf(stderr, "ucmd exec: %s\n", strerror(ENOMEM));
			goto out;
		}
		if (start_daemon(&dpid, ucmdd, ctrl_abs, sock, log, policy, audit))
			goto out;
	}
	if (!sock || exec_check_daemon(sock))
		goto out;
	ldp = is_static ? NULL : preload_list(preload);
	/* the supervisor's own trace is a static program's; a dynamic one's is the preload's */
	v = is_static || ldp ? supervised_argv(argv + optind, supervise, sock,
					       is_static && trace, ldp) : NULL;
	if (!v) {
		fprintf(stderr, "ucmd exec: %s\n", strerror(ENOMEM));
		goto out;
	}
	ret = run_program(v, sock, root, !is_static && trace);
out:
	free(v);
	free(ldp);
	stop_daemon(dpid, log);
	if (dir)
		rm_rf(dir);
	free(root);
	free(sock);
	free(log);
	free(preload);
	free(supervise);
	free(ucmdd);
	free(ctrl_abs);
	return ret;
}
