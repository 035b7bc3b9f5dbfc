/* SPDX-License-Identifier: MIT */
/*
 * The length of one x86-64 instruction (callsite.h), from its bytes alone.
 *
 * Only what is needed to walk compiler output from a function's first
 * instruction to a system call: legacy and REX prefixes, the one-, two-
 * and three-byte opcode maps, VEX and EVEX, ModRM/SIB/displacement and
 * immediates. Anything it does not know (an opcode invalid in 64-bit mode,
 * XOP, 3DNow!, a prefix run longer than the architecture's 15 bytes) is
 * -1: the caller then leaves the call site to the trap.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "preload/callsite.h"

static bool has_modrm1(uint8_t op)
{
	if (op < 0x40)
		return (op & 7) < 4;
	switch (op) {
	case 0x62: case 0x63: case 0x69: case 0x6b:
	case 0xc0: case 0xc1: case 0xc6: case 0xc7:
	case 0xd0: case 0xd1: case 0xd2: case 0xd3:
	case 0xf6: case 0xf7: case 0xfe: case 0xff:
		return true;
	default:
		break;
	}
	if (op >= 0x80 && op <= 0x8f)
		return true;
	if (op >= 0xd8 && op <= 0xdf)
		return true;
	return false;
}

/* immediate bytes of a one-byte-map opcode; osz: 2 with 0x66, else 4; w: REX.W */
static int imm1(uint8_t op, int osz, bool w, uint8_t modrm)
{
	if (op < 0x40)
		return (op & 7) == 4 ? 1 : (op & 7) == 5 ? osz : 0;
	if (op >= 0x70 && op <= 0x7f)
		return 1;
	if (op >= 0xb0 && op <= 0xb7)
		return 1;
	if (op >= 0xb8 && op <= 0xbf)
		return w ? 8 : osz;
	if (op >= 0xe0 && op <= 0xe7)
		return 1;
	switch (op) {
	case 0x68: case 0x69: case 0x81: case 0xa9: case 0xc7: case 0xe8: case 0xe9:
		return osz;
	case 0x6a: case 0x6b: case 0x80: case 0x83: case 0xa8: case 0xc0: case 0xc1:
	case 0xc6: case 0xcd: case 0xeb:
		return 1;
	case 0xa0: case 0xa1: case 0xa2: case 0xa3:
		return 8;	/* moffs: a 64-bit address */
	case 0xc2: case 0xca:
		return 2;
	case 0xc8:
		return 3;
	case 0xf6:
		return ((modrm >> 3) & 7) < 2 ? 1 : 0;	/* test r/m8, imm8 */
	case 0xf7:
		return ((modrm >> 3) & 7) < 2 ? osz : 0;
	default:
		return 0;
	}
}

static bool invalid1(uint8_t op)
{
	switch (op) {
	case 0x06: case 0x07: case 0x0e: case 0x16: case 0x17: case 0x1e: case 0x1f:
	case 0x27: case 0x2f: case 0x37: case 0x3f: case 0x60: case 0x61: case 0x82:
	case 0x9a: case 0xce: case 0xd4: case 0xd5: case 0xd6: case 0xea:
		return true;
	default:
		return false;
	}
}

/* two-byte map (0f xx): no ModRM for these */
static bool no_modrm2(uint8_t op)
{
	if (op >= 0x80 && op <= 0x8f)
		return true;	/* jcc rel32 */
	if (op >= 0xc8 && op <= 0xcf)
		return true;	/* bswap */
	if (op >= 0x30 && op <= 0x37)
		return true;	/* wrmsr rdtsc rdmsr rdpmc sysenter sysexit getsec */
	switch (op) {
	case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b: case 0x0e:
	case 0x77: case 0xa0: case 0xa1: case 0xa2: case 0xa8: case 0xa9: case 0xaa:
		return true;
	default:
		return false;
	}
}

static int imm2(uint8_t op, int osz)
{
	if (op >= 0x80 && op <= 0x8f)
		return 4;
	if (op >= 0x70 && op <= 0x73)
		return 1;
	switch (op) {
	case 0xa4: case 0xac: case 0xba: case 0xc2: case 0xc4: case 0xc5: case 0xc6:
		return 1;
	default:
		(void)osz;
		return 0;
	}
}

/* ModRM, SIB and displacement bytes from p (at the ModRM byte); -1 past end */
static int modrm_len(const uint8_t *p, size_t avail, bool *riprel)
{
	uint8_t m, mod, rm;
	int n = 1;

	if (avail < 1)
		return -1;
	m = p[0];
	mod = m >> 6;
	rm = m & 7;
	*riprel = false;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (avail < 2)
			return -1;
		n++;
		if (mod == 0 && (p[1] & 7) == 5)
			n += 4;
	} else if (mod == 0 && rm == 5) {
		*riprel = true;
		n += 4;
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	return n;
}

