/* Usage per day and model, and its files (usagedays.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "usage.h"
#include "usagedays.h"

struct usagedays_row {
	int32_t day;   /* or a month (year * 12 + month - 1) once collapsed */
	int no_model;  /* usage without a model of its own */
	char *model;   /* model_len bytes, NUL-terminated */
	size_t model_len;
	struct usage_sum sum;
};

struct usagedays {
	struct usagedays_row *rows;
	size_t n, cap;
};

ps_err usagedays_new(struct usagedays **out)
{
	*out = calloc(1, sizeof **out);
	return *out ? PS_OK : PS_ERR_NOMEM;
}

static void usagedays_rows_free(struct usagedays_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i].model);
	free(rows);
}

void usagedays_free(struct usagedays *t)
{
	if (!t)
		return;
	usagedays_rows_free(t->rows, t->n);
	free(t);
}

/* --- a session's blob -------------------------------------------------------------- */

/* Each row: int32 day, uint32 model length (UINT32_MAX: no model), six
 * doubles, the model's bytes. */
#define USAGEDAYS_FIXED (4 + 4 + 6 * sizeof(double))

static int usagedays_blob_row(void *ctx, const struct usage_day *d)
{
	struct buf *out = ctx;
	unsigned char fixed[USAGEDAYS_FIXED];
	uint32_t len = d->model ? (uint32_t)d->model_len : UINT32_MAX;
	double v[6] = { d->sum.input, d->sum.output, d->sum.cache_read,
			d->sum.cache_write, d->sum.total_tokens, d->sum.cost };
	if (d->model && d->model_len >= UINT32_MAX)
		return -1;
	memcpy(fixed, &d->day, 4);
	memcpy(fixed + 4, &len, 4);
	memcpy(fixed + 8, v, sizeof v);
	return buf_put(out, fixed, sizeof fixed) || (d->model && buf_put(out, d->model, d->model_len)) ? -1 : 0;
}

ps_err usagedays_session_blob(struct ps_session *s, struct buf *out)
{
	size_t start = out->len;
	ps_err err = usage_days(s, usagedays_blob_row, out);
	if (err)
		out->len = start;
	return err;
}

static ps_err usagedays_push(struct usagedays *t, const struct usagedays_row *r)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct usagedays_row *rows = realloc(t->rows, cap * sizeof *rows);
		if (!rows)
			return PS_ERR_NOMEM;
		t->rows = rows;
		t->cap = cap;
	}
	t->rows[t->n++] = *r;
	return PS_OK;
}

ps_err usagedays_add(struct usagedays *t, const void *blob, size_t len)
{
	const unsigned char *p = blob;
	size_t off = 0, first = t->n;
	while (off < len) {
		struct usagedays_row r;
		uint32_t mlen;
		double v[6];
		if (len - off < USAGEDAYS_FIXED)
			goto invalid;
		memset(&r, 0, sizeof r);
		memcpy(&r.day, p + off, 4);
		memcpy(&mlen, p + off + 4, 4);
		memcpy(v, p + off + 8, sizeof v);
		off += USAGEDAYS_FIXED;
		r.no_model = mlen == UINT32_MAX;
		r.model_len = r.no_model ? 0 : mlen;
		if (len - off < r.model_len)
			goto invalid;
		r.model = malloc(r.model_len + 1);
		if (!r.model) {
			t->n = first;
			return PS_ERR_NOMEM;
		}
		memcpy(r.model, p + off, r.model_len);
		r.model[r.model_len] = '\0';
		off += r.model_len;
		r.sum = (struct usage_sum){ v[0], v[1], v[2], v[3], v[4], v[5] };
		if (usagedays_push(t, &r)) {
			free(r.model);
			goto nomem;
		}
	}
	return PS_OK;
invalid:
	for (size_t i = first; i < t->n; i++)
		free(t->rows[i].model);
	t->n = first;
	return PS_ERR_INVALID;
nomem:
	for (size_t i = first; i < t->n; i++)
		free(t->rows[i].model);
	t->n = first;
	return PS_ERR_NOMEM;
}

