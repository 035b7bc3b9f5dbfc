/* SPDX-License-Identifier: MIT */
/*
 * Kernel engines and their devices: real files from open(2). The kernel
 * keeps the fd table, so a kernel engine holds no devices of its own.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/backend.h"
#include "kernel/kernel_int.h"
#include "lib/error.h"
#include "ucmd/kernel.h"

static int kernel_open(struct ucmd_engine *e, const char *name, int flags)
{
	char path[PATH_MAX];
	int fd;

	(void)e;
	if (!*name || strlen(name) + 6 >= sizeof(path))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s%s", name[0] == '/' ? "" : "/dev/", name);
	fd = open(path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int kernel_close(struct ucmd_engine *e, int fd)
{
	(void)e;
	return close(fd) < 0 ? -errno : 0;
}

/* The kernel's own ioctl(2): NVMe statuses come back positive, errors as -errno. */
static int kernel_ioctl(struct ucmd_engine *e, int fd, unsigned long cmd, void *arg)
{
	int ret;

	(void)e;
	ret = ioctl(fd, cmd, arg);
	return ret < 0 ? -errno : ret;
}

static bool nvme_dev_name(const char *n)
{
	unsigned a, b;
	char c;

	/* nvmeX, nvmeXnY, ngXnY: what Linux's NVMe driver creates */
	return sscanf(n, "nvme%u%c", &a, &c) == 1 || sscanf(n, "nvme%un%u%c", &a, &b, &c) == 2 ||
	       sscanf(n, "ng%un%u%c", &a, &b, &c) == 2;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The system's device list is global, and so is the buffer naming it. */
#define MAX_LISTED 256
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static char *listed[MAX_LISTED];
static unsigned nr_listed;

static int kernel_device_names(struct ucmd_engine *e, const char **names, unsigned max)
{
	DIR *d = opendir("/dev");
	struct dirent *de;
	unsigned n;

	(void)e;
	if (!d)
		return -errno;
	pthread_mutex_lock(&names_lock);
	for (unsigned i = 0; i < nr_listed; i++)
		free(listed[i]);
	nr_listed = 0;
	listed[nr_listed++] = strdup("null");
	while ((de = readdir(d)) && nr_listed < MAX_LISTED)
		if (nvme_dev_name(de->d_name))
			listed[nr_listed++] = strdup(de->d_name);
	closedir(d);
	for (unsigned i = 0; i < nr_listed; i++)
		if (!listed[i]) {
			pthread_mutex_unlock(&names_lock);
			return -ENOMEM;
		}
	qsort(listed + 1, nr_listed - 1, sizeof(listed[0]), name_cmp);
	for (n = 0; n < nr_listed && n < max; n++)
		names[n] = listed[n];
	n = nr_listed;
	pthread_mutex_unlock(&names_lock);
	return (int)n;
}

/* /sys/block/<name>/stat: Documentation/block/stat.rst gives its fields. */
static int kernel_disk_stat(struct ucmd_engine *e, const char *name, struct ucmd_disk_stat *out)
{
	char path[PATH_MAX];
	unsigned long long v[11];
	const char *base = strrchr(name, '/');
	FILE *f;
	int n;

	(void)e;
	base = base ? base + 1 : name;
	if (!*base || strlen(base) + 20 >= sizeof(path))
		return -EINVAL;
	snprintf(path, sizeof(path), "/sys/block/%s/stat", base);
	f = fopen(path, "re");
	if (!f && errno == ENOENT) {
		/* no disk of that name: a char device (ngXnY), or nothing */
		snprintf(path, sizeof(path), "/dev/%s", base);
		return access(path, F_OK) ? -ENOENT : -ENOTBLK;
	}
	if (!f)
		return -errno;
	n = fscanf(f, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10]);
	fclose(f);
	if (n != 11)
		return -EIO;
	*out = (struct ucmd_disk_stat){
		.ios = { v[0], v[4] }, .merges = { v[1], v[5] }, .sectors = { v[2], v[6] },
		.ticks_ms = { v[3], v[7] }, .io_ticks_ms = v[9], .time_in_queue_ms = v[10],
	};
	return 0;
}

static void kernel_engine_free(struct ucmd_engine *e)
{
	backend_engine_release(e);
}

