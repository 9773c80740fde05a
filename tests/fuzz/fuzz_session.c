/* libFuzzer harness: a whole session file.
 *
 * Input: two control bytes, then the file's bytes.
 *   data[0] bit 0: prepend a valid header line; bits 1-2 pick it
 *                  (version 3, version 2, version 1 without "version", or
 *                  version 3 with an escaped id);
 *   data[1]:       where the file is split for the incremental test
 *                  (data[1] / 255 of the file).
 *
 * The file lives in /dev/shm (tmpfs; a memfd cannot be used: session_open
 * opens the path with O_NOFOLLOW and /proc/self/fd/N is a symlink).
 *
 * Checks:
 *   1. session_open of the whole file; the whole layout is walked:
 *      layout_list of every directory, each listed name must resolve back
 *      (layout_resolve) to the node it was listed with (so no two names in
 *      a directory clash and every name works), every entry is in the tree
 *      exactly once, symlinks (leaf, labels/) resolve to their entry, every
 *      file's content_build succeeds and content_size equals its length;
 *   2. every entry: session_load_entry, then the render/parse round trip;
 *   3. context_text of every branch tip, of the leaf and of
 *      PS_NIL: must succeed and be JSON that jansson reads back;
 *   5. session_open_skim of the file: the index's header, name and user
 *      entries (done before 4, on the whole file);
 *   6. usage_json of the file equals that of the file with an escaped key
 *      first in every object line (each then parsed whole: usage.c's fast
 *      path against the parser);
 *   4. incremental: the first part opened, the rest appended, then
 *      session_refresh gives the same index as the one-shot open; and
 *      truncating back to the first part and refreshing gives the index of
 *      the first part alone (walked as in 1 when data[1] is odd).
 *
 * Known bugs (FUZZ_KNOWN, tests/fuzz/README.md): layout-branch-name-clash,
 * layout-label-name-clash. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "escape.h"
#include "fuzz_common.h"
#include "layout.h"
#include "context.h"
#include "session.h"
#include "content.h"
#include "usage.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path_full[64], path_inc[64];
static int fd_full = -1, fd_inc = -1;

static void cleanup(void)
{
	if (fd_full >= 0)
		unlink(path_full);
	if (fd_inc >= 0)
		unlink(path_inc);
}

/* Files of harness processes that died without their atexit() (a crash
 * ends with abort()): psfuzz-session-PID-* whose PID is gone. */
static void remove_stale(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		int pid;
		char file[512];
		if (sscanf(de->d_name, "psfuzz-session-%d-", &pid) != 1 || pid <= 0)
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(file, sizeof file, "%s/%s", dir, de->d_name);
		unlink(file);
	}
	closedir(d);
}

static int make_file(char *path, size_t cap)
{
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	remove_stale(dir);
	snprintf(path, cap, "%s/psfuzz-session-%d-XXXXXX", dir, (int)getpid());
	int fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		exit(1);
	}
	return fd;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	json_object_seed(1);
	fd_full = make_file(path_full, sizeof path_full);
	fd_inc = make_file(path_inc, sizeof path_inc);
	atexit(cleanup);
	return 0;
}

static void put(int fd, const char *buf, size_t len, size_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		FZ_CHECK(n > 0, "pwrite: %s", strerror(errno));
		buf += n;
		len -= (size_t)n;
		off += (size_t)n;
	}
}

static void set_file(int fd, const char *buf, size_t len)
{
	FZ_CHECK(ftruncate(fd, 0) == 0, "ftruncate");
	put(fd, buf, len, 0);
}

/* ---- index comparison ------------------------------------------------ */

static const char *str_or_nil(const struct ps_session *s, uint32_t off)
{
	return off == PS_NIL ? "(nil)" : session_str(s, off);
}