/* --- summing ---------------------------------------------------------------------- */

/* Undated usage sorts after every day. */
static int64_t usagedays_key(int32_t day)
{
	return day == USAGE_UNDATED ? INT64_MAX : day;
}

static int usagedays_model_cmp(const struct usagedays_row *x, const struct usagedays_row *y)
{
	if (x->no_model != y->no_model)
		return x->no_model ? 1 : -1; /* the model-less row last */
	size_t n = x->model_len < y->model_len ? x->model_len : y->model_len;
	int c = memcmp(x->model, y->model, n);
	if (c)
		return c;
	return x->model_len < y->model_len ? -1 : x->model_len > y->model_len;
}

static int usagedays_cmp(const void *a, const void *b)
{
	const struct usagedays_row *x = a, *y = b;
	int64_t kx = usagedays_key(x->day), ky = usagedays_key(y->day);
	if (kx != ky)
		return kx < ky ? -1 : 1;
	return usagedays_model_cmp(x, y);
}

static void usagedays_sum_add(struct usage_sum *to, const struct usage_sum *u)
{
	to->input += u->input;
	to->output += u->output;
	to->cache_read += u->cache_read;
	to->cache_write += u->cache_write;
	to->total_tokens += u->total_tokens;
	to->cost += u->cost;
}

/* Sorts the rows by (day, model) and sums the rows of one pair into one. */
static void usagedays_merge(struct usagedays *t)
{
	size_t w = 0;
	if (t->n > 1)
		qsort(t->rows, t->n, sizeof *t->rows, usagedays_cmp);
	for (size_t i = 0; i < t->n; i++) {
		if (w && usagedays_cmp(&t->rows[w - 1], &t->rows[i]) == 0) {
			usagedays_sum_add(&t->rows[w - 1].sum, &t->rows[i].sum);
			free(t->rows[i].model);
		} else {
			t->rows[w++] = t->rows[i];
		}
	}
	t->n = w;
}

