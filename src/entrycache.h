/* A bounded, process-wide cache of parsed entries.
 *
 * Why: one entry is shown in several files (its .md, the context.json and
 * transcript.md of every directory below it, usage.json), and `grep -r`
 * or an indexer reads them all; without this each of those reads parses
 * the same line with jansson again.  Parsed trees are immutable once
 * cached and shared: jansson's reference counts are atomic, so a reader in
 * one thread may drop a tree that another thread evicts.
 *
 * Keys are (session serial, index generation, entry index): a serial is
 * never reused, and a re-indexed session gets a new generation, so a stale
 * tree can never be returned; stale trees just age out.
 *
 * The bound is on the memory the parsed trees take, estimated from their
 * lines: jansson's trees of session lines took eight times the lines'
 * bytes (a 50,000-entry session read through, -o entry_cache=8: 68 MB
 * more than with the cache off).  A tree costing more than an eighth of
 * the bound is not cached at all. */
#ifndef PS_ENTRYCACHE_H
#define PS_ENTRYCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define ENTRYCACHE_DEFAULT_BYTES (8u << 20)
/* What one cached entry counts against the bound: its tree, eight times
 * its line, and a fixed allowance for the bookkeeping. */
#define ENTRYCACHE_COST(line_len) (8 * (size_t)(line_len) + 128)

/* Sets the bound in bytes of memory (0 turns the cache off) and drops what
 * no longer fits.  Thread-safe. */
void entrycache_set_limit(size_t bytes);

/* A new reference to the cached tree, or NULL.  The tree is shared: never
 * modify it. */
json_t *entrycache_get(uint64_t serial, uint64_t generation, uint32_t idx);

/* Caches entry (borrowed: the cache takes its own reference), whose line
 * is line_len bytes.  From now on nobody may modify entry. */
void entrycache_put(uint64_t serial, uint64_t generation, uint32_t idx, json_t *entry, size_t line_len);

/* Drops every cached tree (tests, and at exit so leak checkers see none). */
void entrycache_clear(void);

/* Counters since start, for tests and the benchmark notes. */
struct entrycache_stats {
	uint64_t hits, misses;
	size_t bytes, count;
};
void entrycache_stats(struct entrycache_stats *out);

#endif
