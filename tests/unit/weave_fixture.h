/* weave_fixture.h - what the weaving unit tests share: the real assemblies they load and small metadata helpers. */
#ifndef WEAVE_FIXTURE_H
#define WEAVE_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glob.h>
#include <cmocka.h>

#include "il_body.h"
#include "image.h"
#include "lt_error.h"
#include "lt_file.h"
#include "sig.h"
#include "weave.h"
#include "weave_internal.h"
#include "weave_merge.h"

#define MONO_MSCORLIB "/usr/lib/mono/4.5/mscorlib.dll"
#define MONO_SYSTEM "/usr/lib/mono/4.5/System.dll"       /* references mscorlib, defines Stopwatch */
#define NET_REF_DIR "/usr/share/dotnet/packs/Microsoft.NETCore.App.Ref/*/ref/net*"
#define NET_REF NET_REF_DIR "/System.Collections.dll"  /* references System.Runtime only */

static const struct weave_opts default_opts = { .threshold_ms = 1, .output = "stderr" };

/* The last match of a glob pattern (the newest runtime). */
static inline void find_path(const char *pattern, char *out, size_t n)
{
	glob_t g;

	assert_int_equal(glob(pattern, 0, NULL, &g), 0);
	snprintf(out, n, "%s", g.gl_pathv[g.gl_pathc - 1]);
	globfree(&g);
}

static inline struct img *load(const char *pattern)
{
	char path[512];
	uint8_t *data;
	size_t size;
	struct img *img;

	find_path(pattern, path, sizeof path);
	assert_int_equal(lt_file_read(path, &data, &size), 0);
	if (img_load(&img, data, size) < 0)
		fail_msg("%s: %s", path, lt_error_last()->msg);
	return img;
}

static inline const char *str(const struct md_image *md, enum md_table_id t, uint32_t row, unsigned col)
{
	const char *s;

	assert_int_equal(md_string(md, md_get(md, t, row, col), &s), 0);
	return s;
}

/* A copy of the run-time template (lt_runtime_template), loaded: a netstandard2.0 library. */
static inline struct img *template_load(void)
{
	uint8_t *copy = malloc(lt_runtime_template_len);
	struct img *img;

	assert_non_null(copy);
	memcpy(copy, lt_runtime_template, lt_runtime_template_len);
	if (img_load(&img, copy, lt_runtime_template_len) < 0)
		fail_msg("the run-time template: %s", lt_error_last()->msg);
	return img;
}

/* Column `col` of row `row` set to the #Strings index of `s` (added). */
static inline void set_string(struct md_image *md, enum md_table_id t, uint32_t row, unsigned col, const char *s)
{
	uint32_t idx;

	assert_int_equal(md_add_string(md, s, &idx), 0);
	md_set(md, t, row, col, idx);
}

/* The name of the AssemblyRef a TypeRef is scoped to ("" for other scopes). */
static inline const char *scope_name(const struct md_image *md, uint32_t typeref)
{
	uint32_t scope;

	assert_int_equal(md_token_table(typeref), MD_TYPEREF);
	assert_int_equal(md_coded_decode(MD_CI_RESOLUTIONSCOPE,
					 md_get(md, MD_TYPEREF, md_token_row(typeref), MD_TYPEREF_RESOLUTIONSCOPE), &scope), 0);
	if (md_token_table(scope) != MD_ASSEMBLYREF)
		return "";
	return str(md, MD_ASSEMBLYREF, md_token_row(scope), MD_ASSEMBLYREF_NAME);
}

static inline uint32_t assemblyref_row(const struct md_image *md, const char *name)
{
	for (uint32_t r = 1; r <= md_rows(md, MD_ASSEMBLYREF); r++)
		if (strcmp(str(md, MD_ASSEMBLYREF, r, MD_ASSEMBLYREF_NAME), name) == 0)
			return r;
	fail_msg("no AssemblyRef %s", name);
	return 0;
}

