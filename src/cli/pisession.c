/* pisession: the core library on the command line, without FUSE.  It prints
 * what the mount would show for one session file, which is what the golden
 * tests compare. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "jscase.h"
#include "jsonout.h"
#include "layout.h"
#include "parse.h"
#include "render.h"
#include "entrycache.h"
#include "family.h"
#include "content.h"
#include "context.h"
#include "search.h"
#include "content.h"
#include "session.h"
#include "sessionfork.h"
#include "sessionforkfrom.h"
#include "sessioninfo.h"
#include "cli/cache.h"
#include <unistd.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: pisession tree SESSION.jsonl        the session's directory tree\n"
		"       pisession render SESSION.jsonl ID   an entry's Markdown file\n"
		"       pisession context SESSION.jsonl [ID] context.json for the leaf or ID\n"
		"       pisession problems SESSION.jsonl    lines skipped and why\n"
		"       pisession loadout SESSION.jsonl     the loadout pi applies (loadout.json)\n"
		"       pisession cat SESSION.jsonl PATH    the file at PATH in the session's directory\n"
		"                                           (tree.txt, 0008~c34de545/context.json, ...)\n"
		"       pisession render-json ENTRY.json [NAME.md]\n"
		"                                           render one entry given as JSON, as the\n"
		"                                           file NAME.md (default entry.md: image links)\n"
		"       pisession parse-md FILE.md [ORIGINAL.json [NAME.md]]\n"
		"                                           the entry an entry file holds (an edit of\n"
		"                                           ORIGINAL shown as NAME.md, or a new file)\n"
		"       pisession search [--json [--text]] [-f QUERYFILE | QUERY] FILE|DIR...\n"
		"                                           the sessions pi's /resume search lists for\n"
		"                                           QUERY, in its \"recent\" order: id and path\n"
		"                                           (docs/search.md)\n"
		"       pisession fork SESSION.jsonl ID [--name NAME] [--dir DIR]\n"
		"                                           a new session holding the path to ID, as\n"
		"                                           pi's /fork makes it (beside SESSION, or in\n"
		"                                           DIR); prints its path\n"
		"       pisession fork-from SESSION.jsonl TARGET_CWD [--name NAME] [--dir DIR]\n"
		"                                           a new session holding every entry of\n"
		"                                           SESSION, with TARGET_CWD as its cwd, as pi's\n"
		"                                           forkFrom makes it (in pi's folder for\n"
		"                                           TARGET_CWD, or in DIR); prints its path\n"
		"       pisession family STORE PROJECT STEM\n"
		"                                           the subagent runs kept beside the session\n"
		"                                           STORE/PROJECT/STEM.jsonl, as SESSION/subagents/\n"
		"                                           names them: one line each (docs/layout.md)\n"
		"       pisession cache [--dir DIR]           the cache's databases: size, last use,\n"
		"                                           state (in use, kept, gone) and store\n"
		"       pisession cache clear [--dir DIR] [STORE]\n"
		"                                           removes the databases no mount uses (or\n"
		"                                           STORE's alone)\n");
}

/* `pisession family`: each member of the family as the mount lists it,
 * with where its session and artifacts lie in the store. */
static int cmd_family(const char *root, const char *project, const char *stem)
{
	static const char *const kinds[] = { "run", "fork", "other" };
	struct ps_store *store = NULL;
	struct family *fam = NULL;
	ps_err err = store_open(root, 0, &store);
	if (!err)
		err = family_read(store, NULL, project, stem, &fam);
	if (err) {
		fprintf(stderr, "pisession: %s/%s/%s: %s\n", root, project, stem, ps_strerror(err));
		store_free(store);
		return 1;
	}
	for (size_t i = 0; i < fam->n; i++) {
		const struct family_member *m = &fam->members[i];
		printf("%s\t%s", m->name, m->stem ? kinds[m->kind] : "artifacts");
		if (m->stem)
			printf("\t%s/%s.jsonl", m->dir, m->stem);
		if (m->run_id)
			printf("\trun=%s index=%d", m->run_id, m->index);
		if (m->agent)
			printf("\tagent=%s", m->agent);
		for (int k = 0; k < FAMILY_ARTIFACT_KINDS; k++)
			if (m->artifact[k])
				printf("\t%s=%s", family_artifact_suffix[k] + 1, m->artifact[k]);
		putchar('\n');
	}
	family_free(fam);
	store_free(store);
	return 0;
}

struct tree_walk {
	const struct ps_session *s;
	char prefix[4096];
	ps_err err;
};

