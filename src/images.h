/* The images of one entry: the image content blocks it holds, listed for an
 * `<entry file>.images/` directory and decoded from their base64 data.
 *
 * Ownership: everything returned is new and belongs to the caller; the
 * session is borrowed.
 *
 * Which blocks are images, and their order, is fixed here once so the
 * listing, the data and the links in transcripts (transcript.h) agree: the
 * blocks of the entry's content array (images_content()) in order, keeping
 * those with "type":"image" and a string "data".  That is also the order of
 * the `<!-- pi:image ... bytes=N -->` markers of the entry file
 * (docs/entry-format.md), so the N-th such marker is image file N; the
 * entry file, the transcripts and the parser of edited entry files all
 * spell a link to it with images_link(). */
#ifndef PS_IMAGES_H
#define PS_IMAGES_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "ps_error.h"
#include "session.h"

struct image_ref {
	char *mime;       /* the block's mimeType, NULL when it is not a string */
	const char *ext;  /* static: "png", "jpg", "gif", "webp", "svg" or "bin" */
	size_t size;      /* decoded size in bytes (0 when !valid) */
	int valid;        /* the data is strict base64: images_data() succeeds */
};

/* Lists the image blocks of entry (an index into s->entries).  *out is a
 * new array of *n refs (NULL when *n is 0); free with images_free().  An
 * entry without images, or whose line cannot be decoded, has none.
 * Invalid base64 is listed too (valid = 0), so numbering never shifts. */
ps_err images_list(const struct ps_session *s, uint32_t entry, struct image_ref **out, size_t *n);
/* The same list without sizing the images (size 0, valid 0): enough for
 * their file names, and it does not decode every image to list a
 * directory. */
ps_err images_list_names(const struct ps_session *s, uint32_t entry, struct image_ref **out, size_t *n);
void images_free(struct image_ref *refs, size_t n);

/* The decoded bytes of image `index` (0-based, as listed) of entry.  *buf is
 * new (NUL-terminated for convenience; *len excludes it).  PS_ERR_NOENT
 * when there is no such image, PS_ERR_INVALID when its data is not strict
 * base64. */
ps_err images_data(const struct ps_session *s, uint32_t entry, size_t index, char **buf, size_t *len);

/* The file name of image `index` (0-based) in the images directory: "N.ext"
 * with N = index + 1.  out holds IMAGES_NAME_MAX bytes. */
#define IMAGES_NAME_MAX 32
void images_file_name(size_t index, const char *ext, char *out);

/* The Markdown image link to image `index` (0-based) of the entry whose
 * file is entry_file (a path ending in ".md", relative to the document
 * the link is in), behind prefix (NULL for none, else "../" per level):
 *   ![image N](PREFIX<entry_file less ".md">.images/N.ext)
 * N = index + 1.  The target is a URL: every byte but A-Z a-z 0-9 - . _ ~
 * and '/' is written %XX, so the %XX escapes of file names (escape.h)
 * come out as %25XX and a viewer decodes them back to the name.  A new
 * string (caller frees), NULL when memory runs out or entry_file does not
 * end in ".md". */
char *images_link(const char *prefix, const char *entry_file, size_t index, const char *ext);

/* The extension for a MIME type (case-insensitive, parameters ignored):
 * png, jpg (image/jpeg, image/jpg), gif, webp, svg (image/svg+xml), else
 * bin (also for NULL).  Static string. */
const char *images_ext(const char *mime);

/* The array holding an entry's content blocks: message.content of a
 * "message" entry, content of a "custom_message" entry; NULL otherwise (a
 * string content holds no image).  Borrowed from entry. */
const json_t *images_content(const json_t *entry);

/* Whether a content block is a listed image ({"type":"image","data":"..."}). */
int images_is_image(const json_t *block);

/* Strict base64 (RFC 4648 alphabet, padding required, '=' only at the
 * end; ASCII white space anywhere is ignored).  With out == NULL only
 * validates and counts.  out needs room for n / 4 * 3 + 3 bytes.  Returns
 * PS_ERR_INVALID for anything else. */
ps_err images_base64_decode(const char *in, size_t n, unsigned char *out, size_t *len);

#endif
