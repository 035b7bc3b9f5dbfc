// SPDX-License-Identifier: MIT
/*
 * fopen and freopen as glibc 2.36's, their opens made as paths.c makes
 * open's (pl_open_path: the path copied and judged, the preload's openat
 * stub, the device-number check after): glibc's flags and mode, then
 * fdopen, or freopen's stream re-made in place; ",ccs=UTF-8" as fdopen then
 * fwide under a UTF-8 LC_CTYPE (the same conversion glibc's fopen loads).
 * What only glibc's own can make (other ",ccs=" sets, some freopens) goes
 * to glibc, whose open is then ucmd-supervise's (docs/compat.md).
 */
/* fopen and fopen64 (freopen, freopen64) are both defined here, as in paths.c */
#undef _FILE_OFFSET_BITS

#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <wchar.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload.h"

/*
 * fopen(3)'s mode string as glibc 2.36's fopen reads it: the first letter
 * r, w or a, then at most six more, each taken or ignored ('+' O_RDWR,
 * 'x' O_EXCL, 'e' O_CLOEXEC, 'm' a read-only stream read through mmap,
 * 'c' a stream whose calls are no cancellation points, anything else
 * nothing), and ",ccs=" anywhere after the last of '+', 'x', 'b'.
 * fdopen takes the rest: its mode is the first letter and '+' (or 'm').
 */
struct fmode {
	int flags;		/* open(2)'s */
	int flags2;		/* glibc's FILE._flags2 bits for 'm', 'c', 'e' */
	bool ccs;
	bool ccs_utf8;		/* ",ccs=UTF-8" (any case), nothing after it but ",..." */
	char fd_mode[3];	/* fdopen's */
};

/* glibc's libio.h values (stable since 2.x; FILE._flags2 is in the public struct_FILE.h) */
#define PL_IO_FLAGS2_MMAP 1
#define PL_IO_FLAGS2_NOTCANCEL 2
#define PL_IO_FLAGS2_CLOEXEC 64

/*
 * The FILE's private flags and layout this file writes are those of the
 * glibc it was checked against (Debian 12's 2.36). With any other glibc the
 * streams that need them ('c', 'e', 'm', freopen) are glibc's own, whose
 * opens ucmd-supervise judges: slower, never a stream glibc would not make.
 */
static bool libio_known(void)
{
	static int known = -1;

	if (known < 0)
		known = !strcmp(gnu_get_libc_version(), "2.36");
	return known;
}

static int fopen_mode(const char *mode, struct fmode *m)
{
	const char *last = mode;
	bool plus = false;

	memset(m, 0, sizeof(*m));
	switch (mode[0]) {
	case 'r': m->flags = O_RDONLY; break;
	case 'w': m->flags = O_WRONLY | O_CREAT | O_TRUNC; break;
	case 'a': m->flags = O_WRONLY | O_CREAT | O_APPEND; break;
	default: return -EINVAL;
	}
	for (int i = 1; i < 7 && mode[i]; i++) {
		switch (mode[i]) {
		case '+':
			m->flags = (m->flags & ~O_ACCMODE) | O_RDWR;
			plus = true;
			last = mode + i;
			break;
		case 'x':
			m->flags |= O_EXCL;
			last = mode + i;
			break;
		case 'b':
			last = mode + i;
			break;
		case 'm':
			m->flags2 |= PL_IO_FLAGS2_MMAP;
			break;
		case 'c':
			m->flags2 |= PL_IO_FLAGS2_NOTCANCEL;
			break;
		case 'e':
			m->flags |= O_CLOEXEC;
			m->flags2 |= PL_IO_FLAGS2_CLOEXEC;
			break;
		}
	}
	{
		const char *cs = strstr(last + 1, ",ccs=");

		m->ccs = cs != NULL;
		/* glibc names the set up to the next ',' and upper-cases it */
		m->ccs_utf8 = cs && !strncasecmp(cs + 5, "UTF-8", 5) &&
			      (cs[10] == '\0' || cs[10] == ',');
	}
	m->fd_mode[0] = mode[0];
	if (plus)
		m->fd_mode[1] = '+';
	else if (m->flags2 & PL_IO_FLAGS2_MMAP)
		m->fd_mode[1] = 'm';
	return 0;
}

/* fdopen, or the descriptor closed again keeping fdopen's errno. */
static FILE *fdopen_or_close(int fd, const char *mode)
{
	FILE *f = fdopen(fd, mode);

	if (!f) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return f;
}

/*
 * ",ccs=": only glibc's fopen gives a stream its conversion (fdopen reads
 * no ",ccs=", and no interface sets one on a FILE made otherwise), so the
 * open is glibc's own, which ucmd-supervise makes (docs/compat.md); one of
 * ucmd's devices is a byte stream as in any mode (stdio.c). Also the way
 * for 'c', 'e' and 'm' under a glibc other than the one checked.
 */