static void same_index(const struct ps_session *a, const struct ps_session *b, const char *what)
{
#define SAME(field) FZ_CHECK(a->field == b->field, "%s: " #field " differs: %llu vs %llu", what, \
			     (unsigned long long)a->field, (unsigned long long)b->field)
	SAME(scanned);
	SAME(lines);
	SAME(ordinals);
	SAME(have_header);
	SAME(version);
	SAME(n_entries);
	SAME(n_branches);
	SAME(n_labeled);
	SAME(n_problems);
	FZ_CHECK((a->not_session == NULL) == (b->not_session == NULL) &&
		 (!a->not_session || strcmp(a->not_session, b->not_session) == 0),
		 "%s: not_session differs: %s vs %s", what, a->not_session ? a->not_session : "(null)",
		 b->not_session ? b->not_session : "(null)");
	if (a->have_header) {
		SAME(header_off);
		SAME(header_len);
		FZ_CHECK(strcmp(session_str(a, a->session_id), session_str(b, b->session_id)) == 0,
			 "%s: session id differs", what);
	}
	FZ_CHECK(strcmp(str_or_nil(a, a->name), str_or_nil(b, b->name)) == 0, "%s: name differs: %s vs %s", what,
		 str_or_nil(a, a->name), str_or_nil(b, b->name));
	for (uint32_t i = 0; i < a->n_entries; i++) {
		const struct ps_entry *x = &a->entries[i], *y = &b->entries[i];
		FZ_CHECK(x->off == y->off && x->len == y->len && x->line == y->line && x->ordinal == y->ordinal &&
			 x->parent == y->parent && x->first_child == y->first_child &&
			 x->last_child == y->last_child && x->next_sibling == y->next_sibling &&
			 x->depth == y->depth && x->branch == y->branch && x->prev_same_id == y->prev_same_id &&
			 x->time_ms == y->time_ms,
			 "%s: entry %u differs (line %u vs %u, parent %u vs %u, branch %u vs %u)", what, i, x->line,
			 y->line, x->parent, y->parent, x->branch, y->branch);
		FZ_CHECK(strcmp(session_str(a, x->id), session_str(b, y->id)) == 0, "%s: entry %u id differs", what,
			 i);
		FZ_CHECK(strcmp(session_str(a, x->kind), session_str(b, y->kind)) == 0,
			 "%s: entry %u kind differs: %s vs %s", what, i, session_str(a, x->kind),
			 session_str(b, y->kind));
		FZ_CHECK(strcmp(str_or_nil(a, x->label), str_or_nil(b, y->label)) == 0,
			 "%s: entry %u label differs", what, i);
	}
	for (uint32_t i = 0; i < a->n_branches; i++)
		FZ_CHECK(memcmp(&a->branches[i], &b->branches[i], sizeof a->branches[i]) == 0,
			 "%s: branch %u differs", what, i);
	for (uint32_t i = 0; i < a->n_labeled; i++)
		FZ_CHECK(a->labeled[i] == b->labeled[i], "%s: labeled[%u] differs", what, i);
	for (uint32_t i = 0; i < a->n_problems; i++)
		FZ_CHECK(a->problems[i].line == b->problems[i].line &&
			 strcmp(a->problems[i].why, b->problems[i].why) == 0,
			 "%s: problem %u differs: line %u %s vs line %u %s", what, i, a->problems[i].line,
			 a->problems[i].why, b->problems[i].line, b->problems[i].why);
#undef SAME
}

/* Generated JSON (context.json, header.json) is JSON.stringify's: jansson
 * reads it back except for what it cannot represent, which JSON.parse
 * reads: lone surrogate escapes (kept as pi keeps them, src/jstext.h),
 * nesting beyond 2048 (a context nests entries deeper) and numbers beyond
 * the double range. */
static int json_unreadable_ok(const json_error_t *e)
{
	return json_error_code(e) == json_error_stack_overflow || json_error_code(e) == json_error_numeric_overflow ||
	       strncmp(e->text, "invalid Unicode", 15) == 0;
}

/* ---- layout walk ----------------------------------------------------- */

struct child {
	char *name;
	struct layout_node node;
};

struct listing {
	struct child *v;
	size_t n, cap;
};

