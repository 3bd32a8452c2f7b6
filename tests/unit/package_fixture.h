/* package_fixture.h - what the package unit tests share: zips made with libzip, manifests, raw entry bytes. */
#ifndef PACKAGE_FIXTURE_H
#define PACKAGE_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>
#include <cmocka.h>

#include "lt_error.h"
#include "lt_file.h"
#include "pkg_nupkg.h"
#include "pkg_nuspec.h"

#define expect_error(call, want)                                 \
	do {                                                     \
		assert_true((call) < 0);                         \
		assert_int_equal(lt_error_last()->code, (want)); \
	} while (0)

#define NUSPEC(meta)                                                                      \
	"\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"                       \
	"<package xmlns=\"http://schemas.microsoft.com/packaging/2013/05/nuspec.xsd\">\n" \
	"  <metadata>" meta "</metadata>\n</package>\n"
#define GOOD_NUSPEC                                                                                 \
	NUSPEC("<id>Lt.Test_Pkg</id><version> 1.2.3-beta+build </version><dependencies>"           \
	       "<group targetFramework=\"net6.0\"/><group><dependency id=\"X\" version=\"1\"/></group>" \
	       "<group targetFramework=\".NETStandard2.0\"/></dependencies>")
/* GOOD_NUSPEC as a zip entry (see struct zent). */
#define MANIFEST { "A.nuspec", GOOD_NUSPEC, sizeof GOOD_NUSPEC - 1, 1 }

/* One entry of a zip made by make_zip. */
struct zent {
	const char *name;
	const void *data;
	size_t len;
	int deflate; /* 0: Stored */
};

/* A zip of entries e[0..n), in that order, each with one fixed time, into
 * *out (free with free()). */
static inline void make_zip(const struct zent *e, size_t n, uint8_t **out, size_t *size)
{
	zip_error_t ze;
	zip_source_t *src, *s;
	zip_stat_t st;
	zip_t *za;
	size_t i;

	zip_error_init(&ze);
	src = zip_source_buffer_create(NULL, 0, 0, &ze);
	assert_non_null(src);
	zip_source_keep(src);
	za = zip_open_from_source(src, ZIP_TRUNCATE, &ze);
	assert_non_null(za);
	for (i = 0; i < n; i++) {
		zip_int64_t at;
		s = zip_source_buffer(za, e[i].data, e[i].len, 0);
		assert_non_null(s);
		at = zip_file_add(za, e[i].name, s, ZIP_FL_ENC_UTF_8);
		if (at < 0)
			fail_msg("zip_file_add %s: %s", e[i].name, zip_strerror(za));
		assert_int_equal(zip_set_file_compression(za, (zip_uint64_t)at, e[i].deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0), 0);
		assert_int_equal(zip_file_set_mtime(za, (zip_uint64_t)at, 1700000000, 0), 0);
	}
	assert_int_equal(zip_close(za), 0);
	assert_int_equal(zip_source_stat(src, &st), 0);
	*out = malloc(st.size);
	assert_non_null(*out);
	assert_int_equal(zip_source_open(src), 0);
	assert_int_equal(zip_source_read(src, *out, st.size), (zip_int64_t)st.size);
	zip_source_close(src);
	zip_source_free(src);
	*size = st.size;
	zip_error_fini(&ze);
}

/* A package: GOOD_NUSPEC as "Lt.Test.nuspec" first, then e[0..n). */
static inline void make_package(const struct zent *e, size_t n, uint8_t **out, size_t *size)
{
	struct zent all[16] = { { "Lt.Test.nuspec", GOOD_NUSPEC, sizeof GOOD_NUSPEC - 1, 1 } };

	assert_true(n < 16);
	memcpy(all + 1, e, n * sizeof *e);
	make_zip(all, n + 1, out, size);
}

/* The whole file at path (free with free()), or NULL when it is not there. */
static inline uint8_t *read_file(const char *path, size_t *size)
{
	uint8_t *data;

	if (access(path, R_OK) != 0)
		return NULL;
	assert_int_equal(lt_file_read(path, &data, size), 0);
	return data;
}

/* The raw (compressed) bytes of entry `name` of zip[0..size), and its CRC. */
static inline uint8_t *raw_entry(const uint8_t *zip, size_t size, const char *name, size_t *len, uint32_t *crc)
{
	zip_error_t ze;
	zip_source_t *src;
	zip_stat_t st;
	zip_file_t *f;
	zip_t *za;
	uint8_t *buf;

	zip_error_init(&ze);
	src = zip_source_buffer_create(zip, size, 0, &ze);
	za = zip_open_from_source(src, ZIP_RDONLY, &ze);
	assert_non_null(za);
	assert_int_equal(zip_stat(za, name, 0, &st), 0);
	buf = malloc(st.comp_size + 1);
	f = zip_fopen(za, name, ZIP_FL_COMPRESSED);
	assert_non_null(f);
	assert_int_equal(zip_fread(f, buf, st.comp_size), (zip_int64_t)st.comp_size);
	zip_fclose(f);
	*len = st.comp_size;
	*crc = st.crc;
	zip_close(za);
	zip_error_fini(&ze);
	return buf;
}

/* Entry `name` has the same raw bytes and CRC in both zips. */
static inline void assert_same_raw(const uint8_t *a, size_t na, const uint8_t *b, size_t nb, const char *name)
{
	size_t l1, l2;
	uint32_t c1, c2;
	uint8_t *r1 = raw_entry(a, na, name, &l1, &c1), *r2 = raw_entry(b, nb, name, &l2, &c2);

	if (l1 != l2 || memcmp(r1, r2, l1) || c1 != c2)
		fail_msg("%s: raw bytes or CRC differ", name);
	free(r1);
	free(r2);
}

#endif
