/* test_sig.c - unit tests of signature blobs (II.23.2): compressed integers, decode/encode round trips, errors, helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lt_error.h"
#include "sig.h"

#define B(...) ((const uint8_t[]){ __VA_ARGS__ }), sizeof((const uint8_t[]){ __VA_ARGS__ })

/* ---- Compressed integers ---- */

static void check_uint(uint32_t v, const uint8_t *want, size_t n)
{
	struct lt_buf b = LT_BUF_INIT;
	assert_int_equal(sig_uint_encode(&b, v), 0);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.data, want, n);
	struct lt_cur c = lt_cur_init(b.data, b.len, LT_E_SIGNATURE, "t");
	uint32_t got;
	assert_int_equal(sig_uint_decode(&c, &got), 0);
	assert_int_equal(got, v);
	assert_int_equal(c.pos, n);
	lt_buf_free(&b);
}

/* The examples of II.23.2 and the edges of each form. */
static void test_uint_boundaries(void **state)
{
	(void)state;
	check_uint(0x00, B(0x00));
	check_uint(0x03, B(0x03));
	check_uint(0x7F, B(0x7F));
	check_uint(0x80, B(0x80, 0x80));
	check_uint(0x2E57, B(0xAE, 0x57));
	check_uint(0x3FFF, B(0xBF, 0xFF));
	check_uint(0x4000, B(0xC0, 0x00, 0x40, 0x00));
	check_uint(0x1FFFFFFF, B(0xDF, 0xFF, 0xFF, 0xFF));
}

static void test_uint_encode_past_max(void **state)
{
	(void)state;
	struct lt_buf b = LT_BUF_INIT;
	assert_int_equal(sig_uint_encode(&b, 0x20000000), -1);
	assert_int_equal(lt_error_last()->code, LT_E_ENCODE);
	assert_int_equal(b.len, 0);
	assert_int_equal(sig_uint_encode(&b, UINT32_MAX), -1);
	assert_int_equal(lt_error_last()->code, LT_E_ENCODE);
}

static void expect_uint_error(const uint8_t *p, size_t n)
{
	struct lt_cur c = lt_cur_init(p, n, LT_E_SIGNATURE, "t");
	uint32_t v;
	int32_t s;
	lt_error_clear();
	assert_int_equal(sig_uint_decode(&c, &v), -1);
	assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
	assert_int_equal(c.pos, 0);
	lt_error_clear();
	assert_int_equal(sig_int_decode(&c, &s), -1);
	assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
	assert_int_equal(c.pos, 0);
}

/* 111xxxxx starts no form (0xFF is the "null" of custom attribute strings, not an integer). */
static void test_uint_decode_no_form(void **state)
{
	(void)state;
	expect_uint_error(B(0xE0, 0, 0, 0, 0));
	expect_uint_error(B(0xFF, 0xFF, 0xFF, 0xFF));
}

static void test_uint_decode_truncated(void **state)
{
	(void)state;
	expect_uint_error(NULL, 0);
	expect_uint_error(B(0x80));
	expect_uint_error(B(0xC0, 0x00, 0x00));
}

/* The error carries the cursor's code, so the metadata reader can reuse it for blob lengths. */
static void test_uint_decode_uses_cursor_code(void **state)
{
	(void)state;
	struct lt_cur c = lt_cur_init(B(0xBF), LT_E_METADATA, "#Blob");
	uint32_t v;
	assert_int_equal(sig_uint_decode(&c, &v), -1);
	assert_int_equal(lt_error_last()->code, LT_E_METADATA);
	assert_non_null(strstr(lt_error_last()->msg, "#Blob"));
}

