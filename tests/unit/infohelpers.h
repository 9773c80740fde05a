/* Shared by the unit tests of SessionInfos (sessioninfo.c, infofreeze.c). */
#ifndef PS_TEST_INFOHELPERS_H
#define PS_TEST_INFOHELPERS_H

#include <math.h>
#include <string.h>
#include <check.h>
#include "sessioninfo.h"

/* What pi's session list shows of two infos must be equal (a listing
 * info, sessioninfo_load_listing, keeps no search text). */
static inline void helper_assert_same_listing(const struct sessioninfo *a, const struct sessioninfo *b)
{
	size_t la, lb;
	ck_assert_int_eq(a->is_session, b->is_session);
	ck_assert_str_eq(a->id, b->id);
	ck_assert_str_eq(a->cwd, b->cwd);
	ck_assert_int_eq(!a->name, !b->name);
	if (a->name)
		ck_assert_str_eq(a->name, b->name);
	ck_assert_int_eq(isnan(a->modified_ms), isnan(b->modified_ms));
	if (!isnan(a->modified_ms))
		ck_assert_double_eq(a->modified_ms, b->modified_ms);
	ck_assert_int_eq(isnan(a->created_ms), isnan(b->created_ms));
	if (!isnan(a->created_ms))
		ck_assert_double_eq(a->created_ms, b->created_ms);
	ck_assert_uint_eq(a->message_count, b->message_count);
	const char *fa = sessioninfo_first_message(a, &la), *fb = sessioninfo_first_message(b, &lb);
	ck_assert_uint_eq(la, lb);
	ck_assert_int_eq(memcmp(fa, fb, la), 0);
}

/* Everything pi would see of two infos must be equal. */
static inline void helper_assert_same_info(const struct sessioninfo *a, const struct sessioninfo *b)
{
	helper_assert_same_listing(a, b);
	ck_assert_uint_eq(a->text.len, b->text.len);
	ck_assert_uint_eq(a->lower.len, b->lower.len);
	if (a->text.len) {
		ck_assert_int_eq(memcmp(a->text.data, b->text.data, a->text.len), 0);
		ck_assert_int_eq(memcmp(a->lower.data, b->lower.data, a->lower.len), 0);
		ck_assert(a->text.data[a->text.len] == '\0' && b->text.data[b->text.len] == '\0');
	}
}

#endif
