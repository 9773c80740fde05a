/* Every Check suite of the front end's unit-test runner
 * (build/fs-unit-tests): modules of fs/ that run without a FUSE session,
 * linked from the objects of fs/ (make check-unit).  Each test_*.c here
 * defines one. */
#ifndef PSFS_TEST_SUITES_H
#define PSFS_TEST_SUITES_H
#include <check.h>

Suite *route_suite(void);
Suite *journal_suite(void);
Suite *searchdir_suite(void);
Suite *overview_fs_suite(void);
Suite *draft_suite(void);
Suite *overlay_suite(void);
Suite *guard_suite(void);

#endif
