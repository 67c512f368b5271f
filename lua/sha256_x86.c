/* SHA-256 compression with the x86 SHA extensions (Intel Goldmont and Ice Lake on, AMD
 * Zen): the same digest as the portable code of lua/lsys.c, several times faster.  A
 * report recomputes every committed summary from its records, and checks each record's
 * SHA-256 three times on the way: a few hundred MB per report.  lua/lsys.c calls it only
 * when the CPU has SHA, SSSE3 and SSE4.1 (repro_sha256_x86_ok); elsewhere, and on other
 * CPUs, the portable code runs. */
#include <stdint.h>

#include "lrepro.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

int repro_sha256_x86_ok(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 9)) || !(c & (1u << 19)))
        return 0; /* SSSE3, SSE4.1 */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    return (b & (1u << 29)) != 0; /* SHA */
}

/* h: the state a..h; p: n blocks of 64 bytes; k: the 64 round constants. */
__attribute__((target("sha,ssse3,sse4.1"))) void
repro_sha256_x86_blocks(uint32_t h[8], const unsigned char *p, size_t n, const uint32_t k[64])
{
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i t = _mm_loadu_si128((const __m128i *)&h[0]);
    __m128i s1 = _mm_loadu_si128((const __m128i *)&h[4]);
    t = _mm_shuffle_epi32(t, 0xB1);              /* CDAB */
    s1 = _mm_shuffle_epi32(s1, 0x1B);            /* EFGH */
    __m128i s0 = _mm_alignr_epi8(t, s1, 8);      /* ABEF */
    s1 = _mm_blend_epi16(s1, t, 0xF0);           /* CDGH */
    for (; n > 0; n--, p += 64) {
        const __m128i abef = s0, cdgh = s1;
        __m128i w[16];
        for (int g = 0; g < 16; g++) {
            if (g < 4)
                w[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), swap);
            else
                w[g] = _mm_sha256msg2_epu32(
                    _mm_add_epi32(_mm_sha256msg1_epu32(w[g - 4], w[g - 3]),
                                  _mm_alignr_epi8(w[g - 1], w[g - 2], 4)),
                    w[g - 1]);
            __m128i m = _mm_add_epi32(w[g], _mm_loadu_si128((const __m128i *)&k[4 * g]));
            s1 = _mm_sha256rnds2_epu32(s1, s0, m);
            s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(m, 0x0E));
        }
        s0 = _mm_add_epi32(s0, abef);
        s1 = _mm_add_epi32(s1, cdgh);
    }
    t = _mm_shuffle_epi32(s0, 0x1B);             /* FEBA */
    s1 = _mm_shuffle_epi32(s1, 0xB1);            /* DCHG */
    s0 = _mm_blend_epi16(t, s1, 0xF0);           /* DCBA */
    s1 = _mm_alignr_epi8(s1, t, 8);              /* HGFE */
    _mm_storeu_si128((__m128i *)&h[0], s0);
    _mm_storeu_si128((__m128i *)&h[4], s1);
}
#endif
