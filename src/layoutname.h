/* The names a session's nodes are listed under (layoutname.c): entry
 * files, branch directories, labels, images directories.  layout.h,
 * which resolves names back to nodes and lists directories, includes it. */
#ifndef PS_LAYOUTNAME_H
#define PS_LAYOUTNAME_H

#include <stdint.h>
#include "images.h"
#include "session.h"

/* Longest escaped parts of a name before they are shortened (escape.h):
 * with the kind's SESSION_MAX_KIND (session.h), an entry file name stays
 * under the kernel's 255 bytes. */
#define LAYOUT_MAX_ID 120
#define LAYOUT_MAX_LABEL 160

/* New strings (caller frees), NULL when memory runs out. */
char *layout_entry_name(const struct ps_session *s, uint32_t idx);
char *layout_branch_name(const struct ps_session *s, uint32_t branch);
/* Path of the entry's file relative to the session directory. */
char *layout_entry_path(const struct ps_session *s, uint32_t idx);
/* The branch's name by its first entry's id (NNNN~<id>), whether or not a
 * label names it in listings: it always resolves, and unlike the listed
 * name it never changes when a label comes or goes. */
char *layout_branch_id_name(const struct ps_session *s, uint32_t branch);
/* The entry's images directory: its file name with .images for .md. */
char *layout_images_dir_name(const struct ps_session *s, uint32_t idx);

/* How many images an entry has (0 for most: only lines that mention
 * "image" are parsed to find out), and with refs non-NULL their list
 * (free with images_free). */
size_t layout_image_count(const struct ps_session *s, uint32_t idx, struct image_ref **refs);
/* Whether the entry's live label is label. */
int layout_label_eq(const struct ps_session *s, uint32_t idx, const char *label);
/* Whether a labelled branch is listed by its label: no earlier branch (in
 * file order) of the same directory and depth has the same label, and the
 * name is no other branch's id name there. */
int layout_branch_label_wins(const struct ps_session *s, uint32_t branch);
/* The names an entry labelled label may be listed under in labels/, in
 * order of preference (which 0, 1, 2): the label, label~<id>,
 * label~<id>~L<line>; each kept within a file name's length.  New. */
char *layout_label_candidate(const struct ps_session *s, uint32_t idx, const char *label, int which);
/* The names labels/ lists: names[i] for s->labeled[i], NULL where the
 * label was cleared; an entry takes the first of its candidates no
 * earlier entry took.  NULL when memory runs out; free with
 * layout_label_names_free. */
char **layout_label_names(const struct ps_session *s);
void layout_label_names_free(const struct ps_session *s, char **names);

#endif
