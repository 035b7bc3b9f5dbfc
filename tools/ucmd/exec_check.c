// SPDX-License-Identifier: MIT
/*
 * ucmd exec's checks before the program starts, so that it fails closed:
 * a program the preload cannot reach (set-user-ID, set-group-ID or with
 * file capabilities: the dynamic linker ignores LD_PRELOAD in
 * secure-execution mode; 32-bit) would open the host's real /dev/nvme*
 * instead of ucmd's; a statically linked one (no dynamic linker to load
 * the preload) is found here and run under ucmd-supervise instead; and a daemon that
 * cannot be reached, or has no controller, would leave the program with
 * no devices at all. Each is refused with the reason, before anything runs.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <ucmd/daemon.h>
#include <ucmd/ucmd.h>

#include "exec_check.h"

/* execvp's search: prog itself if it has a slash, else the first executable in $PATH. */
static int find_program(const char *prog, char *out, size_t len)
{
	const char *path = getenv("PATH");
	const char *p, *end;

	if (strchr(prog, '/')) {
		if (snprintf(out, len, "%s", prog) >= (int)len)
			return -ENAMETOOLONG;
		return access(out, F_OK) ? -errno : 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; ; p = end + 1) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		if (snprintf(out, len, "%.*s%s%s", (int)(end - p), p, end > p ? "/" : "",
			     prog) < (int)len && !access(out, X_OK))
			return 0;
		if (!*end)
			break;
	}
	return -ENOENT;
}

/* Does exec of this file run with AT_SECURE (LD_PRELOAD ignored)? */
static const char *secure_exec(const char *file, const struct stat *st)
{
	if ((st->st_mode & S_ISUID) && st->st_uid != geteuid())
		return "it is set-user-ID";
	if ((st->st_mode & S_ISGID) && st->st_gid != getegid())
		return "it is set-group-ID";
	if (getxattr(file, "security.capability", NULL, 0) > 0)
		return "it has file capabilities";
	return NULL;
}

/*
 * One file: NULL if the preload reaches it, else why not. A script is
 * judged by its interpreter (one level: an interpreter is not a script).
 */
static const char *judge(const char *file, int depth, char *interp, size_t ilen, bool *is_static)
{
	unsigned char buf[256];
	struct stat st;
	const char *why;
	ssize_t n;
	int fd;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return NULL;	/* execvp reports what is wrong with it */
	}
	why = secure_exec(file, &st);
	n = read(fd, buf, sizeof(buf) - 1);
	if (why || n < 4) {
		close(fd);
		return why;
	}
	buf[n] = '\0';
	if (buf[0] == '#' && buf[1] == '!' && depth == 0) {
		char *s = (char *)buf + 2, *e;

		close(fd);
		s += strspn(s, " \t");
		e = s + strcspn(s, " \t\n");
		*e = '\0';
		if (!*s)
			return NULL;
		snprintf(interp, ilen, "%s", s);
		return judge(interp, 1, interp, ilen, is_static);
	}
	if (memcmp(buf, ELFMAG, SELFMAG)) {
		close(fd);
		return NULL;	/* not ELF: the kernel's binfmt decides, nothing to say */
	}
	if (buf[EI_CLASS] != ELFCLASS64) {
		close(fd);
		return "it is a 32-bit program (the preload library is 64-bit)";
	}
	Elf64_Ehdr eh;
	bool dynamic = false;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || eh.e_phentsize != sizeof(Elf64_Phdr)) {
		close(fd);
		return NULL;
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP)
			dynamic = true;
	}
	close(fd);
	*is_static = !dynamic;
	return NULL;
}

int exec_check_program(const char *prog, bool *is_static)
{
	char file[PATH_MAX], interp[PATH_MAX] = "";
	const char *why;

	*is_static = false;
	if (find_program(prog, file, sizeof(file)))
		return 0;	/* execvp says ENOENT itself, with exec's usual status */
	why = judge(file, 0, interp, sizeof(interp), is_static);
	if (!why)
		return 0;
	fprintf(stderr, "ucmd exec: refusing to run %s%s%s: %s, so ucmd's devices could not "
		"reach it and it would see the host's /dev and /sys instead\n", file,
		*interp ? ", whose interpreter is " : "", interp, why);
	return -1;
}

int exec_check_daemon(const char *sock)
{
	struct ucmd_engine *e;
	const char *names[64];
	int ret, n, ctrls = 0;

	ret = ucmd_engine_connect(sock, &e);
	if (ret) {
		fprintf(stderr, "ucmd exec: cannot reach ucmdd at %s: %s\n", sock,
			ucmd_last_error() && *ucmd_last_error() ? ucmd_last_error() :
			strerror(-ret));
		return -1;
	}
	n = ucmd_device_names(e, names, 64);
	for (int i = 0; i < n && i < 64; i++) {
		unsigned x;
		char c;

		if (sscanf(names[i], "nvme%u%c", &x, &c) == 1)
			ctrls++;
	}
	ucmd_engine_free(e);
	if (n < 0) {
		fprintf(stderr, "ucmd exec: ucmdd at %s does not list its devices: %s\n", sock,
			strerror(-n));
		return -1;
	}
	if (!ctrls) {
		fprintf(stderr, "ucmd exec: ucmdd at %s serves no controller\n", sock);
		return -1;
	}
	return 0;
}
