/* SPDX-License-Identifier: MIT */
/*
 * The emulated NVMe controller, the host driver's side (the user's side,
 * creating and configuring it, is include/ucmd/ctrl.h): what a PCIe NVMe
 * function looks like to a host driver. The host talks to it only through the register map (BAR0:
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
#include <sys/uio.h>

#include "ucmd/ctrl.h"
#include "ucmd/nvme_wire.h"

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
extern const struct ucmd_dma dma_identity;

/* ucmd_ctrl_create() with a DMA interface other than the identity (NULL: identity). */
int ctrl_create_dma(const struct ucmd_ctrl_params *p, const struct ucmd_dma *dma,
		    struct ucmd_ctrl **out);

/*
 * The interrupt target: irq(arg, vector) is called when a completion is
 * posted to a CQ with IEN set. A controller has none until a host driver
 * sets one; setting one while another is set is -EBUSY (one host per
 * controller), and irq NULL disconnects. When ctrl_set_irq() returns, no
 * call of the previous target is in flight and none will follow, so a
 * detached host may be freed. Not from within the irq handler itself.
 */
int ctrl_set_irq(struct ucmd_ctrl *ctrl, void (*irq)(void *arg, uint16_t vector), void *arg);

/*
 * The host's IOMMU, per command: the only host memory one command may have
 * the controller touch. A PRP entry carries no length, and the controller
 * reads a command's transfer length from the command (NLB, NUMD), so a
 * command another process wrote can ask for more than the buffer the host
 * described: a two-page buffer read as a four-page transfer makes PRP2 a
 * list pointer, and the buffer's bytes addresses. With the controller in
 * the host's address space (ucmdd), that is a write wherever they point.
 * A real device behind an IOMMU faults such an access; this is that check.
 *
 * window(arg, sqid, cid, out) is called for a command before the controller
 * maps its data, metadata or PRP/SGL lists; it returns false when the
 * command may reach any host memory dma->map takes (the host's own
 * commands), or true with *out the ranges it may reach: every mapping
 * outside their pages (an IOMMU's granule; the host gives whole pages of
 * their own) fails the command with Data Transfer Error, and a command so
 * limited cannot give the controller queue memory (Create I/O SQ/CQ: the
 * memory would stay mapped past the command). Called with the controller's
 * lock held, for commands the host has not seen complete: the ranges stay
 * valid until the host sees the command's completion. NULL removes it;
 * ctrl_set_dma_window waits for a pass in progress, so that after it returns
 * no call of the previous one is in flight.
 */
struct ucmd_dma_window {
	const struct iovec *seg;	/* the data's segments */
	unsigned nr_seg;
	uint64_t list, list_len;	/* PRP list pages or SGL descriptors the host built */
	uint64_t meta, meta_len;	/* the metadata buffer */
};
typedef bool (*ctrl_dma_window_fn)(void *arg, uint16_t sqid, uint16_t cid,
				   struct ucmd_dma_window *out);
void ctrl_set_dma_window(struct ucmd_ctrl *ctrl, ctrl_dma_window_fn window, void *arg);

/* BAR0 register access, including doorbells (offset >= UCMD_NVME_REG_DBS). */
uint32_t ctrl_read32(struct ucmd_ctrl *ctrl, uint32_t off);
uint64_t ctrl_read64(struct ucmd_ctrl *ctrl, uint32_t off);
void     ctrl_write32(struct ucmd_ctrl *ctrl, uint32_t off, uint32_t val);
void     ctrl_write64(struct ucmd_ctrl *ctrl, uint32_t off, uint64_t val);

/*
 * Fault injection for tests: every command with this opcode on an I/O queue
 * (admin when admin is true) is held for delay_ms before it is processed, in
 * UCMD_CTRL_THREAD mode; 0 removes the delay.
 */
void ctrl_inject_delay(struct ucmd_ctrl *ctrl, bool admin, uint8_t opcode,
			    unsigned delay_ms);

/*
 * What the dispatch table says of an opcode: its Commands Supported and
 * Effects bits (CSUPP set), or 0 when the controller does not execute it.
 */
uint32_t ctrl_opcode_effects(bool admin, uint8_t opcode);

/*
 * Test knobs: how long the two device self-tests run, and whether the next
 * sanitize operation fails (a media failure the tests cannot cause); also
 * makes a sanitize write 4 MiB per pass instead of UCMD_SANITIZE_CHUNK,
 * and stretches its wall-clock duration to an hour, so that only passes
 * move it (tests assert states, not durations).
 */
void ctrl_test_knobs(struct ucmd_ctrl *ctrl, uint64_t dst_short_ms, uint64_t dst_ext_ms,
		     bool sanitize_fail);
/*
 * Test knob: a running sanitize takes plan_ms of wall clock in all and
 * started ago_ms before now.
 */
void ctrl_test_sanitize_clock(struct ucmd_ctrl *ctrl, uint64_t plan_ms, uint64_t ago_ms);

#endif /* UCMD_NVME_CTRL_H */