static int collect(void *ctx, const char *name, const struct layout_node *node)
{
	struct listing *l = ctx;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->v = realloc(l->v, l->cap * sizeof *l->v);
		FZ_CHECK(l->v != NULL, "realloc");
	}
	l->v[l->n].name = strdup(name);
	FZ_CHECK(l->v[l->n].name != NULL, "strdup");
	l->v[l->n].node = *node;
	l->n++;
	return 0;
}

struct walk {
	struct ps_session *s;
	uint32_t *seen;       /* per entry: times listed in a tree directory */
	size_t nodes;
	int clash;            /* a known name clash cut the walk short */
};

static const char *kind_name(enum layout_kind k)
{
	static const char *const names[] = { "tree", "entry", "context", "leaf", "labels", "label", "name",
					     "header", "entries", "entry-json", "raw", "problems", "error" };
	return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

/* Whether resolving gave the node that was listed. */
static int same_node(const struct layout_node *listed, const struct layout_node *got)
{
	if (listed->kind != got->kind)
		return 0;
	switch (listed->kind) {
	case LAYOUT_TREE_DIR:
	case LAYOUT_CONTEXT:
		return listed->branch == got->branch && listed->session_root == got->session_root;
	case LAYOUT_ENTRY:
		return listed->entry == got->entry && listed->branch == got->branch;
	case LAYOUT_LEAF:
	case LAYOUT_LABEL:
	case LAYOUT_ENTRY_JSON:
		return listed->entry == got->entry;
	default:
		return 1;
	}
}

static void check_symlink(struct walk *w, const char *path, const struct layout_node *node)
{
	struct ps_session *s = w->s;
	char *target = layout_symlink_target(s, node);
	FZ_CHECK(target != NULL, "%s: layout_symlink_target returned NULL", path);
	const char *rel = target;
	if (node->kind == LAYOUT_LABEL) {
		FZ_CHECK(strncmp(target, "../", 3) == 0, "%s: label target %s does not start with ../", path, target);
		rel += 3;
	}
	struct layout_node t;
	ps_err err = layout_resolve(s, rel, &t);
	if (w->clash && (err != PS_OK || t.kind != LAYOUT_ENTRY || t.entry != node->entry)) {
		free(target); /* through a clashing name: the known bug */
		return;
	}
	FZ_CHECK(err == PS_OK, "%s -> %s: the target does not resolve (%d)", path, target, (int)err);
	FZ_CHECK(t.kind == LAYOUT_ENTRY && t.entry == node->entry, "%s -> %s: the target is %s %u, not entry %u", path,
		 target, kind_name(t.kind), t.entry, node->entry);
	free(target);
}

static void check_file(struct walk *w, const char *path, const struct layout_node *node)
{
	struct ps_session *s = w->s;
	uint64_t size = 0;
	char *buf = NULL;
	size_t len = 0;
	ps_err err;

	if (node->kind == LAYOUT_LEAF || node->kind == LAYOUT_LABEL)
		check_symlink(w, path, node);
	if (node->kind == LAYOUT_RAW) {
		err = content_size(s, node, &size);
		FZ_CHECK(err == PS_OK && size == s->size, "%s: content_size of session.jsonl", path);
		return;
	}
	/* size first (cold caches), then content, then size again (warm) */
	err = content_size(s, node, &size);
	FZ_CHECK(err == PS_OK, "%s (%s): content_size failed: %s", path, kind_name(node->kind), ps_strerror(err));
	err = content_build(s, node, &buf, &len);
	FZ_CHECK(err == PS_OK, "%s (%s): content_build failed: %s", path, kind_name(node->kind), ps_strerror(err));
	FZ_CHECK(size == len, "%s (%s): content_size %llu but content_build gives %zu bytes", path,
		 kind_name(node->kind), (unsigned long long)size, len);
	FZ_CHECK(buf[len] == '\0', "%s: content not NUL-terminated", path);
	err = content_size(s, node, &size);
	FZ_CHECK(err == PS_OK && size == len, "%s (%s): cached content_size %llu, content %zu bytes", path,
		 kind_name(node->kind), (unsigned long long)size, len);
	if (node->kind == LAYOUT_CONTEXT || node->kind == LAYOUT_HEADER) {
		json_error_t jerr;
		json_t *v = json_loadb(buf, len, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &jerr);
		FZ_CHECK(v || json_unreadable_ok(&jerr), "%s: not JSON (%s): %.500s", path, jerr.text, buf);
		FZ_CHECK(!v || json_is_object(v), "%s: not a JSON object", path);
		if (v && node->kind == LAYOUT_CONTEXT)
			FZ_CHECK(json_is_array(json_object_get(v, "messages")), "%s: no messages array", path);
		json_decref(v);
	}
	free(buf);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int listing_has_dup(const struct listing *l)
{
	const char **names = malloc((l->n + 1) * sizeof *names);
	int dup = 0;
	FZ_CHECK(names != NULL, "malloc");
	for (size_t i = 0; i < l->n; i++)
		names[i] = l->v[i].name;
	qsort(names, l->n, sizeof *names, cmp_str);
	for (size_t i = 1; i < l->n && !dup; i++)
		dup = strcmp(names[i - 1], names[i]) == 0;
	free(names);
	return dup;
}

static void walk_dir(struct walk *w, const char *path, const struct layout_node *dir, unsigned depth)
{
	struct listing l = { 0 };
	ps_err err = layout_list(w->s, dir, collect, &l);
	FZ_CHECK(err == PS_OK, "%s: layout_list failed: %s", path, ps_strerror(err));
	/* Known bug "layout-label-name-clash" (reported): labels/ lists two
	 * labels under one name (label~id with duplicate ids). */
	int label_clash = dir->kind == LAYOUT_LABELS_DIR && fz_known("layout-label-name-clash") && listing_has_dup(&l);

	for (size_t i = 0; i < l.n; i++) {
		const char *name = l.v[i].name;
		const struct layout_node *node = &l.v[i].node;
		w->nodes++;
		FZ_CHECK(name[0] != '\0' && strchr(name, '/') == NULL && strcmp(name, ".") != 0 &&
			 strcmp(name, "..") != 0, "%s: bad name \"%s\"", path, name);
		size_t plen = strlen(path);
		char *child = malloc(plen + strlen(name) + 2);
		FZ_CHECK(child != NULL, "malloc");
		sprintf(child, "%s%s%s", path, plen ? "/" : "", name);

		struct layout_node got;
		err = layout_resolve(w->s, child, &got);
		FZ_CHECK(err == PS_OK, "listed \"%s\" (%s) does not resolve: %s", child, kind_name(node->kind),
			 ps_strerror(err));
		if (!same_node(node, &got) && node->kind == LAYOUT_TREE_DIR && got.kind == LAYOUT_TREE_DIR &&
		    w->clash) {
			/* Known bug (reported): two branch directories of one
			 * directory answer to the same name (tree_has_clash
			 * found it); the walk cannot go on through a name that
			 * means another directory. */
			free(child);
			continue;
		}
		if (label_clash && node->kind == LAYOUT_LABEL && !same_node(node, &got)) {
			free(child);
			continue;
		}
		FZ_CHECK(same_node(node, &got),
			 "listed \"%s\" as %s branch %u entry %u root %d; it resolves to %s branch %u entry %u root %d",
			 child, kind_name(node->kind), node->branch, node->entry, node->session_root,
			 kind_name(got.kind), got.branch, got.entry, got.session_root);
		if (node->kind == LAYOUT_ENTRY && dir->kind == LAYOUT_TREE_DIR) {
			FZ_CHECK(node->entry < w->s->n_entries, "entry index out of range");
			w->seen[node->entry]++;
		}
		if (layout_is_dir(node->kind)) {
			FZ_CHECK(depth < 100000, "directory nesting runs away");
			walk_dir(w, child, node, depth + 1);
		} else {
			check_file(w, child, node);
		}
		free(child);
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].name);
	free(l.v);
}

static int cmp_child(const void *a, const void *b)
{
	return strcmp(((const struct child *)a)->name, ((const struct child *)b)->name);
}

/* Whether any tree directory lists one name twice (known bug
 * "layout-branch-name-clash"): walks the listed nodes, not the names. */
static int tree_has_clash(const struct ps_session *s, const struct layout_node *dir, unsigned depth)
{
	struct listing l = { 0 };
	int clash = 0;
	if (layout_list(s, dir, collect, &l) != PS_OK || depth > 100000)
		return 0;
	for (size_t i = 0; i < l.n && !clash; i++)
		if (l.v[i].node.kind == LAYOUT_TREE_DIR)
			clash = tree_has_clash(s, &l.v[i].node, depth + 1);
	/* A branch listed by its label still answers to NNNN~id: that alias
	 * can shadow another branch's name too. */
	size_t n = l.n;
	for (size_t i = 0; i < n && !clash; i++) {
		if (l.v[i].node.kind != LAYOUT_TREE_DIR)
			continue;
		const struct ps_entry *e = &s->entries[s->branches[l.v[i].node.branch].first];
		const char *id = session_str(s, e->id);
		char *esc = escape_name(id, strlen(id)), *alias = NULL;
		FZ_CHECK(esc && asprintf(&alias, "%04u~%s", e->depth, esc) >= 0, "alias");
		free(esc);
		if (strcmp(alias, l.v[i].name) == 0) {
			free(alias);
			continue;
		}
		struct layout_node nn = l.v[i].node;
		collect(&l, alias, &nn);
		free(alias);
	}
	if (!clash && l.n > 1) {
		qsort(l.v, l.n, sizeof *l.v, cmp_child);
		for (size_t i = 1; i < l.n && !clash; i++)
			clash = strcmp(l.v[i - 1].name, l.v[i].name) == 0;
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].name);
	free(l.v);
	return clash;
}

