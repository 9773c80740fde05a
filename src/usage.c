/* Token and cost totals of a session (usage.h).  One pass over the index;
 * only the entries that can carry usage (or whose type the index cannot
 * tell) are parsed, so a session of mostly tool output and user text costs
 * little more than reading its assistant lines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "jparse.h"
#include "jsonout.h"
#include "usage.h"

/* One byModel row: provider and model are borrowed-then-kept references
 * to JSON strings, or NULL (shown as null). */
struct usage_row {
	json_t *provider, *model;
	struct usage_sum sum;
};

/* One day's usage of one model (model NULL: the tools/summaries row):
 * usage_days' rows. */
struct usage_dayrow {
	int32_t day;
	json_t *model;
	struct usage_sum sum;
};

struct usage_acc {
	struct usage_sum total;
	struct usage_row *rows;
	size_t n_rows, cap_rows;
	uint64_t messages, assistant;
	struct usage_dayrow *days;
	size_t n_days, cap_days;
	int64_t last_ms;  /* the latest entry timestamp so far in file order, 0: none */
	int32_t day;      /* the day of the entry being added (usage_collect) */
};

/* A provider or model name as read, text NULL when absent (or no string);
 * len bytes, NUL possible. */
struct usage_name {
	const char *text;
	size_t len;
};

static struct usage_name usage_name_of(const json_t *v)
{
	struct usage_name n = { NULL, 0 };
	if (json_is_string(v)) {
		n.text = json_string_value(v);
		n.len = json_string_length(v);
	}
	return n;
}

/* Whether a kept name (a JSON string or NULL) is the name: the key of a
 * byModel row. */
static int usage_same(const json_t *kept, struct usage_name name)
{
	if (!kept || !name.text)
		return !kept && !name.text;
	return json_string_length(kept) == name.len && memcmp(json_string_value(kept), name.text, name.len) == 0;
}

/* A new reference to the name as a JSON string, or NULL for none; *failed
 * when memory ran out. */
static json_t *usage_name_json(struct usage_name name, int *failed)
{
	json_t *v = name.text ? json_stringn(name.text, name.len) : NULL;
	if (name.text && !v)
		*failed = 1;
	return v;
}

static void usage_sum_add(struct usage_sum *to, const struct usage_sum *u);

static void usage_acc_free(struct usage_acc *a)
{
	for (size_t i = 0; i < a->n_rows; i++) {
		json_decref(a->rows[i].provider);
		json_decref(a->rows[i].model);
	}
	free(a->rows);
	for (size_t i = 0; i < a->n_days; i++)
		json_decref(a->days[i].model);
	free(a->days);
}

/* The day (UTC) of a time in ms since the epoch. */
static int32_t usage_day_of(int64_t ms)
{
	int64_t d = ms / 86400000;
	if (ms % 86400000 < 0)
		d--;
	return d < INT32_MIN + 1 ? INT32_MIN + 1 : d > INT32_MAX ? INT32_MAX : (int32_t)d;
}

/* Adds u to the session's row of (day, model). */
static ps_err usage_day_add(struct usage_acc *a, int32_t day, struct usage_name model, const struct usage_sum *u)
{
	size_t i;
	/* A session's days and models are few; the latest row is the likely one. */
	for (i = a->n_days; i-- > 0;)
		if (a->days[i].day == day && usage_same(a->days[i].model, model))
			break;
	if (i == (size_t)-1) {
		if (a->n_days == a->cap_days) {
			size_t cap = a->cap_days ? a->cap_days * 2 : 4;
			struct usage_dayrow *days = realloc(a->days, cap * sizeof *days);
			if (!days)
				return PS_ERR_NOMEM;
			a->days = days;
			a->cap_days = cap;
		}
		i = a->n_days++;
		memset(&a->days[i], 0, sizeof a->days[i]);
		int failed = 0;
		a->days[i].day = day;
		a->days[i].model = usage_name_json(model, &failed);
		if (failed)
			return PS_ERR_NOMEM;
	}
	usage_sum_add(&a->days[i].sum, u);
	return PS_OK;
}

/* A usage field as a number; anything else counts 0 rather than poisoning
 * the sum (pi would produce NaN or a string there). */
static double usage_num(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_number(v) ? json_number_value(v) : 0;
}

