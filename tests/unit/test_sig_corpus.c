/* test_sig_corpus.c - every signature blob of a real assembly (mono's mscorlib.dll): decode, re-encode byte for byte, truncate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lt_error.h"
#include "lt_file.h"
#include "md_image.h"
#include "sig.h"

#define CORPUS "/usr/lib/mono/4.5/mscorlib.dll"

/* What a #Blob column holds. */
enum kind { K_METHOD, K_PROPERTY, K_FIELD, K_TYPESPEC, K_LOCALS, K_METHODSPEC, K_NKINDS };

static const char *const kind_names[K_NKINDS] = {
	"MethodSig", "PropertySig", "FieldSig", "TypeSpec", "LocalVarSig", "MethodSpec",
};

/* The signature columns (II.22) and what they hold; MemberRef.Signature and
 * StandAloneSig.Signature are told apart by their first byte. */
static const struct column {
	enum md_table_id table;
	unsigned col;
	enum kind kind;
} columns[] = {
	{ MD_METHODDEF, MD_METHODDEF_SIGNATURE, K_METHOD },
	{ MD_FIELD, MD_FIELD_SIGNATURE, K_FIELD },
	{ MD_MEMBERREF, MD_MEMBERREF_SIGNATURE, K_METHOD },
	{ MD_STANDALONESIG, MD_STANDALONESIG_SIGNATURE, K_LOCALS },
	{ MD_TYPESPEC, MD_TYPESPEC_SIGNATURE, K_TYPESPEC },
	{ MD_METHODSPEC, MD_METHODSPEC_INSTANTIATION, K_METHODSPEC },
	{ MD_PROPERTY, MD_PROPERTY_TYPE, K_PROPERTY },
};

struct corpus {
	uint8_t *file;
	struct md_image md;
};

/* The metadata root is found by its signature "BSJB" (II.24.2.1); the first
 * occurrence that md_read accepts is the one. */
static int setup(void **state)
{
	struct corpus *c = calloc(1, sizeof *c);
	size_t size;

	if (!c || lt_file_read(CORPUS, &c->file, &size) < 0) {
		free(c);
		*state = NULL;
		return 0;
	}
	for (size_t at = 0; at + 4 <= size; at++) {
		if (memcmp(c->file + at, "BSJB", 4) == 0 && md_read(&c->md, c->file + at, size - at) == 0) {
			*state = c;
			return 0;
		}
	}
	free(c->file);
	free(c);
	return -1;
}

static int teardown(void **state)
{
	struct corpus *c = *state;
	if (c) {
		md_free(&c->md);
		free(c->file);
		free(c);
	}
	return 0;
}

static enum kind kind_of(const struct column *col, const uint8_t *p, uint32_t len)
{
	if (col->table == MD_MEMBERREF && len && p[0] == SIG_CONV_FIELD)
		return K_FIELD;
	if (col->table == MD_STANDALONESIG && len && p[0] != SIG_CONV_LOCAL_SIG)
		return K_METHOD;
	return col->kind;
}

/* Decode p as k and encode it into out (when out is not NULL). */
static int decode(enum kind k, const uint8_t *p, size_t len, struct lt_buf *out)
{
	struct sig_method *m = NULL;
	struct sig_type *t = NULL;
	struct sig_list *l = NULL;
	char text[4096];
	int rc;

	switch (k) {
	case K_METHOD: rc = sig_method_decode(p, len, &m); break;
	case K_PROPERTY: rc = sig_property_decode(p, len, &m); break;
	case K_FIELD: rc = sig_field_decode(p, len, &t); break;
	case K_TYPESPEC: rc = sig_typespec_decode(p, len, &t); break;
	case K_LOCALS: rc = sig_locals_decode(p, len, &l); break;
	default: rc = sig_methodspec_decode(p, len, &l); break;
	}
	if (rc < 0 || !out)
		goto done;
	if (m) {
		rc = sig_method_encode(m, out);
		sig_method_print(m, text, sizeof text);
	} else if (t) {
		rc = k == K_FIELD ? sig_field_encode(t, out) : sig_type_encode(t, out);
		sig_type_print(t, text, sizeof text);
	} else {
		rc = sig_list_encode(l, out);
		for (uint32_t i = 0; i < l->count; i++)
			sig_type_print(l->types[i], text, sizeof text);
	}
done:
	sig_method_free(m);
	sig_type_free(t);
	sig_list_free(l);
	return rc;
}

