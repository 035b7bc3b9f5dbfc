/* SPDX-License-Identifier: MIT */
/*
 * creat and fopen's modes as a program sees them, to compare a run under
 * `ucmd exec` with one outside (tests/system/exec_open_modes.sh):
 *
 *   open_modes cases DIR         each case in DIR, a line of what came of it
 *   open_modes loop N KIND PATH  N opens and closes of PATH, then
 *                                "KIND: X us an open+close" on stderr
 *
 * A case's line: the errno's name when the open failed, else the file's
 * access mode, O_APPEND, FD_CLOEXEC, the bits of the stream's glibc
 * _flags2 that fopen's 'm', 'c' and 'e' set, its orientation, ftell at
 * once, the first byte read (or '-'; a wide stream's first two characters
 * as code points, then a wide character written: U+00E9, two bytes in
 * UTF-8), the file's mode bits and size after the close. The files hold
 * "h", U+00E9 in UTF-8, "llo". KIND: creat, creat64, freopen:MODE or fopen:MODE.
 * freopen cases: fopen of a first file, a byte read, then freopen. Exit 0 (1
 * on bad usage).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

static const char *ename(int e)
{
	switch (e) {
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case EINVAL: return "EINVAL";
	case EACCES: return "EACCES";
	case EISDIR: return "EISDIR";
	default: return strerror(e);
	}
}

static void fd_line(int fd)
{
	int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);

	printf(" acc=%d append=%d cloexec=%d", fl & O_ACCMODE, !!(fl & O_APPEND),
	       !!(fdfl & FD_CLOEXEC));
}

static void file_line(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		printf(" stat=%s\n", ename(errno));
	else
		printf(" mode=0%o size=%lld\n", (unsigned)(st.st_mode & 07777),
		       (long long)st.st_size);
}

static void fill(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs("h\xc3\xa9llo\n", f);
		fclose(f);
	}
}

static void creat_case(const char *dir, const char *name, bool big, bool existing)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (existing)
		fill(path);
	fd = big ? creat64(path, 0666) : creat(path, 0666);
	printf("%s %s:", big ? "creat64" : "creat", name);
	if (fd < 0) {
		printf(" %s\n", ename(errno));
		return;
	}
	fd_line(fd);
	close(fd);
	file_line(path);
}

static void fopen_case(const char *dir, const char *name, const char *mode, bool existing)
{
	char path[4096];
	FILE *f;
	int c;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (existing)
		fill(path);
	else
		unlink(path);
	errno = 0;
	f = fopen(path, mode);
	printf("fopen %s \"%s\":", name, mode);
	if (!f) {
		printf(" %s\n", ename(errno));
		return;
	}
	fd_line(fileno(f));
	printf(" flags2=%#x wide=%d tell=%ld", f->_flags2 & 0x43, fwide(f, 0), ftell(f));
	if (fwide(f, 0) > 0) {
		wint_t w = fgetwc(f), w2 = w == WEOF ? WEOF : fgetwc(f);

		printf(" first=%s", w == WEOF ? "-" : "w");
		if (w != WEOF)
			printf(" wide=%#x,%#x", (unsigned)w, (unsigned)w2);
		clearerr(f);
		printf(" put=%d", fputwc(0xe9, f) != WEOF);
	} else {
		c = fgetc(f);
		printf(" first=%c", c == EOF ? '-' : c);
	}
	fclose(f);
	file_line(path);
}

/* fopen(first, first_mode), then freopen(name or NULL: the same file, mode) */
static void freopen_case(const char *dir, const char *first_mode, const char *name,
			 const char *mode, bool existing)
{
	char path[4096], first[4096];
	FILE *f, *g;
	int c, fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name ? name : "freopen-first");
	snprintf(first, sizeof(first), "%s/freopen-first", dir);
	fill(first);
	if (name && existing)
		fill(path);
	else if (name)
		unlink(path);
	f = fopen(first, first_mode);
	if (!f) {
		printf("freopen: the first fopen: %s\n", ename(errno));
		return;
	}
	fd = fileno(f);
	c = fgetc(f);	/* something buffered, for freopen to drop */
	errno = 0;
	g = freopen(name ? path : NULL, mode, f);
	printf("freopen \"%s\" %s \"%s\":", first_mode, name ? name : "(null)", mode);
	if (!g) {
		int e = errno;
		bool closed = fcntl(fd, F_GETFD) < 0 && errno == EBADF;

		printf(" %s old-fd-closed=%d\n", ename(e), closed);
		return;
	}
	printf(" same=%d samefd=%d", g == f, fileno(g) == fd);
	fd_line(fileno(g));
	printf(" flags2=%#x wide=%d tell=%ld", g->_flags2 & 0x43, fwide(g, 0), ftell(g));
	c = fgetc(g);
	printf(" first=%c", c == EOF ? '-' : c);
	clearerr(g);
	printf(" put=%d", fputs("more\n", g) >= 0);
	fclose(g);
	file_line(path);
}