static void walk_all(struct ps_session *s)
{
	struct walk w = { .s = s };
	struct layout_node root;
	ps_err err = layout_resolve(s, "", &root);
	FZ_CHECK(err == PS_OK && root.kind == LAYOUT_TREE_DIR && root.session_root, "resolving \"\"");
	if (fz_known("layout-branch-name-clash"))
		w.clash = tree_has_clash(s, &root, 0);
	w.seen = calloc(s->n_entries + 1, sizeof *w.seen);
	FZ_CHECK(w.seen != NULL, "calloc");
	walk_dir(&w, "", &root, 0);
	if (s->have_header && !w.clash)
		for (uint32_t i = 0; i < s->n_entries; i++)
			FZ_CHECK(w.seen[i] == 1, "entry %u (line %u) is listed %u times in the tree", i,
				 s->entries[i].line, w.seen[i]);
	free(w.seen);
}

/* ---- entries and contexts -------------------------------------------- */

static void check_entries(struct ps_session *s)
{
	char what[64];
	for (uint32_t i = 0; i < s->n_entries; i++) {
		json_t *e = NULL;
		ps_err err = session_load_entry(s, i, &e);
		if (err == PS_ERR_INVALID)
			continue; /* the scanner's "unreadable" lines (checked by fuzz_scan) */
		FZ_CHECK(err == PS_OK, "session_load_entry(%u): %s", i, ps_strerror(err));
		snprintf(what, sizeof what, "entry %u (line %u)", i, s->entries[i].line);
		fz_roundtrip(e, what);
		json_decref(e);
	}
}

