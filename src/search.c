/* pi's session search (search.h).  The rules, from pi 1.6.0:
 *  - a token matches when its lowercase is in the lowercased name, id,
 *    message text or cwd, or when it is a subsequence of the name or the
 *    cwd (pi-tui's fuzzyMatch, letters+digits also tried swapped);
 *  - a phrase matches when it is in the name, message text or cwd with
 *    white space runs read as one space (or in the id as it is);
 *  - re: tests the name (when there is one), id, message text and cwd.
 * Comparisons run on UTF-8 bytes where that is the same as JavaScript's on
 * UTF-16 units (substrings of valid text), and on UTF-16 units where it is
 * not (the subsequence test). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bytefind.h"
#include "jscase.h"
#include "jsregex.h"
#include "jstext.h"
#include "search.h"

/* A regular expression gives up after this many backtracking steps from
 * one start position (PCRE2 counts per start position), a fraction of a
 * second of CPU: pi's would run on (and hang the selector); the daemon
 * must not.  The heap limit is in KiB. */
#define SEARCH_MATCH_LIMIT 2000000u
#define SEARCH_DEPTH_LIMIT 1000000u
#define SEARCH_HEAP_LIMIT 65536u
/* Start positions per pcre2_match call (regex_test), in bytes: the
 * budget is checked between them. */
#define SEARCH_CHUNK 4096u

struct search_token {
	int phrase;
	int skimmable;        /* a plain token a skim can rule out (search_query_skim_needles) */
	char *lower;          /* the token lowercased; a phrase also white-space-normalized */
	size_t lower_len;
	uint16_t *q16, *swap16; /* fuzzy: lower as UTF-16, and pi's letters/digits swap (or NULL) */
	size_t q16_len, swap16_len;
};

struct search_query {
	int empty;
	struct search_token *tokens;
	size_t n_tokens;
	pcre2_code *re;
	pcre2_match_context *mctx;
};

static void token_free(struct search_token *t)
{
	free(t->lower);
	free(t->q16);
	free(t->swap16);
}

void search_query_free(struct search_query *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->n_tokens; i++)
		token_free(&q->tokens[i]);
	free(q->tokens);
	pcre2_code_free(q->re);
	pcre2_match_context_free(q->mctx);
	free(q);
}

/* UTF-16 units of valid UTF-8 s[0..n); the stand-ins of lone surrogates
 * are the single units they stand for.  New array, or NULL. */
static uint16_t *to_utf16(const char *s, size_t n, size_t *out_len)
{
	uint16_t *u = malloc((n + 1) * sizeof *u);
	size_t k = 0;
	if (!u)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t l;
		uint32_t c = jscase_decode(s + i, n - i, &l);
		i += l;
		if (c >= JSTEXT_SURROGATE_BASE) {
			u[k++] = (uint16_t)(0xD800 + (c - JSTEXT_SURROGATE_BASE));
		} else if (c >= 0x10000) {
			u[k++] = (uint16_t)(0xD800 + ((c - 0x10000) >> 10));
			u[k++] = (uint16_t)(0xDC00 + ((c - 0x10000) & 0x3FF));
		} else {
			u[k++] = (uint16_t)c;
		}
	}
	*out_len = k;
	return u;
}

static char *lower_dup(const char *s, size_t n, size_t *len)
{
	struct buf b = BUF_INIT;
	if (jscase_lower(s, n, &b) < 0 || buf_finish(&b) < 0) {
		buf_free(&b);
		return NULL;
	}
	if (!b.data && !(b.data = calloc(1, 1)))
		return NULL;
	*len = b.len;
	return b.data;
}

/* text.toLowerCase().replace(/\s+/g, " ").trim() */
static char *normalize_dup(const char *s, size_t n, size_t *len)
{
	size_t ln;
	char *low = lower_dup(s, n, &ln);
	if (!low)
		return NULL;
	size_t k = 0;
	int space = 0;
	for (size_t i = 0; i < ln;) {
		size_t l;
		uint32_t c = jscase_decode(low + i, ln - i, &l);
		if (jscase_is_space(c)) {
			space = 1;
		} else {
			if (space && k)
				low[k++] = ' ';
			space = 0;
			memmove(low + k, low + i, l);
			k += l;
		}
		i += l;
	}
	low[k] = 0;
	*len = k;
	return low;
}