static void usage_sum_add(struct usage_sum *to, const struct usage_sum *u)
{
	to->input += u->input;
	to->output += u->output;
	to->cache_read += u->cache_read;
	to->cache_write += u->cache_write;
	to->total_tokens += u->total_tokens;
	to->cost += u->cost;
}

/* Adds one usage under (provider, model). */
static ps_err usage_add_sum(struct usage_acc *a, const struct usage_sum *u, struct usage_name provider,
			    struct usage_name model)
{
	size_t i;
	usage_sum_add(&a->total, u);
	/* Rows stay few (the models a session used), so a linear search. */
	for (i = 0; i < a->n_rows; i++)
		if (usage_same(a->rows[i].provider, provider) && usage_same(a->rows[i].model, model))
			break;
	if (i == a->n_rows) {
		if (a->n_rows == a->cap_rows) {
			size_t cap = a->cap_rows ? a->cap_rows * 2 : 4;
			struct usage_row *rows = realloc(a->rows, cap * sizeof *rows);
			if (!rows)
				return PS_ERR_NOMEM;
			a->rows = rows;
			a->cap_rows = cap;
		}
		int failed = 0;
		memset(&a->rows[i], 0, sizeof a->rows[i]);
		a->rows[i].provider = usage_name_json(provider, &failed);
		a->rows[i].model = usage_name_json(model, &failed);
		a->n_rows++;
		if (failed)
			return PS_ERR_NOMEM;
	}
	usage_sum_add(&a->rows[i].sum, u);
	return usage_day_add(a, a->day, model, u);
}

/* Adds a usage object under (provider, model); non-string names count as
 * absent.  A usage that is not an object is not usage at all. */
static ps_err usage_add(struct usage_acc *a, const json_t *usage, const json_t *provider, const json_t *model)
{
	struct usage_sum u;
	if (!json_is_object(usage))
		return PS_OK;
	u.input = usage_num(usage, "input");
	u.output = usage_num(usage, "output");
	u.cache_read = usage_num(usage, "cacheRead");
	u.cache_write = usage_num(usage, "cacheWrite");
	u.total_tokens = usage_num(usage, "totalTokens");
	u.cost = usage_num(json_object_get(usage, "cost"), "total");
	return usage_add_sum(a, &u, usage_name_of(provider), usage_name_of(model));
}

/* What the index's kind (the role of a message, else the type) says about
 * an entry without parsing it. */
enum usage_class {
	USAGE_SKIP,     /* a type that is no message and carries no usage */
	USAGE_MESSAGE,  /* a message role that carries no usage */
	USAGE_PARSE,    /* may carry usage, or the kind alone is ambiguous */
};

static enum usage_class usage_classify(const char *kind)
{
	static const char *const skip[] = {
		"model_change", "thinking_level_change", "custom_message", "label", "session_info", "context_edit",
	};
	static const char *const message[] = {
		"user", "bashExecution", "branchSummary", "compactionSummary", "system",
		"message", /* a message entry without a role */
	};
	for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
		if (strcmp(kind, skip[i]) == 0)
			return USAGE_SKIP;
	for (size_t i = 0; i < sizeof message / sizeof message[0]; i++)
		if (strcmp(kind, message[i]) == 0)
			return USAGE_MESSAGE;
	/* assistant, toolResult[-tool], compaction, branch_summary and usage
	 * carry usage; "custom" is both an entry type and a message role; an
	 * unknown kind may be a message of a new role. */
	return USAGE_PARSE;
}

static ps_err usage_entry(struct usage_acc *a, const json_t *e)
{
	const char *type = json_string_value(json_object_get(e, "type"));

	if (!type)
		return PS_OK;
	if (strcmp(type, "message") == 0) {
		json_t *msg = json_object_get(e, "message");
		const char *role = json_string_value(json_object_get(msg, "role"));
		a->messages++;
		if (role && strcmp(role, "assistant") == 0) {
			json_t *model = json_object_get(msg, "responseModel");
			a->assistant++;
			if (!json_is_string(model))
				model = json_object_get(msg, "model");
			return usage_add(a, json_object_get(msg, "usage"), json_object_get(msg, "provider"), model);
		}
		if (role && strcmp(role, "toolResult") == 0)
			return usage_add(a, json_object_get(msg, "usage"), NULL, NULL);
		return PS_OK;
	}
	if (strcmp(type, "compaction") == 0 || strcmp(type, "branch_summary") == 0)
		return usage_add(a, json_object_get(e, "usage"), NULL, NULL);
	if (strcmp(type, "usage") == 0)
		return usage_add(a, json_object_get(e, "usage"), json_object_get(e, "provider"),
				 json_object_get(e, "model"));
	return PS_OK;
}

