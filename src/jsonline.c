/* Decoding a stored line as pi's reader does (jsonline.h): jparse's fast
 * path for objects, then jansson, retried with what JavaScript tolerates. */
#include <stdlib.h>
#include "jparse.h"
#include "jsonline.h"
#include "jstext.h"

json_t *jsonline_load(const char *text, size_t len, size_t flags, ps_err *err)
{
	json_error_t error;
	char *clean = NULL, *mapped = NULL;
	json_t *v = NULL;

	*err = PS_OK;
	/* Objects, the common case, go by the fast path first (jparse.h);
	 * what it declines, jansson decides as before. */
	if (!(flags & JSON_DECODE_ANY)) {
		switch (jparse_object(text, len, &v)) {
		case JPARSE_OK:
			return v;
		case JPARSE_NOMEM:
			*err = PS_ERR_NOMEM;
			return NULL;
		case JPARSE_DECLINED:
			break;
		}
	}
	flags |= JSON_ALLOW_NUL;
	for (int attempt = 0; attempt < 4 && !v; attempt++) {
		v = json_loadb(text, len, flags, &error);
		if (v)
			break;
		enum json_error_code code = json_error_code(&error);
		if (code == json_error_out_of_memory) {
			*err = PS_ERR_NOMEM;
			break;
		}
		if (code == json_error_invalid_utf8 && !clean) {
			clean = jstext_utf8_replace(text, len, &len);
			if (!clean)
				break;
			text = clean;
		} else if (code == json_error_numeric_overflow && !(flags & JSON_DECODE_INT_AS_REAL)) {
			flags |= JSON_DECODE_INT_AS_REAL;
		} else if (!mapped && (mapped = jstext_map_lone_surrogates(text, len, &len))) {
			text = mapped;
		} else {
			break;
		}
	}
	free(clean);
	free(mapped);
	if (!v && !*err)
		*err = PS_ERR_INVALID;
	return v;
}

json_t *jsonline_object(const char *line, size_t len, ps_err *err)
{
	json_t *v = jsonline_load(line, len, 0, err);
	if (v && !json_is_object(v)) {
		json_decref(v);
		v = NULL;
		*err = PS_ERR_INVALID;
	}
	return v;
}

json_t *jsonline_object_keep(const char *line, size_t len, const struct jparse_keep *keep, ps_err *err)
{
	json_t *v = NULL;
	*err = PS_OK;
	switch (jparse_object_keep(line, len, keep, &v)) {
	case JPARSE_OK:
		return v;
	case JPARSE_NOMEM:
		*err = PS_ERR_NOMEM;
		return NULL;
	case JPARSE_DECLINED:
		break;
	}
	return jsonline_object(line, len, err);
}
