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
#include <string.h>

#include "core/core.h"
#include "lib/error.h"
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
	.regs_read = native_regs_read,
	.buf_alloc = backend_buf_alloc_pages,
	.buf_free = backend_buf_free_pages,
	.queue_init = native_queue_init,
	.queue_exit = native_queue_exit,
	.enter = native_enter,
	.submit_and_wait = native_submit_and_wait,
	.register_files = native_register_files,
	.unregister_files = native_unregister_files,
	.register_buffers = native_register_buffers,
	.unregister_buffers = native_unregister_buffers,
	.register_personality = native_register_personality,
	.unregister_personality = native_unregister_personality,
	.register_ring_fd = native_register_ring_fd,
	.unregister_ring_fd = native_unregister_ring_fd,
	.register_files_update = native_register_files_update,
	.register_files_sparse = native_register_files_sparse,
	.register_buffers_sparse = native_register_buffers_sparse,
	.register_eventfd = native_register_eventfd,
	.unregister_eventfd = native_unregister_eventfd,
	.get_probe_ring = native_get_probe_ring,
	.enter_timeout = native_enter_timeout,
};

int ucmd_engine_create(struct ucmd_engine **out)
{
	struct ucmd_engine *e;
	int ret;

	if (!out)
		return last_error_set(-EINVAL, "ucmd_engine_create: out is NULL");
	e = backend_engine_alloc(&native_backend, NULL);
	if (!e)
		return last_error_set(-ENOMEM, "ucmd_engine_create: out of memory");
	ret = native_engine_init(e);
	if (ret < 0) {
		native_engine_free(e);
		return last_error_set(ret, "ucmd_engine_create: the opcode table or the null "
				      "device: %s", strerror(-ret));
	}
	ret = security_engine_init(e);
	if (ret < 0) {
		native_engine_free(e);
		return last_error_set(ret, "ucmd_engine_create: installing the default policy: %s",
				      strerror(-ret));
	}
	*out = e;
	return 0;
}

struct ucmd_engine *ucmd_engine_new(void)
{
	struct ucmd_engine *e;

	return ucmd_engine_create(&e) ? NULL : e;
}
