/* SPDX-License-Identifier: MIT */
/*
 * NVMe's CRC-64 by carry-less multiplication (PCLMULQDQ): eight 16-byte
 * lanes are folded 128 bytes ahead (eight products in flight hide the
 * multiplier's latency) until the buffer ends, the lanes are
 * folded into one, and the last 16 bytes and any tail go through the table
 * (crc64_nvme_raw), which also does the final reduction. The data is read
 * as little-endian 128-bit words, the reflected order of the CRC, so no
 * byte shuffle is needed.
 */
#include "lib/crc_pi.h"
#include "lib/crc64_nvme_int.h"

#if defined(__x86_64__)
#include <wmmintrin.h>
#include <smmintrin.h>

#define CLMUL_TARGET __attribute__((target("pclmul,sse4.1")))

bool crc64_nvme_clmul_cpu(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

/* x carried d bits ahead (k = the fold constants for d), plus the data there */
static inline CLMUL_TARGET __m128i fold(__m128i x, __m128i k, __m128i data)
{
	__m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(x, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(lo, hi), data);
}

static inline CLMUL_TARGET __m128i load(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)p);
}

static CLMUL_TARGET uint64_t fold_clmul(uint64_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t reg = ~crc;
	uint8_t last[16];
	__m128i x;

	if (len < 32)
		return ~crc64_nvme_raw(reg, p, len);

	/* the register's initial value is added to the first 8 bytes */
	x = _mm_xor_si128(load(p), _mm_cvtsi64_si128((long long)reg));
	if (len >= 256) {
		__m128i k8 = _mm_set_epi64x((long long)crc64_nvme_k.fold8[1],
					    (long long)crc64_nvme_k.fold8[0]);
		__m128i k1 = _mm_set_epi64x((long long)crc64_nvme_k.fold1[1],
					    (long long)crc64_nvme_k.fold1[0]);
		__m128i l[8];

		l[0] = x;
#pragma GCC unroll 8
		for (int i = 1; i < 8; i++)
			l[i] = load(p + 16 * i);
		p += 128;
		len -= 128;
		while (len >= 128) {
#pragma GCC unroll 8
			for (int i = 0; i < 8; i++)
				l[i] = fold(l[i], k8, load(p + 16 * i));
			p += 128;
			len -= 128;
		}
		x = l[0];
#pragma GCC unroll 8
		for (int i = 1; i < 8; i++)
			x = fold(x, k1, l[i]);
	} else {
		p += 16;
		len -= 16;
	}
	{
		__m128i k1 = _mm_set_epi64x((long long)crc64_nvme_k.fold1[1],
					    (long long)crc64_nvme_k.fold1[0]);

		while (len >= 16) {
			x = fold(x, k1, load(p));
			p += 16;
			len -= 16;
		}
	}
	/* x is congruent to everything before p: reduce it, then the tail */
	_mm_storeu_si128((__m128i *)last, x);
	reg = crc64_nvme_raw(0, last, sizeof(last));
	return ~crc64_nvme_raw(reg, p, len);
}

/* Not a target function itself: nothing of PCLMULQDQ runs before the check */
uint64_t crc64_nvme_clmul(uint64_t crc, const void *buf, size_t len)
{
	if (!crc64_nvme_have_clmul())
		return crc64_nvme_generic(crc, buf, len);
	return fold_clmul(crc, buf, len);
}

#else

bool crc64_nvme_clmul_cpu(void)
{
	return false;
}

uint64_t crc64_nvme_clmul(uint64_t crc, const void *buf, size_t len)
{
	return crc64_nvme_generic(crc, buf, len);
}

#endif
