#include <stdlib.h>
#include "suites.h"

int main(void)
{
	Suite *(*const suites[])(void) = {
		route_suite, journal_suite, searchdir_suite, overview_fs_suite, draft_suite, overlay_suite, guard_suite,
	};
	SRunner *runner = srunner_create(NULL);
	for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
		srunner_add_suite(runner, suites[i]());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