int pl_insn_decode(const uint8_t *p, size_t avail, struct pl_insn *in)
{
	size_t i = 0, n;
	int osz = 4, imm = 0, ml;
	bool w = false, modrm = false, riprel = false;
	uint8_t op;

	in->rex = 0;
	in->prefixes = 0;
	/* legacy prefixes, then at most one REX right before the opcode */
	for (;; i++) {
		if (i >= avail || i >= 14)
			return -1;
		switch (p[i]) {
		case 0x66:
			osz = 2;
			continue;
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
		case 0x67: case 0xf0: case 0xf2: case 0xf3:
			continue;
		default:
			break;
		}
		break;
	}
	in->prefixes = (uint8_t)i;
	if ((p[i] & 0xf0) == 0x40) {
		in->rex = p[i];
		w = p[i] & 8;
		i++;
		if (i >= avail)
			return -1;
		/* a REX not right before the opcode is ignored by the CPU: no compiler emits it */
		switch (p[i]) {
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
		case 0x66: case 0x67: case 0xf0: case 0xf2: case 0xf3:
			return -1;
		default:
			if ((p[i] & 0xf0) == 0x40)
				return -1;
		}
		if (w)
			osz = 4;	/* REX.W wins over 0x66 */
	}
	op = p[i++];
	in->op_at = (uint8_t)(i - 1);
	in->vex = false;
	if (op == 0xc4 || op == 0xc5 || op == 0x62) {
		/* VEX (c5: one payload byte, c4: two) and EVEX (62: three) */
		unsigned map;
		size_t pay = op == 0xc5 ? 1 : op == 0xc4 ? 2 : 3;

		if (in->rex || i + pay + 1 > avail)
			return -1;
		map = op == 0xc5 ? 1 : (p[i] & (op == 0x62 ? 7 : 0x1f));
		i += pay;
		op = p[i++];
		if (map < 1 || map > 3)
			return -1;
		if (op == 0x77 && map == 1 && pay == 1) {
			n = i;	/* vzeroupper/vzeroall: no ModRM */
			in->vex = true;
			in->twobyte = false;
			in->opcode = op;
			goto done;
		}
		ml = modrm_len(p + i, avail - i, &riprel);
		if (ml < 0)
			return -1;
		i += (size_t)ml;
		imm = map == 3 ? 1 : (map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 ||
						   op == 0xc4 || op == 0xc5 || op == 0xc6)) ? 1 : 0;
		n = i + (size_t)imm;
		in->modrm = true;
		in->vex = true;
		in->twobyte = false;
		in->opcode = op;
		goto done_ml;
	}
	if (op == 0x0f) {
		if (i >= avail)
			return -1;
		op = p[i++];
		if (op == 0x38 || op == 0x3a) {
			imm = op == 0x3a ? 1 : 0;
			if (i >= avail)
				return -1;
			i++;	/* the third opcode byte */
			modrm = true;
		} else if (op == 0x0f || op == 0x04 || op == 0x0a || op == 0x0c ||
			   op == 0x24 || op == 0x25 || op == 0x26 || op == 0x27 || op == 0x36 ||
			   op == 0x39 || op == 0x3b || (op >= 0x3c && op <= 0x3f) || op == 0x7a ||
			   op == 0x7b || op == 0xff) {
			return -1;	/* 3DNow! and holes: not compiler output we know */
		} else {
			if (osz == 2 && op >= 0x80 && op <= 0x8f)
				return -1;	/* jcc rel with 0x66: as call's */
			modrm = !no_modrm2(op);
			imm = imm2(op, osz);
		}
		in->twobyte = true;
	} else {
		if (invalid1(op))
			return -1;
		/* call/jmp rel with 0x66: rel32 on Intel, rel16 on AMD */
		if (osz == 2 && (op == 0xe8 || op == 0xe9))
			return -1;
		/* 8f with a ModRM reg field other than 0 is XOP, not pop */
		if (op == 0x8f && (i >= avail || ((p[i] >> 3) & 7)))
			return -1;
		modrm = has_modrm1(op);
		in->twobyte = false;
	}
	in->opcode = op;
	in->modrm = modrm;
	if (modrm) {
		ml = modrm_len(p + i, avail - i, &riprel);
		if (ml < 0)
			return -1;
		in->modrm_byte = p[i];
		if (!in->twobyte)
			imm = imm1(op, osz, w, p[i]);
		i += (size_t)ml;
	} else if (!in->twobyte) {
		imm = imm1(op, osz, w, 0);
	}
	n = i + (size_t)imm;
	goto done_ml;
done:
	in->modrm = false;
done_ml:
	if (n > 15 || n > avail)
		return -1;
	in->riprel = riprel;
	in->len = (uint8_t)n;
	return (int)n;
}
