/* SPDX-License-Identifier: MIT */
/*
 * What nvme-cli's list-subsys and list show first: Debian's libnvme's scan
 * of sysfs (nvme_scan: /sys/class/nvme-subsystem, /sys/class/nvme, their
 * attributes, scandir with its own filters), printed one subsystem and
 * controller a line. Linked statically (libnvme.a) it runs under
 * ucmd-supervise alone, dynamically under the preload: both must print the
 * same tree.
 *
 *   nvme_scan      exit 0; 1 when the scan fails
 */
#include <stdio.h>

#include <libnvme.h>

static const char *str(const char *s)
{
	return s ? s : "-";
}

int main(void)
{
	nvme_root_t r = nvme_scan(NULL);
	nvme_host_t h;
	nvme_subsystem_t s;
	nvme_ctrl_t c;

	if (!r) {
		perror("nvme_scan");
		return 1;
	}
	nvme_for_each_host(r, h) {
		nvme_for_each_subsystem(h, s) {
			printf("subsys %s nqn=%s type=%s sysfs=%s\n", str(nvme_subsystem_get_name(s)),
			       str(nvme_subsystem_get_nqn(s)), str(nvme_subsystem_get_type(s)),
			       str(nvme_subsystem_get_sysfs_dir(s)));
			nvme_subsystem_for_each_ctrl(s, c)
				printf(" ctrl %s transport=%s address=%s model=%s serial=%s fw=%s "
				       "state=%s numa=%s queues=%s sqsize=%s sysfs=%s\n",
				       str(nvme_ctrl_get_name(c)), str(nvme_ctrl_get_transport(c)),
				       str(nvme_ctrl_get_address(c)), str(nvme_ctrl_get_model(c)),
				       str(nvme_ctrl_get_serial(c)), str(nvme_ctrl_get_firmware(c)),
				       str(nvme_ctrl_get_state(c)), str(nvme_ctrl_get_numa_node(c)),
				       str(nvme_ctrl_get_queue_count(c)), str(nvme_ctrl_get_sqsize(c)),
				       str(nvme_ctrl_get_sysfs_dir(c)));
		}
	}
	nvme_free_tree(r);
	return 0;
}
