/* test_package.c - unit tests of .nupkg reading and writing (pkg_nupkg.c) and of the .nuspec
 * reader (pkg_nuspec.c), on zips made here with libzip, hostile ones patched byte by byte. */
#include "package_fixture.h"

static uint32_t get_u32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u16(uint8_t *p, uint32_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8 & 0xff;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	put_u16(p, v & 0xffff);
	put_u16(p + 2, v >> 16);
}

/* Zip header fields (APPNOTE 4.3.7 local file header, 4.3.12 central
 * directory header): offsets in each, and their widths. */
enum zfield { ZF_FLAGS, ZF_METHOD, ZF_CRC, ZF_CSIZE, ZF_USIZE };
static const struct { unsigned local, central, width; } zfields[] = {
	[ZF_FLAGS] = { 6, 8, 2 }, [ZF_METHOD] = { 8, 10, 2 }, [ZF_CRC] = { 14, 16, 4 },
	[ZF_CSIZE] = { 18, 20, 4 }, [ZF_USIZE] = { 22, 24, 4 },
};

/* Offsets of entry `name`'s local header and central directory header in
 * zip[0..size), found by their signatures and names. */
static void find_headers(const uint8_t *zip, size_t size, const char *name, size_t *local, size_t *central)
{
	size_t len = strlen(name), i;

	*local = *central = 0;
	for (i = 0; i + 46 + len <= size; i++) {
		uint32_t sig = get_u32(zip + i);
		if (sig == 0x04034b50 && zip[i + 26] == len && !memcmp(zip + i + 30, name, len))
			*local = i;
		if (sig == 0x02014b50 && zip[i + 28] == len && !memcmp(zip + i + 46, name, len))
			*central = i;
	}
	assert_true(*local || *central);
	assert_int_not_equal(*central, 0);
}

/* Set field f of entry `name` in both its headers. */
static void patch(uint8_t *zip, size_t size, const char *name, enum zfield f, uint32_t v)
{
	size_t at[2];

	find_headers(zip, size, name, &at[0], &at[1]);
	for (int i = 0; i < 2; i++) {
		uint8_t *p = zip + at[i] + (i ? zfields[f].central : zfields[f].local);
		if (zfields[f].width == 2)
			put_u16(p, v);
		else
			put_u32(p, v);
	}
}


/* ---- .nuspec ---- */

static void test_nuspec_good(void **state)
{
	struct nuspec s;
	const char text[] = GOOD_NUSPEC;

	(void)state;
	assert_int_equal(nuspec_parse(&s, text, sizeof text - 1), 0);
	assert_string_equal(s.id, "Lt.Test_Pkg");
	assert_string_equal(s.version, "1.2.3-beta+build"); /* trimmed */
	assert_int_equal(s.ntfms, 2);                        /* the group without a framework is skipped */
	assert_string_equal(s.tfms[0], "net6.0");
	assert_string_equal(s.tfms[1], ".NETStandard2.0");
}

static void test_nuspec_prefixed_names(void **state)
{
	struct nuspec s;
	const char text[] = "<n:package xmlns:n=\"x\"><n:metadata><n:id>A</n:id><n:version>1</n:version></n:metadata></n:package>";

	(void)state;
	assert_int_equal(nuspec_parse(&s, text, sizeof text - 1), 0);
	assert_string_equal(s.id, "A");
}