/* The civil date (proleptic Gregorian, UTC) of a day since the epoch. */
static void usagedays_civil(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static void usagedays_date(int32_t day, int monthly, char out[32])
{
	int64_t y;
	unsigned m, d;
	if (day == USAGE_UNDATED) {
		out[0] = '\0';
		return;
	}
	if (monthly) {
		int64_t k = day;
		y = k >= 0 ? k / 12 : -((-k + 11) / 12);
		m = (unsigned)(k - y * 12) + 1;
		snprintf(out, 32, "%04lld-%02u", (long long)y, m);
		return;
	}
	usagedays_civil(day, &y, &m, &d);
	snprintf(out, 32, "%04lld-%02u-%02u", (long long)y, m, d);
}

/* The rows again with each day replaced by its month, merged (a new table). */
static ps_err usagedays_months(const struct usagedays *t, struct usagedays *out)
{
	for (size_t i = 0; i < t->n; i++) {
		struct usagedays_row r = t->rows[i];
		if (r.day != USAGE_UNDATED) {
			int64_t y;
			unsigned m, d;
			usagedays_civil(r.day, &y, &m, &d);
			r.day = (int32_t)(y * 12 + (m - 1));
		}
		r.model = malloc(r.model_len + 1);
		if (!r.model)
			return PS_ERR_NOMEM;
		memcpy(r.model, t->rows[i].model, r.model_len + 1);
		if (usagedays_push(out, &r)) {
			free(r.model);
			return PS_ERR_NOMEM;
		}
	}
	usagedays_merge(out);
	return PS_OK;
}

/* --- the CSV files ----------------------------------------------------------------- */

static int usagedays_sums(struct buf *out, const struct usage_sum *u)
{
	return usage_csv_num(out, u->input, 0) || usage_csv_num(out, u->output, 0) ||
	       usage_csv_num(out, u->cache_write, 0) || usage_csv_num(out, u->cache_read, 0) ||
	       usage_csv_num(out, u->total_tokens, 0) || usage_csv_cost(out, u->cost, 1);
}

static const char *usagedays_model_name(const struct usagedays_row *r, size_t *len)
{
	*len = r->no_model ? strlen(USAGEDAYS_NO_MODEL) : r->model_len;
	return r->no_model ? USAGEDAYS_NO_MODEL : r->model;
}

/* One row per period (the rows sorted and merged): its models joined by
 * ';' and their sums. */
static int usagedays_csv_periods(const struct usagedays *t, int monthly, struct buf *out)
{
	struct buf models = BUF_INIT;
	int bad = 0;
	for (size_t i = 0; i < t->n && !bad;) {
		struct usage_sum sum = { 0 };
		char date[32];
		size_t j = i;
		models.len = 0;
		for (; j < t->n && t->rows[j].day == t->rows[i].day; j++) {
			size_t len;
			const char *name = usagedays_model_name(&t->rows[j], &len);
			bad |= (j > i && buf_putc(&models, ';')) || buf_put(&models, name, len);
			usagedays_sum_add(&sum, &t->rows[j].sum);
		}
		usagedays_date(t->rows[i].day, monthly, date);
		bad |= usage_csv_field(out, date, strlen(date), 0) || usage_csv_field(out, models.data, models.len, 0) ||
		       usagedays_sums(out, &sum);
		i = j;
	}
	buf_free(&models);
	return bad ? -1 : 0;
}

static int usagedays_csv_models(const struct usagedays *t, struct buf *out)
{
	int bad = 0;
	for (size_t i = 0; i < t->n && !bad; i++) {
		char date[32];
		size_t len;
		const char *name = usagedays_model_name(&t->rows[i], &len);
		usagedays_date(t->rows[i].day, 0, date);
		bad |= usage_csv_field(out, date, strlen(date), 0) || usage_csv_field(out, name, len, 0) ||
		       usagedays_sums(out, &t->rows[i].sum);
	}
	return bad ? -1 : 0;
}

/* --- the picture ------------------------------------------------------------------- */

/* Saturated, told apart at a glance (Tableau 10 without its grey). */
static const char *const usagedays_colours[] = {
	"#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#ff9da7", "#9c755f",
};
#define USAGEDAYS_N_COLOURS (sizeof usagedays_colours / sizeof usagedays_colours[0])

/* Text for SVG: XML's five escaped, control characters (not allowed in
 * XML 1.0) as '?'. */
static int usagedays_xml(struct buf *out, const char *s, size_t n)
{
	int bad = 0;
	for (size_t i = 0; i < n && !bad; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '&': bad = buf_puts(out, "&amp;"); break;
		case '<': bad = buf_puts(out, "&lt;"); break;
		case '>': bad = buf_puts(out, "&gt;"); break;
		case '"': bad = buf_puts(out, "&quot;"); break;
		case '\'': bad = buf_puts(out, "&apos;"); break;
		default: bad = buf_putc(out, c < 0x20 || c == 0x7f ? '?' : (char)c);
		}
	}
	return bad;
}

struct usagedays_model {
	const struct usagedays_row *row; /* its name */
	double cost;
};

static int usagedays_by_cost(const void *a, const void *b)
{
	const struct usagedays_model *x = a, *y = b;
	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	return usagedays_model_cmp(x->row, y->row);
}

/* A round number at least v (1, 2, 2.5, 3, 4, 5, 6 or 8 times a power of
 * ten: its fifths, the axis' ticks, are round too), so the tallest bar
 * fills most of the plot. */
static double usagedays_nice(double v)
{
	static const double steps[] = { 1, 2, 2.5, 3, 4, 5, 6, 8, 10 };
	if (!(v > 0) || !isfinite(v))
		return 1;
	double p = pow(10, floor(log10(v)));
	double f = v / p;
	size_t i = 0;
	while (i + 1 < sizeof steps / sizeof steps[0] && f > steps[i] * (1 + 1e-12))
		i++;
	return steps[i] * p;
}

static void usagedays_money(double d, char out[USAGE_COST_TEXT + 1])
{
	out[0] = '$';
	usage_cost_text(d, out + 1);
}

/* The chart's geometry, in pixels (integers, so a bar's edges fall on
 * pixels). */