/* pi-tui's fuzzyMatch(..).matches: the query's units in order in text. */
static int subsequence(const uint16_t *q, size_t qn, const uint16_t *t, size_t tn)
{
	if (qn > tn)
		return 0;
	size_t j = 0;
	for (size_t i = 0; i < qn; i++) {
		while (j < tn && t[j] != q[i])
			j++;
		if (j == tn)
			return 0;
		j++;
	}
	return 1;
}

/* /^[a-z]+[0-9]+$/ or /^[0-9]+[a-z]+$/ on the lowercased token: the two
 * runs swapped, or NULL. */
static uint16_t *swapped(const char *s, size_t n, size_t *len)
{
	size_t i = 0;
	int letters_first = n && s[0] >= 'a' && s[0] <= 'z';
#define IS_RUN1(c) (letters_first ? ((c) >= 'a' && (c) <= 'z') : ((c) >= '0' && (c) <= '9'))
#define IS_RUN2(c) (letters_first ? ((c) >= '0' && (c) <= '9') : ((c) >= 'a' && (c) <= 'z'))
	while (i < n && IS_RUN1(s[i]))
		i++;
	size_t split = i;
	while (i < n && IS_RUN2(s[i]))
		i++;
#undef IS_RUN1
#undef IS_RUN2
	if (!split || split == n || i != n)
		return NULL;
	uint16_t *u = malloc(n * sizeof *u);
	if (!u)
		return NULL;
	size_t k = 0;
	for (i = split; i < n; i++)
		u[k++] = (uint16_t)s[i];
	for (i = 0; i < split; i++)
		u[k++] = (uint16_t)s[i];
	*len = n;
	return u;
}

static ps_err add_token(struct search_query *q, int phrase, const char *s, size_t n)
{
	size_t start, len;
	jstext_trim(s, n, &start, &len);
	if (!len)
		return PS_OK;
	struct search_token t = { .phrase = phrase };
	t.lower = phrase ? normalize_dup(s + start, len, &t.lower_len) : lower_dup(s + start, len, &t.lower_len);
	if (!t.lower)
		return PS_ERR_NOMEM;
	if (phrase && !t.lower_len) {
		free(t.lower);
		return PS_OK; /* pi skips a phrase that normalizes to nothing */
	}
	if (!phrase) {
		if (!(t.q16 = to_utf16(t.lower, t.lower_len, &t.q16_len))) {
			token_free(&t);
			return PS_ERR_NOMEM;
		}
		t.swap16 = swapped(t.lower, t.lower_len, &t.swap16_len);
		t.skimmable = 1;
		for (size_t i = 0; i < t.lower_len; i++)
			if (t.lower[i] <= ' ' || t.lower[i] > '~' || t.lower[i] == '"' || t.lower[i] == '\\')
				t.skimmable = 0;
	}
	struct search_token *more = realloc(q->tokens, (q->n_tokens + 1) * sizeof *more);
	if (!more) {
		token_free(&t);
		return PS_ERR_NOMEM;
	}
	q->tokens = more;
	q->tokens[q->n_tokens++] = t;
	return PS_OK;
}

/* Token mode: white space separates tokens, "double quotes" make phrases;
 * a quote left open makes every white-space-separated word a token. */
