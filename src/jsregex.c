/* JavaScript pattern -> PCRE2 pattern (jsregex.h).  One pass after a
 * pre-scan that counts the capturing groups and names them: JavaScript
 * decides from the whole pattern whether \N is a backreference or an
 * octal escape, and whether \k is one.  Named groups become plain groups
 * and \k<name> a numbered backreference, so PCRE2's narrower rules for
 * names never refuse what JavaScript takes. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <string.h>
#include "jscase.h"
#include "jsregex.h"

/* JavaScript's \s, as class items. */
#define JS_SPACE_ITEMS "\\t\\n\\x{0b}\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}"

#define MAX_NAMES 256
#define MAX_DEPTH 1024

enum group_kind { G_GROUP, G_LOOKAHEAD, G_LOOKBEHIND };

struct rx {
	const char *p;
	size_t n, i;
	struct buf *out;
	const char *why;
	unsigned groups;        /* capturing groups in the whole pattern */
	unsigned n_names;
	struct { size_t off, len; unsigned group; } names[MAX_NAMES];
};

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static unsigned hex_val(const char *s, size_t n)
{
	unsigned v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 16 + (unsigned)(s[i] <= '9' ? s[i] - '0' : (s[i] | 0x20) - 'a' + 10);
	return v;
}

static int is_name_char(const char *s, size_t n, size_t *len, int first)
{
	uint32_t c = jscase_decode(s, n, len);
	if (c >= 0x80)
		return 1; /* ID_Start / ID_Continue, approximately: any non-ASCII */
	return c == '$' || c == '_' || (c | 0x20) - 'a' < 26u || (!first && c - '0' < 10u);
}

/* The group name at p[i] up to '>': its length, or 0 when invalid. */
static size_t name_len(const struct rx *r, size_t i)
{
	size_t j = i, l;
	while (j < r->n && r->p[j] != '>') {
		if (!is_name_char(r->p + j, r->n - j, &l, j == i))
			return 0;
		j += l;
	}
	return j < r->n && j > i ? j - i : 0;
}

/* The end of the class that starts at p[i] ('['), or n when unterminated. */
static size_t class_end(const struct rx *r, size_t i)
{
	i++;
	while (i < r->n && r->p[i] != ']')
		i += r->p[i] == '\\' ? 2 : 1;
	return i < r->n ? i : r->n;
}

static ps_err prescan(struct rx *r)
{
	for (size_t i = 0; i < r->n; i++) {
		char c = r->p[i];
		if (c == '\\') {
			i++;
		} else if (c == '[') {
			i = class_end(r, i);
		} else if (c == '(') {
			if (i + 1 < r->n && r->p[i + 1] == '?') {
				if (i + 2 < r->n && r->p[i + 2] == '<' && i + 3 < r->n && r->p[i + 3] != '=' && r->p[i + 3] != '!') {
					size_t l = name_len(r, i + 3);
					r->groups++;
					if (!l) {
						r->why = "Invalid capture group name";
						return PS_ERR_INVALID;
					}
					for (unsigned k = 0; k < r->n_names; k++)
						if (r->names[k].len == l && !memcmp(r->p + r->names[k].off, r->p + i + 3, l)) {
							r->why = "Duplicate capture group name";
							return PS_ERR_INVALID;
						}
					if (r->n_names == MAX_NAMES) {
						r->why = "Too many named groups";
						return PS_ERR_INVALID;
					}
					r->names[r->n_names].off = i + 3;
					r->names[r->n_names].len = l;
					r->names[r->n_names++].group = r->groups;
				}
			} else {
				r->groups++;
			}
		}
	}
	return PS_OK;
}

static int emit_cp(struct rx *r, uint32_t c)
{
	return buf_printf(r->out, "\\x{%x}", (unsigned)c);
}

/* A character escape (after the backslash, at r->i) that means one code
 * unit: sets *c and advances.  Returns 0 when it is no such escape. */
