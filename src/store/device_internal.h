/* SPDX-License-Identifier: MIT */
/*
 * Device store knobs that are not part of the public store interface: tests
 * use them to exercise the buffered fallback on file systems where O_DIRECT
 * works, and to learn which path they exercised.
 */
#ifndef UCMD_STORE_DEVICE_INTERNAL_H
#define UCMD_STORE_DEVICE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "store/store.h"

#define UCMD_STORE_DEVICE_BUFFERED	(1u << 8)	/* never use O_DIRECT */

int store_device_open_flags(const char *path, uint64_t size, unsigned flags,
			    struct store **out);
/* True while the store does O_DIRECT I/O (it may fall back to buffered I/O). */
bool store_device_is_direct(struct store *st);
/* Offset/length granularity of direct I/O (1 when buffered). */
uint32_t store_device_block(struct store *st);

#endif /* UCMD_STORE_DEVICE_INTERNAL_H */
