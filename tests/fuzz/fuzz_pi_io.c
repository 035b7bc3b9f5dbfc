/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the NVM commands that carry protection information
 * (Read, Write, Compare, Verify, Write Zeroes, Copy) with any PRINFO, tags
 * (ILBRT with CDW3's upper bits, LBAT, LBATM, a Copy range's EILBRT, ELBAT,
 * ELBATM), data and metadata, through the host driver (NVME_IOCTL_IO64_CMD)
 * into the emulated controller, on a fresh 64-block RAM namespace per input
 * formatted with the input's PI type, tuple position and LBA format (16b
 * and 64b guards, the latter also with an 8- and a 16-bit storage tag, STC
 * or Copy's STCR/STCW from the input; separate metadata or extended LBAs).
 *
 * Invariants: the status is success or one the spec gives these commands
 * (the four End-to-end check errors, Invalid Protection Information,
 * Invalid Field, LBA Out of Range, Compare Failure, Command Size Limit
 * Exceeded, Data Transfer Error, and for a Copy whose descriptor format is
 * not the namespace's guard's, Invalid Namespace or Format) or a host
 * errno; and a command that fails
 * writes nothing: the namespace's store is byte for byte what it was.
 *
 * Input: [0] LBA format selector [1] PI type, PIL, MSET [2..] records of
 * 24 bytes: opcode selector, PRINFO (and PRINFOR for Copy), SLBA, NLB,
 * CDW3's low 16 bits, CDW14 (4), LBAT (2), LBATM (2), Copy's SDLBA, a
 * corruption offset and byte, PRINFOW (bits 3:0), STCR (5), STC or STCW
 * (6), no metadata buffer (7), data seed. A Copy's entries are in the
 * descriptor format of the namespace's guard (0h 16b, 1h 64b), the other
 * one when the opcode selector's bit 6 is set.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "nvme/ctrl/ctrl_int.h"
#include "ucmd/nvme.h"
#include "ucmd/ucmd.h"

#define NSZE	64u
#define REC	24u
#define BUF	(20u * 4096u)	/* 8 blocks of 4096 + 64, rounded up */

static uint8_t *dbuf, *mbuf, *before, *after;

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "invariant broken: %s\n", what);
		abort();
	}
}

static size_t store_bytes(struct ucmd_ctrl *c)
{
	struct ctrl_ns *ns = c->ns[1];

	return (size_t)ns->nsze * (ctrl_ns_ds(ns) + ctrl_ns_ms(ns));
}

static void snap(struct ucmd_ctrl *c, uint8_t *out)
{
	struct ctrl_ns *ns = c->ns[1];

	if (store_read(ns->st, out, store_bytes(c), 0))
		abort();
}