static int char_escape(struct rx *r, int in_class, uint32_t *c)
{
	const char *p = r->p;
	size_t i = r->i, n = r->n;
	char e = p[i];
	switch (e) {
	case 'f': *c = 0x0C; r->i++; return 1;
	case 'n': *c = 0x0A; r->i++; return 1;
	case 'r': *c = 0x0D; r->i++; return 1;
	case 't': *c = 0x09; r->i++; return 1;
	case 'v': *c = 0x0B; r->i++; return 1;
	case 'c':
		if (i + 1 < n && ((p[i + 1] | 0x20) - 'a' < 26 ||
				  (in_class && (p[i + 1] == '_' || (p[i + 1] >= '0' && p[i + 1] <= '9'))))) {
			*c = (uint32_t)p[i + 1] % 32;
			r->i += 2;
			return 1;
		}
		*c = '\\'; /* "\c" stays a backslash; the c is read next */
		return 1;
	case 'x':
		if (i + 2 < n && is_hex(p[i + 1]) && is_hex(p[i + 2])) {
			*c = hex_val(p + i + 1, 2);
			r->i += 3;
			return 1;
		}
		break;
	case 'u':
		if (i + 4 < n && is_hex(p[i + 1]) && is_hex(p[i + 2]) && is_hex(p[i + 3]) && is_hex(p[i + 4])) {
			*c = hex_val(p + i + 1, 4);
			r->i += 5;
			if (*c >= 0xD800 && *c < 0xDC00 && r->i + 5 < n && p[r->i] == '\\' && p[r->i + 1] == 'u' &&
			    is_hex(p[r->i + 2]) && is_hex(p[r->i + 3]) && is_hex(p[r->i + 4]) && is_hex(p[r->i + 5])) {
				uint32_t lo = hex_val(p + r->i + 2, 4);
				if (lo >= 0xDC00 && lo < 0xE000) {
					*c = 0x10000 + ((*c - 0xD800) << 10) + (lo - 0xDC00);
					r->i += 6;
				}
			}
			return 1;
		}
		break;
	default:
		break;
	}
	if (e >= '0' && e <= '7') {
		/* Legacy octal (a backreference was ruled out by the caller). */
		uint32_t v = (uint32_t)(e - '0');
		size_t j = i + 1, max = e <= '3' ? 3 : 2;
		while (j < n && j - i < max && p[j] >= '0' && p[j] <= '7')
			v = v * 8 + (uint32_t)(p[j++] - '0');
		*c = v;
		r->i = j;
		return 1;
	}
	return 0;
}

/* Emits one code point as a literal; lone surrogates (\uD800 alone) match
 * nothing here: the texts hold none as such (jstext.h stand-ins). */
static int emit_literal(struct rx *r, uint32_t c, int in_class)
{
	if (c >= 0xD800 && c < 0xE000)
		return in_class ? 0 : buf_puts(r->out, "(?!)");
	return emit_cp(r, c);
}

/* The class at r->p[r->i] == '['. */
static ps_err translate_class(struct rx *r)
{
	size_t end = class_end(r, r->i);
	if (end >= r->n) {
		r->why = "Unterminated character class";
		return PS_ERR_INVALID;
	}
	r->i++;
	if (buf_putc(r->out, '[') < 0)
		return PS_ERR_NOMEM;
	if (r->i < end && r->p[r->i] == '^') {
		if (buf_putc(r->out, '^') < 0)
			return PS_ERR_NOMEM;
		r->i++;
	}
	/* Atoms: a code point (set) or a class escape (an item string). */
	int have_prev = 0, prev_is_char = 0, pending_dash = 0;
	uint32_t prev = 0;
	while (r->i < end) {
		uint32_t c = 0;
		const char *item = NULL;
		int is_char = 1;
		if (r->p[r->i] == '\\') {
			r->i++;
			char e = r->p[r->i];
			switch (e) {
			case 'd': item = "\\d"; break;
			case 'D': item = "\\D"; break;
			case 'w': item = "\\w"; break;
			case 'W': item = "\\W"; break;
			case 's': item = JS_SPACE_ITEMS; break;
			case 'S': item = "\\S"; break; /* ASCII only: docs/search.md */
			case 'b': c = 0x08; break;
			default: break;
			}
			if (item) {
				is_char = 0;
				r->i++;
			} else if (e == 'b') {
				r->i++;
			} else if (!char_escape(r, 1, &c)) {
				size_t l;
				c = jscase_decode(r->p + r->i, r->n - r->i, &l); /* identity escape, \8 \9 */
				r->i += l;
			}
		} else {
			size_t l;
			c = jscase_decode(r->p + r->i, r->n - r->i, &l);
			r->i += l;
			if (c == '-' && have_prev && !pending_dash && r->i < end) {
				pending_dash = 1;
				continue;
			}
		}
		if (pending_dash) {
			pending_dash = 0;
			if (prev_is_char && is_char) {
				if (prev > c) {
					r->why = "Range out of order in character class";
					return PS_ERR_INVALID;
				}
				/* prev was emitted alone: extend it to the range. */
				if (!(prev >= 0xD800 && prev < 0xE000) && !(c >= 0xD800 && c < 0xE000) &&
				    (buf_putc(r->out, '-') < 0 || emit_cp(r, c) < 0))
					return PS_ERR_NOMEM;
				have_prev = 0;
				continue;
			}
			/* Annex B: a class escape at either end makes the dash literal. */
			if (buf_puts(r->out, "\\-") < 0)
				return PS_ERR_NOMEM;
		}
		if (is_char ? emit_literal(r, c, 1) < 0 : buf_puts(r->out, item) < 0)
			return PS_ERR_NOMEM;
		have_prev = 1;
		prev_is_char = is_char;
		prev = c;
	}
	if (pending_dash && buf_puts(r->out, "\\-") < 0)
		return PS_ERR_NOMEM;
	r->i = end + 1;
	return buf_putc(r->out, ']') < 0 ? PS_ERR_NOMEM : PS_OK;
}