static void dump(const char *what, const char *note, enum kind k, uint32_t row, const uint8_t *p, uint32_t len)
{
	fprintf(stderr, "# %s %s row %u (%s):", what, kind_names[k], row, note);
	for (uint32_t i = 0; i < len && i < 48; i++)
		fprintf(stderr, " %02X", p[i]);
	fprintf(stderr, "\n");
}

/* Every signature decodes and re-encodes to the same bytes. */
static void test_corpus_round_trip(void **state)
{
	struct corpus *c = *state;
	unsigned counts[K_NKINDS] = { 0 }, failures = 0;

	if (!c)
		skip();
	for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++) {
		const struct column *col = &columns[i];
		for (uint32_t row = 1; row <= md_rows(&c->md, col->table); row++) {
			const uint8_t *p;
			uint32_t len;
			struct lt_buf out = LT_BUF_INIT;

			assert_int_equal(md_blob(&c->md, md_get(&c->md, col->table, row, col->col), &p, &len), 0);
			enum kind k = kind_of(col, p, len);
			if (decode(k, p, len, &out) < 0) {
				if (failures++ < 10)
					dump("decode failed", lt_error_last()->msg, k, row, p, len);
			} else if (out.len != len || memcmp(out.data, p, len) != 0) {
				if (failures++ < 10)
					dump("round trip differs", "encoded differently", k, row, p, len);
			}
			counts[k]++;
			lt_buf_free(&out);
		}
	}
	for (int k = 0; k < K_NKINDS; k++) {
		fprintf(stderr, "# %s: %u\n", kind_names[k], counts[k]);
		assert_true(counts[k] > 0);
	}
	assert_int_equal(failures, 0);
}

/* Every strict prefix of every signature is refused with LT_E_SIGNATURE,
 * and the decoder reads nothing past the prefix (each copy is allocated at
 * its exact size, so ASan sees any over-read). */
static void test_corpus_truncated(void **state)
{
	struct corpus *c = *state;
	unsigned failures = 0;

	if (!c)
		skip();
	for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++) {
		const struct column *col = &columns[i];
		for (uint32_t row = 1; row <= md_rows(&c->md, col->table); row++) {
			const uint8_t *p;
			uint32_t len;

			assert_int_equal(md_blob(&c->md, md_get(&c->md, col->table, row, col->col), &p, &len), 0);
			enum kind k = kind_of(col, p, len);
			for (uint32_t cut = 0; cut < len; cut++) {
				uint8_t *copy = malloc(cut ? cut : 1);
				assert_non_null(copy);
				memcpy(copy, p, cut);
				lt_error_clear();
				if ((decode(k, copy, cut, NULL) == 0 || lt_error_last()->code != LT_E_SIGNATURE) &&
				    failures++ < 10)
					dump("prefix accepted", lt_error_last()->msg, k, row, copy, cut);
				free(copy);
			}
		}
	}
	assert_int_equal(failures, 0);
}

/* A MethodDefSig whose ParamCount claims one more param than it holds is
 * refused: the blob runs out (II.23.2.1). */
