/* images_list(), images_data() and the strict base64 decoder: RFC 4648's
 * vectors, every refusal, a round trip of random bytes through an encoder
 * written here, random garbage against the stated output bound (ASan and
 * valgrind watch it), and the images of a hand-made session compared byte
 * for byte with a PNG decoded by Python's base64 module. */
#include <stdlib.h>
#include <string.h>
#include "helpers.h"
#include "images.h"
#include "suites.h"

/* A 1x1 PNG: its base64 and the bytes Python's base64.b64decode gives. */
#define PNG_B64 "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
static const unsigned char png_bytes[69] = {
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00,
	0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xde, 0x00, 0x00, 0x00,
	0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0xc9,
	0xfe, 0x92, 0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
};

/* Decodes s (NUL-terminated) into a buffer of exactly the stated bound and
 * checks the dry run agrees.  Returns the error; *out is new on success. */
static ps_err decode(const char *s, unsigned char **out, size_t *len)
{
	size_t n = strlen(s), dry = 0;
	unsigned char *buf = malloc(n / 4 * 3 + 3);
	ck_assert_ptr_nonnull(buf);
	ps_err err = images_base64_decode(s, n, buf, len);
	ck_assert_int_eq(images_base64_decode(s, n, NULL, &dry), err);
	if (err) {
		free(buf);
		*out = NULL;
		return err;
	}
	ck_assert_uint_eq(dry, *len);
	*out = buf;
	return PS_OK;
}

static void decode_ok(const char *s, const char *want, size_t want_len)
{
	unsigned char *out;
	size_t len;
	ck_assert_msg(decode(s, &out, &len) == PS_OK, "refused: \"%s\"", s);
	ck_assert_uint_eq(len, want_len);
	ck_assert(memcmp(out, want, len) == 0);
	free(out);
}

static void decode_bad(const char *s)
{
	unsigned char *out;
	size_t len;
	ck_assert_msg(decode(s, &out, &len) == PS_ERR_INVALID, "accepted: \"%s\"", s);
}

START_TEST(test_base64_rfc4648_vectors)
{
	decode_ok("", "", 0);
	decode_ok("Zg==", "f", 1);
	decode_ok("Zm8=", "fo", 2);
	decode_ok("Zm9v", "foo", 3);
	decode_ok("Zm9vYg==", "foob", 4);
	decode_ok("Zm9vYmE=", "fooba", 5);
	decode_ok("Zm9vYmFy", "foobar", 6);
	decode_ok("AAECAwQ=", "\x00\x01\x02\x03\x04", 5);
	decode_ok("//79AA==", "\xff\xfe\xfd\x00", 4);
	decode_ok("+/+/", "\xfb\xff\xbf", 3);
}
END_TEST

START_TEST(test_base64_whitespace_ignored)
{
	decode_ok(" Zm9v\nYmFy\r\n", "foobar", 6);
	decode_ok("Z m 9 v\tY\fg\v=\n=\n", "foob", 4);
	decode_ok(" \n\t ", "", 0);
}
END_TEST

START_TEST(test_base64_refusals)
{
	static const char *const bad[] = {
		"Zg",         /* unpadded */
		"Zm9vY",      /* a lone sextet */
		"Zg=",        /* half the padding */
		"Z===",       /* padding after one sextet */
		"====",       /* padding alone */
		"=Zg=",       /* padding first */
		"Zm9=v",      /* data after padding */
		"Zg==Zg==",   /* two padded quanta */
		"Zg===",      /* too much padding */
		"Zm8==",      /* padding overfills the quantum */
		"Zm9v!",      /* outside the alphabet */
		"Zm9v-_",     /* base64url is not base64 */
		"Zm9v\xff",   /* a high byte */
		"Zm\x009v",   /* NUL (via strlen it ends the string: "Zm") */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		decode_bad(bad[i]);
	/* An embedded NUL with an explicit length is refused too. */
	size_t len;
	ck_assert_int_eq(images_base64_decode("Zm\0v", 4, NULL, &len), PS_ERR_INVALID);
}
END_TEST

/* The bits below the last whole byte are not checked (as Python's
 * b64decode(validate=True) does not): "Zh==" decodes like "Zg==". */
START_TEST(test_base64_nonzero_trailing_bits)
{
	decode_ok("Zh==", "f", 1);
	decode_ok("Zm9=", "fo", 2);
}
END_TEST

static void encode(const unsigned char *in, size_t n, char *out)
{
	static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);
		out[o++] = al[v >> 18 & 63];
		out[o++] = al[v >> 12 & 63];
		out[o++] = i + 1 < n ? al[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? al[v & 63] : '=';
	}
	out[o] = '\0';
}