/* The entry as the index classed it (PS_ENTRY_USAGE), with the usage it
 * read from the line's usage members (session.h's ps_usage): 1 when done
 * (err set on failure), 0 when the line must be parsed (unclassed: the
 * index could not read it plainly).  The same sums as usage_entry over the
 * parsed line: the members are every usage, provider, model and
 * responseModel of the object (the last "message" one), duplicates
 * included, and the last one wins there too.  Reading a few hundred bytes
 * in place of the whole assistant line (its content above all) was half
 * of a store's first sessions.md; reading them while indexing, no second
 * read at all. */
static struct usage_name usage_pool_name(const struct ps_session *s, uint32_t off)
{
	struct usage_name n = { NULL, 0 };
	if (off != PS_NIL) {
		n.text = session_str(s, off);
		n.len = strlen(n.text);
	}
	return n;
}

static int usage_entry_fast(struct ps_session *s, uint32_t i, struct usage_acc *a, ps_err *err)
{
	const struct ps_entry *e = &s->entries[i];
	enum ps_entry_usage u = (enum ps_entry_usage)((e->flags & PS_ENTRY_USAGE_MASK) >> PS_ENTRY_USAGE_SHIFT);
	const struct ps_usage *rec = e->usage != PS_NIL ? &s->usages[e->usage] : NULL;
	*err = PS_OK;
	if (u == PS_USAGE_UNKNOWN)
		return 0;
	if (u == PS_USAGE_ASSISTANT)
		a->assistant++;
	if (u == PS_USAGE_ASSISTANT || u == PS_USAGE_TOOL_RESULT || u == PS_USAGE_MESSAGE)
		a->messages++;
	if (rec && u != PS_USAGE_MESSAGE && u != PS_USAGE_NONE)
		*err = usage_add_sum(a, &rec->sum, usage_pool_name(s, rec->provider), usage_pool_name(s, rec->model));
	return 1;
}

/* The members usage_entry reads (and session_migrate may touch): the
 * rest of a line, an assistant message's content above all, is read but
 * not built. */
static const char *const usage_keep_top[] = { "type", "message", "usage", "provider", "model", NULL };
static const char *const usage_keep_message[] = { "role", "responseModel", "model", "provider", "usage", NULL };
static const struct jparse_keep usage_keep = { usage_keep_top, "message", usage_keep_message };

/* A session's running totals over entries [0, upto): usage only adds up,
 * so an append costs only the new entries.  Hung on the session
 * (session_attach), which releases it when its index is rebuilt. */
struct usage_memo {
	struct ps_attachment link; /* first: the session holds this */
	struct usage_acc acc;
	uint32_t upto;
};

static void usage_memo_release(struct ps_attachment *a)
{
	struct usage_memo *m = (struct usage_memo *)a;
	usage_acc_free(&m->acc);
	free(m);
}

static const struct ps_attachment_type usage_memo_type = { usage_memo_release };

/* Brings the session's running totals up to its last entry and lends
 * them (valid while the session is held).  Sums are added in file order
 * either way, so continuing from where the last call stopped gives the
 * same doubles as a pass from the start. */
