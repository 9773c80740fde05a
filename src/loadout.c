#include <stdio.h>
#include <string.h>
#include "loadout.h"

static int loadout_nonempty_string(const json_t *v)
{
	return json_is_string(v) && json_string_length(v) > 0;
}

int loadout_valid(const json_t *data, char *why, size_t why_len)
{
	static const char *const ref_keys[] = { "type", "origin", "scope", "relativePath" };
	if (!json_is_object(data)) {
		snprintf(why, why_len, "a loadout is a JSON object with \"version\" and \"overrides\"");
		return 0;
	}
	const json_t *version = json_object_get(data, "version");
	/* 1.0 is 1 to pi's JSON.parse too. */
	if (!json_is_number(version) || json_number_value(version) != 1.0) {
		snprintf(why, why_len, "\"version\" must be 1 (the only loadout version there is)");
		return 0;
	}
	const json_t *overrides = json_object_get(data, "overrides");
	if (!json_is_array(overrides)) {
		snprintf(why, why_len, "\"overrides\" must be an array ([] clears the loadout)");
		return 0;
	}
	for (size_t i = 0; i < json_array_size(overrides); i++) {
		const json_t *o = json_array_get(overrides, i);
		const json_t *ref = json_object_get(o, "reference");
		if (!json_is_object(o)) {
			snprintf(why, why_len, "overrides[%zu] is not an object", i);
			return 0;
		}
		if (!json_is_object(ref)) {
			snprintf(why, why_len, "overrides[%zu].reference is not an object", i);
			return 0;
		}
		for (size_t k = 0; k < sizeof ref_keys / sizeof ref_keys[0]; k++) {
			if (!loadout_nonempty_string(json_object_get(ref, ref_keys[k]))) {
				snprintf(why, why_len, "overrides[%zu].reference.%s is not a non-empty string", i,
					 ref_keys[k]);
				return 0;
			}
		}
		if (!json_is_boolean(json_object_get(o, "enabled"))) {
			snprintf(why, why_len, "overrides[%zu].enabled is not true or false", i);
			return 0;
		}
	}
	return 1;
}

int loadout_entry_valid(const json_t *entry)
{
	char why[160];
	const char *type = json_string_value(json_object_get(entry, "type"));
	const char *custom = json_string_value(json_object_get(entry, "customType"));
	return type && strcmp(type, "custom") == 0 && custom && strcmp(custom, LOADOUT_CUSTOM_TYPE) == 0 &&
	       loadout_valid(json_object_get(entry, "data"), why, sizeof why);
}

int loadout_line_may_be(const char *line, size_t len)
{
	static const char needle[] = "pi.loadout";
	size_t n = sizeof needle - 1;
	for (size_t i = 0; i + n <= len; i++) {
		if (line[i] == 'p' && memcmp(line + i, needle, n) == 0)
			return 1;
		/* "pi\u002eloadout" is the same string to pi's JSON.parse. */
		if (line[i] == '\\' && line[i + 1] == 'u')
			return 1;
	}
	return 0;
}

json_t *loadout_none(void)
{
	return json_pack("{s:i,s:[]}", "version", 1, "overrides");
}

int loadout_is_reset(const json_t *data)
{
	return json_array_size(json_object_get(data, "overrides")) == 0;
}

