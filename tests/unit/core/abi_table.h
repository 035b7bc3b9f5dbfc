/* SPDX-License-Identifier: MIT */
#ifndef ABI_TABLE_H
#define ABI_TABLE_H

struct abi_entry {
	const char *name;
	unsigned long value;	/* offset, size or constant */
	unsigned long size;	/* field size, 0 for sizes and constants */
};

extern const struct abi_entry abi_sys[], abi_ucmd[];
extern const unsigned abi_sys_n, abi_ucmd_n;

#endif