static void check_context(struct ps_session *s, uint32_t tip)
{
	char *buf = NULL;
	size_t len = 0;
	ps_err err = context_text(s, tip, &buf, &len);
	FZ_CHECK(err == PS_OK, "context_text(%u): %s", tip, ps_strerror(err));
	FZ_CHECK(buf && buf[len] == '\0' && len > 0 && buf[len - 1] == '\n', "context text shape");
	json_error_t jerr;
	json_t *v = json_loadb(buf, len, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &jerr);
	FZ_CHECK(v || json_unreadable_ok(&jerr), "context of %u is not JSON (%s): %.500s", tip, jerr.text, buf);
	json_decref(v);
	free(buf);
}

static void check_contexts(struct ps_session *s)
{
	check_context(s, PS_NIL);
	if (!s->have_header)
		return;
	for (uint32_t b = 0; b < s->n_branches; b++)
		if (s->branches[b].tip != PS_NIL)
			check_context(s, s->branches[b].tip);
	if (session_leaf(s) != PS_NIL)
		check_context(s, session_leaf(s));
}

/* session_open_skim's promise (session.h), against the full index. */
static void check_skim(const struct ps_session *full, const char *path)
{
	struct ps_session *skim = NULL;
	ps_err err = session_open_skim(path, &skim);
	FZ_CHECK(err == PS_OK, "session_open_skim: %s", ps_strerror(err));
	FZ_CHECK(skim->have_header == full->have_header, "skim: header %d, index %d", skim->have_header,
		 full->have_header);
	FZ_CHECK(!full->have_header || (strcmp(session_str(skim, skim->session_id), session_str(full, full->session_id)) == 0 &&
					skim->header_off == full->header_off &&
					(skim->parent_session == PS_NIL) == (full->parent_session == PS_NIL)),
		 "skim: another header");
	FZ_CHECK((skim->name == PS_NIL) == (full->name == PS_NIL) &&
		 (full->name == PS_NIL || strcmp(session_str(skim, skim->name), session_str(full, full->name)) == 0),
		 "skim: name '%s', index '%s'", skim->name == PS_NIL ? "(none)" : session_str(skim, skim->name),
		 full->name == PS_NIL ? "(none)" : session_str(full, full->name));
	uint32_t j = 0;
	for (uint32_t i = 0; i <= full->n_entries; i++) {
		int user = i < full->n_entries && strcmp(session_str(full, full->entries[i].kind), "user") == 0;
		if (i < full->n_entries && !user)
			continue;
		while (j < skim->n_entries && strcmp(session_str(skim, skim->entries[j].kind), "user") != 0)
			j++;
		if (!user) {
			FZ_CHECK(j == skim->n_entries, "skim: a user entry the index lacks, at offset %llu",
				 (unsigned long long)skim->entries[j].off);
			break;
		}
		FZ_CHECK(j < skim->n_entries && skim->entries[j].off == full->entries[i].off,
			 "skim: the user entry at offset %llu missing", (unsigned long long)full->entries[i].off);
		j++;
	}
	session_free(skim);
}

