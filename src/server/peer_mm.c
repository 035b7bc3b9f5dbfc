/* SPDX-License-Identifier: MIT */
/*
 * Opening a client's address space as the client itself would be let to,
 * never as root: the kernel's own ptrace access check (the one that guards
 * /proc/PID/mem) is made with the client's effective uid and gid and the
 * capabilities it had, so that a set-user-ID or file-capability image --
 * non-dumpable to its caller, or holding capabilities the caller lacks -- is
 * refused, and so is a process of another user. CAP_SYS_PTRACE is kept only
 * for a client that connected as root and holds it.
 *
 * Credentials are per thread in Linux; glibc's set*id() change every
 * thread of the process, so the raw system calls are used here, on the
 * calling thread alone, for the time of the open.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "server/ctl.h"

static int caps_get(struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	memset(d, 0, sizeof(*d) * _LINUX_CAPABILITY_U32S_3);
	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

static int caps_set(const struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

static uint64_t caps_eff(const struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3])
{
	return (uint64_t)d[0].effective | (uint64_t)d[1].effective << 32;
}

/* Back to the daemon's own credentials; a thread that cannot get them back must not go on. */
static void restore(uid_t euid, gid_t egid, const struct __user_cap_data_struct *saved)
{
	if (syscall(SYS_setresuid, -1, euid, -1) || syscall(SYS_setresgid, -1, egid, -1) ||
	    caps_set(saved)) {
		srv_log("cannot restore the daemon's credentials after opening a client's memory: %s",
			strerror(errno));
		abort();
	}
}

int srv_peer_mm_open(struct user_mm *mm, pid_t pid, uid_t uid, gid_t gid, uint64_t caps)
{
	struct __user_cap_data_struct saved[_LINUX_CAPABILITY_U32S_3], act[_LINUX_CAPABILITY_U32S_3];
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	int ret;

	if (getresuid(&ruid, &euid, &suid) || getresgid(&rgid, &egid, &sgid))
		return -errno;
	ret = caps_get(saved);
	if (ret)
		return ret;
	memcpy(act, saved, sizeof(act));
	act[0].effective = (uint32_t)caps & saved[0].permitted;
	act[1].effective = (uint32_t)(caps >> 32) & saved[1].permitted;
	/*
	 * The effective ids, and with them the file-system ids: the ptrace
	 * check compares the fsuid/fsgid with the target's ids, and a user
	 * namespace's owner is judged by the euid. Leaving uid 0 clears the
	 * effective capabilities; the client's are then raised again (within
	 * the daemon's permitted set, which the real and saved uids keep).
	 */
	if (syscall(SYS_setresgid, -1, gid, -1) || syscall(SYS_setresuid, -1, uid, -1)) {
		ret = -errno;
		restore(euid, egid, saved);
		return ret;
	}
	ret = caps_set(act);
	if (!ret) {
		struct __user_cap_data_struct now[_LINUX_CAPABILITY_U32S_3];

		ret = caps_get(now);
		/* never open with more than the client's own */
		if (!ret && caps_eff(now) & ~caps)
			ret = -EPERM;
	}
	if (!ret)
		ret = user_mm_init_remote(mm, pid);
	restore(euid, egid, saved);
	return ret;
}
