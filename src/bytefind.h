/* Finding a short byte string in a long buffer at near memory speed.
 *
 * glibc's memmem is a two-way search that reads about a byte a cycle,
 * which made it most of a store skim's time.  This tests two bytes of the
 * needle (its first and last) sixteen positions at a time and compares
 * only where both are in place: the classic SIMD substring search
 * (Wojciech Muła, "SIMD-friendly algorithms for substring searching").
 * Header-only, since its callers are inner loops. */
#ifndef PS_BYTEFIND_H
#define PS_BYTEFIND_H

#include <stddef.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* The first occurrence of needle[0..len) in [p, end), or NULL. */
static inline const char *bytefind(const char *p, const char *end, const char *needle, size_t len)
{
	if (len == 0)
		return p;
	if ((size_t)(end - p) < len)
		return NULL;
#ifdef __SSE2__
	/* Two bytes that differ filter better: "\"user\"" is tested at its u
	 * and r, since quotes come in pairs everywhere in JSON. */
	size_t i0 = 0, i1 = len - 1;
	if (len >= 4 && needle[0] == needle[len - 1])
		i0 = 1, i1 = len - 2;
	const __m128i c0 = _mm_set1_epi8(needle[i0]), c1 = _mm_set1_epi8(needle[i1]);
	/* Every load and every candidate compared lies within [p, end). */
	while ((size_t)(end - p) >= len + 16) {
		__m128i a = _mm_loadu_si128((const __m128i *)(const void *)(p + i0));
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + i1));
		unsigned mask = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, c0), _mm_cmpeq_epi8(b, c1)));
		while (mask) {
			unsigned i = (unsigned)__builtin_ctz(mask);
			if (memcmp(p + i, needle, len) == 0)
				return p + i;
			mask &= mask - 1;
		}
		p += 16;
	}
#endif
	return memmem(p, (size_t)(end - p), needle, len);
}

/* Whether p[0..len) is needle[0..len) (ASCII, lowercase) with ASCII
 * letters in either case; bytes of 0x80 and above only equal themselves. */
static inline int bytefind_same_caseless(const char *p, const char *needle, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)p[i];
		if ((b >= 'A' && b <= 'Z' ? b | 0x20 : b) != (unsigned char)needle[i])
			return 0;
	}
	return 1;
}

#endif