static int tree_print(void *ctx, const char *name, const struct layout_node *node);

static void tree_dir(struct tree_walk *w, const struct layout_node *dir)
{
	ps_err err = layout_list(w->s, dir, tree_print, w);
	if (err && !w->err)
		w->err = err;
}

static int tree_print(void *ctx, const char *name, const struct layout_node *node)
{
	struct tree_walk *w = ctx;
	size_t plen = strlen(w->prefix);
	if (layout_is_symlink(node->kind)) {
		char *target = layout_symlink_target(w->s, node);
		if (!target) {
			w->err = PS_ERR_NOMEM;
			return 1;
		}
		printf("%s%s -> %s\n", w->prefix, name, target);
		free(target);
	} else {
		printf("%s%s%s\n", w->prefix, name, layout_is_dir(node->kind) ? "/" : "");
	}
	if (layout_is_dir(node->kind) && plen + strlen(name) + 2 < sizeof w->prefix) {
		snprintf(w->prefix + plen, sizeof w->prefix - plen, "%s/", name);
		tree_dir(w, node);
		w->prefix[plen] = '\0';
	}
	return w->err != PS_OK;
}

static int cmd_tree(const struct ps_session *s)
{
	struct tree_walk w = { .s = s };
	struct layout_node root;
	if (layout_resolve(s, "", &root) != PS_OK)
		return 1;
	tree_dir(&w, &root);
	if (w.err) {
		fprintf(stderr, "pisession: %s\n", ps_strerror(w.err));
		return 1;
	}
	return 0;
}

/* Any file of the session directory, as the mount shows it. */
static int cmd_cat(struct ps_session *s, const char *path)
{
	struct layout_node node;
	char *text = NULL;
	size_t len = 0;
	ps_err err = layout_resolve(s, path, &node);
	if (!err && node.kind == LAYOUT_RAW) {
		/* The session file itself, read in place by the mount. */
		fprintf(stderr, "pisession: %s: the session file itself\n", path);
		return 1;
	}
	if (!err)
		err = content_build(s, &node, &text, &len);
	if (err) {
		fprintf(stderr, "pisession: %s: %s\n", path, ps_strerror(err));
		return 1;
	}
	fwrite(text, 1, len, stdout);
	free(text);
	return 0;
}

static int print_rendered(const json_t *entry, const char *name)
{
	size_t len;
	char *md = render_entry(entry, name, &len);
	if (!md) {
		fprintf(stderr, "pisession: out of memory\n");
		return 1;
	}
	fwrite(md, 1, len, stdout);
	free(md);
	return 0;
}

static int cmd_render(const struct ps_session *s, const char *id)
{
	json_t *entry;
	uint32_t idx = session_find(s, id, strlen(id));
	if (idx == PS_NIL) {
		fprintf(stderr, "pisession: no entry %s\n", id);
		return 1;
	}
	ps_err err = session_load_entry(s, idx, &entry);
	if (err) {
		fprintf(stderr, "pisession: %s\n", ps_strerror(err));
		return 1;
	}
	/* as the mount shows it: image links relative to the file's name */
	char *name = layout_entry_name(s, idx);
	int rc = name ? print_rendered(entry, name) : 1;
	if (!name)
		fprintf(stderr, "pisession: out of memory\n");
	free(name);
	json_decref(entry);
	return rc;
}

static int cmd_context(const struct ps_session *s, const char *id)
{
	uint32_t idx = session_leaf(s);
	if (id && (idx = session_find(s, id, strlen(id))) == PS_NIL) {
		fprintf(stderr, "pisession: no entry %s\n", id);
		return 1;
	}
	char *text;
	size_t len;
	ps_err err = context_text(s, idx, &text, &len);
	if (err) {
		fprintf(stderr, "pisession: %s\n", ps_strerror(err));
		return 1;
	}
	fwrite(text, 1, len, stdout);
	free(text);
	return 0;
}

static int cmd_render_json(const char *file, const char *name)
{
	json_error_t error;
	json_t *entry = json_load_file(file, JSON_ALLOW_NUL, &error);
	if (!entry) {
		fprintf(stderr, "pisession: %s:%d: %s\n", file, error.line, error.text);
		return 1;
	}
	int rc = print_rendered(entry, name);
	json_decref(entry);
	return rc;
}