/* Overlong forms are read (the runtime reads them); the encoder writes the short form. */
static void test_uint_decode_overlong(void **state)
{
	(void)state;
	struct lt_cur c = lt_cur_init(B(0xC0, 0x00, 0x00, 0x05), LT_E_SIGNATURE, "t");
	uint32_t v;
	assert_int_equal(sig_uint_decode(&c, &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(c.pos, 4);
}

static void check_int(int32_t v, const uint8_t *want, size_t n)
{
	struct lt_buf b = LT_BUF_INIT;
	assert_int_equal(sig_int_encode(&b, v), 0);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.data, want, n);
	struct lt_cur c = lt_cur_init(b.data, b.len, LT_E_SIGNATURE, "t");
	int32_t got;
	assert_int_equal(sig_int_decode(&c, &got), 0);
	assert_int_equal(got, v);
	lt_buf_free(&b);
}

/* II.23.2 examples, plus the edges where the width changes (values below
 * -8192 were mis-encoded in 2 bytes by cecil before PR #958). */
static void test_int_boundaries(void **state)
{
	(void)state;
	check_int(3, B(0x06));
	check_int(-3, B(0x7B));
	check_int(63, B(0x7E));
	check_int(64, B(0x80, 0x80));
	check_int(-64, B(0x01));
	check_int(-65, B(0xBF, 0x7F));
	check_int(8191, B(0xBF, 0xFE));
	check_int(8192, B(0xC0, 0x00, 0x40, 0x00));
	check_int(-8192, B(0x80, 0x01));
	check_int(-8193, B(0xDF, 0xFF, 0xBF, 0xFF));
	check_int(268435455, B(0xDF, 0xFF, 0xFF, 0xFE));
	check_int(-268435456, B(0xC0, 0x00, 0x00, 0x01));
}

/* Every value in a window around each boundary: round trip and width by range. */
static void test_int_sweep(void **state)
{
	(void)state;
	static const int32_t centers[] = { 0, 64, -64, 8192, -8192, SIG_INT_MAX - 200, SIG_INT_MIN + 200 };
	for (size_t k = 0; k < sizeof centers / sizeof centers[0]; k++) {
		for (int32_t v = centers[k] - 200; v <= centers[k] + 200; v++) {
			struct lt_buf b = LT_BUF_INIT;
			int32_t got;
			size_t width = v >= -64 && v <= 63 ? 1 : v >= -8192 && v <= 8191 ? 2 : 4;
			assert_int_equal(sig_int_encode(&b, v), 0);
			assert_int_equal(b.len, width);
			struct lt_cur c = lt_cur_init(b.data, b.len, LT_E_SIGNATURE, "t");
			assert_int_equal(sig_int_decode(&c, &got), 0);
			assert_int_equal(got, v);
			lt_buf_free(&b);
		}
	}
}

static void test_int_encode_out_of_range(void **state)
{
	(void)state;
	struct lt_buf b = LT_BUF_INIT;
	assert_int_equal(sig_int_encode(&b, SIG_INT_MAX + 1), -1);
	assert_int_equal(lt_error_last()->code, LT_E_ENCODE);
	assert_int_equal(sig_int_encode(&b, SIG_INT_MIN - 1), -1);
	assert_int_equal(lt_error_last()->code, LT_E_ENCODE);
	assert_int_equal(sig_int_encode(&b, INT32_MIN), -1);
	assert_int_equal(lt_error_last()->code, LT_E_ENCODE);
	assert_int_equal(b.len, 0);
}

/* II.23.2.8: TypeRef 0x01000012 encodes as 0x49; TypeDef tag 0, TypeSpec tag 2. */
static void test_token_round_trip(void **state)
{
	(void)state;
	static const uint32_t toks[] = { 0x01000012, 0x02000001, 0x1B000003, 0x0200001F, 0x01FFFFFF };
	for (size_t i = 0; i < sizeof toks / sizeof toks[0]; i++) {
		struct lt_buf b = LT_BUF_INIT;
		uint32_t got;
		assert_int_equal(sig_token_encode(&b, toks[i]), 0);
		struct lt_cur c = lt_cur_init(b.data, b.len, LT_E_SIGNATURE, "t");
		assert_int_equal(sig_token_decode(&c, &got), 0);
		assert_int_equal(got, toks[i]);
		assert_int_equal(c.pos, b.len);
		lt_buf_free(&b);
	}
	struct lt_buf b = LT_BUF_INIT;
	assert_int_equal(sig_token_encode(&b, 0x01000012), 0);
	assert_int_equal(b.len, 1);
	assert_int_equal(b.data[0], 0x49);
	lt_buf_free(&b);
}

static void test_token_decode_tag3(void **state)
{
	(void)state;
	struct lt_cur c = lt_cur_init(B(0x07), LT_E_SIGNATURE, "t");
	uint32_t tok;
	assert_int_equal(sig_token_decode(&c, &tok), -1);
	assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
	assert_int_equal(c.pos, 0);
}

static void test_token_decode_row0(void **state)
{
	(void)state;
	struct lt_cur c = lt_cur_init(B(0x01), LT_E_SIGNATURE, "t");
	uint32_t tok;
	assert_int_equal(sig_token_decode(&c, &tok), -1);
	assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
}

static void test_token_encode_bad_table(void **state)
{
	(void)state;
	struct lt_buf b = LT_BUF_INIT;
	assert_int_equal(sig_token_encode(&b, 0x06000001), -1); /* MethodDef */
	assert_int_equal(lt_error_last()->code, LT_E_ENCODE);
	assert_int_equal(sig_token_encode(&b, 0x01000000), -1); /* row 0 */
	assert_int_equal(lt_error_last()->code, LT_E_ENCODE);
	assert_int_equal(b.len, 0);
}

/* ---- Trees: round trips ---- */

enum kind { K_METHOD, K_PROPERTY, K_FIELD, K_TYPESPEC, K_LOCALS, K_METHODSPEC };

/* Decode p as `k`; on success encode it into *out and print it into text. */
static int decode_encode(enum kind k, const uint8_t *p, size_t n, struct lt_buf *out, char *text, size_t size)
{
	struct sig_method *m = NULL;
	struct sig_type *t = NULL;
	struct sig_list *l = NULL;
	int rc;

	switch (k) {
	case K_METHOD: rc = sig_method_decode(p, n, &m); break;
	case K_PROPERTY: rc = sig_property_decode(p, n, &m); break;
	case K_FIELD: rc = sig_field_decode(p, n, &t); break;
	case K_TYPESPEC: rc = sig_typespec_decode(p, n, &t); break;
	case K_LOCALS: rc = sig_locals_decode(p, n, &l); break;
	default: rc = sig_methodspec_decode(p, n, &l); break;
	}
	if (rc < 0)
		return rc;
	if (m) {
		assert_int_equal(sig_method_encode(m, out), 0);
		sig_method_print(m, text, size);
	} else if (t) {
		assert_int_equal(k == K_FIELD ? sig_field_encode(t, out) : sig_type_encode(t, out), 0);
		sig_type_print(t, text, size);
	} else {
		assert_int_equal(sig_list_encode(l, out), 0);
		text[0] = '\0';
		for (uint32_t i = 0; i < l->count; i++) {
			size_t at = strlen(text);
			sig_type_print(l->types[i], text + at, size - at);
			if (i + 1 < l->count)
				strncat(text, ", ", size - strlen(text) - 1);
		}
	}
	sig_method_free(m);
	sig_type_free(t);
	sig_list_free(l);
	return 0;
}

/* Round trip byte for byte, the printed text, and every strict prefix fails. */
static void check_blob(enum kind k, const uint8_t *p, size_t n, const char *want_text)
{
	struct lt_buf out = LT_BUF_INIT;
	char text[512];

	lt_error_clear();
	assert_int_equal(decode_encode(k, p, n, &out, text, sizeof text), 0);
	assert_int_equal(out.len, n);
	assert_memory_equal(out.data, p, n);
	if (want_text)
		assert_string_equal(text, want_text);
	lt_buf_free(&out);
	for (size_t cut = 0; cut < n; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1); /* exact size: ASan sees any over-read */
		assert_non_null(copy);
		memcpy(copy, p, cut);
		lt_error_clear();
		assert_int_equal(decode_encode(k, copy, cut, &out, text, sizeof text), -1);
		assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
		free(copy);
	}
}

