/* SPDX-License-Identifier: MIT */
/* ls -l's letter for a file's type, as the exec test programs print it. */
#ifndef UCMD_TESTS_EXEC_FTYPE_H
#define UCMD_TESTS_EXEC_FTYPE_H

#include <sys/stat.h>

static inline char type_of(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFCHR: return 'c';
	case S_IFBLK: return 'b';
	case S_IFDIR: return 'd';
	case S_IFLNK: return 'l';
	case S_IFREG: return 'f';
	default: return '?';
	}
}

#endif
