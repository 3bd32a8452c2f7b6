/* test_package_weave.c - unit tests of weaving and listing inside packages (pkg_weave.c): packages
 * made here from small Mono assemblies, and a real NuGet package when one is on this machine. */
#include "package_fixture.h"
#include "image.h"
#include "pkg_weave.h"
#include "weave.h"

/* Small Mono assemblies (mono-devel pulls them in): one with lock sites, one without. */
#define MONO_LOCKS "/usr/lib/mono/4.5/Mono.Http.dll"
#define MONO_NO_LOCKS "/usr/lib/mono/4.5/Accessibility.dll"

struct notes {
	int n[PKG_SYMBOLS_RENEWED + 1];
	long sites;                 /* PKG_WOVEN nsites summed, or sites listed */
	int code;                   /* of the last PKG_NOT_WOVEN */
	char entry[128];            /* of the last note or site */
};

static void on_note(void *ctx, const struct pkg_note *n)
{
	struct notes *t = ctx;

	t->n[n->kind]++;
	if (n->kind == PKG_WOVEN)
		t->sites += n->nsites;
	if (n->kind == PKG_NOT_WOVEN)
		t->code = n->code;
	snprintf(t->entry, sizeof t->entry, "%s", n->entry);
}

static void on_site(void *ctx, const char *entry, const struct weave_site *s)
{
	struct notes *t = ctx;

	(void)s;
	t->sites++;
	snprintf(t->entry, sizeof t->entry, "%s", entry);
}

static void count_site(void *ctx, const struct weave_site *s)
{
	(void)s;
	(*(long *)ctx)++;
}

/* Sites of the assembly in data[0..size), counted by weave_list. */
static long sites_of(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size);
	struct img *img;
	long n = 0;

	memcpy(copy, data, size);
	assert_int_equal(img_load(&img, copy, size), 0);
	assert_true(weave_list(img, count_site, &n) >= 0);
	img_free(img);
	return n;
}

/* What weaving the assembly in data[0..size) again finds. */
static enum weave_outcome outcome_of(const uint8_t *data, size_t size)
{
	const struct weave_opts opts = { .threshold_ms = 1, .output = "stderr" };
	uint8_t *copy = malloc(size);
	enum weave_outcome outcome;
	struct img *img;
	long n;

	memcpy(copy, data, size);
	assert_int_equal(img_load(&img, copy, size), 0);
	assert_int_equal(weave_image(img, &opts, &outcome, &n, NULL), 0);
	img_free(img);
	return outcome;
}

/* A package with one assembly with locks, one without, a native "dll", a
 * ref/ copy and a signature: woven once, then a no-op. */
static void test_weave_package(void **state)
{
	static const char native[] = "MZ this is not a PE file at all";
	size_t nlocks, nplain;
	uint8_t *locks = read_file(MONO_LOCKS, &nlocks), *plain = read_file(MONO_NO_LOCKS, &nplain);
	struct lt_buf out = LT_BUF_INIT, again = LT_BUF_INIT;
	struct notes t = { .sites = 0 };
	struct pkg_report r = { on_note, NULL, &t };
	struct weave_opts opts = { .threshold_ms = 1, .output = "stderr" };
	struct nuspec spec;
	struct nupkg *q;
	uint8_t *zip, *woven;
	size_t size, len;

	(void)state;
	if (!locks || !plain)
		skip();
	{
		const struct zent e[] = { { "lib/net45/Mono.Http.dll", locks, nlocks, 1 }, { "lib/net45/Accessibility.dll", plain, nplain, 1 },
					  { "lib/net45/native.dll", native, sizeof native, 1 }, { "ref/net45/Mono.Http.dll", locks, nlocks, 1 },
					  { "README.md", "read me", 7, 1 }, { ".signature.p7s", "sig", 3, 0 } };
		make_package(e, 6, &zip, &size);
	}
	assert_int_equal(pkg_weave(zip, size, &opts, &r, &spec, &out), 1);
	assert_string_equal(spec.id, "Lt.Test_Pkg");
	assert_int_equal(t.n[PKG_WOVEN], 1);
	assert_int_equal(t.sites, sites_of(locks, nlocks));
	assert_int_equal(t.n[PKG_NO_LOCKS], 1);
	assert_int_equal(t.n[PKG_NOT_WOVEN], 1);
	assert_int_equal(t.code, LT_E_NOT_PE);
	assert_int_equal(t.n[PKG_SIGNATURE_DROPPED], 1);
	assert_true(out.len > 0);

	/* Every entry but the signature, in order; only the woven one differs. */
	assert_int_equal(nupkg_open(&q, out.data, out.len, NULL), 0);
	assert_int_equal(q->nentries, 6);
	assert_string_equal(q->entries[1].name, "lib/net45/Mono.Http.dll");
	assert_string_equal(q->entries[5].name, "README.md");
	for (uint32_t i = 2; i < q->nentries; i++)
		assert_same_raw(zip, size, out.data, out.len, q->entries[i].name);
	assert_int_equal(nupkg_read(q, 1, &woven, &len), 0);
	assert_int_equal(outcome_of(woven, len), WEAVE_ALREADY_WOVEN);
	free(woven);
	nupkg_free(q);

	/* Woven again: nothing to do, nothing written. */
	memset(&t, 0, sizeof t);
	assert_int_equal(pkg_weave(out.data, out.len, &opts, &r, &spec, &again), 0);
	assert_int_equal(again.len, 0);
	assert_int_equal(t.n[PKG_ALREADY_WOVEN], 1);
	assert_int_equal(t.n[PKG_WOVEN], 0);
	lt_buf_free(&out);
	free(zip);
	free(locks);
	free(plain);
}