#define SVG_LEFT 80
#define SVG_RIGHT 30
#define SVG_TOP 60
#define SVG_PLOT_H 320
#define SVG_LABELS_H 90
#define SVG_LEGEND_ROW 20

/* The time axis: days while the span fits in a quarter, else weeks (from
 * Monday) up to two years, else months; each a slot of the axis whether
 * or not it had usage, so a year without use is a year wide. */
enum usagedays_unit { UNIT_DAY, UNIT_WEEK, UNIT_MONTH };
#define UNIT_DAY_MAX_SPAN 92
#define UNIT_WEEK_MAX_SPAN 731

static int64_t usagedays_floor_div(int64_t a, int64_t b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The slot a day (days since 1970-01-01, a Thursday) falls in. */
static int64_t usagedays_slot(int32_t day, enum usagedays_unit unit)
{
	int64_t y;
	unsigned m, d;
	switch (unit) {
	case UNIT_WEEK:
		return usagedays_floor_div((int64_t)day + 3, 7);
	case UNIT_MONTH:
		usagedays_civil(day, &y, &m, &d);
		return y * 12 + (m - 1);
	default:
		return day;
	}
}

/* A slot's label: its first day (YYYY-MM-DD), or its month (YYYY-MM). */
static void usagedays_slot_date(int64_t slot, enum usagedays_unit unit, char out[32])
{
	if (unit == UNIT_MONTH)
		usagedays_date((int32_t)slot, 1, out);
	else
		usagedays_date((int32_t)(unit == UNIT_WEEK ? slot * 7 - 3 : slot), 0, out);
}

/* What the chart draws: its models (costliest first), its slots. */
struct usagedays_chart {
	struct usagedays_model *models;
	size_t n_models, n_dated;   /* rows with a day come first */
	enum usagedays_unit unit;
	int64_t first, n_slots;     /* the first slot, how many */
	double total, max_slot;
	int step, bar, plot_w;      /* pixels */
};

static int usagedays_chart_make(const struct usagedays *t, struct usagedays_chart *c)
{
	memset(c, 0, sizeof *c);
	while (c->n_dated < t->n && t->rows[c->n_dated].day != USAGE_UNDATED)
		c->n_dated++;
	for (size_t i = 0; i < t->n; i++)
		c->total += t->rows[i].sum.cost;
	int32_t span = c->n_dated ? t->rows[c->n_dated - 1].day - t->rows[0].day + 1 : 0;
	c->unit = span <= UNIT_DAY_MAX_SPAN ? UNIT_DAY : span <= UNIT_WEEK_MAX_SPAN ? UNIT_WEEK : UNIT_MONTH;
	if (c->n_dated) {
		c->first = usagedays_slot(t->rows[0].day, c->unit);
		c->n_slots = usagedays_slot(t->rows[c->n_dated - 1].day, c->unit) - c->first + 1;
	}
	c->models = calloc(t->n ? t->n : 1, sizeof *c->models);
	if (!c->models)
		return -1;
	double slot_cost = 0;
	for (size_t i = 0; i < c->n_dated; i++) {
		const struct usagedays_row *r = &t->rows[i];
		size_t k;
		if (i > 0 && usagedays_slot(t->rows[i - 1].day, c->unit) != usagedays_slot(r->day, c->unit))
			slot_cost = 0;
		slot_cost += r->sum.cost;
		if (slot_cost > c->max_slot)
			c->max_slot = slot_cost;
		for (k = 0; k < c->n_models && usagedays_model_cmp(c->models[k].row, r) != 0; k++)
			;
		if (k == c->n_models)
			c->models[c->n_models++].row = r;
		c->models[k].cost += r->sum.cost;
	}
	if (c->n_models > 1)
		qsort(c->models, c->n_models, sizeof *c->models, usagedays_by_cost);
	/* Slots as wide as fit in about 1400 pixels, between 3 and 36. */
	int64_t step = c->n_slots ? 1400 / c->n_slots : 36;
	c->step = step > 36 ? 36 : step < 3 ? 3 : (int)step;
	c->bar = c->step * 3 / 4 > 2 ? c->step * 3 / 4 : 2;
	c->plot_w = (int)c->n_slots * c->step < 480 ? 480 : (int)c->n_slots * c->step;
	return 0;
}

/* The title, the plot area (its unit, first slot and slot width in data-
 * attributes, for the tests) and the y axis: five ticks up to a round
 * maximum. */
static int usagedays_svg_frame(const struct usagedays_chart *c, const char *title, double ymax, struct buf *out)
{
	static const char *const per[] = { "day (UTC)", "week (UTC, from Monday)", "month (UTC)" };
	static const char *const unit_name[] = { "day", "week", "month" };
	int width = SVG_LEFT + c->plot_w + SVG_RIGHT;
	int legend_y = SVG_TOP + SVG_PLOT_H + SVG_LABELS_H;
	int height = legend_y + (int)(c->n_models ? c->n_models : 1) * SVG_LEGEND_ROW + 20;
	int base = SVG_TOP + SVG_PLOT_H;
	char money[USAGE_COST_TEXT + 1], first[32];
	int bad = 0;

	usagedays_money(c->total, money);
	usagedays_slot_date(c->first, c->unit, first);
	bad |= buf_printf(out,
			  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
			  "font-family=\"sans-serif\" font-size=\"12\">\n"
			  "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
			  "<text x=\"%d\" y=\"28\" font-size=\"18\" font-weight=\"bold\">Cost per %s: ",
			  width, height, width, height, SVG_LEFT, per[c->unit]);
	bad |= usagedays_xml(out, title, strlen(title));
	bad |= buf_printf(out, ", total %s</text>\n", money);
	bad |= buf_printf(out,
			  "<rect id=\"plot\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
			  "data-unit=\"%s\" data-first=\"%s\" data-step=\"%d\"/>\n",
			  SVG_LEFT, SVG_TOP, c->plot_w, SVG_PLOT_H, unit_name[c->unit], c->n_dated ? first : "", c->step);
	for (int k = 0; k <= 5; k++) {
		int y = base - SVG_PLOT_H * k / 5;
		usagedays_money(ymax * k / 5, money);
		bad |= buf_printf(out,
				  "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\"/>\n"
				  "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#333333\">%s</text>\n",
				  SVG_LEFT, y, SVG_LEFT + c->plot_w, y, k ? "#e0e0e0" : "#333333", SVG_LEFT - 6, y + 4,
				  money);
	}
	bad |= buf_printf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>\n", SVG_LEFT,
			  SVG_TOP, SVG_LEFT, base);
	if (!c->n_dated)
		bad |= buf_printf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#666666\">no usage</text>\n",
				  SVG_LEFT + c->plot_w / 2, SVG_TOP + SVG_PLOT_H / 2);
	return bad;
}