static ps_err usage_collect(struct ps_session *s, const struct usage_acc **out)
{
	if (!s->have_header)
		return PS_ERR_NOTSESSION;
	struct usage_memo *m = (struct usage_memo *)session_attachment(s, &usage_memo_type);
	if (!m) {
		m = calloc(1, sizeof *m);
		if (!m)
			return PS_ERR_NOMEM;
		m->link.type = &usage_memo_type;
		session_attach(s, &m->link);
	}
	struct usage_acc *a = &m->acc;
	for (uint32_t i = m->upto; i < s->n_entries; i++) {
		json_t *e = NULL;
		ps_err err;
		/* The day of an entry without a timestamp is that of the latest
		 * entry before it that has one. */
		if (s->entries[i].time_ms)
			a->last_ms = s->entries[i].time_ms;
		a->day = a->last_ms ? usage_day_of(a->last_ms) : USAGE_UNDATED;
		/* The index's class first: classing by kind is only for the lines
		 * it could not read plainly, and a kind is a role or a type. */
		if (!usage_entry_fast(s, i, a, &err)) {
			switch (usage_classify(session_str(s, s->entries[i].kind))) {
			case USAGE_SKIP:
				continue;
			case USAGE_MESSAGE:
				a->messages++;
				continue;
			case USAGE_PARSE:
				break;
			}
			err = session_load_entry_keep(s, i, &usage_keep, &e);
			if (err == PS_ERR_INVALID)
				continue; /* undecodable line (lone surrogate): nothing to read */
			if (!err)
				err = usage_entry(a, e);
			json_decref(e);
		}
		if (err) {
			/* Half-added totals are unusable: start over next time. */
			usage_acc_free(a);
			memset(a, 0, sizeof *a);
			m->upto = 0;
			return err;
		}
	}
	m->upto = s->n_entries;
	*out = a;
	return PS_OK;
}

ps_err usage_totals(struct ps_session *s, double *cost, uint64_t *messages)
{
	const struct usage_acc *a;
	ps_err err = usage_collect(s, &a);
	if (err)
		return err;
	*cost = a->total.cost;
	*messages = a->messages;
	return PS_OK;
}

/* JSON.stringify writes a non-finite number as null; jansson refuses to
 * hold one, so an overflowing sum becomes null here. */
static json_t *usage_number(double d)
{
	return isfinite(d) ? json_real(d) : json_null();
}

/* Sets the six sums on obj; -1 when memory runs out. */
static int usage_sum_json(json_t *obj, const struct usage_sum *u)
{
	return json_object_set_new(obj, "input", usage_number(u->input)) ||
	       json_object_set_new(obj, "output", usage_number(u->output)) ||
	       json_object_set_new(obj, "cacheRead", usage_number(u->cache_read)) ||
	       json_object_set_new(obj, "cacheWrite", usage_number(u->cache_write)) ||
	       json_object_set_new(obj, "totalTokens", usage_number(u->total_tokens)) ||
	       json_object_set_new(obj, "cost", usage_number(u->cost)) ? -1 : 0;
}

ps_err usage_sum_total(struct ps_session *s, struct usage_sum *out)
{
	const struct usage_acc *a;
	ps_err err = usage_collect(s, &a);
	if (!err)
		*out = a->total;
	return err;
}

void usage_sum_plus(struct usage_sum *to, const struct usage_sum *u)
{
	usage_sum_add(to, u);
}

/* "subagents" and "withSubagents" (usage.h), after the session's own. */
static int usage_family_json(json_t *root, const struct usage_sum *own, const struct usage_family *fam)
{
	json_t *sub = json_object(), *sub_total = json_object(), *with = json_object();
	struct usage_sum all = *own;
	usage_sum_add(&all, &fam->sum);
	int bad = json_object_set_new(root, "subagents", sub) | json_object_set_new(sub, "sessions", json_real((double)fam->sessions)) |
		  json_object_set_new(sub, "total", sub_total) | json_object_set_new(root, "withSubagents", with);
	return bad || usage_sum_json(sub_total, &fam->sum) || usage_sum_json(with, &all) ? -1 : 0;
}

ps_err usage_json(struct ps_session *s, char **buf, size_t *len)
{
	return usage_json_family(s, NULL, buf, len);
}