/* The whole file; NULL and errno set when it cannot be read. */
static char *read_all(const char *file, size_t *len)
{
	FILE *f = fopen(file, "rb");
	char *data = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n == cap) {
			char *p = realloc(data, cap = cap ? cap * 2 : 65536);
			if (!p)
				break;
			data = p;
		}
		size_t got = fread(data + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f))
				break;
			fclose(f);
			*len = n;
			return data;
		}
	}
	fclose(f);
	free(data);
	return NULL;
}

/* Prints the entry parse_entry_md() makes of FILE (pretty JSON), or
 * "refused: why" on stderr and exit status 1. */
static int cmd_parse_md(const char *file, const char *orig_file, const char *name)
{
	json_t *original = NULL, *entry = NULL;
	char why[512], *text, *out;
	size_t len = 0, outlen;
	int rc = 1;

	if (!(text = read_all(file, &len))) {
		perror(file);
		return 1;
	}
	if (orig_file) {
		json_error_t error;
		original = json_load_file(orig_file, JSON_ALLOW_NUL, &error);
		if (!original) {
			fprintf(stderr, "pisession: %s:%d: %s\n", orig_file, error.line, error.text);
			goto out;
		}
	}
	ps_err err = parse_entry_md(text, len, original, name, &entry, why, sizeof why);
	if (err == PS_ERR_INVALID) {
		fprintf(stderr, "refused: %s\n", why);
		goto out;
	}
	if (!err)
		err = jsonout_pretty(entry, &out, &outlen);
	if (err) {
		fprintf(stderr, "pisession: %s\n", ps_strerror(err));
		goto out;
	}
	fwrite(out, 1, outlen, stdout);
	free(out);
	rc = 0;
out:
	json_decref(entry);
	json_decref(original);
	free(text);
	return rc;
}

/* A directory argument: its *.jsonl files and those of its subdirectories
 * (a store), each folder's names newest-looking first as pi reads a folder
 * (names descending; pi's localeCompare is approximated by strcmp). */
static int search_add(struct sessioninfo ***infos, size_t *n, size_t *cap, const char *path);

static int search_name_desc(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*b)->d_name, (*a)->d_name);
}

static int search_dir(struct sessioninfo ***infos, size_t *n, size_t *cap, const char *dir, int depth)
{
	struct dirent **names;
	int count = scandir(dir, &names, NULL, search_name_desc), rc = 0;
	if (count < 0) {
		/* pi skips a folder it cannot read; memory running out is no
		 * answer about the folder. */
		int nomem = errno == ENOMEM;
		fprintf(stderr, "pisession: %s: %s\n", dir, nomem ? "out of memory" : "cannot read the directory");
		return nomem;
	}
	for (int pass = 0; pass < 2; pass++) /* the folder's own files, then its subfolders' */
		for (int i = 0; i < count && !rc; i++) {
			const char *name = names[i]->d_name;
			size_t len = strlen(name);
			char *path;
			struct stat st;
			if (name[0] == '.')
				continue;
			if (asprintf(&path, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", name) < 0) {
				rc = 1;
				break;
			}
			if (stat(path, &st) == 0) {
				if (!pass && S_ISREG(st.st_mode) && len > 6 && !strcmp(name + len - 6, ".jsonl"))
					rc = search_add(infos, n, cap, path);
				else if (pass && S_ISDIR(st.st_mode) && depth == 0)
					rc = search_dir(infos, n, cap, path, 1);
			}
			free(path);
		}
	for (int i = 0; i < count; i++)
		free(names[i]);
	free(names);
	return rc;
}

static int search_add(struct sessioninfo ***infos, size_t *n, size_t *cap, const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return search_dir(infos, n, cap, path, 0);
	struct sessioninfo *info;
	ps_err err = sessioninfo_load(path, &info);
	if (err) {
		/* pi skips a file it cannot read */
		fprintf(stderr, "pisession: %s: %s\n", path, ps_strerror(err));
		return err == PS_ERR_NOMEM;
	}
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct sessioninfo **more = realloc(*infos, ncap * sizeof *more);
		if (!more) {
			sessioninfo_free(info);
			return 1;
		}
		*infos = more;
		*cap = ncap;
	}
	(*infos)[(*n)++] = info;
	return 0;
}

/* One field set, or -1 when memory ran out (v NULL, or the set failed):
 * a field that could not be made must fail the command, never vanish
 * from its output. */
static int search_field(json_t *o, const char *key, json_t *v)
{
	return v && json_object_set_new(o, key, v) == 0 ? 0 : -1;
}

