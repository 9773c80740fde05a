#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "entryjson.h"
#include "escape.h"

ps_err entryjson_find(const struct ps_session *s, const char *name, size_t max_id, uint32_t *out)
{
	size_t len = strlen(name);
	if (len < 6 || strcmp(name + len - 5, ".json") != 0)
		return PS_ERR_NOENT;
	if (escape_is_shortened(name)) {
		for (uint32_t e = 0; e < s->n_entries; e++) {
			char *listed = entryjson_name(s, e, max_id);
			if (!listed)
				return PS_ERR_NOMEM;
			int same = strcmp(listed, name) == 0;
			free(listed);
			if (same) {
				*out = e;
				return PS_OK;
			}
		}
		return PS_ERR_NOENT;
	}
	char *key = strndup(name, len - 5);
	if (!key)
		return PS_ERR_NOMEM;
	/* An earlier duplicate is <id>~<line>.json. */
	unsigned long line = 0;
	char *tilde = strrchr(key, '~');
	if (tilde) {
		char *end;
		line = strtoul(tilde + 1, &end, 10);
		if (*end || tilde[1] == '\0' || tilde[1] == '0')
			line = PS_NIL;
		*tilde = '\0';
	}
	size_t n = escape_unname(key);
	ps_err err = PS_ERR_NOENT;
	if (n == (size_t)-1 || n == 0 || strlen(key) != n || line == PS_NIL)
		goto out;
	uint32_t e = session_find(s, key, n);
	if (tilde) {
		/* The latest entry is never named by line. */
		if (e == PS_NIL)
			goto out;
		for (e = s->entries[e].prev_same_id; e != PS_NIL && s->entries[e].line != line;)
			e = s->entries[e].prev_same_id;
	}
	if (e != PS_NIL) {
		*out = e;
		err = PS_OK;
	}
out:
	free(key);
	return err;
}

char *entryjson_name(const struct ps_session *s, uint32_t idx, size_t max_id)
{
	const char *id = session_str(s, s->entries[idx].id);
	char *esc = escape_name_max(id, strlen(id), max_id);
	char *name = NULL;
	int latest = session_find(s, id, strlen(id)) == idx;
	if (esc && (latest ? asprintf(&name, "%s.json", esc) : asprintf(&name, "%s~%u.json", esc, s->entries[idx].line)) < 0)
		name = NULL;
	free(esc);
	return name;
}
