/* The transcript of a path (transcript.h).  Each entry's section is built
 * from that entry alone, which is what makes a shorter path's transcript a
 * prefix of a longer one's: keep it so (no look-ahead, no totals, no
 * "current" anything). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "images.h"
#include "jsonout.h"
#include "jstext.h"
#include "layout.h"
#include "transcript.h"

struct transcript_ctx {
	const struct ps_session *s;
	const char *link_prefix; /* from the transcript's directory to the session's */
	struct buf b;
	int err;       /* an allocation failed: later writes are skipped */
	int in_note;   /* parts written into the open note, 0 when none is open */
};

/* ---- output ---------------------------------------------------------- */

static void transcript_put(struct transcript_ctx *c, const char *p, size_t n)
{
	if (!c->err && buf_put(&c->b, p, n))
		c->err = 1;
}

static void transcript_puts(struct transcript_ctx *c, const char *s)
{
	transcript_put(c, s, strlen(s));
}

/* The UTF-8 of a lone surrogate's stand-in (U+10F800..U+10FFFF, jstext.h):
 * F4 8F A0..BF 80..BF. */
static int transcript_is_standin(const unsigned char *p, size_t n)
{
	return n >= 4 && p[0] == 0xf4 && p[1] == 0x8f && (p[2] & 0xe0) == 0xa0 && (p[3] & 0xc0) == 0x80;
}

/* Copies text verbatim but for stand-ins (U+FFFD, what Node writes for a
 * lone surrogate); fold: control characters become spaces, for text that
 * must stay on one line (headings, notes). */
static void transcript_text_mode(struct transcript_ctx *c, const char *s, size_t n, int fold)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t run = 0;

	if (!s || !n)
		return; /* a field that is not a string: nothing to show */

	for (size_t i = 0; i < n; i++) {
		int standin = p[i] == 0xf4 && transcript_is_standin(p + i, n - i);
		int ctrl = fold && (p[i] < 0x20 || p[i] == 0x7f);
		if (!standin && !ctrl)
			continue;
		transcript_put(c, s + run, i - run);
		if (standin) {
			transcript_put(c, "\xef\xbf\xbd", 3);
			i += 3;
		} else {
			transcript_put(c, " ", 1);
		}
		run = i + 1;
	}
	transcript_put(c, s + run, n - run);
}

static void transcript_line(struct transcript_ctx *c, const char *s, size_t n)
{
	transcript_text_mode(c, s, n, 1);
}

static void transcript_line_json(struct transcript_ctx *c, const json_t *v)
{
	transcript_line(c, json_string_value(v), json_string_length(v));
}

static void transcript_heading(struct transcript_ctx *c, const char *title)
{
	transcript_puts(c, "## ");
	transcript_puts(c, title);
}

static void transcript_heading_end(struct transcript_ctx *c)
{
	transcript_puts(c, "\n\n");
}

/* A paragraph of verbatim text, newline-terminated, then a blank line. */
static void transcript_para(struct transcript_ctx *c, const char *s, size_t n)
{
	if (!n)
		return;
	transcript_text_mode(c, s, n, 0);
	transcript_puts(c, s[n - 1] == '\n' ? "\n" : "\n\n");
}

static void transcript_para_json(struct transcript_ctx *c, const json_t *v)
{
	if (json_is_string(v))
		transcript_para(c, json_string_value(v), json_string_length(v));
}

/* A fenced block: the fence is longer than the longest backtick run inside,
 * so no text can close it early (CommonMark). */
static void transcript_fence(struct transcript_ctx *c, const char *info, const char *s, size_t n)
{
	size_t longest = 0, cur = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++) {
		cur = s[i] == '`' ? cur + 1 : 0;
		if (cur > longest)
			longest = cur;
	}
	size_t fence = longest < 3 ? 3 : longest + 1;
	for (size_t i = 0; i < fence; i++)
		transcript_put(c, "`", 1);
	transcript_puts(c, info);
	transcript_put(c, "\n", 1);
	transcript_text_mode(c, s, n, 0);
	if (s[n - 1] != '\n')
		transcript_put(c, "\n", 1);
	for (size_t i = 0; i < fence; i++)
		transcript_put(c, "`", 1);
	transcript_puts(c, "\n\n");
}

/* Thinking as a blockquote: "> " before every line, ">" alone for an empty
 * one, so the quote holds the text's lines exactly. */
