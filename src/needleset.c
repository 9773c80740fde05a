#include <string.h>
#ifdef __x86_64__
#include <immintrin.h>
#endif
#include "bytefind.h"
#include "needleset.h"

int needleset_init(struct needleset *set, const char *const *texts, const size_t *lens, const int *caseless,
		   size_t n)
{
	memset(set, 0, sizeof *set);
	if (!n || n > NEEDLESET_MAX)
		return -1;
	for (size_t k = 0; k < n; k++) {
		struct needleset_needle *nd = &set->needles[k];
		if (!lens[k])
			return -1;
		nd->text = texts[k];
		nd->len = lens[k];
		nd->caseless = caseless[k];
		nd->fold = caseless[k] ? 0x20 : 0;
		/* Two bytes that differ filter better (bytefind.h). */
		nd->i0 = 0;
		nd->i1 = nd->len - 1;
		if (nd->len >= 4 && nd->text[0] == nd->text[nd->len - 1])
			nd->i0 = 1, nd->i1 = nd->len - 2;
		nd->c0 = (unsigned char)nd->text[nd->i0] | nd->fold;
		nd->c1 = (unsigned char)nd->text[nd->i1] | nd->fold;
		if (nd->len > set->max_len)
			set->max_len = nd->len;
	}
	set->n = n;
	return 0;
}

static int needleset_stands(const struct needleset_needle *nd, const char *p)
{
	return nd->caseless ? bytefind_same_caseless(p, nd->text, nd->len) : memcmp(p, nd->text, nd->len) == 0;
}

/* Whether a needle starts at p (< end): its index in *which. */
static int needleset_starts(const struct needleset *set, const char *p, const char *end, size_t *which)
{
	for (size_t k = 0; k < set->n; k++) {
		const struct needleset_needle *nd = &set->needles[k];
		if ((size_t)(end - p) >= nd->len && needleset_stands(nd, p)) {
			*which = k;
			return 1;
		}
	}
	return 0;
}

static const char *needleset_find_bytewise(const struct needleset *set, const char *p, const char *end,
					   size_t *which)
{
	for (; p < end; p++)
		if (needleset_starts(set, p, end, which))
			return p;
	return NULL;
}

/* Both block searches leave the last max_len + block bytes to the bytewise
 * one, so that every load and every comparison stays within [p, end). */
#ifdef __SSE2__
static const char *needleset_find_sse2(const struct needleset *set, const char *p, const char *end, size_t *which)
{
	__m128i c0[NEEDLESET_MAX], c1[NEEDLESET_MAX], fold[NEEDLESET_MAX];
	for (size_t k = 0; k < set->n; k++) {
		c0[k] = _mm_set1_epi8((char)set->needles[k].c0);
		c1[k] = _mm_set1_epi8((char)set->needles[k].c1);
		fold[k] = _mm_set1_epi8((char)set->needles[k].fold);
	}
	while ((size_t)(end - p) >= set->max_len + 16) {
		__m128i any = _mm_setzero_si128();
		for (size_t k = 0; k < set->n; k++) {
			const struct needleset_needle *nd = &set->needles[k];
			__m128i a = _mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + nd->i0)), fold[k]);
			__m128i b = _mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + nd->i1)), fold[k]);
			any = _mm_or_si128(any, _mm_and_si128(_mm_cmpeq_epi8(a, c0[k]), _mm_cmpeq_epi8(b, c1[k])));
		}
		for (unsigned mask = (unsigned)_mm_movemask_epi8(any); mask; mask &= mask - 1) {
			const char *at = p + __builtin_ctz(mask);
			if (needleset_starts(set, at, end, which))
				return at;
		}
		p += 16;
	}
	return needleset_find_bytewise(set, p, end, which);
}
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NEEDLESET_AVX2 1
__attribute__((target("avx2"))) static const char *needleset_find_avx2(const struct needleset *set, const char *p,
								       const char *end, size_t *which)
{
	__m256i c0[NEEDLESET_MAX], c1[NEEDLESET_MAX], fold[NEEDLESET_MAX];
	for (size_t k = 0; k < set->n; k++) {
		c0[k] = _mm256_set1_epi8((char)set->needles[k].c0);
		c1[k] = _mm256_set1_epi8((char)set->needles[k].c1);
		fold[k] = _mm256_set1_epi8((char)set->needles[k].fold);
	}
	while ((size_t)(end - p) >= set->max_len + 32) {
		__m256i any = _mm256_setzero_si256();
		for (size_t k = 0; k < set->n; k++) {
			const struct needleset_needle *nd = &set->needles[k];
			__m256i a = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p + nd->i0)), fold[k]);
			__m256i b = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p + nd->i1)), fold[k]);
			any = _mm256_or_si256(any, _mm256_and_si256(_mm256_cmpeq_epi8(a, c0[k]), _mm256_cmpeq_epi8(b, c1[k])));
		}
		for (unsigned mask = (unsigned)_mm256_movemask_epi8(any); mask; mask &= mask - 1) {
			const char *at = p + __builtin_ctz(mask);
			if (needleset_starts(set, at, end, which))
				return at;
		}
		p += 32;
	}
	return needleset_find_bytewise(set, p, end, which);
}
#endif

const char *needleset_find(const struct needleset *set, const char *p, const char *end, size_t *which)
{
#ifdef NEEDLESET_AVX2
	if (__builtin_cpu_supports("avx2"))
		return needleset_find_avx2(set, p, end, which);
#endif
#ifdef __SSE2__
	return needleset_find_sse2(set, p, end, which);
#else
	return needleset_find_bytewise(set, p, end, which);
#endif
}