static void test_method_sigs(void **state)
{
	(void)state;
	check_blob(K_METHOD, B(0x20, 0x02, 0x01, 0x08, 0x0E), "instance void (int32, string)");
	check_blob(K_METHOD, B(0x00, 0x00, 0x08), "int32 ()");
	check_blob(K_METHOD, B(0x30, 0x02, 0x02, 0x1E, 0x01, 0x1E, 0x00, 0x13, 0x00),
		   "instance !!1 <2>(!!0, !0)");
	check_blob(K_METHOD, B(0x60, 0x01, 0x01, 0x12, 0x49), "instance explicit void (class [tok 0x01000012])");
	check_blob(K_METHOD, B(0x00, 0x00, 0x10, 0x08), "int32& ()");
	check_blob(K_METHOD, B(0x00, 0x00, 0x16), "typedref ()");
	check_blob(K_METHOD, B(0x00, 0x01, 0x01, 0x16), "void (typedref)");
	/* ref readonly return: modreq(InAttribute) before BYREF */
	check_blob(K_METHOD, B(0x20, 0x00, 0x1F, 0x49, 0x10, 0x08),
		   "instance int32& modreq([tok 0x01000012]) ()");
	check_blob(K_METHOD, B(0x00, 0x02, 0x01, 0x20, 0x4D, 0x08, 0x10, 0x1F, 0x49, 0x0F, 0x01),
		   "void (int32 modopt([tok 0x01000013]), void* modreq([tok 0x01000012])&)");
	check_blob(K_METHOD, B(0x02, 0x01, 0x08, 0x18), "unmanaged stdcall int32 (native int)");
	check_blob(K_METHOD, B(0x01, 0x00, 0x01), "unmanaged cdecl void ()");
	check_blob(K_METHOD, B(0x03, 0x00, 0x01), "unmanaged thiscall void ()");
	check_blob(K_METHOD, B(0x04, 0x00, 0x01), "unmanaged fastcall void ()");
	check_blob(K_METHOD, B(0x09, 0x00, 0x01), "unmanaged void ()");
	/* vararg call sites: SENTINEL before the extra args, even first */
	check_blob(K_METHOD, B(0x05, 0x03, 0x01, 0x08, 0x41, 0x08, 0x0E), "vararg void (int32, ..., int32, string)");
	check_blob(K_METHOD, B(0x05, 0x01, 0x01, 0x41, 0x0A), "vararg void (..., int64)");
	check_blob(K_METHOD, B(0x05, 0x01, 0x01, 0x08), "vararg void (int32)");
	/* FNPTR with a method sig, nested */
	check_blob(K_METHOD, B(0x00, 0x01, 0x01, 0x1B, 0x00, 0x01, 0x08, 0x1B, 0x02, 0x00, 0x01),
		   "void (method int32 (method unmanaged stdcall void ()))");
}

/* ParamCount past 0x7F: a 2-byte count. */
static void test_method_many_params(void **state)
{
	(void)state;
	uint8_t blob[4 + 200];
	struct lt_buf out = LT_BUF_INIT;
	char text[2048];

	blob[0] = 0x00;
	blob[1] = 0x80; /* 0x80 0xC8: ParamCount 200 in the 2-byte form */
	blob[2] = 0xC8;
	blob[3] = 0x01;
	memset(blob + 4, 0x0C, 200);
	assert_int_equal(decode_encode(K_METHOD, blob, sizeof blob, &out, text, sizeof text), 0);
	assert_int_equal(out.len, sizeof blob);
	assert_memory_equal(out.data, blob, sizeof blob);
	lt_buf_free(&out);
}

static void test_field_sigs(void **state)
{
	(void)state;
	check_blob(K_FIELD, B(0x06, 0x08), "int32");
	check_blob(K_FIELD, B(0x06, 0x20, 0x49, 0x08), "int32 modopt([tok 0x01000012])");
	check_blob(K_FIELD, B(0x06, 0x1F, 0x49, 0x20, 0x4D, 0x0E),
		   "string modopt([tok 0x01000013]) modreq([tok 0x01000012])");
	check_blob(K_FIELD, B(0x06, 0x15, 0x12, 0x15, 0x02, 0x08, 0x13, 0x00),
		   "class [tok 0x01000005]<int32, !0>");
	check_blob(K_FIELD, B(0x06, 0x1D, 0x15, 0x12, 0x15, 0x02, 0x08, 0x13, 0x00),
		   "class [tok 0x01000005]<int32, !0>[]");
	/* nested instantiations: Dictionary<List<int[]>, KeyValuePair<!!0, string>> */
	check_blob(K_FIELD, B(0x06, 0x15, 0x12, 0x09, 0x02, 0x15, 0x12, 0x0D, 0x01, 0x1D, 0x08,
			      0x15, 0x11, 0x11, 0x02, 0x1E, 0x00, 0x0E),
		   "class [tok 0x01000002]<class [tok 0x01000003]<int32[]>, valuetype [tok 0x01000004]<!!0, string>>");
	check_blob(K_FIELD, B(0x06, 0x11, 0x08), "valuetype [tok 0x02000002]");
	check_blob(K_FIELD, B(0x06, 0x12, 0x0A), "class [tok 0x1B000002]");
	check_blob(K_FIELD, B(0x06, 0x0F, 0x01), "void*");
	check_blob(K_FIELD, B(0x06, 0x0F, 0x0F, 0x05), "uint8**");
	check_blob(K_FIELD, B(0x06, 0x10, 0x08), "int32&"); /* ref field */
	check_blob(K_FIELD, B(0x06, 0x1C), "object");
	check_blob(K_FIELD, B(0x06, 0x02), "bool");
	check_blob(K_FIELD, B(0x06, 0x1B, 0x00, 0x00, 0x08), "method int32 ()");
}