static void transcript_quote(struct transcript_ctx *c, const char *s, size_t n)
{
	size_t i = 0;

	if (!n)
		return;
	while (i < n) {
		const char *nl = memchr(s + i, '\n', n - i);
		size_t end = nl ? (size_t)(nl - s) : n;
		transcript_puts(c, end > i ? "> " : ">");
		transcript_text_mode(c, s + i, end - i, 0);
		transcript_put(c, "\n", 1);
		i = end + 1;
	}
	transcript_put(c, "\n", 1);
}

/* Notes: "*Part. Part*" on one line.  Parts accumulate until note_end. */
static void transcript_note(struct transcript_ctx *c, const char *text)
{
	transcript_puts(c, c->in_note++ ? ". " : "*");
	transcript_puts(c, text);
}

static void transcript_note_end(struct transcript_ctx *c)
{
	if (c->in_note)
		transcript_puts(c, "*\n\n");
	c->in_note = 0;
}

static void transcript_note_number(struct transcript_ctx *c, const json_t *v)
{
	char num[32];
	jsonout_number(json_number_value(v), num);
	transcript_puts(c, num);
}

/* ---- content ----------------------------------------------------------- */

/* The entry file's path from the session directory through the branches'
 * id names: a label that comes later renames a branch in listings, and
 * would change the bytes of a transcript already read (tail -f). */
static char *transcript_entry_path(const struct ps_session *s, uint32_t idx)
{
	struct buf b = BUF_INIT;
	char *out = NULL, *name = NULL;
	uint32_t *chain = NULL;
	size_t n = 0;

	for (uint32_t br = s->entries[idx].branch; br != 0; br = s->branches[br].parent)
		n++;
	if (n && !(chain = malloc(n * sizeof *chain)))
		goto out;
	n = 0;
	for (uint32_t br = s->entries[idx].branch; br != 0; br = s->branches[br].parent)
		chain[n++] = br;
	while (n--) {
		if (!(name = layout_branch_id_name(s, chain[n])) || buf_puts(&b, name) || buf_putc(&b, '/'))
			goto out;
		free(name);
		name = NULL;
	}
	if (!(name = layout_entry_name(s, idx)) || buf_puts(&b, name) || buf_finish(&b))
		goto out;
	out = b.data;
	b.data = NULL;
out:
	free(name);
	free(chain);
	buf_free(&b);
	return out;
}

static void transcript_image(struct transcript_ctx *c, const json_t *blk, uint32_t idx, size_t n)
{
	const char *ext = images_ext(json_string_value(json_object_get(blk, "mimeType")));
	/* The images directory beside the entry file is NNNN-kind.id.images
	 * (layout.c). */
	char *entry = transcript_entry_path(c->s, idx);
	char *link = entry ? images_link(c->link_prefix, entry, n, ext) : NULL;

	if (!link) {
		c->err = 1;
		goto out;
	}
	transcript_puts(c, link);
	transcript_puts(c, "\n\n");
out:
	free(link);
	free(entry);
}

static void transcript_tool_call(struct transcript_ctx *c, const json_t *blk)
{
	const json_t *args = json_object_get(blk, "arguments");
	char *text = NULL;
	size_t len;

	transcript_puts(c, "**");
	if (json_is_string(json_object_get(blk, "name")))
		transcript_line_json(c, json_object_get(blk, "name"));
	else
		transcript_puts(c, "tool call");
	transcript_puts(c, "**\n\n");
	if (!args)
		return;
	if (jsonout_pretty(args, &text, &len)) {
		c->err = 1;
		return;
	}
	transcript_fence(c, "json", text, len);
	free(text);
}

/* A message's content: a string, or blocks in order.  fence_text: tool
 * output goes in fences (it is rarely Markdown); what people and models
 * wrote stays bare. */
static void transcript_content(struct transcript_ctx *c, const json_t *content, uint32_t idx, int fence_text)
{
	size_t i, images = 0;
	json_t *blk;

	if (json_is_string(content)) {
		if (fence_text)
			transcript_fence(c, "", json_string_value(content), json_string_length(content));
		else
			transcript_para_json(c, content);
		return;
	}
	json_array_foreach(content, i, blk) {
		const char *type = json_string_value(json_object_get(blk, "type"));
		const json_t *text;
		if (!type)
			type = "";
		if (strcmp(type, "text") == 0 && json_is_string(text = json_object_get(blk, "text"))) {
			if (fence_text)
				transcript_fence(c, "", json_string_value(text), json_string_length(text));
			else
				transcript_para_json(c, text);
		} else if (strcmp(type, "thinking") == 0 && json_is_string(text = json_object_get(blk, "thinking"))) {
			transcript_quote(c, json_string_value(text), json_string_length(text));
		} else if (strcmp(type, "toolCall") == 0) {
			transcript_tool_call(c, blk);
		} else if (images_is_image(blk)) {
			/* Numbered as images_list() numbers them. */
			transcript_image(c, blk, idx, images++);
		} else {
			transcript_note(c, "[");
			transcript_line(c, type, strlen(type));
			transcript_puts(c, *type ? " block]" : "content block]");
			transcript_note_end(c);
		}
	}
}