const struct ucmd_backend kernel_backend = {
	.name = "kernel",
	.engine_free = kernel_engine_free,
	.open = kernel_open,
	.close = kernel_close,
	.device_names = kernel_device_names,
	.disk_stat = kernel_disk_stat,
	.ioctl = kernel_ioctl,
	.buf_alloc = backend_buf_alloc_pages,
	.buf_free = backend_buf_free_pages,
	.queue_init = kernel_queue_init,
	.queue_exit = kernel_queue_exit,
	.enter = kernel_enter,
	.register_files = kernel_register_files,
	.unregister_files = kernel_unregister_files,
	.register_buffers = kernel_register_buffers,
	.unregister_buffers = kernel_unregister_buffers,
	.register_personality = kernel_register_personality,
	.unregister_personality = kernel_unregister_personality,
	.register_ring_fd = kernel_register_ring_fd,
	.unregister_ring_fd = kernel_unregister_ring_fd,
	.register_files_update = kernel_register_files_update,
	.register_files_sparse = kernel_register_files_sparse,
	.register_buffers_sparse = kernel_register_buffers_sparse,
	.register_eventfd = kernel_register_eventfd,
	.unregister_eventfd = kernel_unregister_eventfd,
	.get_probe_ring = kernel_get_probe_ring,
	.enter_timeout = kernel_enter_timeout,
};

int ucmd_engine_create_kernel(struct ucmd_engine **out)
{
	if (!out)
		return last_error_set(-EINVAL, "ucmd_engine_create_kernel: out is NULL");
	/* the kernel keeps the fd table and the devices: no state of our own */
	*out = backend_engine_alloc(&kernel_backend, NULL);
	return *out ? 0 : last_error_set(-ENOMEM, "ucmd_engine_create_kernel: out of memory");
}

struct ucmd_engine *ucmd_engine_new_kernel(void)
{
	struct ucmd_engine *e;

	return ucmd_engine_create_kernel(&e) ? NULL : e;
}

bool ucmd_engine_is_kernel(const struct ucmd_engine *e)
{
	return e && backend_engine_ops(e) == &kernel_backend;
}

/*
 * The controller behind a namespace node: sysfs knows (its "device" link is
 * the controller); without sysfs, or for a multipath head whose parent is
 * the subsystem, the instance number in the name is the usual answer.
 */
static void ctrl_of(const char *class, const char *nsname, unsigned inst, char *out, size_t len)
{
	char link[PATH_MAX], target[PATH_MAX];
	unsigned x;
	char c;
	ssize_t n;

	snprintf(out, len, "/dev/nvme%u", inst);
	snprintf(link, sizeof(link), "/sys/class/%s/%s/device", class, nsname);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = 0;
	const char *base = strrchr(target, '/');
	base = base ? base + 1 : target;
	/* a controller name is short ("nvme12"); anything longer is not one */
	if (sscanf(base, "nvme%u%c", &x, &c) == 1 && strlen(base) < 32)
		snprintf(out, len, "/dev/%.31s", base);
}

int ucmd_kernel_nvme_open(struct ucmd_engine *e, const char *path, uint32_t nsid, int flags,
			  struct ucmd_kernel_nvme *out)
{
	const char *base = strrchr(path, '/');
	unsigned x, y;
	char c;
	int ret;

	if (!ucmd_engine_is_kernel(e) || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->ctrl_fd = out->ns_fd = -1;
	base = base ? base + 1 : path;
	if (sscanf(base, "ng%un%u%c", &x, &y, &c) == 2 ||
	    sscanf(base, "nvme%un%u%c", &x, &y, &c) == 2) {
		if (nsid && nsid != y)
			return -EINVAL;
		/* passthrough goes through the generic char device, never the disk */
		snprintf(out->ns_path, sizeof(out->ns_path), "/dev/ng%un%u", x, y);
		ctrl_of("nvme-generic", out->ns_path + 5, x, out->ctrl_path, sizeof(out->ctrl_path));
	} else if (sscanf(base, "nvme%u%c", &x, &c) == 1) {
		snprintf(out->ctrl_path, sizeof(out->ctrl_path), "/dev/nvme%u", x);
		snprintf(out->ns_path, sizeof(out->ns_path), "/dev/ng%un%u", x, nsid ? nsid : 1);
	} else {
		return -ENODEV;
	}
	out->ctrl_fd = ucmd_open(e, out->ctrl_path, flags);
	if (out->ctrl_fd < 0) {
		ret = out->ctrl_fd;
		goto fail;
	}
	out->ns_fd = ucmd_open(e, out->ns_path, flags);
	if (out->ns_fd < 0) {
		ret = out->ns_fd;
		goto fail;
	}
	ret = ioctl(out->ns_fd, NVME_IOCTL_ID);
	if (ret <= 0) {
		ret = ret < 0 ? -errno : -ENODEV;
		goto fail;
	}
	out->nsid = (uint32_t)ret;
	return 0;
fail:
	ucmd_kernel_nvme_close(e, out);
	return ret;
}

void ucmd_kernel_nvme_close(struct ucmd_engine *e, struct ucmd_kernel_nvme *kn)
{
	if (kn->ns_fd >= 0)
		ucmd_close(e, kn->ns_fd);
	if (kn->ctrl_fd >= 0)
		ucmd_close(e, kn->ctrl_fd);
	kn->ns_fd = kn->ctrl_fd = -1;
}
