/* SPDX-License-Identifier: MIT */
/*
 * The emulated NVMe controller, as a user creates, configures and destroys
 * it: a controller (struct ucmd_ctrl, opaque) with its namespaces, kept in
 * a directory or in memory. A host driver attaches to it with
 * ucmd_nvme_attach() (<ucmd/nvme.h>), which also wires its interrupts; the
 * register map and the DMA interface the driver uses are not part of this
 * API.
 *
 * Errors are negative errno values. ucmd_ctrl_create() also says why in a
 * sentence: in params.errbuf when given, and always in ucmd_last_error().
 */
#ifndef UCMD_CTRL_PUBLIC_H
#define UCMD_CTRL_PUBLIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

struct ucmd_ctrl;

enum ucmd_ctrl_mode {
	/* A doorbell write processes the new commands in the caller's thread. */
	UCMD_CTRL_INLINE,
	/* A doorbell write wakes the controller's own thread, which processes
	 * them; interrupts are raised from that thread. */
	UCMD_CTRL_THREAD,
};

#define UCMD_CTRL_POLL_NS_DEFAULT	32768u
#define UCMD_CTRL_NO_POLL		UINT32_MAX

/* A plain configuration struct: zero-initialise it and set what you need. */
#define UCMD_CTRL_MAX_CONTROLLERS	8

struct ucmd_ctrl_params {
	const char *dir;	/* persistent state (config, namespace files); NULL: volatile */
	/*
	 * Open dir read-only: the state is loaded but never written, namespace
	 * images are opened O_RDONLY, commands that would change data or
	 * state fail with Namespace Is Write Protected, and the directory
	 * lock is shared with other readers (docs/store.md).
	 */
	bool read_only;
	/*
	 * Optional: when ucmd_ctrl_create() fails, a sentence saying why,
	 * naming the file and the check or field (e.g. "DIR/ctrl.json:
	 * namespaces[0].lbaf: 9 is out of range 0..7"), NUL-terminated; an
	 * empty string when there is nothing to add to the errno. The same
	 * sentence is in ucmd_last_error().
	 */
	char *errbuf;
	size_t errbuf_len;
	const char *serial;	/* defaults derived when NULL */
	const char *model;
	const char *firmware;
	enum ucmd_ctrl_mode mode;
	/*
	 * UCMD_CTRL_THREAD only. false: doorbells are posted (staged, the
	 * writer never waits), as with QEMU's ioeventfd=on. true: a doorbell
	 * write is a trap handled under the controller's lock, so it waits for
	 * a processing pass in progress, as a guest's MMIO exit waits for
	 * QEMU's big lock with its nvme device's default ioeventfd=off. This is
	 * the cost queue_rqs saves: one trap per plugged batch.
	 */
	bool db_trap;
	/*
	 * UCMD_CTRL_THREAD only: when a pass leaves nothing to do, watch for
	 * a doorbell this many nanoseconds before sleeping, as a QEMU IOThread
	 * polls its event sources before it blocks. 0 selects
	 * UCMD_CTRL_POLL_NS_DEFAULT (QEMU's poll-max-ns default);
	 * UCMD_CTRL_NO_POLL sleeps at once, so every doorbell that finds the
	 * thread idle pays a wake-up.
	 */
	uint32_t poll_ns;
	uint16_t cntlid;
	/*
	 * Controllers of the NVM subsystem the directory holds (1 to
	 * UCMD_CTRL_MAX_CONTROLLERS, 0: 1), used when the state is new (a
	 * loaded one keeps its own count): controller i + 1 has controller ID
	 * cntlid + i, its own registers, queues, features and error log;
	 * every namespace is shared by all of them (NMIC) and CMIC says so.
	 * ucmd_nvme_attach_multipath() (<ucmd/nvme.h>) reaches them as paths.
	 */
	uint8_t  controllers;
	uint16_t max_io_queues;	/* I/O queue pairs offered (Number of Queues) */
	uint16_t mqes;		/* CAP.MQES: max queue entries minus one */
	uint8_t  mdts;		/* max transfer = 2^mdts * 4 KiB; 0 = no limit */
	/*
	 * The device was just powered on: count a power cycle (SMART) and
	 * drop the volatile state even when the host did not reboot. Without
	 * it, creating the controller of a directory is a cold start only
	 * when the state is new, the host booted since the state was saved,
	 * or the last run did not shut down cleanly (an unsafe shutdown);
	 * otherwise the device "stayed powered" between two users of the
	 * directory. ucmdd sets it once per daemon start (docs/store.md).
	 */
	bool     power_on;
	/*
	 * RAM namespaces hold in memory every block written to them, so their
	 * sizes together are the memory a user may make this process use:
	 * at most this many bytes (0: no bound but the store's 1 PiB). A
	 * namespace past it is refused, by Namespace Management with Namespace
	 * Insufficient Capacity (-EDQUOT from ucmd_ctrl_ns_create()).
	 */
	uint64_t ram_capacity;
	/*
	 * Flexible Data Placement in endurance group 1 (docs/fdp.md): used
	 * when the state is new (a loaded one keeps its own). With enable
	 * set, FDP is on and every namespace gets every placement handle.
	 */
	struct ucmd_fdp_params {
		bool     enable;
		uint16_t nruh;		/* reclaim unit handles, 0: 8 */
		uint16_t nrg;		/* reclaim groups, 0: 1 */
		uint64_t ru_size;	/* reclaim unit bytes, 0: 1 MiB */
		uint8_t  op_pct;	/* overprovisioning in percent, 0: 7 */
		/*
		 * Handles initially isolated: garbage collection may mix data of
		 * different handles. Otherwise (default) persistently isolated.
		 */
		bool     initially;
		/*
		 * A reclaim unit's active time limit in seconds (ERUTL), 0:
		 * none. A handle whose unit was first written longer ago than
		 * that by the wall clock gets a new unit (event 01h).
		 */
		uint32_t ru_time_limit;
	} fdp;
};