static bool allowed(int st)
{
	if (st <= 0)
		return true;	/* success, or the host's errno */
	switch (st & 0x7ff) {
	case 0x282: case 0x283: case 0x284:	/* guard, application tag, reference tag */
	case 0x288:				/* storage tag */
	case 0x181:				/* Invalid Protection Information */
	case 0x002:				/* Invalid Field in Command */
	case 0x080:				/* LBA Out of Range */
	case 0x285:				/* Compare Failure */
	case 0x183:				/* Command Size Limit Exceeded */
	case 0x004:				/* Data Transfer Error */
	case 0x00b:				/* Invalid Namespace or Format (Copy) */
		return true;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t lbafs[] = { 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13 };
	struct ucmd_ctrl_params cp = { .mdts = 6 };
	struct ucmd_ns_params np = { .nsze = NSZE, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct ucmd_nvme_host *host;
	struct ucmd_engine *e;
	struct ucmd_ctrl *c;
	int ng, ct;

	if (size < 2)
		return 0;
	if (!dbuf) {
		dbuf = aligned_alloc(4096, BUF);
		mbuf = aligned_alloc(4096, BUF);
		before = malloc(NSZE * (4096 + 64));
		after = malloc(NSZE * (4096 + 64));
		if (!dbuf || !mbuf || !before || !after)
			abort();
	}
	np.lbaf = lbafs[data[0] % sizeof(lbafs)];
	np.extended = data[1] & 0x20;
	e = ucmd_engine_new();
	if (!e || ucmd_ctrl_create(&cp, &c) || ucmd_ctrl_ns_create(c, &np) != 1 ||
	    ucmd_nvme_attach(e, c, NULL, &host))
		abort();
	ng = ucmd_open(e, "ng0n1", O_RDWR);
	ct = ucmd_open(e, "nvme0", O_RDWR);
	if (ng < 0 || ct < 0)
		abort();
	/* the same LBA format with protection: the host's geometry stays right */
	struct nvme_passthru_cmd64 f = { .opcode = nvme_admin_format_nvm, .nsid = 1,
					 .cdw10 = (np.lbaf & 0xf) | (uint32_t)(np.lbaf >> 4) << 12 |
						  (np.extended ? 1u << 4 : 0) |
						  (uint32_t)(1 + data[1] % 3) << 5 |
						  (data[1] & 0x10 ? 1u << 8 : 0) };
	check(ucmd_ioctl(e, ct, NVME_IOCTL_ADMIN64_CMD, &f) == 0, "format with PI");

	uint32_t ds = ctrl_ns_ds(c->ns[1]), ms = ctrl_ns_ms(c->ns[1]);

	for (size_t off = 2; off + REC <= size; off += REC) {
		static const uint8_t ops[] = { nvme_cmd_write, nvme_cmd_read, nvme_cmd_compare,
					       nvme_cmd_verify, nvme_cmd_write_zeroes,
					       nvme_cmd_copy, nvme_cmd_write };
		const uint8_t *r = data + off;
		uint8_t op = ops[r[0] % sizeof(ops)];
		uint32_t slba = r[2] % (NSZE + 2), nlb = (r[3] & 7) + 1, cdw14, lbatm;
		uint16_t lbat;
		struct nvme_passthru_cmd64 cmd = { .opcode = op, .nsid = 1 };
		uint32_t blk = ds + (np.extended ? ms : 0);
		int st;

		memcpy(&cdw14, r + 6, 4);
		memcpy(&lbat, r + 10, 2);
		memcpy(&lbatm, r + 12, 2);
		/* mostly the tags a host means: ILBRT the SLBA */
		if (r[0] & 0x80)
			cdw14 = slba;
		for (size_t i = 0; i < (size_t)nlb * blk; i++)
			dbuf[i] = (uint8_t)(i * 31 + r[20]);
		memset(mbuf, r[21], (size_t)nlb * ms);
		if (r[16] < (size_t)nlb * blk / 256)
			dbuf[r[16] * 256 + r[17]] ^= r[18] | 1;
		cmd.cdw3 = r[4] | (uint32_t)r[5] << 8;
		cmd.cdw10 = slba;
		cmd.cdw12 = (nlb - 1) | (uint32_t)(r[1] & 0xf) << 26 | (r[19] & 0x40 ? 1u << 24 : 0);
		cmd.cdw14 = cdw14;
		cmd.cdw15 = lbat | lbatm << 16;
		if (op == nvme_cmd_copy) {
			uint8_t *range = dbuf;
			/* the guard's format, or the other one */
			unsigned fmt = (ctrl_lbaf_pif(np.lbaf) == 2) ^ !!(r[0] & 0x40);

			memset(range, 0, 40);
			range[8] = (uint8_t)(r[14] % NSZE);
			range[16] = (uint8_t)(nlb - 1);
			if (fmt == 1) {
				/* ELBT 35:26 most significant first: the 48-bit EILBRT below */
				range[30] = r[5];
				range[31] = r[4];
				for (int i = 0; i < 4; i++)
					range[32 + i] = r[9 - i];
				if (r[0] & 0x80) {
					memset(range + 30, 0, 6);
					range[35] = range[8];
				}
				memcpy(range + 36, r + 10, 4);	/* ELBAT, ELBATM */
			} else {
				memcpy(range + 24, r + 6, 4);	/* EILBRT */
				memcpy(range + 28, r + 10, 4);	/* ELBAT, ELBATM */
				if (r[0] & 0x80)
					memcpy(range + 24, range + 8, 4);
			}
			cmd.cdw10 = r[15] % NSZE;
			cmd.cdw12 = (uint32_t)(r[1] >> 4) << 12 | (uint32_t)(r[19] & 0xf) << 26 |
				    fmt << 8 | (r[19] & 0x40 ? 1u << 24 : 0) |
				    (r[19] & 0x20 ? 1u << 25 : 0);
			cmd.addr = (uintptr_t)dbuf;
			cmd.data_len = fmt ? 40 : 32;
		} else if (op != nvme_cmd_verify && op != nvme_cmd_write_zeroes) {
			cmd.addr = (uintptr_t)dbuf;
			cmd.data_len = nlb * blk;
			/* separate metadata unless PRACT keeps it in the controller */
			if (!np.extended && !(r[19] & 0x80)) {
				cmd.metadata = (uintptr_t)mbuf;
				cmd.metadata_len = nlb * ms;
			}
		}
		snap(c, before);
		st = ucmd_ioctl(e, ng, NVME_IOCTL_IO64_CMD, &cmd);
		check(allowed(st), "a status these commands may give");
		if (st) {
			snap(c, after);
			check(!memcmp(before, after, store_bytes(c)), "a failed command wrote nothing");
		}
	}
	ucmd_close(e, ng);
	ucmd_close(e, ct);
	ucmd_nvme_detach(host);
	ucmd_engine_free(e);
	ucmd_ctrl_destroy(c);
	return 0;
}