static void test_array_shapes(void **state)
{
	(void)state;
	/* rank 2, sizes 5 and 3, lower bounds 0 and -3 */
	check_blob(K_FIELD, B(0x06, 0x14, 0x08, 0x02, 0x02, 0x05, 0x03, 0x02, 0x00, 0x7B), "int32[0...4,-3...-1]");
	check_blob(K_FIELD, B(0x06, 0x14, 0x08, 0x02, 0x00, 0x00), "int32[,]");
	check_blob(K_FIELD, B(0x06, 0x14, 0x0E, 0x03, 0x01, 0x0A, 0x00), "string[10,,]");
	/* lower bound -8193: the 4-byte signed form */
	check_blob(K_FIELD, B(0x06, 0x14, 0x08, 0x01, 0x00, 0x01, 0xDF, 0xFF, 0xBF, 0xFF), "int32[-8193...]");
	/* lower bound 8192 (4 bytes), size 0x4000 (4 bytes) */
	check_blob(K_TYPESPEC, B(0x14, 0x1D, 0x08, 0x01, 0x01, 0xC0, 0x00, 0x40, 0x00, 0x01, 0xC0, 0x00, 0x40, 0x00),
		   "int32[][8192...24575]");
}

static void test_property_sigs(void **state)
{
	(void)state;
	check_blob(K_PROPERTY, B(0x28, 0x00, 0x08), "instance property int32 ()");
	check_blob(K_PROPERTY, B(0x08, 0x01, 0x0E, 0x08), "property string (int32)");
	check_blob(K_PROPERTY, B(0x28, 0x00, 0x1F, 0x49, 0x10, 0x08), "instance property int32& modreq([tok 0x01000012]) ()");
}

static void test_local_sigs(void **state)
{
	(void)state;
	check_blob(K_LOCALS, B(0x07, 0x03, 0x08, 0x45, 0x10, 0x08, 0x16), "int32, int32& pinned, typedref");
	check_blob(K_LOCALS, B(0x07, 0x01, 0x1F, 0x49, 0x45, 0x0F, 0x05), "uint8* pinned modreq([tok 0x01000012])");
	check_blob(K_LOCALS, B(0x07, 0x01, 0x10, 0x15, 0x11, 0x09, 0x01, 0x13, 0x00), "valuetype [tok 0x01000002]<!0>&");
	check_blob(K_LOCALS, B(0x07, 0x02, 0x1D, 0x12, 0x49, 0x45, 0x1D, 0x05), "class [tok 0x01000012][], uint8[] pinned");
}

static void test_typespec_and_methodspec(void **state)
{
	(void)state;
	check_blob(K_TYPESPEC, B(0x15, 0x12, 0x49, 0x01, 0x08), "class [tok 0x01000012]<int32>");
	check_blob(K_TYPESPEC, B(0x1D, 0x13, 0x00), "!0[]");
	check_blob(K_TYPESPEC, B(0x1E, 0x80, 0x80), "!!128");
	check_blob(K_TYPESPEC, B(0x0F, 0x11, 0x08), "valuetype [tok 0x02000002]*");
	check_blob(K_TYPESPEC, B(0x1B, 0x20, 0x00, 0x01), "method instance void ()");
	check_blob(K_METHODSPEC, B(0x0A, 0x02, 0x08, 0x15, 0x12, 0x49, 0x01, 0x1E, 0x00),
		   "int32, class [tok 0x01000012]<!!0>");
	check_blob(K_METHODSPEC, B(0x0A, 0x01, 0x0E), "string");
}

/* ---- Malformed blobs ---- */

static void expect_bad(enum kind k, const uint8_t *p, size_t n, const char *msg_part)
{
	struct lt_buf out = LT_BUF_INIT;
	char text[512];
	lt_error_clear();
	assert_int_equal(decode_encode(k, p, n, &out, text, sizeof text), -1);
	assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
	if (msg_part && !strstr(lt_error_last()->msg, msg_part))
		fail_msg("message \"%s\" lacks \"%s\"", lt_error_last()->msg, msg_part);
	assert_int_equal(out.len, 0);
}

static void test_bad_element_types(void **state)
{
	(void)state;
	expect_bad(K_FIELD, B(0x06, 0x17), "unknown element type 0x17");
	expect_bad(K_FIELD, B(0x06, 0x00), "unknown element type 0x00");
	expect_bad(K_FIELD, B(0x06, 0x22), "unknown element type 0x22");
	expect_bad(K_FIELD, B(0x06, 0x41), "unknown element type 0x41");
	expect_bad(K_TYPESPEC, B(0xFF), "unknown element type 0xFF");
}

static void test_internal_refused(void **state)
{
	(void)state;
	expect_bad(K_FIELD, B(0x06, 0x21, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00), "INTERNAL");
}