static void test_list_package(void **state)
{
	size_t nlocks;
	uint8_t *locks = read_file(MONO_LOCKS, &nlocks), *zip;
	struct notes t = { .sites = 0 };
	struct pkg_report r = { on_note, on_site, &t };
	struct nuspec spec;
	size_t size;

	(void)state;
	if (!locks)
		skip();
	{
		const struct zent e[] = { { "runtimes/unix/lib/net45/Mono.Http.dll", locks, nlocks, 1 },
					  { "ref/net45/Mono.Http.dll", locks, nlocks, 1 } };
		make_package(e, 2, &zip, &size);
	}
	assert_int_equal(pkg_list(zip, size, &r, &spec), sites_of(locks, nlocks));
	assert_int_equal(t.sites, sites_of(locks, nlocks));
	assert_string_equal(t.entry, "runtimes/unix/lib/net45/Mono.Http.dll");
	free(zip);
	free(locks);
}

/* A malformed assembly fails the package: its error, prefixed with the entry; nothing written. */
static void test_weave_malformed_assembly(void **state)
{
	size_t nlocks, i;
	uint8_t *locks = read_file(MONO_LOCKS, &nlocks), *zip;
	struct lt_buf out = LT_BUF_INIT;
	struct weave_opts opts = { .threshold_ms = 1, .output = "stderr" };
	struct nuspec spec;
	size_t size;

	(void)state;
	if (!locks)
		skip();
	for (i = 0; i + 4 <= nlocks && memcmp(locks + i, "BSJB", 4); i++)
		;
	assert_true(i + 4 <= nlocks);
	locks[i] = 'X'; /* the metadata root signature (II.24.2.1) */
	{
		const struct zent e[] = { { "lib/net45/Bad.dll", locks, nlocks, 1 } };
		make_package(e, 1, &zip, &size);
	}
	lt_error_clear();
	expect_error(pkg_weave(zip, size, &opts, NULL, &spec, &out), LT_E_METADATA);
	assert_non_null(strstr(lt_error_last()->msg, "lib/net45/Bad.dll: "));
	assert_int_equal(out.len, 0);
	free(zip);
	free(locks);
}

/* What pkg_unpack put, in order. */
struct puts {
	int n;
	char entry[4][128];
	size_t size[4];
	uint8_t *data[4];
};

static int on_put(void *ctx, const char *entry, const uint8_t *data, size_t size)
{
	struct puts *u = ctx;

	assert_true(u->n < 4);
	snprintf(u->entry[u->n], sizeof u->entry[u->n], "%s", entry);
	u->size[u->n] = size;
	u->data[u->n] = malloc(size);
	memcpy(u->data[u->n], data, size);
	u->n++;
	return 0;
}

static void puts_free(struct puts *u)
{
	for (int i = 0; i < u->n; i++)
		free(u->data[i]);
}

/* Unpack two of three assemblies: the one with locks woven, the native one as it is. */
static void test_unpack_entries(void **state)
{
	static const char native[] = "MZ this is not a PE file at all";
	size_t nlocks, nplain;
	uint8_t *locks = read_file(MONO_LOCKS, &nlocks), *plain = read_file(MONO_NO_LOCKS, &nplain), *zip;
	const char *want[] = { "runtimes/linux-x64/lib/net45/native.dll", "lib/net45/Mono.Http.dll" };
	struct weave_opts opts = { .threshold_ms = 1, .output = "stderr" };
	struct notes t = { .sites = 0 };
	struct pkg_report r = { on_note, NULL, &t };
	struct puts u = { 0 };
	struct nuspec spec;
	size_t size;

	(void)state;
	if (!locks || !plain)
		skip();
	{
		const struct zent e[] = { { "lib/net45/Mono.Http.dll", locks, nlocks, 1 }, { "lib/net45/Accessibility.dll", plain, nplain, 1 },
					  { "runtimes/linux-x64/lib/net45/native.dll", native, sizeof native, 0 } };
		make_package(e, 3, &zip, &size);
	}
	assert_int_equal(pkg_unpack(zip, size, want, 2, &opts, &r, on_put, &u, &spec), 1);
	assert_int_equal(u.n, 2); /* in entry order, Accessibility.dll not asked for */
	assert_string_equal(u.entry[0], "lib/net45/Mono.Http.dll");
	assert_true(u.size[0] != nlocks || memcmp(u.data[0], locks, nlocks) != 0);
	assert_int_equal(t.sites, sites_of(locks, nlocks));
	assert_int_equal(outcome_of(u.data[0], u.size[0]), WEAVE_ALREADY_WOVEN);
	assert_string_equal(u.entry[1], want[0]);
	assert_int_equal(u.size[1], sizeof native);
	assert_memory_equal(u.data[1], native, sizeof native);
	assert_int_equal(t.n[PKG_NOT_WOVEN], 1);
	assert_int_equal(t.n[PKG_NO_LOCKS], 0);
	puts_free(&u);
	free(zip);
	free(locks);
	free(plain);
}