static ps_err parse_tokens(struct search_query *q, const char *s, size_t n)
{
	struct buf cur = BUF_INIT;
	int in_quote = 0;
	ps_err err = PS_OK;
	for (size_t i = 0; i < n && !err;) {
		size_t l;
		uint32_t c = jscase_decode(s + i, n - i, &l);
		if (c == '"') {
			err = add_token(q, in_quote, cur.data, cur.len);
			cur.len = 0;
			in_quote = !in_quote;
		} else if (!in_quote && jscase_is_space(c)) {
			err = add_token(q, 0, cur.data, cur.len);
			cur.len = 0;
		} else if (buf_put(&cur, s + i, l) < 0) {
			err = PS_ERR_NOMEM;
		}
		i += l;
	}
	if (!err && in_quote) {
		for (size_t i = 0; i < q->n_tokens; i++)
			token_free(&q->tokens[i]);
		q->n_tokens = 0;
		for (size_t i = 0; i < n && !err;) {
			size_t j = i, l;
			while (j < n && !jscase_is_space(jscase_decode(s + j, n - j, &l)))
				j += l;
			err = add_token(q, 0, s + i, j - i);
			i = j;
			while (i < n && jscase_is_space(jscase_decode(s + i, n - i, &l)))
				i += l;
		}
	} else if (!err) {
		err = add_token(q, 0, cur.data, cur.len);
	}
	buf_free(&cur);
	return err;
}

static ps_err parse_regex(struct search_query *q, const char *pat, size_t n, char **message)
{
	struct buf out = BUF_INIT;
	const char *why = NULL;
	char pcre_msg[256];
	ps_err err = jsregex_translate(pat, n, &out, &why);
	if (!err && buf_finish(&out) < 0)
		err = PS_ERR_NOMEM;
	if (!err) {
		int code;
		PCRE2_SIZE at;
		q->re = pcre2_compile((PCRE2_SPTR)(out.data ? out.data : ""), out.len, jsregex_pcre2_options() | PCRE2_USE_OFFSET_LIMIT, &code,
				      &at, NULL);
		if (!q->re) {
			pcre2_get_error_message(code, (PCRE2_UCHAR *)pcre_msg, sizeof pcre_msg);
			why = pcre_msg;
			err = PS_ERR_INVALID;
		}
	}
	buf_free(&out);
	if (err == PS_ERR_INVALID) {
		if (asprintf(message, "Invalid regular expression: /%.*s/i: %s", (int)n, pat, why) < 0)
			*message = NULL;
		return err;
	}
	if (err)
		return err;
	/* No JIT: PCRE2 10.42's compiled code reads up to 16 bytes past the end
	 * of a subject (aligned SIMD loads, harmless to the hardware, but reads
	 * of memory the daemon does not own, which valgrind reports), and
	 * the interpreter, within the match limit, scans the message text of
	 * a store in milliseconds. */
	if (!(q->mctx = pcre2_match_context_create(NULL)))
		return PS_ERR_NOMEM;
	pcre2_set_match_limit(q->mctx, SEARCH_MATCH_LIMIT);
	pcre2_set_depth_limit(q->mctx, SEARCH_DEPTH_LIMIT);
	pcre2_set_heap_limit(q->mctx, SEARCH_HEAP_LIMIT);
	return PS_OK;
}

ps_err search_query_parse(const char *text, struct search_query **query, char **message)
{
	size_t n = strlen(text), start, len;
	char *clean = NULL;
	*message = NULL;
	if (!jstext_utf8_valid(text, n)) {
		if (!(clean = jstext_utf8_replace(text, n, &n)))
			return PS_ERR_NOMEM;
		text = clean;
	}
	struct search_query *q = calloc(1, sizeof *q);
	ps_err err = q ? PS_OK : PS_ERR_NOMEM;
	if (q) {
		jstext_trim(text, n, &start, &len);
		const char *s = text + start;
		if (!len) {
			q->empty = 1;
		} else if (len >= 3 && !memcmp(s, "re:", 3)) {
			size_t ps, pl;
			jstext_trim(s + 3, len - 3, &ps, &pl);
			if (!pl) {
				err = PS_ERR_INVALID;
				if (!(*message = strdup("Empty regex")))
					err = PS_ERR_NOMEM;
			} else {
				err = parse_regex(q, s + 3 + ps, pl, message);
			}
		} else {
			err = parse_tokens(q, s, len);
		}
	}
	free(clean);
	if (err) {
		search_query_free(q);
		return err;
	}
	*query = q;
	return PS_OK;
}

/* Whether the normalized phrase (single spaces, none at the ends) is in
 * the text as text.replace(/\s+/g, " ") would have it: each space of the
 * phrase stands for a run of white space. */