static FILE *fopen_ccs(const char *sym, const char *path, const char *mode,
		       const struct fmode *m)
{
	FILE *(*real)(const char *, const char *) = pl_next(sym);
	struct pl_where w;
	struct stat st;
	FILE *f;

	pl_classify(AT_FDCWD, path, &w);
	if (w.kind == PL_WHERE_DEV || (w.through && w.dev)) {
		int fd = pl_dev_open(w.dev, m->flags);

		return fd < 0 ? NULL : fdopen_or_close(fd, m->fd_mode);
	}
	if (w.kind == PL_WHERE_SYS) {
		int ret = pl_sys_open_ok(&w, m->flags);

		if (ret == PL_OPEN_ATTRW) {
			/* glibc's wide stream writes with its own write: no judge would see it */
			errno = EACCES;
			pl_ctl_done();
			return NULL;
		}
		if (ret)
			return NULL;
	}
	f = real(w.kind == PL_WHERE_SYS ? w.path : path, mode);
	pl_ctl_done();
	if (f && !pl_raw_syscall(__NR_fstat, fileno(f), (long)&st, 0, 0, 0, 0) &&
	    pl_host_nvme_rdev(&st)) {
		fclose(f);	/* nothing was read or written: stdio buffers until then */
		errno = ENXIO;
		return NULL;
	}
	return f;
}

/*
 * ",ccs=UTF-8" made without glibc's fopen, so that its open is the
 * preload's (the supervisor's costs some 30 us more). glibc 2.36's fopen
 * loads the named set's conversion (__wcsmbs_named_conv: "INTERNAL" to and
 * from "UTF-8//", one step each way), clears the wide buffers and the
 * conversion states, puts the wide vtable on the stream and makes it wide
 * (_mode 1); fwide(f, 1) does the same with the conversion of the thread's
 * LC_CTYPE (__wcsmbs_clone_conv), which under a UTF-8 locale is that very
 * pair of steps. So the stream is made by fdopen as any other mode, then
 * made wide while the thread's locale is C.UTF-8 (uselocale: this thread
 * alone, given back at once). Without that locale (newlocale fails),
 * glibc's fopen makes it (fopen_ccs). The 'm' mode is left to glibc too
 * (its mmap vtable under the wide one).
 */
static locale_t utf8_ctype;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void utf8_ctype_init(void)
{
	utf8_ctype = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

static bool ccs_ours(const struct fmode *m)
{
	if (!m->ccs_utf8 || (m->flags2 & PL_IO_FLAGS2_MMAP) || !libio_known())
		return false;
	pthread_once(&utf8_once, utf8_ctype_init);
	return utf8_ctype != (locale_t)0;
}

/* f made wide with the UTF-8 conversion, as glibc's ",ccs=UTF-8" makes it */
static void make_wide_utf8(FILE *f)
{
	locale_t old = uselocale(utf8_ctype);

	fwide(f, 1);
	uselocale(old);
}

/*
 * fopen as glibc makes it, its open made by pl_open_path: glibc's flags,
 * its mode 0666, its seek to the end for "a", then fdopen, with the
 * stream's flags glibc's fopen sets and fdopen does not ('c', 'e', 'm').
 */
static FILE *do_fopen(const char *sym, const char *path, const char *mode)
{
	struct fmode m;
	FILE *f;
	int fd;

	if (!mode) {
		FILE *(*real)(const char *, const char *) = pl_next(sym);

		return real(path, mode);	/* glibc's own answer to no mode */
	}
	if (fopen_mode(mode, &m)) {
		errno = EINVAL;
		return NULL;
	}
	if (m.ccs && ccs_ours(&m)) {
		struct pl_where w;

		/* one of ucmd's devices: a byte stream, as glibc's way makes it (stdio.c) */
		pl_classify(AT_FDCWD, path, &w);
		if (w.kind == PL_WHERE_DEV || (w.through && w.dev))
			return fopen_ccs(sym, path, mode, &m);
	} else if (m.ccs || (m.flags2 && !libio_known())) {
		return fopen_ccs(sym, path, mode, &m);
	}
	fd = pl_open_path(AT_FDCWD, path, m.flags, 0666);
	if (fd < 0)
		return NULL;
	if ((m.flags & (O_ACCMODE | O_APPEND)) == (O_WRONLY | O_APPEND) &&
	    lseek(fd, 0, SEEK_END) < 0 && errno != ESPIPE) {
		int e = errno;

		close(fd);
		errno = e;
		return NULL;
	}
	f = fdopen_or_close(fd, m.fd_mode);
	if (f)
		f->_flags2 |= m.flags2;
	if (f && m.ccs)
		make_wide_utf8(f);
	return f;
}

PL_EXPORT FILE *fopen(const char *path, const char *mode)
{
	return do_fopen("fopen", path, mode);
}

PL_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return do_fopen("fopen64", path, mode);
}