/* The bars, each slot's models stacked in the legend's order, the
 * costliest at the bottom, at the slot's place on the axis; a date under
 * every slot 24 pixels or more apart (rotated, they need no more),
 * empty slots included. */
static int usagedays_svg_bars(const struct usagedays *t, const struct usagedays_chart *c, double ymax,
			      struct buf *out)
{
	int base = SVG_TOP + SVG_PLOT_H, bad = 0;
	int64_t label_every = (24 + c->step - 1) / c->step;
	char money[USAGE_COST_TEXT + 1], date[32];
	bad |= buf_puts(out, "<g id=\"bars\" shape-rendering=\"crispEdges\">\n");
	for (size_t i = 0; i < c->n_dated && !bad;) {
		int64_t slot = usagedays_slot(t->rows[i].day, c->unit);
		size_t j = i;
		while (j < c->n_dated && usagedays_slot(t->rows[j].day, c->unit) == slot)
			j++;
		int x = SVG_LEFT + (int)(slot - c->first) * c->step + (c->step - c->bar) / 2;
		double below = 0;
		usagedays_slot_date(slot, c->unit, date);
		for (size_t k = 0; k < c->n_models && !bad; k++) {
			double cost = 0;
			for (size_t r = i; r < j; r++)
				if (usagedays_model_cmp(c->models[k].row, &t->rows[r]) == 0 && t->rows[r].sum.cost > 0)
					cost += t->rows[r].sum.cost;
			if (!(cost > 0))
				continue;
			double y0 = base - below / ymax * SVG_PLOT_H;
			below += cost;
			double y1 = base - below / ymax * SVG_PLOT_H;
			size_t len;
			const char *name = usagedays_model_name(c->models[k].row, &len);
			usagedays_money(cost, money);
			bad |= buf_printf(out,
					  "<rect x=\"%d\" y=\"%.2f\" width=\"%d\" height=\"%.2f\" fill=\"%s\"><title>%s ",
					  x, y1, c->bar, y0 - y1, usagedays_colours[k % USAGEDAYS_N_COLOURS], date);
			bad |= usagedays_xml(out, name, len);
			bad |= buf_printf(out, " %s</title></rect>\n", money);
		}
		i = j;
	}
	for (int64_t s = 0; s < c->n_slots && !bad; s += label_every) {
		int x = SVG_LEFT + (int)s * c->step + c->step / 2 + 4;
		usagedays_slot_date(c->first + s, c->unit, date);
		bad |= buf_printf(out,
				  "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#333333\" "
				  "transform=\"rotate(-45 %d %d)\">%s</text>\n",
				  x, base + 14, x, base + 14, date);
	}
	bad |= buf_puts(out, "</g>\n");
	return bad;
}