static void test_misplaced_element_types(void **state)
{
	(void)state;
	expect_bad(K_METHOD, B(0x00, 0x01, 0x01, 0x01), "0x01 at offset 0x3 not allowed"); /* void param */
	expect_bad(K_FIELD, B(0x06, 0x01), "not allowed");                                 /* void field */
	expect_bad(K_FIELD, B(0x06, 0x1D, 0x01), "not allowed");                           /* void[] */
	expect_bad(K_FIELD, B(0x06, 0x15, 0x12, 0x49, 0x01, 0x10, 0x08), "not allowed");   /* byref arg */
	expect_bad(K_FIELD, B(0x06, 0x10, 0x10, 0x08), "not allowed");                     /* byref byref */
	expect_bad(K_METHOD, B(0x00, 0x01, 0x01, 0x45, 0x08), "not allowed");              /* pinned param */
	expect_bad(K_LOCALS, B(0x07, 0x01, 0x45, 0x45, 0x08), "not allowed");              /* pinned pinned */
	expect_bad(K_FIELD, B(0x06, 0x1D, 0x16), "not allowed");                           /* typedref[] */
	expect_bad(K_TYPESPEC, B(0x10, 0x08), "not allowed");                              /* byref TypeSpec */
	expect_bad(K_PROPERTY, B(0x08, 0x00, 0x01), "not allowed");                        /* void property */
	expect_bad(K_METHODSPEC, B(0x0A, 0x01, 0x10, 0x08), "not allowed");                /* byref type arg */
}

static void test_bad_sentinel(void **state)
{
	(void)state;
	expect_bad(K_METHOD, B(0x00, 0x02, 0x01, 0x08, 0x41, 0x08), "SENTINEL");             /* default conv */
	expect_bad(K_METHOD, B(0x05, 0x02, 0x01, 0x41, 0x08, 0x41, 0x08), "SENTINEL");       /* twice */
	expect_bad(K_METHOD, B(0x05, 0x01, 0x01, 0x08, 0x41), "trailing");                   /* no param after */
	expect_bad(K_PROPERTY, B(0x08, 0x01, 0x08, 0x41, 0x08), "SENTINEL");
}

static void test_bad_calling_conventions(void **state)
{
	(void)state;
	expect_bad(K_METHOD, B(0x06, 0x00, 0x01), "calling convention 0x06");
	expect_bad(K_METHOD, B(0x0A, 0x00, 0x01), "calling convention 0x0A");
	expect_bad(K_METHOD, B(0x80, 0x00, 0x01), "calling convention 0x80");
	expect_bad(K_PROPERTY, B(0x20, 0x00, 0x08), "calling convention 0x20");
	expect_bad(K_PROPERTY, B(0x48, 0x00, 0x08), "calling convention 0x48");
	expect_bad(K_METHOD, B(0x10, 0x00, 0x00, 0x01), "GenParamCount 0");
	expect_bad(K_FIELD, B(0x07, 0x08), "first byte 0x07");
	expect_bad(K_LOCALS, B(0x06, 0x01, 0x08), "first byte 0x06");
	expect_bad(K_METHODSPEC, B(0x07, 0x01, 0x08), "first byte 0x07");
}

/* Nesting: SIG_MAX_DEPTH type nodes are accepted, one more is refused. */
static void test_depth_bomb(void **state)
{
	(void)state;
	uint8_t blob[2 + 1000];
	struct lt_buf out = LT_BUF_INIT;
	char text[2048];

	blob[0] = 0x06;
	memset(blob + 1, 0x1D, SIG_MAX_DEPTH - 1);
	blob[SIG_MAX_DEPTH] = 0x08;
	assert_int_equal(decode_encode(K_FIELD, blob, SIG_MAX_DEPTH + 1, &out, text, sizeof text), 0);
	assert_memory_equal(out.data, blob, SIG_MAX_DEPTH + 1);
	lt_buf_free(&out);

	memset(blob + 1, 0x1D, SIG_MAX_DEPTH);
	blob[SIG_MAX_DEPTH + 1] = 0x08;
	expect_bad(K_FIELD, blob, SIG_MAX_DEPTH + 2, "nesting deeper than 64");

	memset(blob + 1, 0x1D, 1000);
	expect_bad(K_FIELD, blob, 1001, "nesting deeper than 64");

	/* FNPTR -> method -> FNPTR ...: each level adds a method and a type */
	for (size_t i = 0; i < 333; i++)
		memcpy(blob + 1 + 3 * i, (const uint8_t[]){ 0x1B, 0x00, 0x00 }, 3);
	expect_bad(K_FIELD, blob, 1000, "nesting deeper than 64");

	/* a chain of custom modifiers */
	for (size_t i = 0; i < 500; i++)
		memcpy(blob + 1 + 2 * i, (const uint8_t[]){ 0x20, 0x49 }, 2);
	expect_bad(K_FIELD, blob, 1001, "nesting deeper than 64");
}

static void test_counts_past_bytes(void **state)
{
	(void)state;
	expect_bad(K_FIELD, B(0x06, 0x14, 0x08, 0x09, 0x09, 0x01, 0x02, 0x03), "ArrayShape: NumSizes 9 but 3 bytes left");
	expect_bad(K_FIELD, B(0x06, 0x14, 0x08, 0x09, 0x00, 0x09, 0x01), "ArrayShape: NumLoBounds 9 but 1 bytes left");
	expect_bad(K_FIELD, B(0x06, 0x15, 0x12, 0x49, 0xC0, 0x10, 0x00, 0x00, 0x08), "GenArgCount 1048576 but 1 bytes left");
	expect_bad(K_METHOD, B(0x00, 0xDF, 0xFF, 0xFF, 0xFF, 0x01), "ParamCount 536870911 but 1 bytes left");
	expect_bad(K_LOCALS, B(0x07, 0xBF, 0xFE, 0x08), "Count 16382 but 1 bytes left");
	expect_bad(K_METHODSPEC, B(0x0A, 0x7F, 0x08), "Count 127 but 1 bytes left");
}