static int phrase_in(const char *hay, size_t hn, const char *ph, size_t pn)
{
	const char *sp = memchr(ph, ' ', pn);
	size_t first = sp ? (size_t)(sp - ph) : pn;
	for (size_t pos = 0; pos + first <= hn;) {
		const char *hit = bytefind(hay + pos, hay + hn, ph, first);
		if (!hit)
			return 0;
		size_t j = (size_t)(hit - hay) + first, k = first;
		while (k < pn) {
			if (ph[k] == ' ') {
				size_t l, run = 0;
				while (j < hn && jscase_is_space(jscase_decode(hay + j, hn - j, &l)))
					j += l, run++;
				if (!run)
					break;
				k++;
			} else {
				const char *next = memchr(ph + k, ' ', pn - k);
				size_t seg = (next ? (size_t)(next - ph) : pn) - k;
				if (hn - j < seg || memcmp(hay + j, ph + k, seg))
					break;
				j += seg;
				k += seg;
			}
		}
		if (k == pn)
			return 1;
		pos = (size_t)(hit - hay) + 1;
	}
	return 0;
}

static int contains(const char *hay, size_t hn, const char *needle, size_t nn)
{
	return bytefind(hay, hay + hn, needle, nn) != NULL;
}

static long long thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void search_budget_init(struct search_budget *b, long long cpu_ns, int (*gave_up)(void *ctx), void *ctx)
{
	b->cpu_ns = cpu_ns;
	b->spent_ns = 0;
	b->gave_up = gave_up;
	b->ctx = ctx;
}

/* PS_ERR_COSTLY when the budget is spent, PS_ERR_INTR when the asker gave
 * up, else PS_OK. */
static ps_err search_budget_check(const struct search_budget *b)
{
	if (!b)
		return PS_OK;
	if (b->gave_up && b->gave_up(b->ctx))
		return PS_ERR_INTR;
	return b->spent_ns > b->cpu_ns ? PS_ERR_COSTLY : PS_OK;
}

/* pi's regex.test(s): tried from one chunk of start positions to the next
 * (PCRE2's offset limit), the budget checked before each, so that neither
 * a long subject nor many of them outlast it.  The offsets are the same as
 * one pcre2_match over the whole subject would try, with all of it in
 * view (lookbehinds, ^ and \b see before a chunk), so the answer is too. */
static ps_err regex_test(const struct search_query *q, const char *s, size_t n, struct search_budget *b, int *match)
{
	*match = 0;
	if (!s)
		s = "";
	pcre2_match_data *md = pcre2_match_data_create(1, NULL);
	pcre2_match_context *mctx = pcre2_match_context_copy(q->mctx);
	ps_err err = md && mctx ? PS_OK : PS_ERR_NOMEM;
	for (size_t at = 0; !err && !*match && at <= n;) {
		if ((err = search_budget_check(b)))
			break;
		/* The next chunk starts at a character's first byte. */
		size_t next = n - at > SEARCH_CHUNK ? at + SEARCH_CHUNK : n + 1;
		while (next < n && ((unsigned char)s[next] & 0xC0) == 0x80)
			next++;
		pcre2_set_offset_limit(mctx, next - 1);
		long long t0 = b ? thread_cpu_ns() : 0;
		int rc = pcre2_match(q->re, (PCRE2_SPTR)s, n, at, PCRE2_NO_UTF_CHECK, md, mctx);
		if (b)
			b->spent_ns += thread_cpu_ns() - t0;
		if (rc >= 0)
			*match = 1;
		else if (rc == PCRE2_ERROR_NOMEMORY)
			err = PS_ERR_NOMEM;
		else if (rc != PCRE2_ERROR_NOMATCH)
			err = PS_ERR_TOOBIG; /* a match, depth or heap limit */
		at = next;
	}
	pcre2_match_data_free(md);
	pcre2_match_context_free(mctx);
	return err;
}

/* The lowercased (and UTF-16) forms of the short fields, per match. */
struct fields {
	char *name, *id, *cwd;
	size_t name_len, id_len, cwd_len;
	uint16_t *name16, *cwd16;
	size_t name16_len, cwd16_len;
};