/* Each malformed manifest, with the exact code. */
static void test_nuspec_bad(void **state)
{
	static const char *const bad[] = {
		"",
		"<package><metadata><id>A</id><version>1</version></metadata>",   /* unclosed */
		"<package><metadata><id>A</id><version>1</version></package>",    /* mismatched */
		"<other><metadata><id>A</id><version>1</version></metadata></other>",
		"<package><id>A</id><version>1</version></package>",               /* no metadata */
		"<package><metadata><version>1</version></metadata></package>",    /* no id */
		"<package><metadata><id>A</id></metadata></package>",              /* no version */
		"<package><metadata><id> </id><version>1</version></metadata></package>",
		"<package><metadata><id>../A</id><version>1</version></metadata></package>",
		"<package><metadata><id>A\x1b[2J</id><version>1</version></metadata></package>",
		"<package><metadata><id>A<b/></id><version>1</version></metadata></package>",
		"<package><metadata><id>A</id><version>1/2</version></metadata></package>",
		("<package><metadata><id>A</id><version>1</version><dependencies>"
		 "<group targetFramework=\"net6.0/../x\"/></dependencies></metadata></package>"),
	};
	struct nuspec s;

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		lt_error_clear();
		if (nuspec_parse(&s, bad[i], strlen(bad[i])) == 0)
			fail_msg("accepted: %s", bad[i]);
		assert_int_equal(lt_error_last()->code, LT_E_PACKAGE);
	}
}

static void test_nuspec_nul_byte(void **state)
{
	const char text[] = "<package>\0<metadata/></package>";
	struct nuspec s;

	(void)state;
	expect_error(nuspec_parse(&s, text, sizeof text - 1), LT_E_PACKAGE);
}

/* An id one character over the limit, and one at it. */
static void test_nuspec_long_id(void **state)
{
	char text[512], id[NUSPEC_MAX_ID + 2];
	struct nuspec s;

	(void)state;
	memset(id, 'a', sizeof id - 1);
	id[sizeof id - 1] = '\0';
	snprintf(text, sizeof text, "<package><metadata><id>%s</id><version>1</version></metadata></package>", id);
	expect_error(nuspec_parse(&s, text, strlen(text)), LT_E_PACKAGE);
	id[NUSPEC_MAX_ID] = '\0';
	snprintf(text, sizeof text, "<package><metadata><id>%s</id><version>1</version></metadata></package>", id);
	assert_int_equal(nuspec_parse(&s, text, strlen(text)), 0);
	assert_int_equal(strlen(s.id), NUSPEC_MAX_ID);
}

static void test_nuspec_too_many_groups(void **state)
{
	size_t cap = 64 * (NUSPEC_MAX_GROUPS + 2) + 256, len;
	char *text = malloc(cap);
	struct nuspec s;

	(void)state;
	len = (size_t)sprintf(text, "<package><metadata><id>A</id><version>1</version><dependencies>");
	for (int i = 0; i <= NUSPEC_MAX_GROUPS; i++)
		len += (size_t)sprintf(text + len, "<group targetFramework=\"net%d.0\"/>", i);
	len += (size_t)sprintf(text + len, "</dependencies></metadata></package>");
	expect_error(nuspec_parse(&s, text, len), LT_E_PACKAGE);
	free(text);
}

/* ---- entry names ---- */

static void test_names_good(void **state)
{
	static const char *const good[] = {
		"lib/net6.0/A.dll", "[Content_Types].xml", "_rels/.rels", "lib/", "a%20b/c.txt", ".signature.p7s",
		"package/services/metadata/core-properties/x.psmdcp", "a..b/..c/d..",
	};

	(void)state;
	for (size_t i = 0; i < sizeof good / sizeof *good; i++)
		if (nupkg_name_check(good[i]) < 0)
			fail_msg("refused %s: %s", good[i], lt_error_last()->msg);
}

static void test_names_hostile(void **state)
{
	static const char *const bad[] = {
		"", "/etc/passwd", "../x", "a/../../x", "lib/..", "./a", "a/./b", "a//b", "a\\..\\b", "..\\x",
		"C:/Windows/x.dll", "c:x", "a.txt:stream", "a\nb", "a\x7f", "%2e%2e/x", "a%2F..%2Fb", "%2fetc",
		"a%5c..%5cb", "a%00b", "lib/%2E/x",
	};

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		lt_error_clear();
		if (nupkg_name_check(bad[i]) == 0)
			fail_msg("accepted %s", bad[i]);
		assert_int_equal(lt_error_last()->code, LT_E_PACKAGE);
	}
}

