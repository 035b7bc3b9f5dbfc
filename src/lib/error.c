/* SPDX-License-Identifier: MIT */
/* ucmd_last_error(): a thread-local sentence, as errno is a thread-local number. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/error.h"
#include "ucmd/ucmd.h"

static __thread char last_error[LAST_ERROR_MAX];

const char *ucmd_last_error(void)
{
	return last_error;
}

int last_error_set(int err, const char *fmt, ...)
{
	va_list ap;

	last_error[0] = 0;
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(last_error, sizeof(last_error), fmt, ap);
		va_end(ap);
	}
	if (!last_error[0])
		snprintf(last_error, sizeof(last_error), "%s", strerror(err < 0 ? -err : err));
	return err;
}

int last_error_default(int err, const char *what)
{
	if (!last_error[0])
		snprintf(last_error, sizeof(last_error), "%s: %s", what,
			 strerror(err < 0 ? -err : err));
	return err;
}

void last_error_clear(void)
{
	last_error[0] = 0;
}