ps_err usage_json_family(struct ps_session *s, const struct usage_family *fam, char **buf, size_t *len)
{
	const struct usage_acc *a;
	json_t *root = NULL, *total, *rows;
	ps_err err = usage_collect(s, &a);

	*buf = NULL;
	*len = 0;
	if (err)
		return err;
	err = PS_ERR_NOMEM;
	root = json_object();
	total = json_object();
	rows = json_array();
	/* Not ||: json_object_set_new releases its value on every failure
	 * (a NULL root included), so each of the two must run. */
	if (json_object_set_new(root, "total", total) | json_object_set_new(root, "byModel", rows))
		goto out;
	if (usage_sum_json(total, &a->total))
		goto out;
	for (size_t i = 0; i < a->n_rows; i++) {
		json_t *row = json_object();
		if (json_array_append_new(rows, row) ||
		    json_object_set_new(row, "provider", a->rows[i].provider ? json_incref(a->rows[i].provider) : json_null()) ||
		    json_object_set_new(row, "model", a->rows[i].model ? json_incref(a->rows[i].model) : json_null()) ||
		    usage_sum_json(row, &a->rows[i].sum))
			goto out;
	}
	if (json_object_set_new(root, "messages", json_real((double)a->messages)) ||
	    json_object_set_new(root, "assistantMessages", json_real((double)a->assistant)))
		goto out;
	if (fam && usage_family_json(root, &a->total, fam))
		goto out;
	err = jsonout_pretty(root, buf, len);
out:
	json_decref(root);
	return err;
}

ps_err usage_days(struct ps_session *s, usage_day_fn fn, void *ctx)
{
	const struct usage_acc *a;
	ps_err err = usage_collect(s, &a);
	for (size_t i = 0; !err && i < a->n_days; i++) {
		struct usage_day d = { a->days[i].day, json_string_value(a->days[i].model),
				       json_string_length(a->days[i].model), a->days[i].sum };
		if (fn(ctx, &d))
			err = PS_ERR_NOMEM;
	}
	return err;
}

/* ---- CSV ---------------------------------------------------------------- */

/* One field, quoted when it must be (RFC 4180); a NULL field is empty.
 * Lengths are explicit: JSON strings may hold NUL bytes. */
int usage_csv_field(struct buf *out, const char *s, size_t n, int last)
{
	int quote = 0;
	int bad = 0;

	for (size_t i = 0; s && i < n && !quote; i++)
		quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
	if (quote) {
		bad |= buf_putc(out, '"');
		for (size_t i = 0; i < n; i++) {
			if (s[i] == '"')
				bad |= buf_putc(out, '"');
			bad |= buf_putc(out, s[i]);
		}
		bad |= buf_putc(out, '"');
	} else if (s) {
		bad |= buf_put(out, s, n);
	}
	bad |= buf_putc(out, last ? '\n' : ',');
	return bad ? -1 : 0;
}

static int usage_csv_str(struct buf *out, const char *s)
{
	return usage_csv_field(out, s, s ? strlen(s) : 0, 0);
}

static int usage_csv_json(struct buf *out, const json_t *v)
{
	return usage_csv_field(out, json_string_value(v), json_string_length(v), 0);
}

int usage_csv_num(struct buf *out, double d, int last)
{
	char num[32];
	jsonout_number(d, num);
	return usage_csv_field(out, num, strlen(num), last);
}

void usage_cost_text(double d, char out[USAGE_COST_TEXT])
{
	/* Below a million, d*100 is within 1e-8 of both d's exact value and
	 * JavaScript's digits of it, times 100: away from a tie (a half
	 * cent) by more than 1e-6, all three round to the same cents.  Each
	 * sessions.md and usage.csv row has a cost: this is most of them. */
	double a = fabs(d), x = a * 100;
	if (a < 1e6) {
		double whole = floor(x);
		if (fabs(x - whole - 0.5) > 1e-6) {
			long long cents = (long long)whole + (x - whole > 0.5);
			snprintf(out, USAGE_COST_TEXT, "%s%lld.%02lld", d < 0 ? "-" : "", cents / 100, cents % 100);
			return;
		}
	}
	usage_cost_text_exact(d, out);
}