static void test_name_too_long(void **state)
{
	char name[NUPKG_MAX_NAME + 2];

	(void)state;
	memset(name, 'a', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	expect_error(nupkg_name_check(name), LT_E_PACKAGE);
	name[NUPKG_MAX_NAME] = '\0';
	assert_int_equal(nupkg_name_check(name), 0);
}

static void test_is_assembly(void **state)
{
	static const struct { const char *name; const char *tfm; } cases[] = {
		{ "lib/net6.0/A.dll", "net6.0" },
		{ "LIB/NetStandard2.0/A.DLL", "NetStandard2.0" },
		{ "lib/net45/Tool.exe", "net45" },
		{ "lib/net6.0/de/A.resources.dll", "net6.0" },
		{ "runtimes/win-x64/lib/net8.0/A.dll", "net8.0" },
		{ "ref/net6.0/A.dll", NULL },
		{ "lib/A.dll", NULL },
		{ "lib/net6.0/A.xml", NULL },
		{ "lib/net6.0/.dll", NULL },
		{ "runtimes/win-x64/native/a.dll", NULL },
		{ "runtimes/lib/net8.0/A.dll", NULL },
		{ "tools/net6.0/A.dll", NULL },
		{ "library/net6.0/A.dll", NULL },
	};
	size_t at, len;

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int is = nupkg_is_assembly(cases[i].name, &at, &len);
		if (is != (cases[i].tfm != NULL))
			fail_msg("%s: %d", cases[i].name, is);
		if (is) {
			assert_int_equal(len, strlen(cases[i].tfm));
			assert_memory_equal(cases[i].name + at, cases[i].tfm, len);
		}
	}
	assert_true(nupkg_is_signature(".signature.p7s"));
	assert_false(nupkg_is_signature("lib/.signature.p7s"));
}

/* ---- opening packages ---- */

static void test_open_good(void **state)
{
	static const char hello[] = "hello";
	const struct zent e[] = { { "lib/net6.0/readme.txt", hello, 5, 0 }, { "docs/", NULL, 0, 0 } };
	struct nupkg *p;
	uint8_t *zip, *text;
	size_t size, len;

	(void)state;
	make_package(e, 2, &zip, &size);
	assert_int_equal(nupkg_open(&p, zip, size, NULL), 0);
	assert_int_equal(p->nentries, 3);
	assert_string_equal(p->entries[1].name, "lib/net6.0/readme.txt");
	assert_int_equal(p->entries[1].size, 5);
	assert_string_equal(p->spec.id, "Lt.Test_Pkg");
	assert_int_equal(nupkg_read(p, 1, &text, &len), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(text, hello, 5);
	assert_int_equal(text[5], 0);
	free(text);
	nupkg_free(p);
	free(zip);
}

/* A zip with the given entries (no manifest added) is refused with LT016. */
static void expect_refused(const struct zent *e, size_t n, const struct nupkg_limits *lim)
{
	struct nupkg *p = NULL;
	uint8_t *zip;
	size_t size;

	make_zip(e, n, &zip, &size);
	lt_error_clear();
	expect_error(nupkg_open(&p, zip, size, lim), LT_E_PACKAGE);
	assert_null(p);
	free(zip);
}

static void test_open_hostile_names(void **state)
{
	static const char *const names[] = { "../evil.dll", "/abs.dll", "C:/x.dll", "lib\\..\\..\\x.dll", "%2e%2e/x" };

	(void)state;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		const struct zent e[] = { MANIFEST, { names[i], "x", 1, 0 } };
		expect_refused(e, 2, NULL);
	}
}

static void test_open_duplicate_case(void **state)
{
	const struct zent e[] = { MANIFEST, { "lib/net6.0/A.dll", "x", 1, 0 }, { "LIB/net6.0/a.DLL", "y", 1, 0 } };

	(void)state;
	expect_refused(e, 3, NULL);
}

