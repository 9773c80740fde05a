#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "dirlist.h"

/* Large enough that a family's folders (a few entries each) take one
 * call and the end-of-folder call. */
#define DIRLIST_BUF 8192

static enum dirlist_type dirlist_type_of(int fd, const char *name, unsigned char d_type)
{
	struct stat sb;
	switch (d_type) {
	case DT_REG:
		return DIRLIST_FILE;
	case DT_DIR:
		return DIRLIST_DIR;
	case DT_UNKNOWN:
		if (fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
			return DIRLIST_OTHER; /* gone meanwhile: as if not listed */
		return S_ISREG(sb.st_mode) ? DIRLIST_FILE : S_ISDIR(sb.st_mode) ? DIRLIST_DIR : DIRLIST_OTHER;
	default:
		return DIRLIST_OTHER;
	}
}

static ps_err dirlist_add(struct dirlist *list, const char *name, enum dirlist_type type)
{
	size_t len = strlen(name) + 1;
	if (list->n == list->cap) {
		size_t cap = list->cap ? 2 * list->cap : 16;
		struct dirlist_entry *grown = realloc(list->entries, cap * sizeof *grown);
		if (!grown)
			return PS_ERR_NOMEM;
		list->entries = grown;
		list->cap = cap;
	}
	if (list->names_len + len > list->names_cap) {
		size_t cap = list->names_cap ? 2 * list->names_cap : 256;
		while (cap < list->names_len + len)
			cap *= 2;
		char *grown = realloc(list->names, cap);
		if (!grown)
			return PS_ERR_NOMEM;
		list->names = grown;
		list->names_cap = cap;
	}
	memcpy(list->names + list->names_len, name, len);
	/* An offset until the names stop moving (dirlist_read's end). */
	list->entries[list->n].name = (const char *)(uintptr_t)list->names_len;
	list->entries[list->n].type = type;
	list->names_len += len;
	list->n++;
	return PS_OK;
}

ps_err dirlist_read(int fd, struct dirlist *list)
{
	char buf[DIRLIST_BUF] __attribute__((aligned(8)));
	ps_err err = PS_OK;
	list->n = 0;
	list->names_len = 0;
	for (;;) {
		ssize_t got = getdents64(fd, buf, sizeof buf);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = errno == ENOMEM ? PS_ERR_NOMEM : PS_ERR_IO;
			break;
		}
		if (got == 0)
			break;
		for (ssize_t off = 0; off < got && !err;) {
			const struct dirent64 *de = (const struct dirent64 *)(const void *)(buf + off);
			off += de->d_reclen;
			const char *name = de->d_name;
			if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
				continue;
			err = dirlist_add(list, name, dirlist_type_of(fd, name, de->d_type));
		}
		if (err)
			break;
	}
	if (err) {
		list->n = 0;
		list->names_len = 0;
		return err;
	}
	for (size_t i = 0; i < list->n; i++)
		list->entries[i].name = list->names + (uintptr_t)list->entries[i].name;
	return PS_OK;
}

int dirlist_has(const struct dirlist *list, const char *name, enum dirlist_type type)
{
	for (size_t i = 0; i < list->n; i++)
		if (list->entries[i].type == type && strcmp(list->entries[i].name, name) == 0)
			return 1;
	return 0;
}

void dirlist_free(struct dirlist *list)
{
	free(list->entries);
	free(list->names);
	*list = (struct dirlist)DIRLIST_INIT;
}