static int search_print_json(const struct sessioninfo *info, int with_text)
{
	size_t first_len;
	const char *first = sessioninfo_first_message(info, &first_len);
	json_t *o = json_object();
	char *out = NULL;
	size_t len;
	if (!o)
		return 1;
	int bad = search_field(o, "id", json_string(info->id)) || search_field(o, "path", json_string(info->path)) ||
		  search_field(o, "cwd", json_string(info->cwd)) ||
		  search_field(o, "name", info->name ? json_string(info->name) : json_null()) ||
		  search_field(o, "created", isnan(info->created_ms) ? json_null() : json_real(info->created_ms)) ||
		  search_field(o, "modified", isnan(info->modified_ms) ? json_null() : json_real(info->modified_ms)) ||
		  search_field(o, "messageCount", json_integer((json_int_t)info->message_count)) ||
		  search_field(o, "firstMessage", json_stringn(first, first_len)) ||
		  (with_text &&
		   search_field(o, "allMessagesText", json_stringn(info->text.data ? info->text.data : "", info->text.len)));
	ps_err err = bad ? PS_ERR_NOMEM : jsonout_compact(o, &out, &len);
	json_decref(o);
	if (err)
		return 1;
	printf("%.*s\n", (int)len, out);
	free(out);
	return 0;
}

static char *search_read_query(const char *file)
{
	FILE *f = fopen(file, "rb");
	char *q = NULL;
	size_t n = 0;
	if (!f)
		return NULL;
	FILE *m = open_memstream(&q, &n);
	int c;
	while (m && (c = fgetc(f)) != EOF)
		fputc(c, m);
	if (m)
		fclose(m);
	fclose(f);
	/* A file's final line break is no part of the query. */
	if (q && n && q[n - 1] == '\n')
		q[n - 1] = 0;
	return q;
}

static int cmd_search(int argc, char **argv)
{
	int json = 0, with_text = 0, i = 2, rc = 0;
	char *query_text = NULL;
	const char *query_arg = NULL;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--text"))
			with_text = 1;
		else if (!strcmp(argv[i], "-f") && i + 1 < argc) {
			if (!(query_text = search_read_query(argv[++i]))) {
				fprintf(stderr, "pisession: %s: cannot read the query\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else {
			break;
		}
	}
	if (!query_text) {
		if (i >= argc) {
			usage(stderr);
			return 2;
		}
		query_arg = argv[i++];
	}
	if (!jscase_has_locale()) {
		fprintf(stderr, "pisession: search: the C.UTF-8 locale could not be loaded (out of memory, or not "
				"installed): letters beyond ASCII would not match as pi matches them\n");
		free(query_text);
		return 1;
	}
	struct search_query *q;
	char *why;
	ps_err err = search_query_parse(query_text ? query_text : query_arg, &q, &why);
	free(query_text);
	if (err) {
		fprintf(stderr, "pisession: search: %s\n", why ? why : ps_strerror(err));
		free(why);
		return 1;
	}
	struct sessioninfo **infos = NULL;
	size_t n = 0, cap = 0;
	int missing = 0;
	for (; i < argc && !rc; i++) {
		/* A path the user named that is not there is their mistake, and
		 * says so in the exit status (2, as grep's); the others are still
		 * searched.  Inside a directory, pi's rule holds: what cannot be
		 * read is skipped. */
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "pisession: search: %s: %s\n", argv[i], strerror(errno));
			missing = 1;
			continue;
		}
		rc = search_add(&infos, &n, &cap, argv[i]);
	}
	if (!rc)
		sessioninfo_sort(infos, n);
	for (size_t k = 0; k < n && !rc; k++) {
		int match;
		err = search_query_matches(q, infos[k], &match);
		if (err) {
			fprintf(stderr, "pisession: %s: %s\n", infos[k]->path, ps_strerror(err));
			rc = 1;
		} else if (match) {
			if (json)
				rc = search_print_json(infos[k], with_text);
			else
				printf("%s\t%s\n", infos[k]->id, infos[k]->path);
		}
	}
	for (size_t k = 0; k < n; k++)
		sessioninfo_free(infos[k]);
	free(infos);
	search_query_free(q);
	if (rc)
		fprintf(stderr, "pisession: search failed\n");
	return rc ? rc : missing ? 2 : 0;
}

/* The arguments of fork and fork-from: two operands, --name, --dir; and
 * the working directory they are resolved from.  0, or the exit status. */