START_TEST(test_base64_round_trip_random)
{
	unsigned char in[300];
	char enc[500], spaced[1100];
	unsigned seed = 12345;
	for (int round = 0; round < 2000; round++) {
		size_t n = (size_t)rand_r(&seed) % sizeof in;
		for (size_t i = 0; i < n; i++)
			in[i] = (unsigned char)rand_r(&seed);
		encode(in, n, enc);
		/* Sprinkle white space anywhere, padding included. */
		size_t o = 0;
		for (size_t i = 0; enc[i]; i++) {
			if (rand_r(&seed) % 5 == 0)
				spaced[o++] = " \n\r\t"[rand_r(&seed) % 4];
			spaced[o++] = enc[i];
		}
		spaced[o] = '\0';
		decode_ok(enc, (const char *)in, n);
		decode_ok(spaced, (const char *)in, n);
	}
}
END_TEST

/* Garbage of every length: whatever it is, the decoder stays inside the
 * stated bound (the buffer is exactly that size) and the dry run agrees. */
START_TEST(test_base64_garbage)
{
	static const char pool[] = "AZaz09+/=  \n=-_!\xff\x80";
	char s[64];
	unsigned seed = 99;
	for (int round = 0; round < 20000; round++) {
		size_t n = (size_t)rand_r(&seed) % (sizeof s - 1);
		for (size_t i = 0; i < n; i++)
			s[i] = pool[rand_r(&seed) % (sizeof pool - 1)];
		s[n] = '\0';
		unsigned char *out;
		size_t len;
		if (decode(s, &out, &len) == PS_OK) {
			ck_assert_uint_le(len, strlen(s) / 4 * 3);
			free(out);
		}
	}
}
END_TEST

START_TEST(test_images_ext)
{
	ck_assert_str_eq(images_ext("image/png"), "png");
	ck_assert_str_eq(images_ext("image/jpeg"), "jpg");
	ck_assert_str_eq(images_ext("IMAGE/JPEG"), "jpg");
	ck_assert_str_eq(images_ext("image/jpg"), "jpg");
	ck_assert_str_eq(images_ext("image/gif"), "gif");
	ck_assert_str_eq(images_ext("image/webp"), "webp");
	ck_assert_str_eq(images_ext("image/svg+xml"), "svg");
	ck_assert_str_eq(images_ext("image/png; q=1"), "png");
	ck_assert_str_eq(images_ext("image/pngx"), "bin");
	ck_assert_str_eq(images_ext("image/"), "bin");
	ck_assert_str_eq(images_ext(""), "bin");
	ck_assert_str_eq(images_ext(NULL), "bin");
	char name[IMAGES_NAME_MAX];
	images_file_name(0, "png", name);
	ck_assert_str_eq(name, "1.png");
	images_file_name(41, "bin", name);
	ck_assert_str_eq(name, "42.bin");
}
END_TEST

/* Links are URLs: a name's %XX escapes must reach the viewer as %XX. */
START_TEST(test_images_link)
{
	char *l = images_link(NULL, "0002-user.u1.md", 0, "png");
	ck_assert_str_eq(l, "![image 1](0002-user.u1.images/1.png)");
	free(l);
	l = images_link("../../", "0005~try%2F2/0006-toolResult-a%2Fb.x~h00ff.md", 41, "bin");
	ck_assert_str_eq(l, "![image 42](../../0005~try%252F2/0006-toolResult-a%252Fb.x~h00ff.images/42.bin)");
	free(l);
	l = images_link(NULL, "a b(c)#\x01\xc3\xa9.md", 0, "gif");
	ck_assert_str_eq(l, "![image 1](a%20b%28c%29%23%01%C3%A9.images/1.gif)");
	free(l);
	ck_assert_ptr_null(images_link(NULL, "entry.json", 0, "png"));
	ck_assert_ptr_null(images_link(NULL, "md", 0, "png"));
}
END_TEST

/* An image is a block whose type is exactly "image" (NUL counts) with
 * string data; content is a message's or custom message's array only. */