static void fields_free(struct fields *f)
{
	free(f->name);
	free(f->id);
	free(f->cwd);
	free(f->name16);
	free(f->cwd16);
}

static ps_err fields_get(const struct sessioninfo *info, struct fields *f)
{
	const char *name = info->name ? info->name : "";
	memset(f, 0, sizeof *f);
	if (!(f->name = lower_dup(name, strlen(name), &f->name_len)) ||
	    !(f->id = lower_dup(info->id, strlen(info->id), &f->id_len)) ||
	    !(f->cwd = lower_dup(info->cwd, strlen(info->cwd), &f->cwd_len)) ||
	    !(f->name16 = to_utf16(f->name, f->name_len, &f->name16_len)) ||
	    !(f->cwd16 = to_utf16(f->cwd, f->cwd_len, &f->cwd16_len))) {
		fields_free(f);
		return PS_ERR_NOMEM;
	}
	return PS_OK;
}

static int token_matches(const struct search_token *t, const struct sessioninfo *info, const struct fields *f)
{
	const char *low = info->lower.data ? info->lower.data : "";
	if (t->phrase)
		return phrase_in(f->name, f->name_len, t->lower, t->lower_len) ||
		       contains(f->id, f->id_len, t->lower, t->lower_len) ||
		       phrase_in(low, info->lower.len, t->lower, t->lower_len) ||
		       phrase_in(f->cwd, f->cwd_len, t->lower, t->lower_len);
	if (contains(f->name, f->name_len, t->lower, t->lower_len) || contains(f->id, f->id_len, t->lower, t->lower_len) ||
	    contains(low, info->lower.len, t->lower, t->lower_len) || contains(f->cwd, f->cwd_len, t->lower, t->lower_len))
		return 1;
	if (subsequence(t->q16, t->q16_len, f->name16, f->name16_len) ||
	    subsequence(t->q16, t->q16_len, f->cwd16, f->cwd16_len))
		return 1;
	return t->swap16 && (subsequence(t->swap16, t->swap16_len, f->name16, f->name16_len) ||
			     subsequence(t->swap16, t->swap16_len, f->cwd16, f->cwd16_len));
}

ps_err search_query_matches(const struct search_query *q, const struct sessioninfo *info, int *match)
{
	return search_query_matches_in(q, info, NULL, match);
}

ps_err search_query_matches_in(const struct search_query *q, const struct sessioninfo *info,
			       struct search_budget *b, int *match)
{
	*match = 0;
	if (!info->is_session)
		return PS_OK;
	if (q->empty) {
		*match = 1;
		return PS_OK;
	}
	if (q->re) {
		ps_err err = PS_OK;
		if (info->name)
			err = regex_test(q, info->name, strlen(info->name), b, match);
		if (!err && !*match)
			err = regex_test(q, info->id, strlen(info->id), b, match);
		if (!err && !*match)
			err = regex_test(q, info->text.data, info->text.len, b, match);
		if (!err && !*match)
			err = regex_test(q, info->cwd, strlen(info->cwd), b, match);
		return err;
	}
	struct fields f;
	if (fields_get(info, &f))
		return PS_ERR_NOMEM;
	*match = 1;
	for (size_t i = 0; i < q->n_tokens && *match; i++)
		*match = token_matches(&q->tokens[i], info, &f);
	fields_free(&f);
	return PS_OK;
}