/* usage.c's fast path (the usage members the index noted) against the
 * parsed lines: the file again with an escaped key put first in every
 * line that starts an object, which sends each to the parser (and
 * changes nothing else: the key is "x", and a later "x" wins). */
static void check_usage_as_parsed(struct ps_session *full, const char *file, size_t total)
{
	char *var = malloc(total * 2 + 16), *o = var;
	FZ_CHECK(var != NULL, "malloc");
	for (size_t i = 0; i < total;) {
		const char *nl = memchr(file + i, '\n', total - i);
		size_t len = nl ? (size_t)(nl - (file + i)) + 1 : total - i, ws = 0;
		while (ws < len && (file[i + ws] == ' ' || file[i + ws] == '\t' || file[i + ws] == '\r'))
			ws++;
		memcpy(o, file + i, ws);
		o += ws;
		if (ws < len && file[i + ws] == '{') {
			size_t after = ws + 1;
			while (after < len && strchr(" \t\r\n", file[i + after]))
				after++;
			int empty = after < len && file[i + after] == '}';
			memcpy(o, empty ? "{\"\\u0078\":0" : "{\"\\u0078\":0,", empty ? 11 : 12);
			o += empty ? 11 : 12;
			ws++;
		}
		memcpy(o, file + i + ws, len - ws);
		o += len - ws;
		i += len;
	}
	struct ps_session *parsed = NULL;
	char *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0;
	set_file(fd_inc, var, (size_t)(o - var));
	ps_err err = session_open(path_inc, &parsed);
	FZ_CHECK(err == PS_OK, "session_open (keyed variant): %s", ps_strerror(err));
	ps_err ea = usage_json(full, &a, &alen), eb = usage_json(parsed, &b, &blen);
	FZ_CHECK(ea == eb, "usage_json: %s, of the parsed variant %s", ps_strerror(ea), ps_strerror(eb));
	FZ_CHECK(ea || (alen == blen && memcmp(a, b, alen) == 0), "usage_json differs from the parsed lines':\n%.*s\nvs\n%.*s",
		 (int)alen, a ? a : "", (int)blen, b ? b : "");
	free(a);
	free(b);
	session_free(parsed);
	free(var);
}

