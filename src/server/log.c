/* SPDX-License-Identifier: MIT */
/* ucmdd's messages: stderr in the foreground, syslog once detached. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <syslog.h>

#include "server/ctl.h"

static bool use_syslog;

void srv_log_to_syslog(void)
{
	openlog("ucmdd", LOG_PID, LOG_DAEMON);
	use_syslog = true;
}

void srv_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (use_syslog) {
		vsyslog(LOG_NOTICE, fmt, ap);
	} else {
		fputs("ucmdd: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}
