#include <stdlib.h>
#include "suites.h"

int main(void)
{
	Suite *(*const suites[])(void) = {
		scan_suite, session_suite, layout_suite, context_suite, render_suite, parse_suite,
		images_suite, usage_suite, transcript_suite, entrycache_suite, recover_suite, content_suite, jparse_suite,
		append_suite, store_suite, catalog_suite, sessioninfo_suite, search_suite, overview_suite, diskmemo_suite,
		trash_suite, sessionfork_suite, usagedays_suite, usagescan_suite, fanout_suite, family_suite,
	};
	SRunner *runner = srunner_create(NULL);
	for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
		srunner_add_suite(runner, suites[i]());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