static int cases(const char *dir)
{
	static const char *const existing[] = {
		"r", "rb", "r+", "rm", "rc", "re", "rx", "rmce", "w", "w+", "wx", "a", "a+",
		"ab+e", "rbbbbbbe", "r+m", "q", "mr", "", "r,ccs=UTF-8", "r,ccs=NOSUCH",
		"r,ccs=utf-8", "r+,ccs=UTF-8", "a,ccs=UTF-8", "rm,ccs=UTF-8", "re,ccs=UTF-8",
		"rc,ccs=UTF-8,x", "r,ccs=UTF-8e", "r,ccs=UTF-16LE", "rb+,ccs=UTF-8",
	};
	static const char *const fresh[] = { "r", "w", "wx", "wxe", "a", "a+x", "r+",
					     "w,ccs=UTF-8", "a+,ccs=UTF-8", "wxe,ccs=UTF-8" };

	umask(027);
	creat_case(dir, "c-new", false, false);
	creat_case(dir, "c-old", false, true);
	creat_case(dir, "no-dir/c", false, false);
	creat_case(dir, "c64-new", true, false);
	creat_case(dir, ".", false, false);
	for (size_t i = 0; i < sizeof(existing) / sizeof(existing[0]); i++)
		fopen_case(dir, "f-old", existing[i], true);
	for (size_t i = 0; i < sizeof(fresh) / sizeof(fresh[0]); i++)
		fopen_case(dir, "f-new", fresh[i], false);
	fopen_case(dir, "no-dir/f", "w", false);
	fopen_case(dir, ".", "r+", true);
	freopen_case(dir, "r", "g-old", "r", true);
	freopen_case(dir, "r", "g-old", "a", true);
	freopen_case(dir, "r", "g-old", "r+", true);
	freopen_case(dir, "r", "g-old", "w", true);
	freopen_case(dir, "r", "g-new", "wxe", false);
	freopen_case(dir, "r", "g-new", "r", false);
	freopen_case(dir, "r", "g-old", "wx", true);
	freopen_case(dir, "r", "g-old", "q", true);
	freopen_case(dir, "re", "g-old", "r", true);
	freopen_case(dir, "rc", "g-old", "a+", true);
	freopen_case(dir, "rm", "g-old", "r", true);
	freopen_case(dir, "r", "g-old", "rm", true);
	freopen_case(dir, "r", "g-old", "r,ccs=UTF-8", true);
	freopen_case(dir, "r", NULL, "r+", true);
	freopen_case(dir, "a", NULL, "r", true);
	return 0;
}

static int loop(long n, const char *kind, const char *path)
{
	struct timespec a, b;
	FILE *keep = NULL;

	if (!strncmp(kind, "freopen:", 8)) {
		keep = fopen(path, "r");
		if (!keep) {
			perror(path);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		if (!strcmp(kind, "creat") || !strcmp(kind, "creat64")) {
			int fd = kind[5] ? creat64(path, 0644) : creat(path, 0644);

			if (fd < 0) {
				perror(path);
				return 1;
			}
			close(fd);
		} else if (!strncmp(kind, "fopen:", 6)) {
			FILE *f = fopen(path, kind + 6);

			if (!f) {
				perror(path);
				return 1;
			}
			fclose(f);
		} else if (keep) {
			keep = freopen(path, kind + 8, keep);
			if (!keep) {
				perror(path);
				return 1;
			}
		} else {
			fprintf(stderr, "open_modes: no kind %s\n", kind);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (keep)
		fclose(keep);
	if (n)
		fprintf(stderr, "%s: %.2f us an open+close\n", kind,
			((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / (double)n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "cases"))
		return cases(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "loop"))
		return loop(strtol(argv[2], NULL, 10), argv[3], argv[4]);
	fprintf(stderr, "usage: open_modes cases DIR | open_modes loop N KIND PATH\n");
	return 1;
}