void usage_cost_text_exact(double d, char out[USAGE_COST_TEXT])
{
	char sci[40], cents[40];
	double a = fabs(d);
	if (!isfinite(d) || a >= 1e21) {
		/* Beyond any bill: printf's own rounding will do. */
		snprintf(out, USAGE_COST_TEXT, "%.2f", isfinite(d) ? d : 0.0);
		return;
	}
	/* ccusage prints costs with Intl.NumberFormat (two fraction digits,
	 * rounding half away from zero), which rounds the number as
	 * JavaScript writes it: the shortest digits that read back as the
	 * double (1.005 is "1.005" and becomes 1.01, though the double is a
	 * little less).  %.*e with the least precision that round-trips gives
	 * those digits. */
	jsonout_shortest_e(a, sci);
	char digits[24];
	size_t n = 0;
	const char *p = sci;
	for (; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[n++] = *p;
	int exp10 = *p == 'e' ? atoi(p + 1) : 0;
	/* digits[0] is worth 10^exp10; digits[k] is the thousandths'. */
	long k = (long)exp10 + 3;
	size_t c = 0;
	for (long i = 0; i < k && c < sizeof cents - 1; i++)
		cents[c++] = (size_t)i < n ? digits[i] : '0';
	int up = k >= 0 && (size_t)k < n && digits[k] >= '5';
	while (c < 3) {
		memmove(cents + 1, cents, c++);
		cents[0] = '0';
	}
	for (size_t i = c; up && i-- > 0;) {
		if (cents[i] == '9') {
			cents[i] = '0';
		} else {
			cents[i]++;
			up = 0;
		}
	}
	cents[c] = '\0';
	snprintf(out, USAGE_COST_TEXT, "%s%s%.*s.%s", d < 0 ? "-" : "", up ? "1" : "", (int)(c - 2), cents,
		 cents + c - 2);
}

int usage_csv_cost(struct buf *out, double d, int last)
{
	char num[USAGE_COST_TEXT];
	usage_cost_text(d, num);
	return usage_csv_field(out, num, strlen(num), last);
}

ps_err usage_csv_header(struct buf *out)
{
	if (buf_puts(out, "project,session,id,name,cwd,start,lastActivity,messages,"
			  "input,output,cacheRead,cacheWrite,cost\n"))
		return PS_ERR_NOMEM;
	return PS_OK;
}

/* ISO-8601 as JavaScript's Date#toISOString writes it (years 0-9999). */
static void usage_iso(int64_t ms, char *out, size_t size)
{
	int64_t secs = ms / 1000;
	int64_t frac = ms % 1000;
	struct tm tm;

	if (frac < 0) {
		frac += 1000;
		secs--;
	}
	time_t t = (time_t)secs;
	if (!gmtime_r(&t, &tm) || tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999) {
		out[0] = '\0';
		return;
	}
	snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		 tm.tm_hour, tm.tm_min, tm.tm_sec, (int)frac);
}

ps_err usage_csv_row(struct ps_session *s, const char *project, const char *session_name_in_store,
		     struct buf *out)
{
	const struct usage_acc *a;
	json_t *header = NULL;
	char *line = NULL;
	size_t line_len, start_len = out->len;
	char last[40] = "";
	int64_t latest = 0;
	int have_latest = 0;
	ps_err err = usage_collect(s, &a);

	if (err)
		return err;
	err = session_read_header(s, &line, &line_len);
	if (err)
		goto out;
	header = session_parse_line(line, line_len);
	for (uint32_t i = 0; i < s->n_entries; i++) {
		/* time_ms is 0 for an entry without a usable timestamp. */
		int64_t t = s->entries[i].time_ms;
		if (t && (!have_latest || t > latest)) {
			latest = t;
			have_latest = 1;
		}
	}
	if (have_latest)
		usage_iso(latest, last, sizeof last);
	err = PS_ERR_NOMEM;
	if (usage_csv_str(out, project) || usage_csv_str(out, session_name_in_store) ||
	    usage_csv_str(out, session_str(s, s->session_id)) ||
	    usage_csv_str(out, s->name == PS_NIL ? NULL : session_str(s, s->name)) ||
	    usage_csv_json(out, json_object_get(header, "cwd")) ||
	    usage_csv_json(out, json_object_get(header, "timestamp")) || usage_csv_str(out, last) ||
	    usage_csv_num(out, (double)a->messages, 0) || usage_csv_num(out, a->total.input, 0) ||
	    usage_csv_num(out, a->total.output, 0) || usage_csv_num(out, a->total.cache_read, 0) ||
	    usage_csv_num(out, a->total.cache_write, 0) || usage_csv_cost(out, a->total.cost, 1))
		goto out;
	err = PS_OK;
out:
	if (err)
		out->len = start_len; /* no half row */
	json_decref(header);
	free(line);
	return err;
}