static void test_bad_counts(void **state)
{
	(void)state;
	expect_bad(K_FIELD, B(0x06, 0x14, 0x08, 0x00, 0x00, 0x00), "Rank 0");
	expect_bad(K_FIELD, B(0x06, 0x14, 0x08, 0x01, 0x02, 0x01, 0x01, 0x00), "NumSizes 2 past Rank 1");
	expect_bad(K_FIELD, B(0x06, 0x14, 0x08, 0x01, 0x00, 0x02, 0x00, 0x00), "NumLoBounds 2 past Rank 1");
	expect_bad(K_FIELD, B(0x06, 0x15, 0x12, 0x49, 0x00), "GenArgCount 0");
	expect_bad(K_FIELD, B(0x06, 0x15, 0x08, 0x49, 0x01, 0x08), "neither CLASS nor VALUETYPE");
	expect_bad(K_LOCALS, B(0xC0, 0x00, 0xFF, 0xFF), "first byte");
	expect_bad(K_LOCALS, B(0x07, 0xC0, 0x00, 0xFF, 0xFF, 0x08), "Count 65535 out of range");
	expect_bad(K_METHODSPEC, B(0x0A, 0x00), "Count 0 out of range");
}

static void test_bad_tokens_and_ints(void **state)
{
	(void)state;
	expect_bad(K_FIELD, B(0x06, 0x12, 0x4B), "tag 3");
	expect_bad(K_FIELD, B(0x06, 0x12, 0x00), "row 0");
	expect_bad(K_FIELD, B(0x06, 0x20, 0x4B, 0x08), "tag 3");
	expect_bad(K_FIELD, B(0x06, 0x13, 0xFF), "no form");
	expect_bad(K_METHOD, B(0x00, 0xE0, 0x01), "no form");
}

static void test_trailing_bytes(void **state)
{
	(void)state;
	expect_bad(K_FIELD, B(0x06, 0x08, 0x00), "FieldSig: 1 trailing bytes");
	expect_bad(K_METHOD, B(0x00, 0x00, 0x01, 0x08), "trailing");
	expect_bad(K_TYPESPEC, B(0x08, 0x08), "trailing");
	expect_bad(K_LOCALS, B(0x07, 0x01, 0x08, 0x08), "trailing");
	expect_bad(K_METHODSPEC, B(0x0A, 0x01, 0x08, 0x08), "trailing");
	expect_bad(K_PROPERTY, B(0x28, 0x00, 0x08, 0x08), "trailing");
}

/* ---- Encoding errors ---- */

static void expect_encode_error(const struct sig_type *t)
{
	struct lt_buf b = LT_BUF_INIT;
	lt_error_clear();
	assert_int_equal(sig_type_encode(t, &b), -1);
	assert_int_equal(lt_error_last()->code, LT_E_ENCODE);
	lt_buf_free(&b);
}

static void test_encode_errors(void **state)
{
	(void)state;
	struct sig_type i4 = { .elem = SIG_I4 };
	struct sig_type internal = { .elem = SIG_INTERNAL };
	struct sig_type sentinel = { .elem = SIG_SENTINEL };
	struct sig_type var = { .elem = SIG_VAR, .number = 0x20000000 };
	struct sig_type cls = { .elem = SIG_CLASS, .token = 0x06000001 };
	struct sig_type sz_null = { .elem = SIG_SZARRAY };
	struct sig_type arr_noshape = { .elem = SIG_ARRAY, .inner = &i4 };
	struct sig_type *args[] = { &i4 };
	struct sig_type gi_bad = { .elem = SIG_GENERICINST, .inst = SIG_I4, .token = 0x01000001, .nargs = 1, .args = args };
	struct sig_type gi_none = { .elem = SIG_GENERICINST, .inst = SIG_CLASS, .token = 0x01000001 };
	struct sig_type fn_null = { .elem = SIG_FNPTR };
	int32_t lo[] = { SIG_INT_MIN - 1 };
	struct sig_array_shape shape = { .rank = 1, .nlobounds = 1, .lobounds = lo };
	struct sig_type arr_lo = { .elem = SIG_ARRAY, .inner = &i4, .shape = &shape };

	expect_encode_error(&internal);
	expect_encode_error(&sentinel);
	expect_encode_error(&var);
	expect_encode_error(&cls);
	expect_encode_error(&sz_null);
	expect_encode_error(&arr_noshape);
	expect_encode_error(&gi_bad);
	expect_encode_error(&gi_none);
	expect_encode_error(&fn_null);
	expect_encode_error(&arr_lo);
}

static void test_encode_sentinel_past_params(void **state)
{
	(void)state;
	struct sig_type v = { .elem = SIG_VOID };
	struct sig_method m = { .conv = SIG_CONV_VARARG, .ret = &v, .nparams = 0, .sentinel = 0 };
	struct lt_buf b = LT_BUF_INIT;
	assert_int_equal(sig_method_encode(&m, &b), -1);
	assert_int_equal(lt_error_last()->code, LT_E_ENCODE);
	lt_buf_free(&b);
}

static void test_encode_locals_past_limit(void **state)
{
	(void)state;
	struct sig_list l = { .kind = SIG_CONV_LOCAL_SIG, .count = SIG_MAX_LOCALS + 1 };
	struct lt_buf b = LT_BUF_INIT;
	assert_int_equal(sig_list_encode(&l, &b), -1);
	assert_int_equal(lt_error_last()->code, LT_E_ENCODE);
	lt_buf_free(&b);
}

