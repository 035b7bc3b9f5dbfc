/* SPDX-License-Identifier: MIT */
/*
 * The calling thread's id, for IORING_SETUP_SINGLE_ISSUER and
 * IORING_SETUP_DEFER_TASKRUN, which Linux checks against `current` on every
 * io_uring_enter(). gettid(2) is a real system call (glibc caches no thread
 * id), and on a virtual machine it costs more than the rest of an enter of a
 * small batch, so each thread asks once and keeps the answer. A forked child
 * starts with a copy of its parent's thread-local storage, so the fork hook
 * clears the copy: the child then asks for its own id, and a ring it
 * inherited refuses it as the kernel's would.
 */
#include <pthread.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/tid.h"

static __thread pid_t cached_tid;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static bool may_cache;		/* the fork hook is in place */

static void forget_tid(void)
{
	cached_tid = 0;
}

static void register_atfork(void)
{
	/* Fails only for lack of memory; then every call asks the kernel. */
	may_cache = pthread_atfork(NULL, NULL, forget_tid) == 0;
}

pid_t current_tid(void)
{
	pid_t tid = cached_tid;

	if (tid)
		return tid;
	pthread_once(&atfork_once, register_atfork);
	tid = (pid_t)syscall(SYS_gettid);
	if (may_cache)
		cached_tid = tid;
	return tid;
}