static inline void assert_key_blob_equal(const struct md_image *md, uint32_t ref_a, uint32_t ref_b)
{
	const uint8_t *a, *b;
	uint32_t la, lb;

	assert_int_equal(md_blob(md, md_get(md, MD_ASSEMBLYREF, ref_a, MD_ASSEMBLYREF_PUBLICKEYORTOKEN), &a, &la), 0);
	assert_int_equal(md_blob(md, md_get(md, MD_ASSEMBLYREF, ref_b, MD_ASSEMBLYREF_PUBLICKEYORTOKEN), &b, &lb), 0);
	assert_int_equal(la, 8);
	assert_int_equal(lb, 8);
	assert_memory_equal(a, b, 8);
}

static inline void rename_assemblyref(struct md_image *md, const char *from, const char *to)
{
	uint32_t idx;

	assert_int_equal(md_add_string(md, to, &idx), 0);
	md_set(md, MD_ASSEMBLYREF, assemblyref_row(md, from), MD_ASSEMBLYREF_NAME, idx);
}

static inline uint32_t add_typeref(struct md_image *md, uint32_t scope, const char *ns, const char *name)
{
	uint32_t cells[MD_TYPEREF_COLS], row;

	assert_int_equal(md_coded_encode(MD_CI_RESOLUTIONSCOPE, scope, &cells[MD_TYPEREF_RESOLUTIONSCOPE]), 0);
	assert_int_equal(md_add_string(md, name, &cells[MD_TYPEREF_NAME]), 0);
	assert_int_equal(md_add_string(md, ns, &cells[MD_TYPEREF_NAMESPACE]), 0);
	assert_int_equal(md_append_row(md, MD_TYPEREF, cells, &row), 0);
	return md_token(MD_TYPEREF, row);
}

static inline uint32_t add_memberref(struct md_image *md, uint32_t parent, const char *name, const uint8_t *sig, size_t len)
{
	uint32_t cells[MD_MEMBERREF_COLS], row;

	assert_int_equal(md_coded_encode(MD_CI_MEMBERREFPARENT, parent, &cells[MD_MEMBERREF_CLASS]), 0);
	assert_int_equal(md_add_string(md, name, &cells[MD_MEMBERREF_NAME]), 0);
	assert_int_equal(md_add_blob(md, sig, (uint32_t)len, &cells[MD_MEMBERREF_SIGNATURE]), 0);
	assert_int_equal(md_append_row(md, MD_MEMBERREF, cells, &row), 0);
	return md_token(MD_MEMBERREF, row);
}

/* rc must be 0; else fail with the recorded error. */
/* A site table for a weave without sites: its assembly name only. */
static inline const struct weave_site_table *no_sites(struct img *img)
{
	static struct weave_site_table t;

	memset(&t, 0, sizeof t);
	assert_int_equal(img_string_token(img, "LockCorpus", &t.assembly), 0);
	return &t;
}

/* The MethodDef row of `method` in top-level TypeDef `type`, or 0. */
static inline uint32_t find_method(const struct md_image *md, const char *type, const char *method)
{
	uint32_t n = md_rows(md, MD_TYPEDEF);

	for (uint32_t t = 1; t <= n; t++) {
		uint32_t first = md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_METHODLIST);
		uint32_t end = t < n ? md_get(md, MD_TYPEDEF, t + 1, MD_TYPEDEF_METHODLIST) : md_rows(md, MD_METHODDEF) + 1;
		if (strcmp(str(md, MD_TYPEDEF, t, MD_TYPEDEF_NAME), type))
			continue;
		for (uint32_t r = first; r < end; r++)
			if (strcmp(str(md, MD_METHODDEF, r, MD_METHODDEF_NAME), method) == 0)
				return r;
	}
	return 0;
}

static inline void ok(int rc)
{
	if (rc != 0)
		fail_msg("LT%03d: %s", lt_error_last()->code, lt_error_last()->msg);
}

static inline void expect_error(int rc, int code)
{
	assert_int_equal(rc, -1);
	assert_int_equal(lt_error_last()->code, code);
}

#endif
