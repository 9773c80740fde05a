/* `pisession cache`: the cache directory's databases, shown and cleared
 * (cachedir.h). */
#ifndef PS_CLI_CACHE_H
#define PS_CLI_CACHE_H

/* argv[1] is "cache"; the exit status. */
int cmd_cache(int argc, char **argv);

#endif
