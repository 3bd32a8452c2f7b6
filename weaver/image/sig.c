/* sig.c - decoding of signature blobs into trees and encoding trees back (II.23.2). */
#include "sig.h"

#include <stdlib.h>

#include "lt_error.h"
#include "lt_mem.h"

/* Where a type stands decides which element types it may start with
 * (II.23.2.10 Param, II.23.2.11 RetType, II.23.2.6 LocalVarSig, II.23.2.12 Type). */
enum {
	ALLOW_VOID = 1,   /* RetType, or the type a PTR points at */
	ALLOW_BYREF = 2,  /* BYREF and TYPEDBYREF: Param, RetType, local, field */
	ALLOW_PINNED = 4, /* a local (II.23.2.9 Constraint) */
};

static int no_memory(void)
{
	return lt_nomem("signature");
}

/* A count read from the blob: each counted item takes at least one byte, so
 * a count larger than the bytes left is malformed; checking it before the
 * allocation bounds memory by the blob size. */
static int check_count(const struct lt_cur *c, uint32_t count, const char *what)
{
	if (count > lt_cur_left(c))
		return lt_error_set(LT_E_SIGNATURE, "%s: %s %u but %zu bytes left (%s)",
				    c->what, what, count, lt_cur_left(c), "II.23.2");
	return 0;
}

static int read_byte(struct lt_cur *c, uint8_t *out)
{
	if (lt_cur_left(c) == 0)
		return lt_error_set(LT_E_SIGNATURE, "%s: truncated at offset 0x%zx (II.23.2)", c->what, c->pos);
	*out = c->data[c->pos++];
	return 0;
}

/* Allocate an array of n pointers (n may be 0: NULL). */
static int alloc_ptrs(void *out, uint32_t n)
{
	void **p = NULL;
	if (n != 0 && !(p = lt_calloc(n, sizeof *p)))
		return no_memory();
	*(void ***)out = p;
	return 0;
}

static int dec_type(struct lt_cur *c, unsigned depth, unsigned allow, struct sig_type **out);
static int dec_method(struct lt_cur *c, unsigned depth, int property, struct sig_method **out);

/* ArrayShape (II.23.2.13): Rank NumSizes Size* NumLoBounds LoBound*. */
static int dec_shape(struct lt_cur *c, struct sig_array_shape *s)
{
	c->what = "ArrayShape";
	if (sig_uint_decode(c, &s->rank) < 0)
		return -1;
	if (s->rank == 0 || s->rank > SIG_MAX_RANK)
		return lt_error_set(LT_E_SIGNATURE, "ArrayShape: Rank %u at offset 0x%zx: not 1..%d (II.23.2.13)",
				    s->rank, c->pos, SIG_MAX_RANK);
	if (sig_uint_decode(c, &s->nsizes) < 0)
		return -1;
	if (s->nsizes > s->rank)
		return lt_error_set(LT_E_SIGNATURE, "ArrayShape: NumSizes %u past Rank %u (II.23.2.13)",
				    s->nsizes, s->rank);
	if (check_count(c, s->nsizes, "NumSizes") < 0)
		return -1;
	if (s->nsizes && !(s->sizes = lt_calloc(s->nsizes, sizeof *s->sizes)))
		return no_memory();
	for (uint32_t i = 0; i < s->nsizes; i++)
		if (sig_uint_decode(c, &s->sizes[i]) < 0)
			return -1;
	if (sig_uint_decode(c, &s->nlobounds) < 0)
		return -1;
	if (s->nlobounds > s->rank)
		return lt_error_set(LT_E_SIGNATURE, "ArrayShape: NumLoBounds %u past Rank %u (II.23.2.13)",
				    s->nlobounds, s->rank);
	if (check_count(c, s->nlobounds, "NumLoBounds") < 0)
		return -1;
	if (s->nlobounds && !(s->lobounds = lt_calloc(s->nlobounds, sizeof *s->lobounds)))
		return no_memory();
	for (uint32_t i = 0; i < s->nlobounds; i++)
		if (sig_int_decode(c, &s->lobounds[i]) < 0)
			return -1;
	return 0;
}

