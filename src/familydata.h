/* What a family (family.h) is made of: its members and the artifacts of
 * their runs, as family.c reads them and familydisk.c keeps them on disk.
 *
 * Ownership: a family is reference-counted; family_free drops one
 * reference and frees it with the last. */
#ifndef PS_FAMILYDATA_H
#define PS_FAMILYDATA_H

#include <stddef.h>

enum family_kind {
	FAMILY_RUN,   /* STEM/RUNID/run-N/ */
	FAMILY_FORK,  /* STEM/forks/ */
	FAMILY_OTHER, /* any other folder below STEM/ */
};

enum family_artifact {
	FAMILY_INPUT,  /* the task: NAME.input.md */
	FAMILY_OUTPUT, /* the whole result: NAME.output.md */
	FAMILY_META,   /* timing, usage, exit code: NAME.meta.json */
	FAMILY_ARTIFACT_KINDS
};

struct family_member {
	char *name;  /* as listed: unique in the family, sorts in start order */
	char *dir;   /* the project path of its session's folder; NULL: artifacts only */
	char *stem;  /* its session file without ".jsonl"; NULL: artifacts only */
	enum family_kind kind;
	char *run_id; /* FAMILY_RUN, else NULL */
	char *agent;  /* the agent's name, from the artifacts; NULL when none say */
	int index;    /* FAMILY_RUN: the N of run-N; else -1 */
	/* A folder named stem lies beside its session file: its own
	 * subagents' family (read with family_read(dir, stem)). */
	int has_family;
	/* Store-relative paths of the run's artifacts ("PROJECT/subagent-
	 * artifacts/…"), NULL where there is none. */
	char *artifact[FAMILY_ARTIFACT_KINDS];
};

struct family {
	size_t n;
	struct family_member *members; /* in the order they started */
	/* Store-relative paths of every artifact of the family's runs (all
	 * names RUNID_… of a run folder below STEM/): what goes to the trash
	 * with the family. */
	char **artifacts;
	size_t n_artifacts;
	char *folder; /* "PROJECT/STEM", when the folder is there; else NULL */
	unsigned refs; /* private: a family kept by a family_cache is shared, immutable */
};

/* Drops a reference to fam (NULL: nothing), freeing it with the last. */
void family_free(struct family *fam);

#endif
