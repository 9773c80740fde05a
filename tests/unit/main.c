#include <stdio.h>
#include <stdlib.h>
#include "suites.h"

/* UNIT_SHARD=K/N runs only the suites whose place in the list, modulo N,
 * is K, so that N runners share the suites out over the machine's cores
 * (make check-unit); unset, every suite runs. */
static int shard_parse(unsigned *k, unsigned *n)
{
	const char *v = getenv("UNIT_SHARD");
	*k = 0;
	*n = 1;
	if (!v || !*v)
		return 0;
	if (sscanf(v, "%u/%u", k, n) != 2 || *n == 0 || *k >= *n) {
		fprintf(stderr, "unit-tests: UNIT_SHARD must be K/N with K < N, not '%s'\n", v);
		return -1;
	}
	return 0;
}

int main(void)
{
	unsigned shard, shards;
	if (shard_parse(&shard, &shards) != 0)
		return EXIT_FAILURE;
	/* The longest first, taking turns, so that two shards take about
	 * as long (parse 5 s; search, usage 2.5 s; sessioninfo, usagescan
	 * 1.5 s; catalog 1 s; the rest under 0.4 s each). */
	Suite *(*const suites[])(void) = {
		parse_suite, search_suite, usagescan_suite, usage_suite, catalog_suite, sessioninfo_suite,
		scan_suite, session_suite, layout_suite, context_suite, render_suite,
		images_suite, transcript_suite, entrycache_suite, recover_suite, content_suite, jparse_suite,
		append_suite, store_suite, overview_suite, diskmemo_suite,
		trash_suite, sessionfork_suite, usagedays_suite, fanout_suite, family_suite, lockorder_suite,
		mountinfo_suite,
	};
	SRunner *runner = srunner_create(NULL);
	for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
		if (i % shards == shard)
			srunner_add_suite(runner, suites[i]());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