/* GenericInst (II.23.2.12): (CLASS | VALUETYPE) TypeDefOrRefOrSpecEncoded GenArgCount Type+. */
static int dec_generic_inst(struct lt_cur *c, unsigned depth, struct sig_type *t)
{
	c->what = "GENERICINST";
	if (read_byte(c, &t->inst) < 0)
		return -1;
	if (t->inst != SIG_CLASS && t->inst != SIG_VALUETYPE)
		return lt_error_set(LT_E_SIGNATURE, "GENERICINST: 0x%02X at offset 0x%zx is neither CLASS nor VALUETYPE (II.23.2.12)",
				    t->inst, c->pos - 1);
	if (sig_token_decode(c, &t->token) < 0 || sig_uint_decode(c, &t->nargs) < 0)
		return -1;
	if (t->nargs == 0)
		return lt_error_set(LT_E_SIGNATURE, "GENERICINST: GenArgCount 0 at offset 0x%zx (II.23.2.12)", c->pos);
	if (check_count(c, t->nargs, "GenArgCount") < 0 || alloc_ptrs(&t->args, t->nargs) < 0)
		return -1;
	for (uint32_t i = 0; i < t->nargs; i++)
		if (dec_type(c, depth + 1, 0, &t->args[i]) < 0)
			return -1;
	return 0;
}

static int misplaced(const struct lt_cur *c, uint8_t elem)
{
	return lt_error_set(LT_E_SIGNATURE, "Type: element type 0x%02X at offset 0x%zx not allowed here (II.23.2.12)",
			    elem, c->pos - 1);
}

/* The body of one type node after its element type byte. */
static int dec_type_body(struct lt_cur *c, unsigned depth, unsigned allow, struct sig_type *t)
{
	switch (t->elem) {
	case SIG_BOOLEAN: case SIG_CHAR: case SIG_I1: case SIG_U1: case SIG_I2: case SIG_U2:
	case SIG_I4: case SIG_U4: case SIG_I8: case SIG_U8: case SIG_R4: case SIG_R8:
	case SIG_I: case SIG_U: case SIG_STRING: case SIG_OBJECT:
		return 0;
	case SIG_VOID:
		return (allow & ALLOW_VOID) ? 0 : misplaced(c, t->elem);
	case SIG_TYPEDBYREF:
		return (allow & ALLOW_BYREF) ? 0 : misplaced(c, t->elem);
	case SIG_BYREF:
		if (!(allow & ALLOW_BYREF))
			return misplaced(c, t->elem);
		return dec_type(c, depth + 1, 0, &t->inner);
	case SIG_PINNED:
		/* II.23.2.9: PINNED precedes BYREF? Type in a local. */
		if (!(allow & ALLOW_PINNED))
			return misplaced(c, t->elem);
		return dec_type(c, depth + 1, allow & ALLOW_BYREF, &t->inner);
	case SIG_PTR:
		return dec_type(c, depth + 1, ALLOW_VOID, &t->inner);
	case SIG_SZARRAY:
		return dec_type(c, depth + 1, 0, &t->inner);
	case SIG_ARRAY:
		if (dec_type(c, depth + 1, 0, &t->inner) < 0)
			return -1;
		if (!(t->shape = lt_calloc(1, sizeof *t->shape)))
			return no_memory();
		return dec_shape(c, t->shape);
	case SIG_CLASS: case SIG_VALUETYPE:
		c->what = "Type";
		return sig_token_decode(c, &t->token);
	case SIG_VAR: case SIG_MVAR:
		c->what = t->elem == SIG_VAR ? "VAR" : "MVAR";
		return sig_uint_decode(c, &t->number);
	case SIG_GENERICINST:
		return dec_generic_inst(c, depth, t);
	case SIG_FNPTR:
		return dec_method(c, depth + 1, 0, &t->method);
	case SIG_CMOD_REQD: case SIG_CMOD_OPT:
		/* II.23.2.7: CustomMod ::= (CMOD_OPT | CMOD_REQD) TypeDefOrRefOrSpecEncoded,
		 * then the type it modifies, in the same position. */
		c->what = "CustomMod";
		if (sig_token_decode(c, &t->token) < 0)
			return -1;
		return dec_type(c, depth + 1, allow, &t->inner);
	case SIG_INTERNAL:
		return lt_error_set(LT_E_SIGNATURE, "Type: ELEMENT_TYPE_INTERNAL at offset 0x%zx refused (II.23.1.16)",
				    c->pos - 1);
	default:
		return lt_error_set(LT_E_SIGNATURE, "Type: unknown element type 0x%02X at offset 0x%zx (II.23.1.16)",
				    t->elem, c->pos - 1);
	}
}

