/* SPDX-License-Identifier: MIT */
/*
 * NVMe's CRC-64 with AVX-512 VPCLMULQDQ: the 128-bit folding of
 * crc64_nvme_clmul.c, four 128-bit lanes per instruction. Four 512-bit
 * accumulators fold 256 bytes ahead; at the end they fold into one, its
 * four lanes into a 16-byte block, and that block (its CRC register) and
 * the last bytes (under 256) go to crc64_nvme_clmul().
 */
#include "lib/crc_pi.h"
#include "lib/crc64_nvme_int.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define VPCLMUL_TARGET __attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1")))

bool crc64_nvme_vpclmul_cpu(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
	       __builtin_cpu_supports("vpclmulqdq") && crc64_nvme_clmul_cpu();
}

static inline VPCLMUL_TARGET __m512i fold512(__m512i x, __m512i k, __m512i data)
{
	__m512i lo = _mm512_clmulepi64_epi128(x, k, 0x00);
	__m512i hi = _mm512_clmulepi64_epi128(x, k, 0x11);

	return _mm512_ternarylogic_epi64(lo, hi, data, 0x96);	/* lo ^ hi ^ data */
}

static inline VPCLMUL_TARGET __m512i consts(const uint64_t k[2])
{
	return _mm512_broadcast_i32x4(_mm_set_epi64x((long long)k[1], (long long)k[0]));
}

static VPCLMUL_TARGET uint64_t fold_vpclmul(uint64_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t reg = ~crc;
	__m512i a0, a1, a2, a3, k;
	uint8_t last[64];

	if (len < 512)
		return crc64_nvme_clmul(crc, p, len);

	/* the register's initial value is added to the first 8 bytes */
	a0 = _mm512_xor_si512(_mm512_loadu_si512(p), _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0,
								       (long long)reg));
	a1 = _mm512_loadu_si512(p + 64);
	a2 = _mm512_loadu_si512(p + 128);
	a3 = _mm512_loadu_si512(p + 192);
	p += 256;
	len -= 256;
	k = consts(crc64_nvme_k.fold16);
	while (len >= 256) {
		a0 = fold512(a0, k, _mm512_loadu_si512(p));
		a1 = fold512(a1, k, _mm512_loadu_si512(p + 64));
		a2 = fold512(a2, k, _mm512_loadu_si512(p + 128));
		a3 = fold512(a3, k, _mm512_loadu_si512(p + 192));
		p += 256;
		len -= 256;
	}
	/* each lane 64 bytes ahead, then the four lanes 16 bytes apart */
	k = consts(crc64_nvme_k.fold4);
	a1 = fold512(a0, k, a1);
	a2 = fold512(a1, k, a2);
	a3 = fold512(a2, k, a3);
	_mm512_storeu_si512(last, a3);
	{
		__m128i k1 = _mm_set_epi64x((long long)crc64_nvme_k.fold1[1],
					    (long long)crc64_nvme_k.fold1[0]);
		__m128i x = _mm_loadu_si128((const __m128i *)last);

		for (int i = 1; i < 4; i++) {
			__m128i y = _mm_loadu_si128((const __m128i *)(last + 16 * i));

			x = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k1, 0x00),
							_mm_clmulepi64_si128(x, k1, 0x11)), y);
		}
		_mm_storeu_si128((__m128i *)last, x);
	}
	/* everything before p is now congruent to these 16 bytes */
	reg = crc64_nvme_raw(0, last, 16);
	return crc64_nvme_clmul(~reg, p, len);
}

/* Not a target function itself: nothing of AVX-512 runs before the check */
uint64_t crc64_nvme_vpclmul(uint64_t crc, const void *buf, size_t len)
{
	if (!crc64_nvme_have_vpclmul())
		return crc64_nvme_clmul(crc, buf, len);
	return fold_vpclmul(crc, buf, len);
}

#else

bool crc64_nvme_vpclmul_cpu(void)
{
	return false;
}

uint64_t crc64_nvme_vpclmul(uint64_t crc, const void *buf, size_t len)
{
	return crc64_nvme_clmul(crc, buf, len);
}

#endif