int search_query_skim_needles(const struct search_query *q, struct sessioninfo_needle **needles, size_t *n)
{
	/* Besides the tokens: the lines that name the session, and where a
	 * token's letters may stand in another spelling. */
	static const struct sessioninfo_needle always[] = {
		{ NEEDLE_EXACT, "session_info", 12 },
		{ NEEDLE_ESCAPE, "", 0 },
	};
	/* Needed only where a token holds the letter they lowercase to
	 * (every needle more slows the skim's pass over the bytes). */
	static const struct sessioninfo_needle dotted_i = { NEEDLE_EXACT, "\xc4\xb0", 2 }; /* U+0130: i and U+0307 */
	static const struct sessioninfo_needle kelvin = { NEEDLE_EXACT, "\xe2\x84\xaa", 3 }; /* U+212A: "k" */
	static const struct sessioninfo_needle slash = { NEEDLE_EXACT, "\\/", 2 }; /* JSON may write / as \/ */
	size_t k = 0, tokens = 0;
	int any_slash = 0, any_i = 0, any_k = 0;
	*needles = NULL;
	*n = 0;
	for (size_t i = 0; !q->re && !q->empty && i < q->n_tokens; i++)
		if (q->tokens[i].skimmable) {
			tokens++;
			any_slash |= memchr(q->tokens[i].lower, '/', q->tokens[i].lower_len) != NULL;
			any_i |= memchr(q->tokens[i].lower, 'i', q->tokens[i].lower_len) != NULL;
			any_k |= memchr(q->tokens[i].lower, 'k', q->tokens[i].lower_len) != NULL;
		}
	if (!tokens)
		return 0;
	struct sessioninfo_needle *nd = malloc((tokens + 5) * sizeof *nd);
	if (!nd)
		return -1;
	for (size_t i = 0; i < q->n_tokens; i++)
		if (q->tokens[i].skimmable)
			nd[k++] = (struct sessioninfo_needle){ NEEDLE_CASELESS, q->tokens[i].lower, q->tokens[i].lower_len };
	for (size_t i = 0; i < sizeof always / sizeof *always; i++)
		nd[k++] = always[i];
	if (any_i)
		nd[k++] = dotted_i;
	if (any_k)
		nd[k++] = kelvin;
	if (any_slash)
		nd[k++] = slash;
	*needles = nd;
	*n = k;
	return 0;
}

int search_query_skim_enough(void *ctx, const char *lower, size_t len)
{
	struct search_skim_seen *seen = ctx;
	const struct search_query *q = seen->query;
	unsigned long long all = 0, bit = 1;
	for (size_t i = 0; i < q->n_tokens && bit; i++) {
		const struct search_token *t = &q->tokens[i];
		if (!t->skimmable)
			continue;
		/* A token is never cut by the space that joins two pieces: each
		 * piece is tested on its own. */
		if (!(seen->found & bit) && contains(lower, len, t->lower, t->lower_len))
			seen->found |= bit;
		all |= bit;
		bit <<= 1;
	}
	if (!bit || !all || seen->found != all) /* (more tokens than bits: never) */
		return 0;
	/* Every token plain and seen in the text: the text matches whatever
	 * the rest of the file holds (search_query_matches_in tests each
	 * token for a substring of it), and only whether pi lists the file,
	 * and how, is still open. */
	for (size_t i = 0; i < q->n_tokens; i++)
		if (!q->tokens[i].skimmable)
			return 1;
	return q->re || q->empty ? 1 : 2;
}

int search_query_rules_out(const struct search_query *q, const struct sessioninfo *skim)
{
	struct fields f;
	if (!skim->is_session)
		return 1;
	if (skim->skim_proven || q->re || q->empty || fields_get(skim, &f))
		return 0;
	int out = 0;
	for (size_t i = 0; i < q->n_tokens && !out; i++)
		out = q->tokens[i].skimmable && !token_matches(&q->tokens[i], skim, &f);
	fields_free(&f);
	return out;
}

ps_err search_text_matches(const struct search_query *q, const char *text, size_t len, int *match)
{
	return search_text_matches_in(q, text, len, NULL, match);
}

ps_err search_text_matches_in(const struct search_query *q, const char *text, size_t len,
			      struct search_budget *b, int *match)
{
	*match = 0;
	if (q->empty)
		return PS_OK;
	if (q->re)
		return regex_test(q, text, len, b, match);
	size_t ln;
	char *low = lower_dup(text ? text : "", len, &ln);
	if (!low)
		return PS_ERR_NOMEM;
	for (size_t i = 0; i < q->n_tokens && !*match; i++) {
		const struct search_token *t = &q->tokens[i];
		*match = t->phrase ? phrase_in(low, ln, t->lower, t->lower_len) : contains(low, ln, t->lower, t->lower_len);
	}
	free(low);
	return PS_OK;
}
