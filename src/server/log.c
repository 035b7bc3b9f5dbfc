/* SPDX-License-Identifier: MIT */
/* ucmdd's messages: stderr in the foreground, syslog once detached. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <syslog.h>

#include "server/ctl.h"

/* set once, at detach, while the listeners' threads may already log (TSan saw the race) */
static atomic_bool use_syslog;

void srv_log_to_syslog(void)
{
	openlog("ucmdd", LOG_PID, LOG_DAEMON);
	atomic_store_explicit(&use_syslog, true, memory_order_release);
}

void srv_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (atomic_load_explicit(&use_syslog, memory_order_acquire)) {
		vsyslog(LOG_NOTICE, fmt, ap);
	} else {
		fputs("ucmdd: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}