/* An entry that is not an assembly of the package: refused before anything is put. */
static void test_unpack_not_an_assembly(void **state)
{
	const struct zent e[] = { { "lib/net45/readme.txt", "text", 4, 0 } };
	const char *want[] = { "lib/net45/readme.txt" }, *missing[] = { "lib/net45/Missing.dll" };
	struct weave_opts opts = { .threshold_ms = 1, .output = "stderr" };
	struct puts u = { 0 };
	struct nuspec spec;
	uint8_t *zip;
	size_t size;

	(void)state;
	make_package(e, 1, &zip, &size);
	expect_error(pkg_unpack(zip, size, want, 1, &opts, NULL, on_put, &u, &spec), LT_E_PACKAGE);
	expect_error(pkg_unpack(zip, size, missing, 1, &opts, NULL, on_put, &u, &spec), LT_E_PACKAGE);
	assert_int_equal(u.n, 0);
	free(zip);
}

/* A real package (Newtonsoft.Json, when a restore left it here): every
 * assembly woven, every other entry's raw bytes kept, sites listed as the
 * assemblies' own lists count them. */
static void test_real_package(void **state)
{
	/* Restored by tests/integration/nupkg.sh, this machine's offline folder, the corpus's restore. */
	static const char *const where[] = { "build/package/orig", "/opt/nuget/packages", "$HOME/.nuget/packages" };
	struct weave_opts opts = { .threshold_ms = 1, .output = "stderr" };
	struct notes t = { .sites = 0 };
	struct pkg_report r = { on_note, on_site, &t };
	struct lt_buf out = LT_BUF_INIT;
	struct nupkg *p, *q;
	struct nuspec spec;
	uint8_t *zip = NULL;
	size_t size, at, len;
	long sites = 0, assemblies = 0, woven;
	uint32_t i, j;

	(void)state;
	for (i = 0; i < sizeof where / sizeof *where && !zip; i++) {
		char path[512];
		const char *home = getenv("HOME");
		if (!strncmp(where[i], "$HOME", 5))
			snprintf(path, sizeof path, "%s%s", home ? home : "/nonexistent", where[i] + 5);
		else
			snprintf(path, sizeof path, "%s", where[i]);
		strncat(path, "/newtonsoft.json/13.0.3/newtonsoft.json.13.0.3.nupkg", sizeof path - strlen(path) - 1);
		zip = read_file(path, &size);
	}
	if (!zip)
		skip();
	assert_int_equal(nupkg_open(&p, zip, size, NULL), 0);
	for (i = 0; i < p->nentries; i++) {
		uint8_t *data;
		if (!nupkg_is_assembly(p->entries[i].name, &at, &len))
			continue;
		assert_int_equal(nupkg_read(p, i, &data, &len), 0);
		sites += sites_of(data, len);
		assemblies++;
		free(data);
	}
	assert_true(assemblies > 0);
	assert_int_equal(pkg_list(zip, size, &r, &spec), sites);
	assert_string_equal(spec.id, p->spec.id);

	memset(&t, 0, sizeof t);
	woven = pkg_weave(zip, size, &opts, &r, &spec, &out);
	assert_int_equal(woven, assemblies);
	assert_int_equal(t.sites, sites);
	assert_int_equal(nupkg_open(&q, out.data, out.len, NULL), 0);
	for (i = j = 0; i < p->nentries; i++) {
		const char *name = p->entries[i].name;
		if (nupkg_is_signature(name))
			continue;
		assert_true(j < q->nentries);
		assert_string_equal(q->entries[j++].name, name);
		if (!nupkg_is_assembly(name, &at, &len))
			assert_same_raw(zip, size, out.data, out.len, name);
	}
	assert_int_equal(j, q->nentries);
	nupkg_free(q);
	nupkg_free(p);
	lt_buf_free(&out);
	free(zip);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weave_package),
		cmocka_unit_test(test_list_package),
		cmocka_unit_test(test_weave_malformed_assembly),
		cmocka_unit_test(test_unpack_entries),
		cmocka_unit_test(test_unpack_not_an_assembly),
		cmocka_unit_test(test_real_package),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}

