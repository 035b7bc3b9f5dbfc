/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the controller's persistent configuration decoder. The
 * input becomes <dir>/ctrl.json, as a crash, a full disk or a hand edit
 * could leave it; ucmd_ctrl_create() must either refuse it with an error or
 * come up with a sane controller, never crash, hang or leak. Namespaces the
 * file names are created as sparse files in the same private directory.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvme/ctrl/ctrl.h"

static char dir[64];

static void clean_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[384];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ucmd_ctrl_params p = { 0 };
	struct ucmd_ctrl *c = NULL;
	char path[128];

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/ucmd-fuzz-cfg.%d", (int)getpid());
		mkdir(dir, 0700);
	}
	clean_dir();
	snprintf(path, sizeof(path), "%s/ctrl.json", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	p.dir = dir;
	if (ucmd_ctrl_create(&p, &c) == 0) {
		/* a controller that came up must be usable: it can enumerate */
		(void)ucmd_ctrl_ns_count(c);
		ucmd_ctrl_destroy(c);
	}
	return 0;
}
