/* mountinfo.c: which mount covers a path, read from a table in
 * /proc/self/mountinfo's format, and the table of this process. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "helpers.h"
#include "mountinfo.h"
#include "suites.h"

/* A table of this machine's kinds: the root on ext4, an sshfs store whose
 * path holds a space (\040), an NFS home, an overlay below it, a local
 * directory mounted over a FUSE one (the later mount covers). */
static const char test_table[] =
	"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	"40 22 0:50 / /mnt/far\\040store rw,nosuid - fuse.sshfs u@host:/s rw,user_id=0\n"
	"41 22 0:51 / /home rw shared:7 master:2 - nfs4 srv:/home rw\n"
	"42 41 0:52 / /home/u/local rw - overlay overlay rw\n"
	"43 22 0:53 / /data rw - fuse.rclone remote: rw\n"
	"44 22 8:2 / /data rw - ext4 /dev/sdb1 rw\n"
	"45 22 0:54 / /fusebig rw - fuseblk /dev/sdc1 rw\n"
	"short line\n";

static int test_count(void *ctx, const char *mount_point, const char *fstype, const char *source)
{
	(void)fstype, (void)source;
	if (strcmp(mount_point, "/mnt/far store") == 0)
		ck_assert_str_eq(source, "u@host:/s");
	(*(int *)ctx)++;
	return 0;
}

START_TEST(test_mountinfo_table)
{
	char *file = helper_write(test_table);
	int n = 0;
	ck_assert_int_eq(mountinfo_each_in(file, test_count, &n), 0);
	ck_assert_int_eq(n, 7); /* the short line is no mount */
	static const struct {
		const char *path;
		int remote;
	} cases[] = {
		{ "/", 0 },
		{ "/etc/passwd", 0 },
		{ "/mnt/far store", 1 },
		{ "/mnt/far store/--p--/s.jsonl", 1 },
		{ "/mnt/far storey", 0 },        /* another name, not below it */
		{ "/mnt/far", 0 },
		{ "/home/u/.pi/agent/sessions", 1 },
		{ "/home/u/local/sessions", 0 }, /* a local mount below the NFS one */
		{ "/data/sessions", 0 },         /* mounted over the FUSE one */
		{ "/fusebig/x", 1 },
		{ "relative/path", 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		ck_assert_msg(mountinfo_is_remote_in(file, cases[i].path) == cases[i].remote, "%s", cases[i].path);
	ck_assert_int_eq(mountinfo_is_remote_in("/nonexistent/mountinfo", "/mnt/far store"), 0);
	ck_assert_int_eq(mountinfo_each_in("/nonexistent/mountinfo", test_count, &n), -1);
	unlink(file);
	free(file);
}
END_TEST

static int test_find_proc(void *ctx, const char *mount_point, const char *fstype, const char *source)
{
	(void)source;
	if (strcmp(mount_point, "/proc") == 0 && strcmp(fstype, "proc") == 0)
		*(int *)ctx = 1;
	return *(int *)ctx;
}

START_TEST(test_mountinfo_self)
{
	int found = 0;
	ck_assert_int_eq(mountinfo_each(test_find_proc, &found), 0);
	ck_assert_int_eq(found, 1);
	ck_assert_int_eq(mountinfo_is_remote("/proc/self"), 0);
}
END_TEST

Suite *mountinfo_suite(void)
{
	Suite *s = suite_create("mountinfo");
	TCase *tc = tcase_create("mountinfo");
	tcase_add_test(tc, test_mountinfo_table);
	tcase_add_test(tc, test_mountinfo_self);
	suite_add_tcase(s, tc);
	return s;
}