/* Two entries of exactly one name (libzip will not write that: patched). */
static void test_open_duplicate_exact(void **state)
{
	const struct zent e[] = { MANIFEST, { "dupA.txt", "x", 1, 0 }, { "dupB.txt", "y", 1, 0 } };
	struct nupkg *p = NULL;
	uint8_t *zip;
	size_t size, local, central;

	(void)state;
	make_zip(e, 3, &zip, &size);
	find_headers(zip, size, "dupB.txt", &local, &central);
	zip[local + 30 + 3] = 'A'; /* the name, after each header's fixed part */
	zip[central + 46 + 3] = 'A';
	expect_error(nupkg_open(&p, zip, size, NULL), LT_E_PACKAGE);
	free(zip);
}

static void test_open_no_manifest(void **state)
{
	const struct zent e[] = { { "lib/net6.0/A.dll", "x", 1, 0 }, { "sub/B.nuspec", GOOD_NUSPEC, sizeof GOOD_NUSPEC - 1, 0 } };

	(void)state;
	expect_refused(e, 2, NULL);
}

static void test_open_two_manifests(void **state)
{
	const struct zent e[] = { MANIFEST, { "B.NUSPEC", GOOD_NUSPEC, sizeof GOOD_NUSPEC - 1, 0 } };

	(void)state;
	expect_refused(e, 2, NULL);
}

static void test_open_malformed_manifest(void **state)
{
	static const char bad[] = "<package><metadata><id>A</id>";
	const struct zent e[] = { { "A.nuspec", bad, sizeof bad - 1, 0 } };

	(void)state;
	expect_refused(e, 1, NULL);
	assert_non_null(strstr(lt_error_last()->msg, "A.nuspec: "));
}

static void test_open_manifest_too_big(void **state)
{
	size_t len = NUPKG_MAX_NUSPEC_SIZE + 1;
	char *big = malloc(len);
	struct zent e[] = { { "A.nuspec", big, len, 1 } };

	(void)state;
	memset(big, ' ', len);
	memcpy(big, GOOD_NUSPEC, sizeof GOOD_NUSPEC - 1); /* valid XML, trailing spaces */
	expect_refused(e, 1, NULL);
	free(big);
}

static void test_open_limits(void **state)
{
	static char data[2000];
	const size_t spec = sizeof GOOD_NUSPEC - 1;
	const struct zent e[] = { MANIFEST, { "a.bin", data, 1000, 1 }, { "b.bin", data, 1001, 1 } };
	const struct nupkg_limits entries = { 2, NUPKG_MAX_ENTRY_SIZE, NUPKG_MAX_TOTAL_SIZE };
	const struct nupkg_limits entry = { NUPKG_MAX_ENTRIES, 1000, NUPKG_MAX_TOTAL_SIZE };
	const struct nupkg_limits total = { NUPKG_MAX_ENTRIES, NUPKG_MAX_ENTRY_SIZE, spec + 2000 };
	const struct nupkg_limits enough = { 3, 1001, spec + 2001 };
	struct nupkg *p;
	uint8_t *zip;
	size_t size;

	(void)state;
	expect_refused(e, 3, &entries);
	expect_refused(e, 3, &entry);
	assert_non_null(strstr(lt_error_last()->msg, "'b.bin'"));
	expect_refused(e, 3, &total);
	assert_non_null(strstr(lt_error_last()->msg, "'b.bin'"));
	make_zip(e, 3, &zip, &size);
	assert_int_equal(nupkg_open(&p, zip, size, &enough), 0);
	nupkg_free(p);
	free(zip);
}

/* A declared size past the default entry limit (patched in both headers:
 * refused before anything is inflated). */
static void test_open_huge_declared_size(void **state)
{
	const struct zent e[] = { MANIFEST, { "big.bin", "0123456789", 10, 0 } };
	struct nupkg *p = NULL;
	uint8_t *zip;
	size_t size;

	(void)state;
	make_zip(e, 2, &zip, &size);
	patch(zip, size, "big.bin", ZF_USIZE, 0xFFFFFFF0u);
	expect_error(nupkg_open(&p, zip, size, NULL), LT_E_PACKAGE);
	free(zip);
}