/* ---- entries ----------------------------------------------------------- */

static int transcript_is(const json_t *v, const char *s)
{
	const char *t = json_string_value(v);
	return t && strcmp(t, s) == 0;
}

static void transcript_assistant(struct transcript_ctx *c, const json_t *msg, uint32_t idx)
{
	const json_t *provider = json_object_get(msg, "provider");
	const json_t *model = json_object_get(msg, "model");
	const json_t *stop = json_object_get(msg, "stopReason");

	transcript_heading(c, "Assistant");
	if (json_is_string(provider) || json_is_string(model)) {
		transcript_puts(c, " (");
		transcript_line_json(c, provider);
		if (json_is_string(provider) && json_is_string(model))
			transcript_puts(c, "/");
		transcript_line_json(c, model);
		transcript_puts(c, ")");
	}
	transcript_heading_end(c);
	transcript_content(c, json_object_get(msg, "content"), idx, 0);
	if (transcript_is(stop, "error")) {
		transcript_note(c, "Error");
		if (json_is_string(json_object_get(msg, "errorMessage"))) {
			transcript_puts(c, ": ");
			transcript_line_json(c, json_object_get(msg, "errorMessage"));
		}
	} else if (transcript_is(stop, "aborted")) {
		transcript_note(c, "Aborted");
	} else if (transcript_is(stop, "length")) {
		transcript_note(c, "Stopped at the output limit");
	}
	transcript_note_end(c);
}

static void transcript_bash(struct transcript_ctx *c, const json_t *msg)
{
	const json_t *cmd = json_object_get(msg, "command");
	const json_t *exit_code = json_object_get(msg, "exitCode");
	const char *command = json_string_value(cmd);
	size_t n = json_string_length(cmd);
	int multiline = command && memchr(command, '\n', n) != NULL;

	transcript_heading(c, "Bash");
	if (command && !multiline) {
		transcript_puts(c, ": ");
		transcript_line(c, command, n);
	}
	transcript_heading_end(c);
	if (multiline)
		transcript_fence(c, "sh", command, n);
	if (json_is_string(json_object_get(msg, "output")))
		transcript_fence(c, "", json_string_value(json_object_get(msg, "output")),
				 json_string_length(json_object_get(msg, "output")));
	if (json_is_number(exit_code) && json_number_value(exit_code) != 0) {
		transcript_note(c, "Exit code ");
		transcript_note_number(c, exit_code);
	}
	if (json_is_true(json_object_get(msg, "cancelled")))
		transcript_note(c, "Cancelled");
	if (json_is_true(json_object_get(msg, "truncated"))) {
		transcript_note(c, "Output truncated");
		if (json_is_string(json_object_get(msg, "fullOutputPath"))) {
			transcript_puts(c, ", full output in ");
			transcript_line_json(c, json_object_get(msg, "fullOutputPath"));
		}
	}
	if (json_is_true(json_object_get(msg, "excludeFromContext")))
		transcript_note(c, "Not sent to the model");
	transcript_note_end(c);
}

/* A custom message (role custom, or a custom_message entry): obj holds
 * customType, display and content. */
static void transcript_custom(struct transcript_ctx *c, const json_t *obj, uint32_t idx)
{
	transcript_heading(c, "Custom message");
	if (json_is_string(json_object_get(obj, "customType"))) {
		transcript_puts(c, ": ");
		transcript_line_json(c, json_object_get(obj, "customType"));
	}
	if (json_is_false(json_object_get(obj, "display")))
		transcript_puts(c, " (hidden)");
	transcript_heading_end(c);
	transcript_content(c, json_object_get(obj, "content"), idx, 0);
}

static void transcript_system(struct transcript_ctx *c, const json_t *msg, uint32_t idx)
{
	const json_t *sections = json_object_get(msg, "sections");
	const char *key;
	size_t klen;
	json_t *v;

	transcript_heading(c, "System prompt");
	transcript_heading_end(c);
	transcript_content(c, json_object_get(msg, "content"), idx, 0);
	json_object_keylen_foreach((json_t *)sections, key, klen, v) {
		/* null removes a section: nothing was said. */
		if (!json_is_string(v))
			continue;
		transcript_puts(c, "### ");
		transcript_line(c, key, klen);
		transcript_puts(c, "\n\n");
		transcript_para_json(c, v);
	}
}