/* A {n}, {n,} or {n,m} quantifier at r->p[r->i]: its length, or 0 (a
 * literal brace, as Annex B reads it).  *bad: the numbers are out of order. */
static size_t brace_quantifier(const struct rx *r, int *bad)
{
	size_t i = r->i + 1;
	double lo = 0, hi = -1;
	*bad = 0;
	if (i >= r->n || r->p[i] < '0' || r->p[i] > '9')
		return 0;
	while (i < r->n && r->p[i] >= '0' && r->p[i] <= '9')
		lo = lo * 10 + (r->p[i++] - '0');
	if (i < r->n && r->p[i] == ',') {
		i++;
		if (i < r->n && r->p[i] >= '0' && r->p[i] <= '9') {
			hi = 0;
			while (i < r->n && r->p[i] >= '0' && r->p[i] <= '9')
				hi = hi * 10 + (r->p[i++] - '0');
		}
	} else {
		hi = lo;
	}
	if (i >= r->n || r->p[i] != '}')
		return 0;
	*bad = hi >= 0 && hi < lo;
	return i + 1 - r->i;
}

/* A backslash escape at r->i (the backslash): a class shorthand, a word
 * boundary (*atom cleared: nothing may repeat it), a back reference by
 * number or name, or a character. */
static ps_err translate_escape(struct rx *r, int *atom)
{
	r->i++;
	if (r->i >= r->n) {
		r->why = "\\ at end of pattern";
		return PS_ERR_INVALID;
	}
	char e = r->p[r->i];
	uint32_t cp;
	const char *item = NULL;
	switch (e) {
	case 'b': item = "\\b"; *atom = 0; break;
	case 'B': item = "\\B"; *atom = 0; break;
	case 'd': item = "\\d"; break;
	case 'D': item = "\\D"; break;
	case 'w': item = "\\w"; break;
	case 'W': item = "\\W"; break;
	case 's': item = "[" JS_SPACE_ITEMS "]"; break;
	case 'S': item = "[^" JS_SPACE_ITEMS "]"; break;
	default: break;
	}
	if (item) {
		r->i++;
		return buf_puts(r->out, item) < 0 ? PS_ERR_NOMEM : PS_OK;
	}
	if (e >= '1' && e <= '9') {
		size_t j = r->i;
		double v = 0;
		while (j < r->n && r->p[j] >= '0' && r->p[j] <= '9')
			v = v * 10 + (r->p[j++] - '0');
		if (v <= r->groups) {
			r->i = j;
			return buf_printf(r->out, "(?:\\g{%u})", (unsigned)v) < 0 ? PS_ERR_NOMEM : PS_OK;
		}
	}
	if (e == 'k' && r->n_names) {
		size_t l = r->i + 1 < r->n && r->p[r->i + 1] == '<' ? name_len(r, r->i + 2) : 0;
		unsigned k;
		for (k = 0; l && k < r->n_names; k++)
			if (r->names[k].len == l && !memcmp(r->p + r->names[k].off, r->p + r->i + 2, l))
				break;
		if (!l || k == r->n_names) {
			r->why = "Invalid named capture referenced";
			return PS_ERR_INVALID;
		}
		r->i += 3 + l;
		return buf_printf(r->out, "(?:\\g{%u})", r->names[k].group) < 0 ? PS_ERR_NOMEM : PS_OK;
	}
	if (!char_escape(r, 0, &cp)) {
		/* An identity escape: the character itself. */
		size_t l;
		cp = jscase_decode(r->p + r->i, r->n - r->i, &l);
		r->i += l;
	}
	return emit_literal(r, cp, 0) < 0 ? PS_ERR_NOMEM : PS_OK;
}

/* A group's opening at r->i: ( (?: (?= (?! (?<= (?<! or (?<name>,
 * written as PCRE2 takes it; *kind says which. */