static void test_open_encrypted_and_method(void **state)
{
	const struct zent e[] = { MANIFEST, { "x.bin", "0123456789", 10, 0 } };
	struct nupkg *p = NULL;
	uint8_t *zip;
	size_t size;

	(void)state;
	make_zip(e, 2, &zip, &size);
	patch(zip, size, "x.bin", ZF_FLAGS, 1); /* traditional PKWARE encryption */
	expect_error(nupkg_open(&p, zip, size, NULL), LT_E_PACKAGE);
	free(zip);
	make_zip(e, 2, &zip, &size);
	patch(zip, size, "x.bin", ZF_METHOD, 14); /* LZMA */
	expect_error(nupkg_open(&p, zip, size, NULL), LT_E_PACKAGE);
	free(zip);
}

static void test_open_not_zip(void **state)
{
	static const uint8_t junk[] = "this is not a zip archive, just text long enough to look for one";
	struct nupkg *p = NULL;

	(void)state;
	expect_error(nupkg_open(&p, junk, sizeof junk, NULL), LT_E_PACKAGE);
	expect_error(nupkg_open(&p, junk, 0, NULL), LT_E_PACKAGE);
}

/* Every truncation of a small package is refused. */
static void test_open_truncated(void **state)
{
	const struct zent e[] = { { "lib/net6.0/a.txt", "abcdef", 6, 0 } };
	struct nupkg *p = NULL;
	uint8_t *zip;
	size_t size, n;

	(void)state;
	make_package(e, 1, &zip, &size);
	for (n = 0; n < size; n++) {
		lt_error_clear();
		if (nupkg_open(&p, zip, n, NULL) == 0)
			fail_msg("truncated at %zu of %zu: accepted", n, size);
		assert_int_equal(lt_error_last()->code, LT_E_PACKAGE);
	}
	assert_int_equal(nupkg_open(&p, zip, size, NULL), 0);
	nupkg_free(p);
	free(zip);
}

/* ---- reading entries ---- */

/* Open a package of the manifest and one entry `name`, patch field f to v. */
static struct nupkg *open_patched(const struct zent *e, enum zfield f, uint32_t v, uint8_t **zip)
{
	const struct zent all[] = { MANIFEST, *e };
	struct nupkg *p;
	size_t size;

	make_zip(all, 2, zip, &size);
	patch(*zip, size, e->name, f, v);
	assert_int_equal(nupkg_open(&p, *zip, size, NULL), 0);
	return p;
}

/* Data that inflates past its declared size: reading stops at the limit. */
static void test_read_bomb(void **state)
{
	size_t len = 1 << 20;
	uint8_t *zeros = calloc(1, len), *zip, *out;
	const struct zent e = { "bomb.bin", zeros, len, 1 };
	struct nupkg *p = open_patched(&e, ZF_USIZE, 1000, &zip);
	size_t size;

	(void)state;
	assert_int_equal(p->entries[1].size, 1000);
	expect_error(nupkg_read(p, 1, &out, &size), LT_E_PACKAGE);
	assert_null(out);
	nupkg_free(p);
	free(zip);
	free(zeros);
}

static void test_read_short(void **state)
{
	const struct zent e = { "short.bin", "0123456789", 10, 1 };
	uint8_t *zip, *out;
	struct nupkg *p = open_patched(&e, ZF_USIZE, 20, &zip);
	size_t size;

	(void)state;
	expect_error(nupkg_read(p, 1, &out, &size), LT_E_PACKAGE);
	nupkg_free(p);
	free(zip);
}

static void test_read_bad_crc(void **state)
{
	const struct zent e = { "crc.bin", "0123456789", 10, 0 };
	uint8_t *zip, *out;
	struct nupkg *p = open_patched(&e, ZF_CRC, 0x12345678, &zip);
	size_t size;

	(void)state;
	expect_error(nupkg_read(p, 1, &out, &size), LT_E_PACKAGE);
	nupkg_free(p);
	free(zip);
}

/* ---- writing ---- */

