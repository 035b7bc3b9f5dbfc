/* SPDX-License-Identifier: MIT */
/*
 * What nvme-cli's list-subsys and list show: Debian's libnvme's scan of
 * sysfs (nvme_scan: /sys/class/nvme-subsystem, /sys/class/nvme, their
 * attributes, scandir with its own filters) and of each namespace it finds
 * there (Identify Namespace with NVME_IOCTL_ADMIN_CMD on its node), printed
 * one subsystem, controller and namespace a line. Linked statically (libnvme.a) it runs under
 * ucmd-supervise alone, dynamically under the preload: both must print the
 * same tree.
 *
 *   nvme_scan         exit 0; 1 when the scan fails
 *   nvme_scan io DEV  on namespace node DEV (nsid 1): Get Features Number
 *                     of Queues (its 32-bit result), a 4 KiB Write of a
 *                     pattern at LBA 64 and a Read back (libnvme 1.x's
 *                     NVME_IOCTL_ADMIN_CMD and NVME_IOCTL_IO_CMD): "queues
 *                     0xR", then "io ok" or what failed (exit 1)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libnvme.h>

static int io(const char *dev)
{
	static unsigned char w[4096], r[4096];
	__u32 res = 0;
	int fd = open(dev, O_RDWR), ret;

	if (fd < 0)
		return perror(dev), 1;
	ret = nvme_get_features_num_queues(fd, NVME_GET_FEATURES_SEL_CURRENT, &res);
	if (ret)
		return printf("get-features: %d %s\n", ret, ret < 0 ? strerror(errno) : ""), 1;
	printf("queues 0x%08x\n", res);
	for (unsigned i = 0; i < sizeof(w); i++)
		w[i] = (unsigned char)(i * 7 + 3);
	struct nvme_io_args a = { .args_size = sizeof(a), .fd = fd, .nsid = 1, .slba = 64,
				  .nlb = (__u16)(sizeof(w) / 512 - 1), .data = w,
				  .data_len = sizeof(w) };

	ret = nvme_write(&a);
	if (ret)
		return printf("write: %d %s\n", ret, ret < 0 ? strerror(errno) : ""), 1;
	a.data = r;
	ret = nvme_read(&a);
	if (ret)
		return printf("read: %d %s\n", ret, ret < 0 ? strerror(errno) : ""), 1;
	if (memcmp(w, r, sizeof(w)))
		return printf("read back other bytes\n"), 1;
	printf("io ok\n");
	return 0;
}

static const char *str(const char *s)
{
	return s ? s : "-";
}

int main(int argc, char **argv)
{
	nvme_root_t r;
	nvme_host_t h;
	nvme_subsystem_t s;
	nvme_ctrl_t c;
	nvme_ns_t n;

	if (argc == 3 && !strcmp(argv[1], "io"))
		return io(argv[2]);
	r = nvme_scan(NULL);
	if (!r) {
		perror("nvme_scan");
		return 1;
	}
	nvme_for_each_host(r, h) {
		nvme_for_each_subsystem(h, s) {
			printf("subsys %s nqn=%s type=%s sysfs=%s\n", str(nvme_subsystem_get_name(s)),
			       str(nvme_subsystem_get_nqn(s)), str(nvme_subsystem_get_type(s)),
			       str(nvme_subsystem_get_sysfs_dir(s)));
			nvme_subsystem_for_each_ctrl(s, c) {
				printf(" ctrl %s transport=%s address=%s model=%s serial=%s fw=%s "
				       "state=%s numa=%s queues=%s sqsize=%s sysfs=%s\n",
				       str(nvme_ctrl_get_name(c)), str(nvme_ctrl_get_transport(c)),
				       str(nvme_ctrl_get_address(c)), str(nvme_ctrl_get_model(c)),
				       str(nvme_ctrl_get_serial(c)), str(nvme_ctrl_get_firmware(c)),
				       str(nvme_ctrl_get_state(c)), str(nvme_ctrl_get_numa_node(c)),
				       str(nvme_ctrl_get_queue_count(c)), str(nvme_ctrl_get_sqsize(c)),
				       str(nvme_ctrl_get_sysfs_dir(c)));
				/* each found by its sysfs directory, then Identify Namespace on its node */
				nvme_ctrl_for_each_ns(c, n)
					printf("  ns %s nsid=%u lba=%d blocks=%llu meta=%d sysfs=%s\n",
					       str(nvme_ns_get_name(n)), nvme_ns_get_nsid(n),
					       nvme_ns_get_lba_size(n),
					       (unsigned long long)nvme_ns_get_lba_count(n),
					       nvme_ns_get_meta_size(n), str(nvme_ns_get_sysfs_dir(n)));
			}
		}
	}
	nvme_free_tree(r);
	return 0;
}