/* A compaction entry, or a compactionSummary message: obj holds summary,
 * tokensBefore and (entries only) what was kept. */
static void transcript_compaction(struct transcript_ctx *c, const json_t *obj)
{
	const json_t *kept = json_object_get(obj, "firstKeptEntryId");
	const json_t *tail = json_object_get(obj, "retainedTail");
	const json_t *tokens = json_object_get(obj, "tokensBefore");

	transcript_heading(c, "Summary of the conversation before this point");
	transcript_heading_end(c);
	transcript_para_json(c, json_object_get(obj, "summary"));
	if (json_is_number(tokens)) {
		transcript_note(c, "Compacted ");
		transcript_note_number(c, tokens);
		transcript_puts(c, " tokens");
	}
	/* retainedTail wins over firstKeptEntryId, as in context building. */
	if (json_is_array(tail)) {
		char num[32];
		snprintf(num, sizeof num, "%zu", json_array_size(tail));
		transcript_note(c, "Kept ");
		transcript_puts(c, num);
		transcript_puts(c, json_array_size(tail) == 1 ? " message" : " messages");
		transcript_puts(c, " stored with the summary");
	} else if (json_is_string(kept)) {
		transcript_note(c, "Kept the entries from ");
		transcript_line_json(c, kept);
		transcript_puts(c, " on");
	}
	transcript_note_end(c);
}

static void transcript_branch_summary(struct transcript_ctx *c, const json_t *obj)
{
	transcript_heading(c, "Branch summary");
	transcript_heading_end(c);
	transcript_para_json(c, json_object_get(obj, "summary"));
	if (json_is_string(json_object_get(obj, "fromId"))) {
		transcript_note(c, "Summarizes the abandoned branch that ended at entry ");
		transcript_line_json(c, json_object_get(obj, "fromId"));
	}
	transcript_note_end(c);
}

static void transcript_message(struct transcript_ctx *c, const json_t *msg, uint32_t idx)
{
	const json_t *role = json_object_get(msg, "role");

	if (transcript_is(role, "user")) {
		transcript_heading(c, "User");
		transcript_heading_end(c);
		transcript_content(c, json_object_get(msg, "content"), idx, 0);
	} else if (transcript_is(role, "assistant")) {
		transcript_assistant(c, msg, idx);
	} else if (transcript_is(role, "toolResult")) {
		transcript_heading(c, "Tool result");
		if (json_is_string(json_object_get(msg, "toolName"))) {
			transcript_puts(c, ": ");
			transcript_line_json(c, json_object_get(msg, "toolName"));
		}
		if (json_is_true(json_object_get(msg, "isError")))
			transcript_puts(c, " (error)");
		transcript_heading_end(c);
		transcript_content(c, json_object_get(msg, "content"), idx, 1);
	} else if (transcript_is(role, "bashExecution")) {
		transcript_bash(c, msg);
	} else if (transcript_is(role, "custom")) {
		transcript_custom(c, msg, idx);
	} else if (transcript_is(role, "branchSummary")) {
		transcript_branch_summary(c, msg);
	} else if (transcript_is(role, "compactionSummary")) {
		transcript_compaction(c, msg);
	} else if (transcript_is(role, "system")) {
		transcript_system(c, msg, idx);
	} else {
		/* A role this does not know: its name and whatever it says. */
		transcript_puts(c, "## ");
		if (json_is_string(role))
			transcript_line_json(c, role);
		else
			transcript_puts(c, "Message");
		transcript_heading_end(c);
		transcript_content(c, json_object_get(msg, "content"), idx, 0);
	}
}