static int usagedays_svg(const struct usagedays *t, const char *title, struct buf *out)
{
	struct usagedays_chart c;
	char money[USAGE_COST_TEXT + 1];
	if (usagedays_chart_make(t, &c) != 0)
		return -1;
	double ymax = usagedays_nice(c.max_slot);
	int bad = usagedays_svg_frame(&c, title, ymax, out) || usagedays_svg_bars(t, &c, ymax, out);
	/* The legend: each model's colour, name and cost. */
	int legend_y = SVG_TOP + SVG_PLOT_H + SVG_LABELS_H;
	for (size_t k = 0; k < c.n_models && !bad; k++) {
		int y = legend_y + (int)k * SVG_LEGEND_ROW;
		size_t len;
		const char *name = usagedays_model_name(c.models[k].row, &len);
		usagedays_money(c.models[k].cost, money);
		bad |= buf_printf(out,
				  "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n"
				  "<text x=\"%d\" y=\"%d\">",
				  SVG_LEFT, y, usagedays_colours[k % USAGEDAYS_N_COLOURS], SVG_LEFT + 18, y + 11);
		bad |= usagedays_xml(out, name, len);
		bad |= buf_printf(out, " %s</text>\n", money);
	}
	bad |= buf_puts(out, "</svg>\n");
	free(c.models);
	return bad ? -1 : 0;
}

ps_err usagedays_write(struct usagedays *t, enum usagedays_file file, const char *title, struct buf *out)
{
	static const char *const cols = "inputTokens,outputTokens,cacheCreationTokens,cacheReadTokens,totalTokens,";
	size_t start = out->len;
	int bad = 0;
	usagedays_merge(t);
	switch (file) {
	case USAGEDAYS_DAILY:
		bad = buf_printf(out, "date,modelsUsed,%stotalCost\n", cols) || usagedays_csv_periods(t, 0, out);
		break;
	case USAGEDAYS_MONTHLY: {
		struct usagedays months = { 0 };
		bad = buf_printf(out, "month,modelsUsed,%stotalCost\n", cols) || usagedays_months(t, &months) ||
		      usagedays_csv_periods(&months, 1, out);
		usagedays_rows_free(months.rows, months.n);
		break;
	}
	case USAGEDAYS_DAILY_MODELS:
		bad = buf_printf(out, "date,modelName,%scost\n", cols) || usagedays_csv_models(t, out);
		break;
	case USAGEDAYS_SVG:
		bad = usagedays_svg(t, title ? title : "", out);
		break;
	}
	if (bad) {
		out->len = start;
		return PS_ERR_NOMEM;
	}
	return PS_OK;
}