static ps_err translate_group_open(struct rx *r, enum group_kind *kind)
{
	const char *open = "(";
	size_t skip = 1;
	*kind = G_GROUP;
	if (r->i + 1 < r->n && r->p[r->i + 1] == '?') {
		const char *q = r->p + r->i + 2;
		size_t left = r->n - r->i - 2;
		if (left >= 1 && (q[0] == ':' || q[0] == '=' || q[0] == '!')) {
			open = q[0] == ':' ? "(?:" : q[0] == '=' ? "(?=" : "(?!";
			*kind = q[0] == ':' ? G_GROUP : G_LOOKAHEAD;
			skip = 3;
		} else if (left >= 2 && q[0] == '<' && (q[1] == '=' || q[1] == '!')) {
			open = q[1] == '=' ? "(?<=" : "(?<!";
			*kind = G_LOOKBEHIND;
			skip = 4;
		} else if (left >= 1 && q[0] == '<') {
			skip = 3 + name_len(r, r->i + 3) + 1; /* valid: the prescan checked */
		} else {
			r->why = "Invalid group";
			return PS_ERR_INVALID;
		}
	}
	r->i += skip;
	return buf_puts(r->out, open) < 0 ? PS_ERR_NOMEM : PS_OK;
}

static ps_err translate(struct rx *r)
{
	enum group_kind stack[MAX_DEPTH];
	size_t depth = 0;
	int can_quantify = 0, after_lookbehind = 0;
	while (r->i < r->n) {
		char c = r->p[r->i];
		int atom = 1;
		int quant = 0, bad = 0;
		size_t qlen = 0;
		if (c == '*' || c == '+' || c == '?')
			quant = 1, qlen = 1;
		else if (c == '{' && (qlen = brace_quantifier(r, &bad)))
			quant = 1;
		if (quant) {
			if (!can_quantify) {
				r->why = after_lookbehind ? "Invalid quantifier" : "Nothing to repeat";
				return PS_ERR_INVALID;
			}
			if (bad) {
				r->why = "numbers out of order in {} quantifier";
				return PS_ERR_INVALID;
			}
			if (buf_put(r->out, r->p + r->i, qlen) < 0)
				return PS_ERR_NOMEM;
			r->i += qlen;
			if (r->i < r->n && r->p[r->i] == '?') {
				if (buf_putc(r->out, '?') < 0)
					return PS_ERR_NOMEM;
				r->i++;
			}
			can_quantify = after_lookbehind = 0;
			continue;
		}
		after_lookbehind = 0;
		ps_err err = PS_OK;
		switch (c) {
		case '\\':
			if ((err = translate_escape(r, &atom)))
				return err;
			break;
		case '[':
			if ((err = translate_class(r)))
				return err;
			break;
		case '(': {
			enum group_kind kind;
			if ((err = translate_group_open(r, &kind)))
				return err;
			if (depth == MAX_DEPTH) {
				r->why = "Regular expression too large";
				return PS_ERR_INVALID;
			}
			stack[depth++] = kind;
			can_quantify = 0;
			continue;
		}
		case ')':
			if (!depth) {
				r->why = "Unmatched ')'";
				return PS_ERR_INVALID;
			}
			depth--;
			r->i++;
			if (buf_putc(r->out, ')') < 0)
				return PS_ERR_NOMEM;
			/* Annex B lets a lookahead be quantified, not a lookbehind. */
			can_quantify = stack[depth] != G_LOOKBEHIND;
			after_lookbehind = !can_quantify;
			continue;
		case '|':
		case '^':
		case '$':
			r->i++;
			if (buf_putc(r->out, c) < 0)
				return PS_ERR_NOMEM;
			atom = 0;
			break;
		case '.':
			r->i++;
			if (buf_puts(r->out, "[^\\n\\r\\x{2028}\\x{2029}]") < 0)
				return PS_ERR_NOMEM;
			break;
		default: {
			size_t l;
			uint32_t cp = jscase_decode(r->p + r->i, r->n - r->i, &l);
			r->i += l;
			int plain = cp >= 0x80 || (cp | 0x20) - 'a' < 26u || cp - '0' < 10u || cp == ' ' || cp == '_';
			if (plain ? buf_put(r->out, r->p + r->i - l, l) < 0 : emit_cp(r, cp) < 0)
				return PS_ERR_NOMEM;
			break;
		}
		}
		can_quantify = atom;
	}
	if (depth) {
		r->why = "Unterminated group";
		return PS_ERR_INVALID;
	}
	return PS_OK;
}

ps_err jsregex_translate(const char *p, size_t n, struct buf *out, const char **why)
{
	struct rx r = { .p = p, .n = n, .out = out };
	ps_err err = prescan(&r);
	if (!err)
		err = translate(&r);
	*why = r.why;
	return err;
}

unsigned jsregex_pcre2_options(void)
{
	return PCRE2_UTF | PCRE2_CASELESS | PCRE2_DOLLAR_ENDONLY | PCRE2_ALLOW_EMPTY_CLASS | PCRE2_MATCH_UNSET_BACKREF |
	       PCRE2_NEVER_BACKSLASH_C | PCRE2_NO_UTF_CHECK;
}
