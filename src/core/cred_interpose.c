/* SPDX-License-Identifier: MIT */
/*
 * Credentials follow the process, not the ring's creation (docs/security.md,
 * "Credentials"): Linux
 * checks the submitting task's credentials for a ring without SQPOLL, so a
 * ring created as root acts as nobody once the process is nobody. Reading
 * credentials on every submission would cost syscalls, so instead the
 * library defines libc's credential-changing calls itself: the
 * application's calls resolve to these (the engine is linked into it), each
 * runs the real call (dlsym(RTLD_NEXT): glibc's, which changes every thread,
 * its setxid broadcast) and then bumps a process-wide generation. A ring
 * (or a cache) remembers the generation its credentials were read at and
 * reads them again only when it moved.
 *
 * Not covered (docs/security.md): a raw syscall(SYS_setresuid, ...) or an
 * inline syscall instruction, calls from inside libc itself (they do not go
 * through these symbols), and a change made by another process (e.g.
 * capset on this pid is not allowed anyway since Linux 2.6.24). The engine
 * inside the application is not a security boundary; the daemon will be.
 */
#include <dlfcn.h>
#include <grp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <errno.h>

#include "core/cred.h"

static atomic_ulong cred_gen = 1;

unsigned long cred_generation(void)
{
	/* acquire: pairs with the release bump after the real call returned */
	return atomic_load_explicit(&cred_gen, memory_order_acquire);
}

void cred_changed(void)
{
	atomic_fetch_add_explicit(&cred_gen, 1, memory_order_release);
}

/*
 * The library builds with -fvisibility=hidden; these definitions must stay
 * visible so that the application's (and other libraries') calls reach
 * them in libucmd.so and libucmd.a too (src/libucmd.map).
 */
#define INTERPOSER __attribute__((visibility("default")))

/* The next definition of name after this library's: libc's. */
static void *real(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/*
 * One wrapper per call. The generation is bumped even when the call fails
 * (a partial setgroups, say): a spurious refresh is only a few syscalls.
 */
#define INTERPOSE(ret_t, name, params, args)                                   \
	INTERPOSER ret_t name params                                           \
	{                                                                      \
		static ret_t (*cached) params;                                 \
		ret_t (*fn) params = __atomic_load_n(&cached, __ATOMIC_RELAXED); \
		ret_t ret_;                                                     \
		if (!fn) {                                                     \
			fn = (ret_t (*) params)real(#name);                    \
			__atomic_store_n(&cached, fn, __ATOMIC_RELAXED);       \
		}                                                              \
		if (!fn) {                                                     \
			errno = ENOSYS;                                        \
			return (ret_t)-1;                                      \
		}                                                              \
		ret_ = fn args;                                                 \
		cred_changed();                                           \
		return ret_;                                                   \
	}

INTERPOSE(int, setuid, (uid_t uid), (uid))
INTERPOSE(int, setgid, (gid_t gid), (gid))
INTERPOSE(int, seteuid, (uid_t uid), (uid))
INTERPOSE(int, setegid, (gid_t gid), (gid))
INTERPOSE(int, setreuid, (uid_t r, uid_t e), (r, e))
INTERPOSE(int, setregid, (gid_t r, gid_t e), (r, e))
INTERPOSE(int, setresuid, (uid_t r, uid_t e, uid_t s), (r, e, s))
INTERPOSE(int, setresgid, (gid_t r, gid_t e, gid_t s), (r, e, s))
INTERPOSE(int, setgroups, (size_t n, const gid_t *list), (n, list))
INTERPOSE(int, initgroups, (const char *user, gid_t group), (user, group))
/* setfsuid returns the previous fsuid, never -1 */
INTERPOSE(int, setfsuid, (uid_t uid), (uid))
INTERPOSE(int, setfsgid, (gid_t gid), (gid))

/* capset(2) has no glibc prototype in a public header */
INTERPOSER int capset(void *hdrp, const void *datap);
INTERPOSE(int, capset, (void *hdrp, const void *datap), (hdrp, datap))

/*
 * prctl: the options that change capabilities now (PR_CAPBSET_DROP,
 * PR_CAP_AMBIENT) or what a later setuid leaves of them (PR_SET_SECUREBITS,
 * PR_SET_KEEPCAPS) bump the generation; the others are passed through.
 */
INTERPOSER int prctl(int option, ...)
{
	static int (*cached)(int, ...);
	int (*fn)(int, ...) = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	unsigned long a[4];
	va_list ap;
	int r;

	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (!fn) {
		fn = (int (*)(int, ...))real("prctl");
		__atomic_store_n(&cached, fn, __ATOMIC_RELAXED);
	}
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	r = fn(option, a[0], a[1], a[2], a[3]);
	if (option == PR_CAPBSET_DROP || option == PR_CAP_AMBIENT ||
	    option == PR_SET_SECUREBITS || option == PR_SET_KEEPCAPS)
		cred_changed();
	return r;
}
