/* SPDX-License-Identifier: MIT */
/*
 * The emulated NVMe controller: what a PCIe NVMe function looks like to a
 * host driver. The host talks to it only through the register map (BAR0:
 * CAP, VS, CC, CSTS, AQA, ASQ, ACQ, doorbells) and through queues and data
 * buffers in host memory that the controller reaches via a DMA interface.
 * Commands and completions are NVMe wire format (include/ucmd/nvme_wire.h).
 *
 * The host sets up the admin queue through AQA/ASQ/ACQ, enables with CC.EN,
 * waits for CSTS.RDY, then creates I/O queues with admin commands, exactly as
 * Linux's nvme-pci does. A doorbell write makes the controller fetch the new
 * SQ entries; completions are posted to the CQ with the phase tag and an
 * interrupt (a callback with the CQ's vector) is raised when the CQ has
 * interrupts enabled.
 *
 * Memory ordering (UCMD_CTRL_THREAD): the controller writes DW0/DW1 of a
 * CQE first and then publishes its second 8 bytes (SQ head, SQ id, CID,
 * status with the phase tag) with one 64-bit release store, so a host that
 * polls the phase tag must read that word with an acquire load. A doorbell
 * write orders the host's earlier SQE writes before the controller's reads.
 */
#ifndef UCMD_NVME_CTRL_H
#define UCMD_NVME_CTRL_H

#include <stdbool.h>
#include <stdint.h>

#include "ucmd/nvme_wire.h"

struct ucmd_ctrl;

/*
 * Host memory as the device sees it. Addresses in commands (queue bases,
 * PRP entries, SGL descriptors, metadata pointers) are "bus addresses";
 * map() turns [addr, addr + len) into a pointer or returns NULL when the
 * range is not host memory the device may touch (the command then fails with
 * Data Transfer Error). In-process the mapping is the identity.
 */
struct ucmd_dma {
	void *(*map)(const struct ucmd_dma *dma, uint64_t addr, uint64_t len);
	void *priv;
};
extern const struct ucmd_dma ucmd_dma_identity;

enum ucmd_ctrl_mode {
	/* A doorbell write processes the new commands in the caller's thread. */
	UCMD_CTRL_INLINE,
	/* A doorbell write wakes the controller's own thread, which processes
	 * them; interrupts are raised from that thread. */
	UCMD_CTRL_THREAD,
};

#define UCMD_CTRL_POLL_NS_DEFAULT	32768u
#define UCMD_CTRL_NO_POLL		UINT32_MAX

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
	 * empty string when there is nothing to add to the errno.
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
	uint16_t max_io_queues;	/* I/O queue pairs offered (Number of Queues) */
	uint16_t mqes;		/* CAP.MQES: max queue entries minus one */
	uint8_t  mdts;		/* max transfer = 2^mdts * 4 KiB; 0 = no limit */
	const struct ucmd_dma *dma;	/* NULL: identity */
	/* Interrupt: called when a completion is posted to a CQ with IEN set. */
	void (*irq)(void *arg, uint16_t vector);
	void *irq_arg;
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
 */
#define UCMD_NR_LBAF 8

struct ucmd_ns_params {
	uint64_t nsze;		/* size in logical blocks */
	uint8_t  lbaf;		/* index into the table above */
	bool     extended;	/* metadata at the end of each LBA (FLBAS bit 4) */
	enum ucmd_ns_store store;
	/*
	 * UCMD_NS_STORE_DEVICE: a block device or regular file that exists.
	 * It is resolved (realpath) when the namespace is created and must
	 * then pass the same checks as when it is reopened from the state
	 * file: no symlink, block device or single-link regular file, owned by
	 * the directory's owner (or, for a block device, root); never created,
	 * truncated or extended.
	 */
	const char *path;
	bool     attach;	/* attach to this controller after creating */
};

/*
 * Create a controller. With params->dir set, state (namespaces, formats,
 * serial, SMART counters) is loaded from there when present and created
 * otherwise, and survives restarts and crashes. The directory is refused
 * (-EPERM) unless it and its files belong to the caller's euid or root and
 * are not writable by group or others; -EBUSY while another process holds it
 * for writing (or, for a writer, for reading); -EUCLEAN when it holds
 * namespace images but no ctrl.json (nothing is deleted: restore the state
 * file or remove the images). params->errbuf receives the reason.
 */
int  ucmd_ctrl_create(const struct ucmd_ctrl_params *p, struct ucmd_ctrl **out);
void ucmd_ctrl_destroy(struct ucmd_ctrl *ctrl);

/* BAR0 register access, including doorbells (offset >= UCMD_NVME_REG_DBS). */
uint32_t ucmd_ctrl_read32(struct ucmd_ctrl *ctrl, uint32_t off);
uint64_t ucmd_ctrl_read64(struct ucmd_ctrl *ctrl, uint32_t off);
void     ucmd_ctrl_write32(struct ucmd_ctrl *ctrl, uint32_t off, uint32_t val);
void     ucmd_ctrl_write64(struct ucmd_ctrl *ctrl, uint32_t off, uint64_t val);

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
 * Fault injection for tests: every command with this opcode on an I/O queue
 * (admin when admin is true) is held for delay_ms before it is processed, in
 * UCMD_CTRL_THREAD mode; 0 removes the delay.
 */
void ucmd_ctrl_inject_delay(struct ucmd_ctrl *ctrl, bool admin, uint8_t opcode,
			    unsigned delay_ms);

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

/*
 * What the dispatch table says of an opcode: its Commands Supported and
 * Effects bits (CSUPP set), or 0 when the controller does not execute it.
 */
uint32_t ucmd_ctrl_opcode_effects(bool admin, uint8_t opcode);

#endif /* UCMD_NVME_CTRL_H */