START_TEST(test_images_is_image)
{
	json_t *v = json_loads("[{\"type\":\"image\",\"data\":\"\"},{\"type\":\"image\\u0000x\",\"data\":\"\"},"
			       "{\"type\":\"image\",\"data\":null},{\"type\":\"Image\",\"data\":\"\"},\"image\"]",
			       JSON_ALLOW_NUL, NULL);
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(images_is_image(json_array_get(v, 0)), 1);
	for (size_t i = 1; i < json_array_size(v); i++)
		ck_assert_int_eq(images_is_image(json_array_get(v, i)), 0);
	json_decref(v);
	v = json_loads("[{\"type\":\"message\",\"message\":{\"content\":[]}},{\"type\":\"custom_message\",\"content\":[]},"
		       "{\"type\":\"message\\u0000\",\"message\":{\"content\":[]}},{\"type\":\"context_edit\","
		       "\"replacement\":{\"content\":[]}},{\"type\":\"custom_message\",\"content\":\"x\"}]",
		       JSON_ALLOW_NUL, NULL);
	ck_assert_ptr_nonnull(v);
	ck_assert_ptr_eq(images_content(json_array_get(v, 0)),
			 json_object_get(json_object_get(json_array_get(v, 0), "message"), "content"));
	ck_assert_ptr_eq(images_content(json_array_get(v, 1)), json_object_get(json_array_get(v, 1), "content"));
	for (size_t i = 2; i < json_array_size(v); i++)
		ck_assert_ptr_null(images_content(json_array_get(v, i)));
	json_decref(v);
}
END_TEST

#define IMG(mime, data) "{\"type\":\"image\",\"mimeType\":\"" mime "\",\"data\":\"" data "\"}"

/* Images in a user message, a tool result, a custom message (role) and a
 * custom_message entry; blocks that are not listed images in between. */
static const char images_session[] =
	HDR
	"{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\","
	"\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"look\"}," IMG("image/png", PNG_B64) ","
	"{\"type\":\"image\",\"mimeType\":\"image/png\",\"data\":{\"url\":\"http://x\"}},"
	IMG("image/jpeg", "Zm9v\\nYmFy") "," IMG("image/gif", "not base64!") "],\"timestamp\":1}}\n"
	"{\"type\":\"message\",\"id\":\"r1\",\"parentId\":\"u1\",\"timestamp\":\"2026-01-01T00:00:02.000Z\","
	"\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"c\",\"toolName\":\"shot\",\"content\":["
	IMG("image/webp", "Zg==") "],\"isError\":false,\"timestamp\":2}}\n"
	"{\"type\":\"custom_message\",\"id\":\"m1\",\"parentId\":\"r1\",\"timestamp\":\"2026-01-01T00:00:03.000Z\","
	"\"customType\":\"screen\",\"content\":[{\"type\":\"image\",\"data\":\"\"}],\"display\":true}\n"
	"{\"type\":\"message\",\"id\":\"c1\",\"parentId\":\"m1\",\"timestamp\":\"2026-01-01T00:00:04.000Z\","
	"\"message\":{\"role\":\"custom\",\"customType\":\"x\",\"content\":[" IMG("image/svg+xml", "PHN2Zy8+") "],"
	"\"display\":true,\"timestamp\":4}}\n"
	"{\"type\":\"message\",\"id\":\"s1\",\"parentId\":\"c1\",\"timestamp\":\"2026-01-01T00:00:05.000Z\","
	"\"message\":{\"role\":\"user\",\"content\":\"" PNG_B64 "\",\"timestamp\":5}}\n"
	"{\"type\":\"compaction\",\"id\":\"k1\",\"parentId\":\"s1\",\"timestamp\":\"2026-01-01T00:00:06.000Z\","
	"\"summary\":\"s\",\"firstKeptEntryId\":\"s1\",\"tokensBefore\":1,"
	"\"retainedTail\":[{\"role\":\"user\",\"content\":[" IMG("image/png", "Zg==") "]}]}\n";

static void data_eq(struct ps_session *s, uint32_t e, size_t i, const void *want, size_t want_len)
{
	char *buf;
	size_t len;
	ck_assert_int_eq(images_data(s, e, i, &buf, &len), PS_OK);
	ck_assert_uint_eq(len, want_len);
	ck_assert(memcmp(buf, want, len) == 0);
	ck_assert_int_eq(buf[len], '\0');
	free(buf);
}

