/* SPDX-License-Identifier: MIT */
/* ucmdd as the benchmark runs it: started, watched through /proc, stopped. */
#include <errno.h>
#include <ftw.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_daemon.h"
#include "job.h"

void daemon_opts_default(struct daemon_opts *o)
{
	const char *env = getenv("UCMDD");

	*o = (struct daemon_opts){ 0 };
	if (env) {
		snprintf(o->ucmdd, sizeof(o->ucmdd), "%s", env);
	} else {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n > 0) {
			self[n] = 0;
			snprintf(o->ucmdd, sizeof(o->ucmdd), "%s/../src/server/ucmdd", dirname(self));
		}
	}
}

int daemon_opt(struct daemon_opts *o, int ch, const char *arg)
{
	switch (ch) {
	case 'u':
		snprintf(o->ucmdd, sizeof(o->ucmdd), "%s", arg);
		return 1;
	case 'o':
		o->only = arg;
		return 1;
	default:
		return 0;
	}
}

/* Whatever way the bench ends, its ucmdd stops and its directory goes. */
static struct daemon_proc *the_daemon;

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(p);
}

static void cleanup(void)
{
	if (!the_daemon)
		return;
	if (the_daemon->pid > 0)
		daemon_proc_stop(the_daemon);
	nftw(the_daemon->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int daemon_proc_dir(struct daemon_proc *d, const char *prefix)
{
	snprintf(d->dir, sizeof(d->dir), "/dev/shm/%s.XXXXXX", prefix);
	if (!mkdtemp(d->dir))
		return -errno;
	the_daemon = d;
	atexit(cleanup);
	return 0;
}

int daemon_proc_fill_ram(struct ucmd_engine *de, uint64_t size)
{
	/* as the in-process RAM namespace is: every block written once */
	struct bench_target t = { .engine = de, .ng = "ng1n1", .bdev = "/dev/nvme1n1",
				  .nsid = 1, .lba_size = 4096, .nsze = size / 4096 };

	return bench_fill(&t, size);
}

int daemon_proc_start(struct daemon_proc *d, const char *ucmdd, const char *ctrl_dir,
		      uint64_t ram_bytes)
{
	return daemon_proc_start_tcp(d, ucmdd, ctrl_dir, ram_bytes, NULL);
}

int daemon_proc_start_tcp(struct daemon_proc *d, const char *ucmdd, const char *ctrl_dir,
			  uint64_t ram_bytes, const char *nvme_tcp)
{
	struct stat st;
	char ram[32];

	snprintf(ram, sizeof(ram), "%llu", (unsigned long long)ram_bytes);

	snprintf(d->sock, sizeof(d->sock), "%s/ucmdd.sock", d->dir);
	d->pid = fork();
	if (d->pid < 0)
		return -errno;
	if (d->pid == 0) {
		if (nvme_tcp)
			execl(ucmdd, ucmdd, "--ctrl", ctrl_dir, "--ram", ram, "--socket", d->sock,
			      "--foreground", "--nvme-tcp", nvme_tcp, (char *)NULL);
		else
			execl(ucmdd, ucmdd, "--ctrl", ctrl_dir, "--ram", ram, "--socket", d->sock,
			      "--foreground", (char *)NULL);
		fprintf(stderr, "bench_daemon: exec %s: %s\n", ucmdd, strerror(errno));
		_exit(127);
	}
	/* up to 30 s for the socket: a start-up bound, not a measurement */
	for (int i = 0; i < 3000; i++) {
		int status;
		if (stat(d->sock, &st) == 0 && S_ISSOCK(st.st_mode))
			return 0;
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			d->pid = 0;
			return -ECHILD;
		}
		usleep(10000);
	}
	return -ETIMEDOUT;
}

double daemon_proc_cpu(const struct daemon_proc *d)
{
	char path[64], buf[1024];
	unsigned long ut = 0, st = 0;
	FILE *f;
	char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)d->pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	/* fields after "(comm)": state is field 3; utime and stime are 14 and 15 */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

int daemon_proc_stop(struct daemon_proc *d)
{
	int status;

	if (d->pid <= 0)
		return -1;
	kill(d->pid, SIGTERM);
	for (int i = 0; i < 3000; i++) {
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			d->pid = 0;
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		}
		usleep(10000);
	}
	kill(d->pid, SIGKILL);
	waitpid(d->pid, &status, 0);
	d->pid = 0;
	return -1;
}
