/* SPDX-License-Identifier: MIT */
/*
 * The ranges this client shares with the daemon (ucmd_buf_alloc's
 * memfds, UCMDD_REGION_ADD), as the submit path asks: "is this buffer in
 * one of them?" The daemon reaches such a buffer through its own mapping
 * (srv_region_lookup, before anything else), so a read into it needs no
 * record of ours and a write from it no copy into the bounce area
 * (bounce.c): the record's probe would take the buffer's line from the
 * CPU where the daemon just wrote it (a locked instruction per read), and
 * the copy is 4 KiB per write that nothing reads.
 *
 * Read without a lock on every submit, written under the engine's
 * bufs_lock. A racy answer is only ever a slower one, never a wrong one:
 * "shared" for plain memory (a region being dropped, a torn pair) sends
 * the I/O to the daemon without a record, which then asks the client's
 * mappings or copies through /proc/PID/mem as for any unrecorded I/O;
 * "not shared" for a region does what was done before this table. So
 * relaxed loads suffice, and only the first DC_SHARED_MAX regions are
 * kept (the rest go the recorded way).
 */
#include "client/client.h"

void dc_shared_add(struct dc_shared *s, const void *p, size_t len)
{
	uint64_t lo = (uint64_t)(uintptr_t)p;

	for (unsigned i = 0; i < DC_SHARED_MAX; i++) {
		if (__atomic_load_n(&s->r[i].hi, __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&s->r[i].lo, lo, __ATOMIC_RELAXED);
		__atomic_store_n(&s->r[i].hi, lo + len, __ATOMIC_RELEASE);
		if (i >= __atomic_load_n(&s->nr, __ATOMIC_RELAXED))
			__atomic_store_n(&s->nr, i + 1, __ATOMIC_RELEASE);
		return;
	}
}

void dc_shared_del(struct dc_shared *s, const void *p)
{
	uint64_t lo = (uint64_t)(uintptr_t)p;
	unsigned nr = __atomic_load_n(&s->nr, __ATOMIC_RELAXED);

	for (unsigned i = 0; i < nr; i++) {
		if (!__atomic_load_n(&s->r[i].hi, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&s->r[i].lo, __ATOMIC_RELAXED) != lo)
			continue;
		/* the end first: a reader sees the slot empty, never a range grown */
		__atomic_store_n(&s->r[i].hi, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&s->r[i].lo, 0, __ATOMIC_RELAXED);
		while (nr && !__atomic_load_n(&s->r[nr - 1].hi, __ATOMIC_RELAXED))
			nr--;
		__atomic_store_n(&s->nr, nr, __ATOMIC_RELEASE);
		return;
	}
}

bool dc_shared_covers(const struct dc_shared *s, uint64_t addr, uint64_t len)
{
	unsigned nr = __atomic_load_n(&s->nr, __ATOMIC_ACQUIRE);

	if (!len || addr + len < addr)
		return false;
	for (unsigned i = 0; i < nr; i++) {
		uint64_t hi = __atomic_load_n(&s->r[i].hi, __ATOMIC_ACQUIRE);

		if (addr + len <= hi && addr >= __atomic_load_n(&s->r[i].lo, __ATOMIC_RELAXED))
			return true;
	}
	return false;
}