/* Store kinds for namespaces */
enum ucmd_ns_store {
	UCMD_NS_STORE_FILE,	/* <dir>/ns<nsid>.img (default) */
	UCMD_NS_STORE_RAM,
	UCMD_NS_STORE_DEVICE,	/* path given */
};

/*
 * LBA formats every ucmd namespace offers (Identify Namespace LBAF table):
 *   0: 512+0   1: 512+8   2: 512+16   3: 512+64
 *   4: 4096+0  5: 4096+8  6: 4096+16  7: 4096+64
 * and the same metadata sizes whose protection information, when Format NVM
 * asks for it, has the 64-bit guard (Protection Information Format 2h):
 *   8: 512+16  9: 512+64  10: 4096+16  11: 4096+64
 * and 4096+16 with the 64-bit guard whose 48-bit Storage and Reference
 * Space begins with a storage tag (Storage Tag Size 8 and 16: 40-bit and
 * 32-bit reference tags):
 *   12: 4096+16 STS 8  13: 4096+16 STS 16
 */
#define UCMD_NR_LBAF 14

struct ucmd_ns_params {
	uint64_t nsze;		/* size in logical blocks */
	uint8_t  lbaf;		/* index into the table above */
	bool     extended;	/* metadata at the end of each LBA (FLBAS bit 4) */
	enum ucmd_ns_store store;
	/*
	 * UCMD_NS_STORE_DEVICE: a block device that exists (a regular file is
	 * -ENOTBLK: a file-backed namespace is UCMD_NS_STORE_FILE, the
	 * controller's own nsN.img). It is resolved (realpath) when the
	 * namespace is created and must then pass the same checks as when it
	 * is reopened from the state file: no symlink, a block device owned by
	 * the directory's owner or root; never created, truncated or extended.
	 */
	const char *path;
	bool     attach;	/* attach to this controller after creating */
	/* A zoned namespace when zoned.zone_size is set (see below) */
	struct ucmd_zns_params {
		/*
		 * Logical blocks per zone (any size, a power of two or not) and
		 * the writable blocks of each (zone_cap <= zone_size, 0: all).
		 * The namespace holds nsze / zone_size zones; blocks past the
		 * last whole zone are not part of it.
		 */
		uint64_t zone_size, zone_cap;
		uint32_t max_open;	/* zones open at once (MOR), 0: no limit */
		uint32_t max_active;	/* open or closed zones (MAR), 0: no limit */
		/* Zone Append Size Limit: 2^zasl pages of 4 KiB, 0: MDTS */
		uint8_t  zasl;
		/* Zone descriptor extension per zone, in 64-byte units (0: none) */
		uint8_t  zdes;
		/* Reads may span zones (OZCS Read Across Zone Boundaries) */
		bool     cross_read;
	} zoned;
};

