/* Every Check suite of the unit-test runner; each tests/unit/test_*.c
 * defines one. */
#ifndef PS_TEST_SUITES_H
#define PS_TEST_SUITES_H
#include <check.h>

Suite *scan_suite(void);
Suite *session_suite(void);
Suite *layout_suite(void);
Suite *context_suite(void);
Suite *render_suite(void);
Suite *parse_suite(void);
Suite *images_suite(void);
Suite *usage_suite(void);
Suite *usagedays_suite(void);
Suite *usagescan_suite(void);
Suite *transcript_suite(void);
Suite *entrycache_suite(void);
Suite *recover_suite(void);
Suite *content_suite(void);
Suite *jparse_suite(void);
Suite *append_suite(void);
Suite *store_suite(void);
Suite *catalog_suite(void);
Suite *sessioninfo_suite(void);
Suite *search_suite(void);
Suite *overview_suite(void);
Suite *diskmemo_suite(void);
Suite *trash_suite(void);
Suite *sessionfork_suite(void);
Suite *fanout_suite(void);
Suite *family_suite(void);
Suite *lockorder_suite(void);
Suite *mountinfo_suite(void);

#endif