START_TEST(test_images_session)
{
	char *path = helper_write(images_session);
	struct ps_session *s = helper_open(path);
	struct image_ref *refs;
	size_t n;
	char *buf;
	size_t len;

	ck_assert_int_eq(s->n_entries, 6);
	/* The user message: the url image is not listed; the bad one is. */
	ck_assert_int_eq(images_list(s, 0, &refs, &n), PS_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(refs[0].mime, "image/png");
	ck_assert_str_eq(refs[0].ext, "png");
	ck_assert_uint_eq(refs[0].size, sizeof png_bytes);
	ck_assert(refs[0].valid);
	ck_assert_str_eq(refs[1].ext, "jpg");
	ck_assert_uint_eq(refs[1].size, 6);
	ck_assert(refs[1].valid);
	ck_assert_str_eq(refs[2].ext, "gif");
	ck_assert(!refs[2].valid);
	ck_assert_uint_eq(refs[2].size, 0);
	images_free(refs, n);
	data_eq(s, 0, 0, png_bytes, sizeof png_bytes);
	data_eq(s, 0, 1, "foobar", 6);
	ck_assert_int_eq(images_data(s, 0, 2, &buf, &len), PS_ERR_INVALID);
	ck_assert_ptr_null(buf);
	ck_assert_int_eq(images_data(s, 0, 3, &buf, &len), PS_ERR_NOENT);

	ck_assert_int_eq(images_list(s, 1, &refs, &n), PS_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(refs[0].ext, "webp");
	images_free(refs, n);
	data_eq(s, 1, 0, "f", 1);

	/* custom_message entry: no mimeType, empty data. */
	ck_assert_int_eq(images_list(s, 2, &refs, &n), PS_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_null(refs[0].mime);
	ck_assert_str_eq(refs[0].ext, "bin");
	ck_assert(refs[0].valid);
	ck_assert_uint_eq(refs[0].size, 0);
	images_free(refs, n);
	data_eq(s, 2, 0, "", 0);

	ck_assert_int_eq(images_list(s, 3, &refs, &n), PS_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(refs[0].ext, "svg");
	images_free(refs, n);
	data_eq(s, 3, 0, "<svg/>", 6);

	/* A string content and a compaction's retainedTail hold no images. */
	for (uint32_t e = 4; e <= 5; e++) {
		ck_assert_int_eq(images_list(s, e, &refs, &n), PS_OK);
		ck_assert_uint_eq(n, 0);
		ck_assert_ptr_null(refs);
		ck_assert_int_eq(images_data(s, e, 0, &buf, &len), PS_ERR_NOENT);
	}
	ck_assert_int_eq(images_list(s, 6, &refs, &n), PS_ERR_NOENT);
	ck_assert_int_eq(images_list(s, PS_NIL, &refs, &n), PS_ERR_NOENT);
	ck_assert_int_eq(images_data(s, 6, 0, &buf, &len), PS_ERR_NOENT);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

/* A line the scanner takes but jansson cannot decode has no images rather
 * than an error that would break its directory. */
START_TEST(test_images_unreadable_entry)
{
	char *path = helper_write(HDR "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"x\","
				      "\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"data\":1e999999}]}}\n");
	struct ps_session *s = helper_open(path);
	struct image_ref *refs;
	size_t n = 9;
	ck_assert_int_eq(s->n_entries, 1);
	ck_assert_int_eq(images_list(s, 0, &refs, &n), PS_OK);
	ck_assert_uint_eq(n, 0);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

Suite *images_suite(void)
{
	Suite *s = suite_create("images");
	TCase *tc = tcase_create("images");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_base64_rfc4648_vectors);
	tcase_add_test(tc, test_base64_whitespace_ignored);
	tcase_add_test(tc, test_base64_refusals);
	tcase_add_test(tc, test_base64_nonzero_trailing_bits);
	tcase_add_test(tc, test_base64_round_trip_random);
	tcase_add_test(tc, test_base64_garbage);
	tcase_add_test(tc, test_images_ext);
	tcase_add_test(tc, test_images_link);
	tcase_add_test(tc, test_images_is_image);
	tcase_add_test(tc, test_images_session);
	tcase_add_test(tc, test_images_unreadable_entry);
	suite_add_tcase(s, tc);
	return s;
}
