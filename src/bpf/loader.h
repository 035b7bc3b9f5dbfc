/* SPDX-License-Identifier: MIT */
/* What the audit reader shares with the loader. */
#ifndef UCMD_BPF_LOADER_H
#define UCMD_BPF_LOADER_H

/* A pinned map of the loaded program by name ("events", "conf"...): fd or -1 (errno). */
int ul_pinned_map(const char *name);

#endif
