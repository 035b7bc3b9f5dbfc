/* SPDX-License-Identifier: MIT */
/* The NVMe devices and controllers the loader compiles a policy against. */
#ifndef UCMD_BPF_DEVICES_H
#define UCMD_BPF_DEVICES_H

#include <stdint.h>

#include "ucmd_bpf.h"

/* Every ngXnY, nvmeX and nvmeXnY in sysfs (at most UL_MAX_DEVS): 0 or -E2BIG. */
int ul_find_devices(struct ucmd_bpf_dev *devs, unsigned *n);
/* A char major by driver name in /proc/devices, 0 if none. */
uint32_t ul_char_major(const char *driver);
/* Controller x's effects: [0..255] admin, [256..511] I/O; 0 or -errno (known effects alone). */
int ul_read_effects(unsigned x, uint32_t eff[512]);

#endif