static int fork_args(int argc, char **argv, const char *pos[2], const char **name, const char **dir,
		     char cwd[4096])
{
	int npos = 0;
	*name = *dir = NULL;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--name") && i + 1 < argc) {
			*name = argv[++i];
		} else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			*dir = argv[++i];
		} else if (npos < 2 && (argv[i][0] != '-' || !argv[i][1])) {
			pos[npos++] = argv[i];
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (npos != 2) {
		usage(stderr);
		return 2;
	}
	if (!getcwd(cwd, 4096)) {
		fprintf(stderr, "pisession: cannot tell the working directory: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

/* pisession fork FILE ID [--name NAME] [--dir DIR] (docs/layout.md
 * "Forking a session"). */
static int cmd_fork(int argc, char **argv)
{
	const char *pos[2], *name, *dir;
	char cwd[4096];
	int rc = fork_args(argc, argv, pos, &name, &dir, cwd);
	if (rc)
		return rc;
	rc = 1;
	/* pi names the parent by path.resolve(file) and writes beside it. */
	char *parent = sessionfork_resolve(cwd, pos[0]);
	char *where = parent ? (dir ? sessionfork_resolve(cwd, dir) : sessionfork_resolve(parent, "..")) : NULL;
	struct ps_session *s = NULL;
	char *stem = NULL;
	int dfd = -1;
	ps_err err = PS_ERR_NOMEM;
	if (!parent || !where)
		goto out;
	if ((err = session_open(pos[0], &s))) {
		fprintf(stderr, "pisession: %s: %s\n", pos[0], ps_strerror(err));
		err = PS_OK;
		goto out;
	}
	if (!s->have_header) {
		fprintf(stderr, "pisession: %s: not a session: %s\n", pos[0], s->not_session);
		goto out;
	}
	uint32_t idx = session_find(s, pos[1], strlen(pos[1]));
	if (idx == PS_NIL) {
		fprintf(stderr, "pisession: no entry %s\n", pos[1]);
		goto out;
	}
	if ((dfd = open(where, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "pisession: %s: %s\n", where, strerror(errno));
		goto out;
	}
	err = sessionfork_create(s, idx, dfd, parent, name, 0666, (uid_t)-1, (gid_t)-1, &stem);
	if (!err) {
		printf("%s%s%s.jsonl\n", where, strcmp(where, "/") ? "/" : "", stem);
		rc = 0;
	}
out:
	if (err)
		fprintf(stderr, "pisession: fork: %s\n", ps_strerror(err));
	if (dfd >= 0)
		close(dfd);
	free(stem);
	free(parent);
	free(where);
	session_free(s);
	entrycache_clear();
	return rc;
}

/* mkdir -p of an absolute path. */
static int mkdir_p(const char *path)
{
	char *p = strdup(path);
	if (!p)
		return -1;
	for (char *c = p + 1;; c++) {
		if (*c == '/' || !*c) {
			char was = *c;
			*c = '\0';
			if (mkdir(p, 0777) && errno != EEXIST) {
				free(p);
				return -1;
			}
			if (!(*c = was))
				break;
		}
	}
	free(p);
	return 0;
}

/* pi's getDefaultSessionDir(cwd): $PI_CODING_AGENT_DIR (a leading ~
 * read as $HOME), else ~/.pi/agent; then sessions/--CWD--, every '/',
 * '\' and ':' of cwd after its first character's '/' read as '-'.
 * cwd is resolved; base resolves a relative agent directory. */
static char *default_session_dir(const char *base, const char *cwd)
{
	const char *env = getenv("PI_CODING_AGENT_DIR"), *home = getenv("HOME");
	char *agent = NULL, *joined = NULL, *out = NULL;
	if (env && *env) {
		if ((!strcmp(env, "~") || !strncmp(env, "~/", 2)) && home) {
			if (asprintf(&joined, "%s/%s", home, env[1] ? env + 2 : "") < 0)
				joined = NULL;
			agent = joined ? sessionfork_resolve(base, joined) : NULL;
		} else {
			agent = sessionfork_resolve(base, env);
		}
	} else if (home && asprintf(&joined, "%s/.pi/agent", home) >= 0) {
		agent = sessionfork_resolve(base, joined);
	}
	free(joined);
	if (!agent)
		return NULL;
	const char *c = cwd[0] == '/' ? cwd + 1 : cwd;
	if (asprintf(&out, "%s/sessions/--%s--", strcmp(agent, "/") ? agent : "", c) < 0)
		out = NULL;
	for (char *q = out ? out + strlen(out) - strlen(c) - 2 : NULL; q && *q && q < out + strlen(out) - 2; q++)
		if (*q == '/' || *q == '\\' || *q == ':')
			*q = '-';
	free(agent);
	return out;
}

/* pisession fork-from FILE TARGET_CWD [--name NAME] [--dir DIR]
 * (docs/layout.md "Forking a whole session into another project"). */
static int cmd_fork_from(int argc, char **argv)
{
	const char *pos[2], *name, *dir;
	char cwd[4096];
	int rc = fork_args(argc, argv, pos, &name, &dir, cwd);
	if (rc)
		return rc;
	rc = 1;
	/* pi: resolvePath(sourcePath), resolvePath(targetCwd), and
	 * sessionDir or getDefaultSessionDir(targetCwd), made if missing. */
	char *parent = sessionfork_resolve(cwd, pos[0]);
	char *target = sessionfork_resolve(cwd, pos[1]);
	char *where = !target ? NULL : dir ? sessionfork_resolve(cwd, dir) : default_session_dir(cwd, target);
	char *stem = NULL;
	int dfd = -1, sfd = -1;
	ps_err err = PS_ERR_NOMEM;
	if (!parent || !target || !where)
		goto out;
	err = PS_OK;
	if ((sfd = open(parent, O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "pisession: %s: %s\n", pos[0], strerror(errno));
		goto out;
	}
	if (mkdir_p(where) || (dfd = open(where, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "pisession: %s: %s\n", where, strerror(errno));
		goto out;
	}
	err = sessionforkfrom_create(sfd, dfd, target, parent, name, 0666, (uid_t)-1, (gid_t)-1, &stem);
	if (err == PS_ERR_NOTSESSION) {
		fprintf(stderr, "pisession: fork-from: %s: the source session file is empty or invalid\n", pos[0]);
		err = PS_OK;
	} else if (!err) {
		printf("%s%s%s.jsonl\n", where, strcmp(where, "/") ? "/" : "", stem);
		rc = 0;
	}
out:
	if (err)
		fprintf(stderr, "pisession: fork-from: %s\n", ps_strerror(err));
	if (dfd >= 0)
		close(dfd);
	if (sfd >= 0)
		close(sfd);
	free(stem);
	free(parent);
	free(target);
	free(where);
	return rc;
}

int main(int argc, char **argv)
{
	struct ps_session *s = NULL;
	int rc = 2;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("pisession %s\n", PS_VERSION);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "cache"))
		return cmd_cache(argc, argv);
	if (argc < 3) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "search"))
		return cmd_search(argc, argv);
	if (!strcmp(argv[1], "fork-from"))
		return cmd_fork_from(argc, argv);
	if (!strcmp(argv[1], "fork"))
		return cmd_fork(argc, argv);
	if (!strcmp(argv[1], "family") && argc == 5)
		return cmd_family(argv[2], argv[3], argv[4]);
	if (!strcmp(argv[1], "render-json") && argc <= 4)
		return cmd_render_json(argv[2], argc == 4 ? argv[3] : NULL);
	if (!strcmp(argv[1], "parse-md") && argc <= 5)
		return cmd_parse_md(argv[2], argc >= 4 ? argv[3] : NULL, argc == 5 ? argv[4] : NULL);
	ps_err err = session_open(argv[2], &s);
	if (err) {
		fprintf(stderr, "pisession: %s: %s\n", argv[2], ps_strerror(err));
		return 1;
	}
	if (!strcmp(argv[1], "tree") && argc == 3) {
		rc = cmd_tree(s);
	} else if (!strcmp(argv[1], "render") && argc == 4) {
		rc = cmd_render(s, argv[3]);
	} else if (!strcmp(argv[1], "context") && argc <= 4) {
		rc = cmd_context(s, argc == 4 ? argv[3] : NULL);
	} else if (!strcmp(argv[1], "loadout") && argc == 3) {
		rc = cmd_cat(s, "loadout.json");
	} else if (!strcmp(argv[1], "cat") && argc == 4) {
		rc = cmd_cat(s, argv[3]);
	} else if (!strcmp(argv[1], "problems") && argc == 3) {
		if (s->not_session)
			printf("not a session: %s\n", s->not_session);
		for (uint32_t i = 0; i < s->n_problems; i++)
			printf("line %u: %s\n", s->problems[i].line, s->problems[i].why);
		char tail[512];
		if (session_tail_problem(s, tail, sizeof tail))
			fputs(tail, stdout);
		rc = 0;
	} else {
		usage(stderr);
	}
	session_free(s);
	entrycache_clear();
	return rc;
}
