/* Shared by the libFuzzer harnesses in tests/fuzz/: small checks and helpers.
 * Harnesses abort() on a broken invariant so libFuzzer records the input as
 * a crash; fz_fail() prints why first. */
#ifndef PS_FUZZ_COMMON_H
#define PS_FUZZ_COMMON_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "parse.h"
#include "render.h"

/* UBSan stops at the first report (the harnesses are built with recoverable
 * checks only so that tests/fuzz/known-ubsan.supp can silence a reported one;
 * see tests/fuzz/README.md).  UBSAN_OPTIONS adds to these. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}

/* The clock parse_entry_md_at() is given, so runs are reproducible. */
#define FZ_NOW 1767323045678LL

/* The entry file name of the round trips: image links are relative to it,
 * and its %XX escapes and shortened id must survive being a URL. */
#define FZ_NAME "0012-toolResult-a%2Fb.x%25y~h0123456789abcdef.md"

static void fz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn, unused));
static void fz_fail(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "\n==FUZZ INVARIANT== ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

#define FZ_CHECK(cond, ...) do { if (!(cond)) fz_fail(__VA_ARGS__); } while (0)

/* Known, reported bugs can be let through with FUZZ_KNOWN=name,name,...
 * (to keep fuzzing past them); by default every check is fatal. */
static int __attribute__((unused)) fz_known(const char *name)
{
	const char *k = getenv("FUZZ_KNOWN");
	size_t n = strlen(name);
	while (k && *k) {
		const char *end = strchr(k, ',');
		size_t len = end ? (size_t)(end - k) : strlen(k);
		if ((len == n && memcmp(k, name, n) == 0) || (len == 3 && memcmp(k, "all", 3) == 0))
			return 1;
		k = end ? end + 1 : NULL;
	}
	return 0;
}

/* Valid UTF-8 as jansson checks it (no overlongs, no surrogates, at most
 * U+10FFFF). */
static int __attribute__((unused)) fz_utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		size_t k;
		unsigned cp;
		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			k = 2;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			k = 3;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			k = 4;
			cp = c & 0x07;
		} else {
			return 0;
		}
		if (n - i < k)
			return 0;
		for (size_t j = 1; j < k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (s[i + j] & 0x3f);
		}
		if ((k == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (k == 4 && (cp < 0x10000 || cp > 0x10ffff)))
			return 0;
		i += k;
	}
	return 1;
}

/* in[0..n) with every byte that does not start a valid UTF-8 sequence
 * replaced by U+FFFD (pi's decoder; session.c does the same).  New buffer. */
static char *__attribute__((unused)) fz_sanitize(const unsigned char *in, size_t n, size_t *out_len)
{
	char *out = malloc(n * 3 + 1);
	size_t o = 0;
	FZ_CHECK(out != NULL, "malloc");
	for (size_t i = 0; i < n;) {
		size_t k = 1;
		if (in[i] >= 0xc2 && in[i] <= 0xdf)
			k = 2;
		else if (in[i] >= 0xe0 && in[i] <= 0xef)
			k = 3;
		else if (in[i] >= 0xf0 && in[i] <= 0xf4)
			k = 4;
		if (in[i] < 0x80 || (k > 1 && k <= n - i && fz_utf8_valid(in + i, k))) {
			memcpy(out + o, in + i, k);
			o += k;
			i += k;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}

/* Compact JSON of v for a failure message (static buffer, cut). */
static const char *__attribute__((unused)) fz_dump(const json_t *v)
{
	static char out[2048];
	if (!v)
		return "(null)";
	char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	snprintf(out, sizeof out, "%.2000s", d ? d : "(dump failed)");
	free(d);
	return out;
}

/* v without what the appender fills in (parse.h's round trip). */
static json_t *__attribute__((unused)) fz_expected_of(const json_t *v)
{
	json_t *want = json_deep_copy(v);
	if (want && json_is_object(want)) {
		json_object_del(want, "id");
		json_object_del(want, "parentId");
		json_object_del(want, "timestamp");
	}
	return want;
}

/* parse.h's promise: parse_entry_md(render_entry(E, F), E, F) equals E less id,
 * parentId and timestamp; also when the file lost its final newline
 * (unless it ends with a blank line) and when it was saved with CRLF line
 * endings (both read as the original). */
static void __attribute__((unused)) fz_roundtrip(const json_t *e, const char *what)
{
	size_t len = 0;
	char *md = render_entry(e, FZ_NAME, &len);
	FZ_CHECK(md != NULL, "%s: render_entry returned NULL for %s", what, fz_dump(e));
	FZ_CHECK(md[len] == '\0', "%s: render_entry result not NUL-terminated", what);
	json_t *want = fz_expected_of(e);
	FZ_CHECK(want != NULL, "json_deep_copy failed");

	/* CRLF copy: every "\n" becomes "\r\n" */
	size_t nl = 0;
	for (size_t i = 0; i < len; i++)
		nl += md[i] == '\n';
	char *crlf = malloc(len + nl + 1);
	FZ_CHECK(crlf != NULL, "malloc failed");
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		if (md[i] == '\n')
			crlf[o++] = '\r';
		crlf[o++] = md[i];
	}

	static const char *const names[] = { "as rendered", "without its final newline", "with CRLF line endings" };
	for (int v = 0; v < 3; v++) {
		const char *text = v == 2 ? crlf : md;
		size_t n = v == 2 ? o : len;
		if (v == 1) {
			/* parse.h: unless the file ends with a blank line (then it
			 * is the rendering of the text less its final newline) */
			if (!n || md[n - 1] != '\n' || (n >= 2 && md[n - 2] == '\n'))
				continue;
			n--;
		}
		char why[512];
		json_t *got = NULL;
		ps_err err = parse_entry_md_at(text, n, e, FZ_NAME, FZ_NOW, &got, why, sizeof why);
		if (err != PS_OK) {
			fprintf(stderr, "entry: %s\nmarkdown (%zu bytes):\n%.3000s\n", fz_dump(e), len, md);
			fz_fail("%s: parse_entry_md(render_entry(E, F), E, F) refused the file %s: %s", what, names[v], why);
		}
		if (!json_equal(got, want)) {
			fprintf(stderr, "entry: %s\n", fz_dump(e));
			fprintf(stderr, "want:  %s\n", fz_dump(want));
			fprintf(stderr, "got:   %s\n", fz_dump(got));
			fprintf(stderr, "markdown (%zu bytes):\n%.3000s\n", len, md);
			fz_fail("%s: parse_entry_md(render_entry(E, F), E, F) != E less id/parentId/timestamp (file %s)",
				what, names[v]);
		}
		json_decref(got);
	}
	free(crlf);
	json_decref(want);
	free(md);
}

/* The refusal contract of parse.h: *out NULL on error, why one line. */
static void __attribute__((unused)) fz_check_refusal(ps_err err, const json_t *out, const char *why, size_t why_len)
{
	if (err == PS_OK)
		return;
	FZ_CHECK(out == NULL, "parse_entry_md failed (%d) but set *out", (int)err);
	FZ_CHECK(memchr(why, '\0', why_len) != NULL, "parse_entry_md: why not NUL-terminated");
	FZ_CHECK(why[0] != '\0', "parse_entry_md failed (%d) without a reason", (int)err);
	FZ_CHECK(strchr(why, '\n') == NULL, "parse_entry_md: reason is not one line: %s", why);
}

#endif