/* Type (II.23.2.12), or Param / RetType / local / field type as `allow` says. */
static int dec_type(struct lt_cur *c, unsigned depth, unsigned allow, struct sig_type **out)
{
	struct sig_type *t;

	if (depth >= SIG_MAX_DEPTH)
		return lt_error_set(LT_E_SIGNATURE, "Type: nesting deeper than %d at offset 0x%zx",
				    SIG_MAX_DEPTH, c->pos);
	c->what = "Type";
	if (!(t = lt_calloc(1, sizeof *t)))
		return no_memory();
	if (read_byte(c, &t->elem) < 0 || dec_type_body(c, depth, allow, t) < 0) {
		sig_type_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

/* Whether conv (the first byte) may start a method signature. */
static int method_conv_ok(uint8_t conv, int property)
{
	unsigned kind = conv & SIG_CONV_MASK, flags = conv & ~SIG_CONV_MASK;

	if (property)
		return kind == SIG_CONV_PROPERTY && (flags & ~SIG_HASTHIS) == 0;
	if (flags & ~(SIG_GENERIC | SIG_HASTHIS | SIG_EXPLICITTHIS))
		return 0;
	return kind <= SIG_CONV_VARARG || kind == SIG_CONV_UNMANAGED;
}

/* The params of a method signature (II.23.2.1-3), with an optional SENTINEL. */
static int dec_params(struct lt_cur *c, unsigned depth, struct sig_method *m)
{
	unsigned kind = m->conv & SIG_CONV_MASK;

	if (alloc_ptrs(&m->params, m->nparams) < 0)
		return -1;
	for (uint32_t i = 0; i < m->nparams; i++) {
		if (lt_cur_left(c) && c->data[c->pos] == SIG_SENTINEL) {
			/* II.23.2.2: SENTINEL once, in a vararg call site, before the extra args. */
			if (m->sentinel != SIG_NO_SENTINEL || (kind != SIG_CONV_VARARG && kind != SIG_CONV_C))
				return lt_error_set(LT_E_SIGNATURE, "Param: SENTINEL at offset 0x%zx not allowed here (II.23.2.2)",
						    c->pos);
			m->sentinel = i;
			c->pos++;
		}
		if (dec_type(c, depth + 1, ALLOW_BYREF, &m->params[i]) < 0)
			return -1;
	}
	return 0;
}

/* MethodDefSig / MethodRefSig / StandAloneMethodSig / PropertySig from the first byte on. */
static int dec_method(struct lt_cur *c, unsigned depth, int property, struct sig_method **out)
{
	const char *name = property ? "PropertySig" : "MethodSig";
	struct sig_method *m;
	int rc = -1;

	if (depth >= SIG_MAX_DEPTH)
		return lt_error_set(LT_E_SIGNATURE, "%s: nesting deeper than %d at offset 0x%zx",
				    name, SIG_MAX_DEPTH, c->pos);
	if (!(m = lt_calloc(1, sizeof *m)))
		return no_memory();
	m->sentinel = SIG_NO_SENTINEL;
	c->what = name;
	if (read_byte(c, &m->conv) < 0)
		goto done;
	if (!method_conv_ok(m->conv, property)) {
		lt_error_set(LT_E_SIGNATURE, "%s: calling convention 0x%02X at offset 0x%zx invalid (%s)",
			     name, m->conv, c->pos - 1, property ? "II.23.2.5" : "II.23.2.1");
		goto done;
	}
	if (m->conv & SIG_GENERIC) {
		if (sig_uint_decode(c, &m->gen_count) < 0)
			goto done;
		if (m->gen_count == 0) {
			lt_error_set(LT_E_SIGNATURE, "%s: GenParamCount 0 at offset 0x%zx (II.23.2.1)", name, c->pos);
			goto done;
		}
	}
	if (sig_uint_decode(c, &m->nparams) < 0 || check_count(c, m->nparams, "ParamCount") < 0)
		goto done;
	if (dec_type(c, depth + 1, property ? ALLOW_BYREF : ALLOW_BYREF | ALLOW_VOID, &m->ret) < 0)
		goto done;
	if (dec_params(c, depth, m) < 0)
		goto done;
	*out = m;
	m = NULL;
	rc = 0;
done:
	sig_method_free(m);
	return rc;
}

/* A blob must be used up exactly. */
static int check_end(const struct lt_cur *c, const char *name)
{
	if (lt_cur_left(c) != 0)
		return lt_error_set(LT_E_SIGNATURE, "%s: %zu trailing bytes at offset 0x%zx (II.23.2)",
				    name, lt_cur_left(c), c->pos);
	return 0;
}

static int decode_method_blob(const uint8_t *p, size_t len, int property, struct sig_method **out)
{
	const char *name = property ? "PropertySig" : "MethodSig";
	struct lt_cur c = lt_cur_init(p, len, LT_E_SIGNATURE, name);
	struct sig_method *m;

	if (dec_method(&c, 0, property, &m) < 0)
		return -1;
	if (check_end(&c, name) < 0) {
		sig_method_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

int sig_method_decode(const uint8_t *p, size_t len, struct sig_method **out)
{
	return decode_method_blob(p, len, 0, out);
}

int sig_property_decode(const uint8_t *p, size_t len, struct sig_method **out)
{
	return decode_method_blob(p, len, 1, out);
}

/* FieldSig (kind 0x06) and TypeSpec (kind 0: no leading byte): one type. */
static int decode_type_blob(const uint8_t *p, size_t len, uint8_t kind, const char *name,
			    unsigned allow, struct sig_type **out)
{
	struct lt_cur c = lt_cur_init(p, len, LT_E_SIGNATURE, name);
	struct sig_type *t;
	uint8_t b = 0;

	if (kind) {
		if (read_byte(&c, &b) < 0)
			return -1;
		if (b != kind)
			return lt_error_set(LT_E_SIGNATURE, "%s: first byte 0x%02X, expected 0x%02X (II.23.2.4)",
					    name, b, kind);
	}
	if (dec_type(&c, 0, allow, &t) < 0)
		return -1;
	if (check_end(&c, name) < 0) {
		sig_type_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

int sig_field_decode(const uint8_t *p, size_t len, struct sig_type **out)
{
	/* II.23.2.4 allows no BYREF, but ref fields (C# 11) are encoded with it. */
	return decode_type_blob(p, len, SIG_CONV_FIELD, "FieldSig", ALLOW_BYREF, out);
}

int sig_typespec_decode(const uint8_t *p, size_t len, struct sig_type **out)
{
	return decode_type_blob(p, len, 0, "TypeSpec", 0, out);
}

/* LocalVarSig (II.23.2.6) and MethodSpec (II.23.2.15): kind, count, types. */
static int decode_list_blob(const uint8_t *p, size_t len, uint8_t kind, struct sig_list **out)
{
	const char *name = kind == SIG_CONV_LOCAL_SIG ? "LocalVarSig" : "MethodSpec";
	const char *sec = kind == SIG_CONV_LOCAL_SIG ? "II.23.2.6" : "II.23.2.15";
	struct lt_cur c = lt_cur_init(p, len, LT_E_SIGNATURE, name);
	struct sig_list *l;
	int rc = -1;

	if (!(l = lt_calloc(1, sizeof *l)))
		return no_memory();
	if (read_byte(&c, &l->kind) < 0)
		goto done;
	if (l->kind != kind) {
		lt_error_set(LT_E_SIGNATURE, "%s: first byte 0x%02X, expected 0x%02X (%s)", name, l->kind, kind, sec);
		goto done;
	}
	if (sig_uint_decode(&c, &l->count) < 0)
		goto done;
	if (kind == SIG_CONV_LOCAL_SIG ? l->count > SIG_MAX_LOCALS : l->count == 0) {
		lt_error_set(LT_E_SIGNATURE, "%s: Count %u out of range (%s)", name, l->count, sec);
		goto done;
	}
	if (check_count(&c, l->count, "Count") < 0 || alloc_ptrs(&l->types, l->count) < 0)
		goto done;
	for (uint32_t i = 0; i < l->count; i++)
		if (dec_type(&c, 0, kind == SIG_CONV_LOCAL_SIG ? ALLOW_BYREF | ALLOW_PINNED : 0, &l->types[i]) < 0)
			goto done;
	if (check_end(&c, name) < 0)
		goto done;
	*out = l;
	l = NULL;
	rc = 0;
done:
	sig_list_free(l);
	return rc;
}

int sig_locals_decode(const uint8_t *p, size_t len, struct sig_list **out)
{
	return decode_list_blob(p, len, SIG_CONV_LOCAL_SIG, out);
}

int sig_methodspec_decode(const uint8_t *p, size_t len, struct sig_list **out)
{
	return decode_list_blob(p, len, SIG_CONV_GENERICINST, out);
}

/* ---- Encoding ---- */

static int missing(const char *what, uint8_t elem)
{
	return lt_error_set(LT_E_ENCODE, "signature: element type 0x%02X without its %s", elem, what);
}

static int enc_method(const struct sig_method *m, struct lt_buf *b);

static int enc_shape(const struct sig_array_shape *s, struct lt_buf *b)
{
	if (!s)
		return missing("ArrayShape", SIG_ARRAY);
	if (sig_uint_encode(b, s->rank) < 0 || sig_uint_encode(b, s->nsizes) < 0)
		return -1;
	for (uint32_t i = 0; i < s->nsizes; i++)
		if (sig_uint_encode(b, s->sizes[i]) < 0)
			return -1;
	if (sig_uint_encode(b, s->nlobounds) < 0)
		return -1;
	for (uint32_t i = 0; i < s->nlobounds; i++)
		if (sig_int_encode(b, s->lobounds[i]) < 0)
			return -1;
	return 0;
}

static int enc_type(const struct sig_type *t, struct lt_buf *b)
{
	if (!t)
		return lt_error_set(LT_E_ENCODE, "signature: missing type");
	if (lt_buf_u8(b, t->elem) < 0)
		return -1;
	switch (t->elem) {
	case SIG_VOID: case SIG_BOOLEAN: case SIG_CHAR: case SIG_I1: case SIG_U1: case SIG_I2: case SIG_U2:
	case SIG_I4: case SIG_U4: case SIG_I8: case SIG_U8: case SIG_R4: case SIG_R8:
	case SIG_I: case SIG_U: case SIG_STRING: case SIG_OBJECT: case SIG_TYPEDBYREF:
		return 0;
	case SIG_PTR: case SIG_BYREF: case SIG_SZARRAY: case SIG_PINNED:
		return enc_type(t->inner, b);
	case SIG_ARRAY:
		return enc_type(t->inner, b) < 0 ? -1 : enc_shape(t->shape, b);
	case SIG_CLASS: case SIG_VALUETYPE:
		return sig_token_encode(b, t->token);
	case SIG_CMOD_REQD: case SIG_CMOD_OPT:
		return sig_token_encode(b, t->token) < 0 ? -1 : enc_type(t->inner, b);
	case SIG_VAR: case SIG_MVAR:
		return sig_uint_encode(b, t->number);
	case SIG_GENERICINST:
		if (t->inst != SIG_CLASS && t->inst != SIG_VALUETYPE)
			return lt_error_set(LT_E_ENCODE, "GENERICINST: 0x%02X is neither CLASS nor VALUETYPE (II.23.2.12)", t->inst);
		if (t->nargs == 0)
			return missing("GenArgCount >= 1", t->elem);
		if (lt_buf_u8(b, t->inst) < 0 || sig_token_encode(b, t->token) < 0 || sig_uint_encode(b, t->nargs) < 0)
			return -1;
		for (uint32_t i = 0; i < t->nargs; i++)
			if (enc_type(t->args[i], b) < 0)
				return -1;
		return 0;
	case SIG_FNPTR:
		return t->method ? enc_method(t->method, b) : missing("method signature", t->elem);
	default:
		return lt_error_set(LT_E_ENCODE, "signature: element type 0x%02X has no encoding (II.23.1.16)", t->elem);
	}
}

static int enc_method(const struct sig_method *m, struct lt_buf *b)
{
	if (m->sentinel != SIG_NO_SENTINEL && m->sentinel >= m->nparams)
		return lt_error_set(LT_E_ENCODE, "MethodSig: SENTINEL before param %u of %u (II.23.2.2)",
				    m->sentinel, m->nparams);
	if (lt_buf_u8(b, m->conv) < 0)
		return -1;
	if ((m->conv & SIG_GENERIC) && sig_uint_encode(b, m->gen_count) < 0)
		return -1;
	if (sig_uint_encode(b, m->nparams) < 0 || enc_type(m->ret, b) < 0)
		return -1;
	for (uint32_t i = 0; i < m->nparams; i++) {
		if (i == m->sentinel && lt_buf_u8(b, SIG_SENTINEL) < 0)
			return -1;
		if (enc_type(m->params[i], b) < 0)
			return -1;
	}
	return 0;
}

int sig_method_encode(const struct sig_method *m, struct lt_buf *b)
{
	return enc_method(m, b);
}

int sig_field_encode(const struct sig_type *t, struct lt_buf *b)
{
	return lt_buf_u8(b, SIG_CONV_FIELD) < 0 ? -1 : enc_type(t, b);
}

int sig_type_encode(const struct sig_type *t, struct lt_buf *b)
{
	return enc_type(t, b);
}

int sig_list_encode(const struct sig_list *l, struct lt_buf *b)
{
	if (l->kind == SIG_CONV_LOCAL_SIG && l->count > SIG_MAX_LOCALS)
		return lt_error_set(LT_E_ENCODE, "LocalVarSig: Count %u past 0xFFFE (II.23.2.6)", l->count);
	if (lt_buf_u8(b, l->kind) < 0 || sig_uint_encode(b, l->count) < 0)
		return -1;
	for (uint32_t i = 0; i < l->count; i++)
		if (enc_type(l->types[i], b) < 0)
			return -1;
	return 0;
}

/* ---- Release ---- */

void sig_type_free(struct sig_type *t)
{
	if (!t)
		return;
	sig_type_free(t->inner);
	for (uint32_t i = 0; i < t->nargs && t->args; i++)
		sig_type_free(t->args[i]);
	free(t->args);
	if (t->shape) {
		free(t->shape->sizes);
		free(t->shape->lobounds);
		free(t->shape);
	}
	sig_method_free(t->method);
	free(t);
}

void sig_method_free(struct sig_method *m)
{
	if (!m)
		return;
	sig_type_free(m->ret);
	for (uint32_t i = 0; i < m->nparams && m->params; i++)
		sig_type_free(m->params[i]);
	free(m->params);
	free(m);
}

void sig_list_free(struct sig_list *l)
{
	if (!l)
		return;
	for (uint32_t i = 0; i < l->count && l->types; i++)
		sig_type_free(l->types[i]);
	free(l->types);
	free(l);
}

/* ---- Helpers ---- */

int sig_method_stack_effect(const uint8_t *p, size_t len, uint32_t *nparams,
			    int *has_this, int *returns_value)
{
	struct lt_cur c = lt_cur_init(p, len, LT_E_SIGNATURE, "MethodSig");
	uint8_t conv = 0, elem = 0;
	uint32_t skip, count, token;

	if (read_byte(&c, &conv) < 0)
		return -1;
	if (!method_conv_ok(conv, 0))
		return lt_error_set(LT_E_SIGNATURE, "MethodSig: calling convention 0x%02X invalid (II.23.2.1)", conv);
	if ((conv & SIG_GENERIC) && sig_uint_decode(&c, &skip) < 0)
		return -1;
	if (sig_uint_decode(&c, &count) < 0)
		return -1;
	/* II.23.2.11: RetType ::= CustomMod* (BYREF? Type | TYPEDBYREF | VOID) */
	c.what = "RetType";
	for (;;) {
		if (read_byte(&c, &elem) < 0)
			return -1;
		if (elem != SIG_CMOD_REQD && elem != SIG_CMOD_OPT)
			break;
		if (sig_token_decode(&c, &token) < 0)
			return -1;
	}
	*nparams = count;
	*has_this = (conv & SIG_HASTHIS) && !(conv & SIG_EXPLICITTHIS);
	*returns_value = elem != SIG_VOID;
	return 0;
}

int sig_locals_append(const uint8_t *p, size_t len, const uint8_t *new_types, size_t new_len,
		      uint32_t n_new, struct lt_buf *out, uint16_t *first_new_index)
{
	uint32_t old = 0;
	size_t types_at = 0;

	if (p) {
		struct sig_list *l;
		if (sig_locals_decode(p, len, &l) < 0)
			return -1;
		sig_list_free(l);
		/* The types start after the 0x07 byte and the compressed Count. */
		struct lt_cur c = lt_cur_init(p, len, LT_E_SIGNATURE, "LocalVarSig");
		c.pos = 1;
		if (sig_uint_decode(&c, &old) < 0)
			return -1;
		types_at = c.pos;
	}
	if (n_new == 0 || n_new > SIG_MAX_LOCALS - old)
		return lt_error_set(LT_E_ENCODE, "LocalVarSig: %u locals + %u new: Count must be 1..0xFFFE (II.23.2.6)",
				    old, n_new);
	struct lt_cur c = lt_cur_init(new_types, new_len, LT_E_SIGNATURE, "LocalVarSig new types");
	for (uint32_t i = 0; i < n_new; i++) {
		struct sig_type *t;
		if (dec_type(&c, 0, ALLOW_BYREF | ALLOW_PINNED, &t) < 0)
			return -1;
		sig_type_free(t);
	}
	if (check_end(&c, "LocalVarSig new types") < 0)
		return -1;
	if (lt_buf_u8(out, SIG_CONV_LOCAL_SIG) < 0 || sig_uint_encode(out, old + n_new) < 0)
		return -1;
	if (p && lt_buf_put(out, p + types_at, len - types_at) < 0)
		return -1;
	if (lt_buf_put(out, new_types, new_len) < 0)
		return -1;
	*first_new_index = (uint16_t)old;
	return 0;
}