/*
 * freopen as glibc 2.36's (libio/freopen.c), its open made by pl_open_path.
 * glibc re-makes the FILE in place around an open of its own, and no
 * public interface hands it a descriptor instead; its exported libio
 * functions do the rest as its freopen does: close the stream but not its
 * descriptor (_IO_FLAGS2_NOCLOSE, _IO_file_close_it), open, set the
 * stream's read/write/append flags as _IO_file_open does, put it back on
 * glibc's list of streams (_IO_link_in), then dup3 the new file onto the
 * old number (O_CLOEXEC if the stream ever had 'e', as glibc's). Streams
 * this cannot re-make exactly go to glibc's own freopen (its open the
 * supervisor's): one not on glibc's plain file operations (wide, mmap, a
 * cookie: ucmd's devices), a mode it rejects or with ",ccs=", 'm' now or
 * before, a path to one of ucmd's devices.
 */
#define PL_IO_NO_READS 0x0004
#define PL_IO_NO_WRITES 0x0008
#define PL_IO_IS_APPENDING 0x1000
#define PL_IO_IS_FILEBUF 0x2000
#define PL_IO_FLAGS2_NOCLOSE 32

struct _IO_jump_t;
extern const struct _IO_jump_t _IO_file_jumps;
int _IO_file_close_it(FILE *fp);
void _IO_link_in(void *fp);

/* The FILE's vtable: the word after it in glibc's struct _IO_FILE_plus. */
static const struct _IO_jump_t *vtable_of(FILE *fp)
{
	return *(const struct _IO_jump_t *const *)(const void *)((const char *)fp + sizeof(FILE));
}

static bool freopen_ours(const char *path, const struct fmode *m, FILE *fp)
{
	struct pl_where w;

	/* glibc keeps a stream's 'm' (and 'e') across freopen: its mmap reads too */
	if (!libio_known() || m->ccs || ((m->flags2 | fp->_flags2) & PL_IO_FLAGS2_MMAP) ||
	    !(fp->_flags & PL_IO_IS_FILEBUF) ||
	    vtable_of(fp) != &_IO_file_jumps || fp->_fileno < 0 || pl_fd(fp->_fileno))
		return false;
	pl_classify(AT_FDCWD, path, &w);
	return w.kind != PL_WHERE_DEV && !(w.through && w.dev);
}

static FILE *do_freopen(const char *sym, const char *path, const char *mode, FILE *fp)
{
	FILE *(*real)(const char *, const char *, FILE *) = pl_next(sym);
	char copy[PATH_MAX];
	struct fmode m;
	int fd, oldfd, rw, e;

	if (!mode || !fp || fopen_mode(mode, &m))
		return real(path, mode, fp);
	if (path) {
		size_t len = strnlen(path, sizeof(copy));

		if (len == sizeof(copy))
			return real(path, mode, fp);	/* glibc's ENAMETOOLONG */
		memcpy(copy, path, len + 1);
	} else {
		/* the same file again, as glibc names it */
		snprintf(copy, sizeof(copy), "/proc/self/fd/%d", fp->_fileno);
	}
	flockfile(fp);
	if (!freopen_ours(copy, &m, fp)) {
		funlockfile(fp);
		return real(path, mode, fp);
	}
	fflush_unlocked(fp);
	oldfd = fp->_fileno;
	fp->_flags2 |= PL_IO_FLAGS2_NOCLOSE;
	_IO_file_close_it(fp);
	fp->_flags2 |= m.flags2;
	fd = pl_open_path(AT_FDCWD, copy, m.flags, 0666);
	fp->_flags2 &= ~PL_IO_FLAGS2_NOCLOSE;
	rw = m.fd_mode[0] == 'r' ? PL_IO_NO_WRITES :
	     m.fd_mode[0] == 'w' ? PL_IO_NO_READS : PL_IO_NO_READS | PL_IO_IS_APPENDING;
	if (m.fd_mode[1] == '+')
		rw &= PL_IO_IS_APPENDING;
	if (fd >= 0 && (rw & (PL_IO_IS_APPENDING | PL_IO_NO_READS)) ==
	    (PL_IO_IS_APPENDING | PL_IO_NO_READS) && lseek(fd, 0, SEEK_END) < 0 && errno != ESPIPE) {
		e = errno;
		close(fd);
		errno = e;
		fd = -1;
	}
	if (fd < 0)
		goto fail;
	fp->_fileno = fd;
	fp->_flags = (fp->_flags & ~(PL_IO_NO_READS | PL_IO_NO_WRITES | PL_IO_IS_APPENDING)) | rw;
	_IO_link_in(fp);
	fp->_mode = 0;
	if (fd != oldfd) {
		if (dup3(fd, oldfd, (fp->_flags2 & PL_IO_FLAGS2_CLOEXEC) ? O_CLOEXEC : 0) < 0) {
			e = errno;
			_IO_file_close_it(fp);
			errno = e;
			funlockfile(fp);
			return NULL;
		}
		close(fd);
		fp->_fileno = oldfd;
	}
	funlockfile(fp);
	return fp;
fail:
	e = errno;
	close(oldfd);
	errno = e;
	funlockfile(fp);
	return NULL;
}

PL_EXPORT FILE *freopen(const char *path, const char *mode, FILE *fp)
{
	return do_freopen("freopen", path, mode, fp);
}

PL_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *fp)
{
	return do_freopen("freopen64", path, mode, fp);
}