/*
 * Create a controller into *out (release it with ucmd_ctrl_destroy(), after
 * ucmd_nvme_detach() of any host attached to it). With params->dir set,
 * state (namespaces, formats, serial, SMART counters) is loaded from there
 * when present and created otherwise, and survives restarts and crashes.
 * The directory is refused (-EPERM) unless it and its files belong to the
 * caller's euid or root and are not writable by group or others; -EBUSY
 * while another process holds it for writing (or, for a writer, for
 * reading); -EUCLEAN when it holds namespace images but no ctrl.json
 * (nothing is deleted: restore the state file or remove the images).
 * -EINVAL for a NULL p or out. The reason is in params->errbuf and in
 * ucmd_last_error().
 */
int  ucmd_ctrl_create(const struct ucmd_ctrl_params *p, struct ucmd_ctrl **out);
/*
 * Stop and free a controller (NULL is ignored); its state is saved first.
 * Returns 0, or the -errno of a failed save or image flush (also one that
 * failed earlier while running, e.g. -ENOSPC): the controller is freed
 * either way, and what the next create finds is the last state saved
 * (ucmd_last_error() says which file and why).
 */
int  ucmd_ctrl_destroy(struct ucmd_ctrl *ctrl);

/*
 * Out-of-band provisioning, like a QEMU command line: create a namespace
 * without an admin queue (used to bootstrap a new controller directory).
 * Returns the new nsid (> 0) or a negative errno: -EEXIST when the file
 * store's image nsN.img already exists (it is never reused or deleted),
 * -EROFS on a read-only controller.
 */
int  ucmd_ctrl_ns_create(struct ucmd_ctrl *ctrl, const struct ucmd_ns_params *p);
/* Number of namespaces currently allocated (attached or not). */
unsigned ucmd_ctrl_ns_count(struct ucmd_ctrl *ctrl);
/*
 * Whether ucmd_ctrl_create() made a new state (no ctrl.json was there, or
 * no directory): only then may a caller provision a first namespace. A
 * controller whose namespaces were all deleted stays without any.
 */
bool ucmd_ctrl_is_new(struct ucmd_ctrl *ctrl);
/*
 * The controllers of ctrl's NVM subsystem (params.controllers, or what the
 * loaded state says; 1 for a directory made before there could be more),
 * and controller i of them (0 is ctrl itself), NULL past the last. They
 * live and die with ctrl: ucmd_ctrl_destroy(ctrl) destroys them, after
 * every host attached to them is detached.
 */
unsigned ucmd_ctrl_controllers(struct ucmd_ctrl *ctrl);
struct ucmd_ctrl *ucmd_ctrl_controller(struct ucmd_ctrl *ctrl, unsigned i);
/*
 * Asymmetric Namespace Access: each controller of a subsystem of several is
 * a port of its own, with an ANA state for group grpid (1, the one group
 * every namespace is in), as nvmet's configfs ports/N/ana_groups/G/ana_state.
 * state 0 asks; NVMe's values (1 optimized, 2 non-optimized, 3
 * inaccessible, 4 persistent loss, 0Fh change) set it for ctrl, one of
 * ucmd_ctrl_controller()'s: the ANA log's change count goes up, the
 * controller sends the ANA Change notice its host enabled, and its I/O
 * gets the Asymmetric Access status of the state; kept in ctrl.json.
 * Returns the state after the call, or -EINVAL (no such group or state),
 * -EOPNOTSUPP (a subsystem of one controller: no ANA), -EROFS (read-only).
 */
int  ucmd_ctrl_ana_state(struct ucmd_ctrl *ctrl, unsigned grpid, unsigned state);
/* Whether ucmd_ctrl_create() was a cold start (see params.power_on). */
bool ucmd_ctrl_power_cycled(struct ucmd_ctrl *ctrl);
/*
 * The controller's registers as a host reads them from BAR0 (CAP at 0, VS
 * at 8, ... ACQ at 30h; little-endian, reserved space as zeros), for a
 * show-regs: len bytes from off, both multiples of 4, within the first
 * 1000h bytes (the doorbells after them read as zeros in any case).
 * Reading has no side effect. -EINVAL otherwise.
 */
int  ucmd_ctrl_regs_read(struct ucmd_ctrl *ctrl, uint32_t off, void *buf, size_t len);

/*
 * Counters for tests and benchmarks: how often the controller thread went to
 * work (one per batch of doorbells, not one per command), how many of those
 * times it found the doorbell while polling rather than being woken, doorbell
 * writes, commands executed and interrupts raised.
 */
struct ucmd_ctrl_stats {
	uint64_t wakeups;
	uint64_t poll_hits;
	uint64_t doorbells;
	uint64_t commands;
	uint64_t interrupts;
};
void ucmd_ctrl_get_stats(struct ucmd_ctrl *ctrl, struct ucmd_ctrl_stats *st);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif /* UCMD_CTRL_PUBLIC_H */