static void transcript_entry(struct transcript_ctx *c, const json_t *e, uint32_t idx)
{
	const json_t *type = json_object_get(e, "type");
	const char *t = json_string_value(type);

	if (!t)
		t = "";
	if (strcmp(t, "message") == 0) {
		transcript_message(c, json_object_get(e, "message"), idx);
	} else if (strcmp(t, "compaction") == 0) {
		transcript_compaction(c, e);
	} else if (strcmp(t, "branch_summary") == 0) {
		transcript_branch_summary(c, e);
	} else if (strcmp(t, "custom_message") == 0) {
		transcript_custom(c, e, idx);
	} else if (strcmp(t, "model_change") == 0) {
		transcript_note(c, "Model: ");
		transcript_line_json(c, json_object_get(e, "provider"));
		transcript_puts(c, "/");
		transcript_line_json(c, json_object_get(e, "modelId"));
	} else if (strcmp(t, "thinking_level_change") == 0) {
		transcript_note(c, "Thinking level: ");
		transcript_line_json(c, json_object_get(e, "thinkingLevel"));
	} else if (strcmp(t, "label") == 0) {
		const json_t *label = json_object_get(e, "label");
		/* pi: an empty or missing label clears it. */
		if (json_is_string(label) && json_string_length(label)) {
			transcript_note(c, "Label \"");
			transcript_line_json(c, label);
			transcript_puts(c, "\" on entry ");
		} else {
			transcript_note(c, "Label removed from entry ");
		}
		transcript_line_json(c, json_object_get(e, "targetId"));
	} else if (strcmp(t, "session_info") == 0) {
		const json_t *name = json_object_get(e, "name");
		size_t start, n = 0;
		if (json_is_string(name))
			jstext_trim(json_string_value(name), json_string_length(name), &start, &n);
		if (n) {
			transcript_note(c, "Session name: ");
			transcript_line(c, json_string_value(name) + start, n);
		} else {
			transcript_note(c, "Session name cleared");
		}
	} else if (strcmp(t, "context_edit") == 0) {
		transcript_note(c, "Context edit of entry ");
		transcript_line_json(c, json_object_get(e, "targetId"));
	} else if (strcmp(t, "custom") == 0 || strcmp(t, "usage") == 0) {
		/* Extension state and accounting: nothing was said. */
	} else if (strcmp(t, "unreadable") == 0) {
		/* session_load_path's stand-in for a line jansson cannot decode. */
		transcript_note(c, "Unreadable entry ");
		transcript_line_json(c, json_object_get(e, "id"));
	} else {
		transcript_note(c, *t ? "" : "An entry without a type");
		transcript_line(c, t, strlen(t));
		if (*t)
			transcript_puts(c, " entry");
	}
	transcript_note_end(c);
}

/* The title: the session id (a name can change; the id never does) and
 * what the header says of where and when. */
static ps_err transcript_title(struct transcript_ctx *c)
{
	char *line = NULL;
	size_t len;
	json_t *h;
	ps_err err = session_read_header(c->s, &line, &len);

	if (err)
		return err;
	h = session_parse_line(line, len);
	free(line);
	const json_t *ts = json_object_get(h, "timestamp");
	const json_t *cwd = json_object_get(h, "cwd");
	const char *id = session_str(c->s, c->s->session_id);
	transcript_puts(c, "# Session ");
	transcript_line(c, id, strlen(id));
	transcript_puts(c, "\n\n");
	if (json_is_string(ts)) {
		transcript_note(c, "Started ");
		transcript_line_json(c, ts);
	}
	if (json_is_string(cwd)) {
		transcript_note(c, "Working directory ");
		transcript_line_json(c, cwd);
	}
	transcript_note_end(c);
	json_decref(h);
	return PS_OK;
}

ps_err transcript_text(const struct ps_session *s, uint32_t tip, const char *link_prefix, char **buf, size_t *len)
{
	struct transcript_ctx c = { .s = s, .link_prefix = link_prefix ? link_prefix : "", .b = BUF_INIT };
	uint32_t *idx = NULL;
	size_t n = 0;
	ps_err err;

	*buf = NULL;
	*len = 0;
	if (!s->have_header)
		return PS_ERR_NOTSESSION;
	if (tip != PS_NIL && tip >= s->n_entries)
		return PS_ERR_NOENT;
	/* The entries from the root to tip, each parsed as it is written
	 * and dropped after (image links need their indices): a transcript
	 * of 50,000 entries never holds them all parsed at once. */
	n = tip == PS_NIL ? 0 : s->entries[tip].depth;
	if (n && !(idx = malloc(n * sizeof *idx)))
		return PS_ERR_NOMEM;
	size_t at = n;
	for (uint32_t e = tip; e != PS_NIL && at > 0; e = s->entries[e].parent)
		idx[--at] = e;
	err = transcript_title(&c);
	for (size_t i = at; !err && i < n && !c.err; i++) {
		json_t *entry;
		if (!(err = session_load_path_entry(s, idx[i], &entry))) {
			transcript_entry(&c, entry, idx[i]);
			json_decref(entry);
		}
	}
	if (err)
		goto out;
	if (c.err || buf_finish(&c.b)) {
		err = PS_ERR_NOMEM;
		goto out;
	}
	*buf = c.b.data;
	*len = c.b.len;
	c.b.data = NULL;
out:
	buf_free(&c.b);
	free(idx);
	return err;
}