/* A hand-built tree encodes and decodes back to the same text. */
static void test_build_and_encode(void **state)
{
	(void)state;
	struct sig_type i4 = { .elem = SIG_I4 }, var0 = { .elem = SIG_VAR, .number = 0 };
	struct sig_type *args[] = { &i4, &var0 };
	struct sig_type gi = { .elem = SIG_GENERICINST, .inst = SIG_CLASS, .token = 0x01000005, .nargs = 2, .args = args };
	struct sig_type arr = { .elem = SIG_SZARRAY, .inner = &gi };
	struct lt_buf b = LT_BUF_INIT;
	struct sig_type *back;
	char want[128], got[128];

	assert_int_equal(sig_field_encode(&arr, &b), 0);
	assert_int_equal(sig_field_decode(b.data, b.len, &back), 0);
	sig_type_print(&arr, want, sizeof want);
	sig_type_print(back, got, sizeof got);
	assert_string_equal(got, want);
	assert_string_equal(got, "class [tok 0x01000005]<int32, !0>[]");
	sig_type_free(back);
	lt_buf_free(&b);
}

/* ---- Helpers ---- */

static void check_effect(const uint8_t *p, size_t n, uint32_t np, int this_, int ret)
{
	uint32_t got_np = 99;
	int got_this = 99, got_ret = 99;
	assert_int_equal(sig_method_stack_effect(p, n, &got_np, &got_this, &got_ret), 0);
	assert_int_equal(got_np, np);
	assert_int_equal(got_this, this_);
	assert_int_equal(got_ret, ret);
}

static void test_stack_effect(void **state)
{
	(void)state;
	check_effect(B(0x20, 0x02, 0x01, 0x08, 0x0E), 2, 1, 0);
	check_effect(B(0x00, 0x00, 0x08), 0, 0, 1);
	check_effect(B(0x60, 0x01, 0x01, 0x12, 0x49), 1, 0, 0);          /* EXPLICITTHIS: this is a param */
	check_effect(B(0x30, 0x01, 0x01, 0x01, 0x1E, 0x00), 1, 1, 0);    /* generic */
	check_effect(B(0x00, 0x00, 0x20, 0x49, 0x1F, 0x4D, 0x01), 0, 0, 0); /* modifiers on void */
	check_effect(B(0x00, 0x00, 0x10, 0x08), 0, 0, 1);
	check_effect(B(0x05, 0x02, 0x01, 0x08, 0x41, 0x08), 2, 0, 0);    /* vararg call site */
}

static void test_stack_effect_errors(void **state)
{
	(void)state;
	uint32_t np;
	int t, r;
	static const uint8_t field[] = { 0x06, 0x08 };
	static const uint8_t trunc[][4] = { { 0x20 }, { 0x30, 0x01 }, { 0x20, 0x01 }, { 0x20, 0x01, 0x20 }, { 0x20, 0x01, 0x20, 0x49 } };
	static const size_t trunc_len[] = { 1, 2, 2, 3, 4 };

	assert_int_equal(sig_method_stack_effect(field, sizeof field, &np, &t, &r), -1);
	assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
	assert_int_equal(sig_method_stack_effect(NULL, 0, &np, &t, &r), -1);
	assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
	for (size_t i = 0; i < sizeof trunc_len / sizeof trunc_len[0]; i++) {
		lt_error_clear();
		assert_int_equal(sig_method_stack_effect(trunc[i], trunc_len[i], &np, &t, &r), -1);
		assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
	}
	assert_int_equal(sig_method_stack_effect(B(0x00, 0x00, 0x20, 0x4B, 0x01), &np, &t, &r), -1);
	assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
}

/* Decode an appended LocalVarSig and check its count. */
static void check_locals(const struct lt_buf *b, uint32_t count)
{
	struct sig_list *l;
	assert_int_equal(sig_locals_decode(b->data, b->len, &l), 0);
	assert_int_equal(l->count, count);
	sig_list_free(l);
}

static void test_locals_append_no_locals(void **state)
{
	(void)state;
	struct lt_buf b = LT_BUF_INIT;
	uint16_t first = 99;
	assert_int_equal(sig_locals_append(NULL, 0, B(0x08, 0x12, 0x49), 2, &b, &first), 0);
	assert_int_equal(first, 0);
	static const uint8_t want[] = { 0x07, 0x02, 0x08, 0x12, 0x49 };
	assert_int_equal(b.len, sizeof want);
	assert_memory_equal(b.data, want, sizeof want);
	lt_buf_free(&b);
}

static void test_locals_append_some(void **state)
{
	(void)state;
	struct lt_buf b = LT_BUF_INIT;
	uint16_t first = 99;
	static const uint8_t old[] = { 0x07, 0x03, 0x08, 0x45, 0x10, 0x08, 0x16 };
	assert_int_equal(sig_locals_append(old, sizeof old, B(0x0A), 1, &b, &first), 0);
	assert_int_equal(first, 3);
	static const uint8_t want[] = { 0x07, 0x04, 0x08, 0x45, 0x10, 0x08, 0x16, 0x0A };
	assert_int_equal(b.len, sizeof want);
	assert_memory_equal(b.data, want, sizeof want);
	lt_buf_free(&b);
}

/* Crossing 127 locals widens Count to 2 bytes; the types are kept. */
static void test_locals_append_count_widens(void **state)
{
	(void)state;
	uint8_t old[2 + 127];
	struct lt_buf b = LT_BUF_INIT;
	uint16_t first;
	old[0] = 0x07;
	old[1] = 0x7F;
	memset(old + 2, 0x08, 127);
	assert_int_equal(sig_locals_append(old, sizeof old, B(0x0E), 1, &b, &first), 0);
	assert_int_equal(first, 127);
	assert_int_equal(b.len, sizeof old + 2);
	assert_memory_equal(b.data + 3, old + 2, 127);
	check_locals(&b, 128);
	lt_buf_free(&b);
}