static void test_corpus_param_count_past_bytes(void **state)
{
	struct corpus *c = *state;
	unsigned tried = 0;

	if (!c)
		skip();
	for (uint32_t row = 1; row <= md_rows(&c->md, MD_METHODDEF); row++) {
		const uint8_t *p;
		uint32_t len;
		struct sig_method *m;

		assert_int_equal(md_blob(&c->md, md_get(&c->md, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE), &p, &len), 0);
		/* ParamCount is at byte 1 unless GENERIC puts GenParamCount there;
		 * only the 1-byte forms below 0x7F are bumped. */
		if (len == 0)
			continue;
		size_t at = (p[0] & SIG_GENERIC) ? 2 : 1;
		if (len <= at || p[at] >= 0x7F || ((p[0] & SIG_GENERIC) && p[1] >= 0x80))
			continue;
		uint8_t *copy = malloc(len);
		assert_non_null(copy);
		memcpy(copy, p, len);
		copy[at]++;
		lt_error_clear();
		assert_int_equal(sig_method_decode(copy, len, &m), -1);
		assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
		free(copy);
		tried++;
	}
	assert_true(tried > 0);
}

/* sig_method_stack_effect agrees with the decoded tree on every MethodDef. */
static void test_corpus_stack_effect(void **state)
{
	struct corpus *c = *state;

	if (!c)
		skip();
	for (uint32_t row = 1; row <= md_rows(&c->md, MD_METHODDEF); row++) {
		const uint8_t *p;
		uint32_t len, nparams;
		int has_this, returns;
		struct sig_method *m;

		assert_int_equal(md_blob(&c->md, md_get(&c->md, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE), &p, &len), 0);
		assert_int_equal(sig_method_decode(p, len, &m), 0);
		assert_int_equal(sig_method_stack_effect(p, len, &nparams, &has_this, &returns), 0);
		const struct sig_type *ret = m->ret;
		while (ret->elem == SIG_CMOD_REQD || ret->elem == SIG_CMOD_OPT)
			ret = ret->inner;
		assert_int_equal(nparams, m->nparams);
		assert_int_equal(has_this, (m->conv & SIG_HASTHIS) && !(m->conv & SIG_EXPLICITTHIS));
		assert_int_equal(returns, ret->elem != SIG_VOID);
		sig_method_free(m);
	}
}

/* Appending a local to every real LocalVarSig keeps the old locals and adds one. */
static void test_corpus_locals_append(void **state)
{
	struct corpus *c = *state;
	static const uint8_t obj[] = { SIG_OBJECT };
	unsigned tried = 0;

	if (!c)
		skip();
	for (uint32_t row = 1; row <= md_rows(&c->md, MD_STANDALONESIG); row++) {
		const uint8_t *p;
		uint32_t len;
		uint16_t first;
		struct sig_list *old, *grown;
		struct lt_buf out = LT_BUF_INIT;

		assert_int_equal(md_blob(&c->md, md_get(&c->md, MD_STANDALONESIG, row, MD_STANDALONESIG_SIGNATURE), &p, &len), 0);
		if (len == 0 || p[0] != SIG_CONV_LOCAL_SIG)
			continue;
		assert_int_equal(sig_locals_decode(p, len, &old), 0);
		assert_int_equal(sig_locals_append(p, len, obj, sizeof obj, 1, &out, &first), 0);
		assert_int_equal(sig_locals_decode(out.data, out.len, &grown), 0);
		assert_int_equal(first, old->count);
		assert_int_equal(grown->count, old->count + 1);
		assert_int_equal(grown->types[first]->elem, SIG_OBJECT);
		for (uint32_t i = 0; i < old->count; i++) {
			char a[1024], b[1024];
			sig_type_print(old->types[i], a, sizeof a);
			sig_type_print(grown->types[i], b, sizeof b);
			assert_string_equal(a, b);
		}
		sig_list_free(old);
		sig_list_free(grown);
		lt_buf_free(&out);
		tried++;
	}
	assert_true(tried > 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_round_trip),
		cmocka_unit_test(test_corpus_truncated),
		cmocka_unit_test(test_corpus_param_count_past_bytes),
		cmocka_unit_test(test_corpus_stack_effect),
		cmocka_unit_test(test_corpus_locals_append),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, setup, teardown);
}