/* Unchanged: the bytes written are the input's. */
static void test_write_unchanged(void **state)
{
	const struct zent e[] = { { "a.txt", "abc", 3, 1 } };
	struct lt_buf out = LT_BUF_INIT;
	struct nupkg *p;
	uint8_t *zip;
	size_t size;

	(void)state;
	make_package(e, 1, &zip, &size);
	assert_int_equal(nupkg_open(&p, zip, size, NULL), 0);
	assert_int_equal(nupkg_write(p, &out), 0);
	nupkg_free(p);
	assert_int_equal(out.len, size);
	assert_memory_equal(out.data, zip, size);
	lt_buf_free(&out);
	free(zip);
}

/* Replace one entry, delete another: the rest keep names, order, raw bytes and CRCs. */
static void test_write_replace_delete(void **state)
{
	static char text[4000];
	const struct zent e[] = { { "a.txt", text, sizeof text, 1 }, { "b.bin", "replace me", 10, 1 },
				  { "c/stored.txt", "stored", 6, 0 }, { ".signature.p7s", "sig", 3, 0 } };
	const char *kept[] = { "Lt.Test.nuspec", "a.txt", "c/stored.txt" };
	struct lt_buf out = LT_BUF_INIT;
	struct nupkg *p, *q;
	uint8_t *zip, *data;
	size_t size, len;

	(void)state;
	for (size_t i = 0; i < sizeof text; i++)
		text[i] = "lock time "[i % 10];
	make_package(e, 4, &zip, &size);
	assert_int_equal(nupkg_open(&p, zip, size, NULL), 0);
	data = malloc(5);
	memcpy(data, "woven", 5);
	assert_int_equal(nupkg_replace(p, 2, data, 5), 0);
	assert_int_equal(nupkg_delete(p, 4), 0);
	assert_int_equal(nupkg_write(p, &out), 0);
	nupkg_free(p);

	assert_int_equal(nupkg_open(&q, out.data, out.len, NULL), 0);
	assert_int_equal(q->nentries, 4);
	assert_string_equal(q->entries[2].name, "b.bin");
	assert_int_equal(q->entries[2].mtime, 1700000000);
	assert_int_equal(nupkg_read(q, 2, &data, &len), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(data, "woven", 5);
	free(data);
	for (size_t i = 0; i < sizeof kept / sizeof *kept; i++)
		assert_same_raw(zip, size, out.data, out.len, kept[i]);
	assert_string_equal(q->entries[0].name, kept[0]);
	assert_string_equal(q->entries[1].name, kept[1]);
	assert_string_equal(q->entries[3].name, kept[2]);
	nupkg_free(q);
	lt_buf_free(&out);
	free(zip);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nuspec_good),
		cmocka_unit_test(test_nuspec_prefixed_names),
		cmocka_unit_test(test_nuspec_bad),
		cmocka_unit_test(test_nuspec_nul_byte),
		cmocka_unit_test(test_nuspec_long_id),
		cmocka_unit_test(test_nuspec_too_many_groups),
		cmocka_unit_test(test_names_good),
		cmocka_unit_test(test_names_hostile),
		cmocka_unit_test(test_name_too_long),
		cmocka_unit_test(test_is_assembly),
		cmocka_unit_test(test_open_good),
		cmocka_unit_test(test_open_hostile_names),
		cmocka_unit_test(test_open_duplicate_case),
		cmocka_unit_test(test_open_duplicate_exact),
		cmocka_unit_test(test_open_no_manifest),
		cmocka_unit_test(test_open_two_manifests),
		cmocka_unit_test(test_open_malformed_manifest),
		cmocka_unit_test(test_open_manifest_too_big),
		cmocka_unit_test(test_open_limits),
		cmocka_unit_test(test_open_huge_declared_size),
		cmocka_unit_test(test_open_encrypted_and_method),
		cmocka_unit_test(test_open_not_zip),
		cmocka_unit_test(test_open_truncated),
		cmocka_unit_test(test_read_bomb),
		cmocka_unit_test(test_read_short),
		cmocka_unit_test(test_read_bad_crc),
		cmocka_unit_test(test_write_unchanged),
		cmocka_unit_test(test_write_replace_delete),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}

