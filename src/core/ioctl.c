/* SPDX-License-Identifier: MIT */
/*
 * The synchronous path (fs/ioctl.c's vfs_ioctl with security_file_ioctl in
 * front). Linux's hook sees only the raw argument pointer, which user space
 * may change before the driver reads it; here the argument is copied once,
 * the chain judges that copy (described by the provider as it describes the
 * same command sent as a uring_cmd, so one set of rules covers both), and
 * the provider executes that copy.
 */
#include <errno.h>
#include <sys/ioctl.h>

#include "core/core.h"
#include "security/hooks.h"
#include "uaccess/uaccess.h"

/* The largest argument copied in: struct nvme_passthru_cmd64 is 80 bytes. */
#define IOCTL_KARG_MAX 256

long vfs_ioctl(struct ucmd_file *f, unsigned long cmd, void *arg)
{
	uint64_t karg[IOCTL_KARG_MAX / sizeof(uint64_t)];
	struct ucmd_ioctl_call call = { .file = f, .cmd = cmd };
	size_t size = _IOC_SIZE(cmd);
	const struct ucmd_cred *cred;
	int ret;

	if (!f->ops->ioctl)
		return -ENOTTY;
	if ((_IOC_DIR(cmd) & _IOC_WRITE) && size) {
		/* no provider has such an ioctl; Linux's drivers answer -ENOTTY */
		if (size > sizeof(karg))
			return -ENOTTY;
		/*
		 * The caller's memory: this process's, or a daemon client's
		 * (core/task.h). Unreadable, the provider gets no copy and
		 * answers as Linux's drivers do, which read their argument
		 * themselves: -ENOTTY for a command it does not know, -EFAULT
		 * for one whose argument it needs.
		 */
		if (!access_ok((uint64_t)(uintptr_t)arg, size) &&
		    !user_mm_copy_from(current_task()->mm, karg, (uint64_t)(uintptr_t)arg, size))
			call.karg = karg;
	}
	/* Linux's capable(): the caller's credentials now, not the opener's */
	cred = current_cred_cached();
	ret = security_file_allowed(f, UCMD_HOOK_FILE_IOCTL, cred)
		      ? 0 : security_file_ioctl(f->engine, &call, cred);
	if (ret)
		return ret;
	return f->ops->ioctl(f, cmd, arg, call.karg);
}
