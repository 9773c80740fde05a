/* The inner loop of reading a JSON string: skipping the bytes that need no
 * attention.  Shared by the scanner (scan.c) and the fast parser
 * (jparse.c): tool outputs make most of a session's bytes plain string
 * content, so skipping sixteen or eight bytes at a time is what makes both
 * run near memory speed. */
#ifndef PS_JSKIP_H
#define PS_JSKIP_H

#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Whether any byte of the word is '"', '\\' or below 0x20. */
static inline uint64_t jskip_word_special(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	uint64_t quote = w ^ (ones * '"'), bslash = w ^ (ones * '\\');
	uint64_t has_quote = (quote - ones) & ~quote & highs;
	uint64_t has_bslash = (bslash - ones) & ~bslash & highs;
	uint64_t has_ctrl = (w - ones * 0x20) & ~w & highs;
	/* The lowest flagged byte is exact (borrows only run upward). */
	return has_quote | has_bslash | has_ctrl;
}

#ifdef __SSE2__
/* Bit i set when p[i] (of sixteen readable bytes) is '"', '\\' or below
 * 0x20. */
static inline unsigned jskip_mask16(const char *p)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i hit = _mm_or_si128(
		_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
		_mm_cmpeq_epi8(_mm_and_si128(v, _mm_set1_epi8((char)0xE0)), _mm_setzero_si128()));
	return (unsigned)_mm_movemask_epi8(hit);
}
#endif

/* The first byte of [p, end) that is '"', '\\' or below 0x20, or end. */
static inline const char *jskip_plain(const char *p, const char *end)
{
#ifdef __SSE2__
	/* Sixteen at a time where the CPU has it (every x86-64). */
	while (end - p >= 16) {
		unsigned mask = jskip_mask16(p);
		if (mask)
			return p + __builtin_ctz(mask);
		p += 16;
	}
#endif
	while (end - p >= 8) {
		uint64_t w, special;
		memcpy(&w, p, 8);
		if ((special = jskip_word_special(w))) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			return p + __builtin_ctzll(special) / 8;
#else
			break;
#endif
		}
		p += 8;
	}
	while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
		p++;
	return p;
}

#endif