/* ---- the input ------------------------------------------------------- */

static const char *const headers[] = {
	"{\"type\":\"session\",\"version\":3,\"id\":\"fuzz-session\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
	"{\"type\":\"session\",\"version\":2,\"id\":\"fuzz-session\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
	"{\"type\":\"session\",\"id\":\"fuzz-session\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
	"{\"type\":\"session\",\"version\":3,\"id\":\"fuzz\\u002fsess\\u00e9\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"cwd\":\"/p\"}\n",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2 || size > (1u << 20))
		return 0;
	unsigned ctl = data[0], cut = data[1];
	const char *hdr = (ctl & 1) ? headers[(ctl >> 1) & 3] : "";
	size_t hlen = strlen(hdr), total = hlen + size - 2;
	char *file = malloc(total + 1);
	FZ_CHECK(file != NULL, "malloc");
	memcpy(file, hdr, hlen);
	memcpy(file + hlen, data + 2, size - 2);
	size_t split = (size_t)((uint64_t)total * cut / 255);

	/* 1-3: the whole file at once */
	struct ps_session *full = NULL;
	set_file(fd_full, file, total);
	ps_err err = session_open(path_full, &full);
	FZ_CHECK(err == PS_OK, "session_open: %s", ps_strerror(err));
	FZ_CHECK(full->scanned <= total && full->size == total, "scanned/size");
	walk_all(full);
	check_entries(full);
	check_contexts(full);

	/* 5: the skim gives the header, the name and the user entries of the index */
	check_skim(full, path_full);
	/* 6: usage read through the index's notes as through parsed lines */
	check_usage_as_parsed(full, file, total);

	/* 4: the first part, then the rest appended */
	struct ps_session *half = NULL, *inc = NULL;
	int changed = -1;
	set_file(fd_inc, file, split);
	err = session_open(path_inc, &half);
	FZ_CHECK(err == PS_OK, "session_open (first part): %s", ps_strerror(err));
	err = session_open(path_inc, &inc);
	FZ_CHECK(err == PS_OK, "session_open (first part): %s", ps_strerror(err));
	same_index(half, inc, "two opens of one file");
	put(fd_inc, file + split, total - split, split);
	uint64_t before = inc->scanned;
	err = session_refresh(inc, &changed);
	FZ_CHECK(err == PS_OK, "session_refresh after append: %s", ps_strerror(err));
	FZ_CHECK(changed == (inc->scanned != before), "session_refresh: changed=%d but scanned %llu -> %llu",
		 changed, (unsigned long long)before, (unsigned long long)inc->scanned);
	same_index(full, inc, "incremental (refresh after append) vs one-shot open");

	/* ... and truncated back to the first part */
	FZ_CHECK(ftruncate(fd_inc, (off_t)split) == 0, "ftruncate");
	err = session_refresh(inc, &changed);
	FZ_CHECK(err == PS_OK, "session_refresh after truncation: %s", ps_strerror(err));
	same_index(half, inc, "refresh after truncating back vs open of the first part");
	/* the same index as `half`: walk it (not `half`) for its caches' sake */
	if (cut & 1)
		walk_all(inc);

	session_free(half);
	session_free(inc);
	session_free(full);
	free(file);
	return 0;
}
