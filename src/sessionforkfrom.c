/* pi's SessionManager.forkFrom, over the source file's bytes
 * (sessionforkfrom.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "buf.h"
#include "jsonline.h"
#include "jsonout.h"
#include "jstext.h"
#include "sessionfork.h"
#include "sessionforkfrom.h"
#include "sessionnew.h"

/* The whole file, from offset 0. */
static ps_err ff_read(int fd, struct buf *in)
{
	char chunk[65536];
	off_t off = 0;
	for (;;) {
		ssize_t n = pread(fd, chunk, sizeof chunk, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == ENOMEM ? PS_ERR_NOMEM : errno == EISDIR ? PS_ERR_ISDIR : PS_ERR_IO;
		if (n == 0)
			return PS_OK;
		if (buf_put(in, chunk, (size_t)n))
			return PS_ERR_NOMEM;
		off += n;
	}
}

/* Whether v[key] === text: a string of exactly those bytes. */
static int ff_is(const json_t *v, const char *key, const char *text)
{
	const json_t *s = json_object_get(v, key);
	return json_is_string(s) && json_string_length(s) == strlen(text) && !strcmp(json_string_value(s), text);
}

/* One line as parseSessionEntryLine reads it: *out NULL when pi skips it. */
static ps_err ff_parse(const char *line, size_t len, json_t **out)
{
	ps_err err;
	json_t *v = jsonline_object(line, len, &err);
	if (!v && err == PS_ERR_INVALID)
		v = jsonline_load(line, len, JSON_DECODE_ANY, &err);
	if (!v)
		return err == PS_ERR_NOMEM ? err : PS_OK;
	if (!jstext_truthy(v)) {
		json_decref(v);
		v = NULL;
	}
	*out = v;
	return PS_OK;
}

/* The header's cwd as pi's resolvePath takes it, absolute only. */
static ps_err ff_header_cwd(const json_t *h, char **cwd)
{
	const json_t *c = json_object_get(h, "cwd");
	const char *text = json_string_value(c);
	if (!text || text[0] != '/' || strlen(text) != json_string_length(c))
		return PS_ERR_INVALID;
	return (*cwd = sessionfork_resolve(NULL, text)) ? PS_OK : PS_ERR_NOMEM;
}

ps_err sessionforkfrom_create(int srcfd, int dirfd, const char *cwd, const char *parent_path, const char *name,
			      mode_t mode, uid_t uid, gid_t gid, char **stem)
{
	struct sessionnew_stamp st;
	struct buf in = BUF_INIT, out = BUF_INIT;
	char *target = NULL, *header = NULL, *text = NULL;
	json_t *v = NULL, *last = NULL, *ids = NULL;
	size_t hlen, tlen;
	int have_header = 0, copied = 0;
	ps_err err;

	if (parent_path[0] != '/' || (cwd && cwd[0] != '/'))
		return PS_ERR_INVALID;
	if (name && !jstext_utf8_valid(name, strlen(name)))
		return PS_ERR_INVALID;
	if ((err = ff_read(srcfd, &in)))
		goto out;
	if (cwd && !(target = sessionfork_resolve(NULL, cwd))) {
		err = PS_ERR_NOMEM;
		goto out;
	}
	if (!(ids = json_object())) {
		err = PS_ERR_NOMEM;
		goto out;
	}
	sessionnew_stamp(&st);
	for (size_t at = 0; at < in.len;) {
		const char *line = in.data + at;
		const char *nl = memchr(line, '\n', in.len - at);
		size_t len = nl ? (size_t)(nl - line) : in.len - at;
		at += len + 1;
		if ((err = ff_parse(line, len, &v)))
			goto out;
		if (!v)
			continue;
		if (!have_header) {
			/* loadEntriesFromFile: entries[0] must be the header. */
			if (!json_is_object(v) || !ff_is(v, "type", "session") ||
			    !json_is_string(json_object_get(v, "id"))) {
				err = PS_ERR_NOTSESSION;
				goto out;
			}
			have_header = 1;
			if (!target && (err = ff_header_cwd(v, &target)))
				goto out;
			if ((err = sessionnew_header(&st, target, parent_path, &header, &hlen)))
				goto out;
			if (buf_put(&out, header, hlen)) {
				err = PS_ERR_NOMEM;
				goto out;
			}
		}
		if (json_is_object(v) && ff_is(v, "type", "session")) {
			json_decref(v);
			v = NULL;
			continue;
		}
		if ((err = jsonout_compact(v, &text, &tlen)))
			goto out;
		if (buf_put(&out, text, tlen) || buf_putc(&out, '\n')) {
			err = PS_ERR_NOMEM;
			goto out;
		}
		free(text);
		text = NULL;
		const json_t *id = json_object_get(v, "id");
		if (json_is_string(id) && json_object_set(ids, json_string_value(id), json_null())) {
			err = PS_ERR_NOMEM;
			goto out;
		}
		json_decref(last);
		last = v;
		v = NULL;
		copied = 1;
	}
	if (!have_header) {
		err = PS_ERR_NOTSESSION;
		goto out;
	}
	if (name) {
		/* pi's generateId over the new file's ids. */
		char id[9];
		do
			sessionnew_short_id(id);
		while (json_object_get(ids, id));
		const json_t *pid = !copied ? json_null() : json_object_get(last, "id");
		if ((err = sessionfork_session_info(&out, id, pid, name)))
			goto out;
	}
	err = sessionnew_write_named(dirfd, &st, out.data, out.len, mode, uid, gid, stem);
out:
	json_decref(v);
	json_decref(last);
	json_decref(ids);
	free(text);
	free(header);
	free(target);
	buf_free(&in);
	buf_free(&out);
	return err;
}