static void test_locals_append_at_limit(void **state)
{
	(void)state;
	size_t n = SIG_MAX_LOCALS - 1; /* 0xFFFD locals */
	uint8_t *old = malloc(5 + n);
	struct lt_buf b = LT_BUF_INIT;
	uint16_t first;

	assert_non_null(old);
	old[0] = 0x07;
	old[1] = 0xC0;
	old[2] = 0x00;
	old[3] = (uint8_t)(n >> 8);
	old[4] = (uint8_t)n;
	memset(old + 5, 0x08, n);
	assert_int_equal(sig_locals_append(old, 5 + n, B(0x08), 1, &b, &first), 0);
	assert_int_equal(first, SIG_MAX_LOCALS - 1);
	check_locals(&b, SIG_MAX_LOCALS);
	lt_buf_free(&b);

	lt_error_clear();
	assert_int_equal(sig_locals_append(old, 5 + n, B(0x08, 0x08), 2, &b, &first), -1);
	assert_int_equal(lt_error_last()->code, LT_E_ENCODE);
	assert_int_equal(sig_locals_append(NULL, 0, B(0x08), SIG_MAX_LOCALS + 1, &b, &first), -1);
	assert_int_equal(lt_error_last()->code, LT_E_ENCODE);
	lt_buf_free(&b);
	free(old);
}

static void test_locals_append_none_new(void **state)
{
	(void)state;
	struct lt_buf b = LT_BUF_INIT;
	uint16_t first;
	assert_int_equal(sig_locals_append(NULL, 0, NULL, 0, 0, &b, &first), -1);
	assert_int_equal(lt_error_last()->code, LT_E_ENCODE);
	lt_buf_free(&b);
}

static void test_locals_append_bad_new_types(void **state)
{
	(void)state;
	struct lt_buf b = LT_BUF_INIT;
	uint16_t first;
	assert_int_equal(sig_locals_append(NULL, 0, B(0x08), 2, &b, &first), -1);      /* too few */
	assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
	assert_int_equal(sig_locals_append(NULL, 0, B(0x08, 0x08), 1, &b, &first), -1); /* too many */
	assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
	assert_int_equal(sig_locals_append(NULL, 0, B(0x01), 1, &b, &first), -1);      /* void local */
	assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
	lt_buf_free(&b);
}

static void test_locals_append_bad_old(void **state)
{
	(void)state;
	struct lt_buf b = LT_BUF_INIT;
	uint16_t first;
	assert_int_equal(sig_locals_append(B(0x07, 0x02, 0x08), B(0x08), 1, &b, &first), -1);
	assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
	assert_int_equal(sig_locals_append(B(0x06, 0x08), B(0x08), 1, &b, &first), -1);
	assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
	lt_buf_free(&b);
}

/* The printer truncates like snprintf and reports the full length. */
static void test_print_truncates(void **state)
{
	(void)state;
	struct sig_type *t;
	char full[128], small[8];
	assert_int_equal(sig_typespec_decode(B(0x15, 0x12, 0x49, 0x02, 0x08, 0x13, 0x00), &t), 0);
	size_t n = sig_type_print(t, full, sizeof full);
	assert_int_equal(n, strlen(full));
	assert_int_equal(sig_type_print(t, small, sizeof small), n);
	assert_int_equal(strlen(small), sizeof small - 1);
	assert_memory_equal(small, full, sizeof small - 1);
	assert_int_equal(sig_type_print(t, NULL, 0), n);
	sig_type_free(t);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uint_boundaries),
		cmocka_unit_test(test_uint_encode_past_max),
		cmocka_unit_test(test_uint_decode_no_form),
		cmocka_unit_test(test_uint_decode_truncated),
		cmocka_unit_test(test_uint_decode_uses_cursor_code),
		cmocka_unit_test(test_uint_decode_overlong),
		cmocka_unit_test(test_int_boundaries),
		cmocka_unit_test(test_int_sweep),
		cmocka_unit_test(test_int_encode_out_of_range),
		cmocka_unit_test(test_token_round_trip),
		cmocka_unit_test(test_token_decode_tag3),
		cmocka_unit_test(test_token_decode_row0),
		cmocka_unit_test(test_token_encode_bad_table),
		cmocka_unit_test(test_method_sigs),
		cmocka_unit_test(test_method_many_params),
		cmocka_unit_test(test_field_sigs),
		cmocka_unit_test(test_array_shapes),
		cmocka_unit_test(test_property_sigs),
		cmocka_unit_test(test_local_sigs),
		cmocka_unit_test(test_typespec_and_methodspec),
		cmocka_unit_test(test_bad_element_types),
		cmocka_unit_test(test_internal_refused),
		cmocka_unit_test(test_misplaced_element_types),
		cmocka_unit_test(test_bad_sentinel),
		cmocka_unit_test(test_bad_calling_conventions),
		cmocka_unit_test(test_depth_bomb),
		cmocka_unit_test(test_counts_past_bytes),
		cmocka_unit_test(test_bad_counts),
		cmocka_unit_test(test_bad_tokens_and_ints),
		cmocka_unit_test(test_trailing_bytes),
		cmocka_unit_test(test_encode_errors),
		cmocka_unit_test(test_encode_sentinel_past_params),
		cmocka_unit_test(test_encode_locals_past_limit),
		cmocka_unit_test(test_build_and_encode),
		cmocka_unit_test(test_stack_effect),
		cmocka_unit_test(test_stack_effect_errors),
		cmocka_unit_test(test_locals_append_no_locals),
		cmocka_unit_test(test_locals_append_some),
		cmocka_unit_test(test_locals_append_count_widens),
		cmocka_unit_test(test_locals_append_at_limit),
		cmocka_unit_test(test_locals_append_none_new),
		cmocka_unit_test(test_locals_append_bad_new_types),
		cmocka_unit_test(test_locals_append_bad_old),
		cmocka_unit_test(test_print_truncates),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
