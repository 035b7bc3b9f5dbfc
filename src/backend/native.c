/* SPDX-License-Identifier: MIT */
/*
 * The native backend: ucmd's own engine (src/core) behind the ops table,
 * and its creation. A native engine is born with its devices (null) and its
 * "policy" module holding the default policy, Linux's nvme_cmd_allowed()
 * rules: the NVMe driver checks no permission itself, so an engine without
 * the module would let anyone do anything. Failing to install it fails
 * ucmd_engine_new().
 */
#include <errno.h>

#include "core/core.h"
#include "security/security.h"

static void native_engine_free(struct ucmd_engine *e)
{
	native_engine_fini(e);
	security_engine_exit(e);
	backend_engine_release(e);
}

const struct ucmd_backend native_backend = {
	.name = "native",
	.engine_free = native_engine_free,
	.open = native_open,
	.close = native_close,
	.device_names = native_device_names,
	.disk_stat = native_disk_stat,
	.ioctl = native_ioctl,
	.queue_init = native_queue_init,
	.queue_exit = native_queue_exit,
	.enter = native_enter,
	.register_files = native_register_files,
	.unregister_files = native_unregister_files,
	.register_buffers = native_register_buffers,
	.unregister_buffers = native_unregister_buffers,
	.register_personality = native_register_personality,
	.unregister_personality = native_unregister_personality,
};

struct ucmd_engine *ucmd_engine_new(void)
{
	struct ucmd_engine *e = backend_engine_alloc(&native_backend, NULL);

	if (!e)
		return NULL;
	if (native_engine_init(e) || security_engine_init(e)) {
		native_engine_free(e);
		return NULL;
	}
	return e;
}
