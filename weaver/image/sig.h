/* sig.h - ECMA-335 signature blobs (II.23.2): compressed integers, a decoded signature tree, encoders, helpers.
 *
 * Decoders take the bytes of one #Blob entry (without its length prefix) and
 * return an owned tree; every byte must be consumed.  Encoders append the
 * canonical form (shortest compressed integers, II.23.2) to a struct lt_buf,
 * so encode(decode(x)) == x for every blob written in canonical form.
 * Decoding errors are LT_E_SIGNATURE with the production that failed
 * ("ArrayShape: NumSizes 9 but 3 bytes left (II.23.2.13)"); encoding a tree
 * that has no encoding is LT_E_ENCODE; allocation failure is LT_E_NOMEM.
 */
#ifndef SIG_H
#define SIG_H

#include <stddef.h>
#include <stdint.h>

#include "lt_buf.h"
#include "lt_cursor.h"

/* Element types (II.23.1.16). */
enum sig_elem {
	SIG_END = 0x00,
	SIG_VOID = 0x01,
	SIG_BOOLEAN = 0x02,
	SIG_CHAR = 0x03,
	SIG_I1 = 0x04,
	SIG_U1 = 0x05,
	SIG_I2 = 0x06,
	SIG_U2 = 0x07,
	SIG_I4 = 0x08,
	SIG_U4 = 0x09,
	SIG_I8 = 0x0A,
	SIG_U8 = 0x0B,
	SIG_R4 = 0x0C,
	SIG_R8 = 0x0D,
	SIG_STRING = 0x0E,
	SIG_PTR = 0x0F,
	SIG_BYREF = 0x10,
	SIG_VALUETYPE = 0x11,
	SIG_CLASS = 0x12,
	SIG_VAR = 0x13,
	SIG_ARRAY = 0x14,
	SIG_GENERICINST = 0x15,
	SIG_TYPEDBYREF = 0x16,
	SIG_I = 0x18,
	SIG_U = 0x19,
	SIG_FNPTR = 0x1B,
	SIG_OBJECT = 0x1C,
	SIG_SZARRAY = 0x1D,
	SIG_MVAR = 0x1E,
	SIG_CMOD_REQD = 0x1F,
	SIG_CMOD_OPT = 0x20,
	SIG_INTERNAL = 0x21, /* runtime-internal: refused */
	SIG_SENTINEL = 0x41,
	SIG_PINNED = 0x45,
};

/* First byte of a signature (II.23.2.1-23.2.6, II.23.2.15): calling
 * convention or kind in the low 4 bits, flags above. */
enum sig_conv {
	SIG_CONV_DEFAULT = 0x0,
	SIG_CONV_C = 0x1,
	SIG_CONV_STDCALL = 0x2,
	SIG_CONV_THISCALL = 0x3,
	SIG_CONV_FASTCALL = 0x4,
	SIG_CONV_VARARG = 0x5,
	SIG_CONV_FIELD = 0x6,
	SIG_CONV_LOCAL_SIG = 0x7,
	SIG_CONV_PROPERTY = 0x8,
	SIG_CONV_UNMANAGED = 0x9, /* function pointers, Ecma-335-Augments */
	SIG_CONV_GENERICINST = 0xA,
	SIG_CONV_MASK = 0x0F,
	SIG_GENERIC = 0x10,
	SIG_HASTHIS = 0x20,
	SIG_EXPLICITTHIS = 0x40,
};

/* Largest value a compressed unsigned integer holds (II.23.2). */
#define SIG_UINT_MAX 0x1FFFFFFFu
/* Signed compressed range (II.23.2): -2^28 .. 2^28-1. */
#define SIG_INT_MIN (-(1 << 28))
#define SIG_INT_MAX ((1 << 28) - 1)
/* Deepest nesting of types (PTR, SZARRAY, GENERICINST arguments, FNPTR,
 * custom modifiers...) a decoder accepts. */
#define SIG_MAX_DEPTH 64
/* Highest ArrayShape Rank accepted (II.23.2.13 sets none; the CLR loads no
 * array of rank past 32, and a rank is a loop count for whoever reads it). */
#define SIG_MAX_RANK 32
/* Most locals a LocalVarSig may hold (II.23.2.6). */
#define SIG_MAX_LOCALS 0xFFFE
/* sig_method.sentinel when the signature has no SENTINEL. */
#define SIG_NO_SENTINEL UINT32_MAX

struct sig_method;

/* ArrayShape (II.23.2.13).  rank >= 1; nsizes and nlobounds <= rank. */
struct sig_array_shape {
	uint32_t rank;
	uint32_t nsizes;
	uint32_t *sizes;     /* owned, nsizes entries */
	uint32_t nlobounds;
	int32_t *lobounds;   /* owned, nlobounds entries (signed compressed) */
};

/* One node of a type (II.23.2.12, II.23.2.10-11 for the positions of BYREF,
 * TYPEDBYREF, VOID, PINNED).  A custom modifier is a node of its own that
 * wraps the type it modifies, so a field "CMOD_OPT tok I4" is
 * {CMOD_OPT, token=tok, inner={I4}}.  Which members are used, by elem:
 *   CLASS, VALUETYPE:       token (TypeDef, TypeRef or TypeSpec token)
 *   CMOD_REQD, CMOD_OPT:    token, inner
 *   VAR, MVAR:              number (generic parameter number, 0-based)
 *   GENERICINST:            inst (CLASS or VALUETYPE), token, args[nargs]
 *   PTR, BYREF, SZARRAY, PINNED: inner
 *   ARRAY:                  inner, shape
 *   FNPTR:                  method
 *   anything else:          nothing (primitive, OBJECT, STRING, VOID, TYPEDBYREF)
 */
struct sig_type {
	uint8_t elem;                 /* enum sig_elem */
	uint8_t inst;                 /* GENERICINST: SIG_CLASS or SIG_VALUETYPE */
	uint32_t token;
	uint32_t number;
	struct sig_type *inner;       /* owned */
	uint32_t nargs;
	struct sig_type **args;       /* owned */
	struct sig_array_shape *shape;/* owned */
	struct sig_method *method;    /* owned */
};

/* MethodDefSig, MethodRefSig, StandAloneMethodSig (II.23.2.1-3), the method
 * signature inside FNPTR, and PropertySig (II.23.2.5, conv 0x08 | HASTHIS,
 * gen_count 0, ret = the property type, params = the indexer parameters). */
struct sig_method {
	uint8_t conv;                 /* the first byte: enum sig_conv value | flags */
	uint32_t gen_count;           /* GENERIC: GenParamCount, else 0 */
	struct sig_type *ret;         /* owned; RetType (may be VOID, BYREF, TYPEDBYREF) */
	uint32_t nparams;             /* ParamCount: params before and after SENTINEL */
	struct sig_type **params;     /* owned */
	uint32_t sentinel;            /* index of the first param after SENTINEL, or SIG_NO_SENTINEL */
};

/* LocalVarSig (II.23.2.6, kind SIG_CONV_LOCAL_SIG) or MethodSpec
 * instantiation (II.23.2.15, kind SIG_CONV_GENERICINST): a list of types. */
struct sig_list {
	uint8_t kind;
	uint32_t count;
	struct sig_type **types;      /* owned */
};

/* ---- Compressed integers (II.23.2), sig_int.c ---- */

/* Read a compressed unsigned integer (1, 2 or 4 bytes, 0..0x1FFFFFFF).
 * Overlong forms (a small value in 2 or 4 bytes) are accepted, as the
 * runtime accepts them.  Returns 0, or -1 with the cursor's code when the
 * bytes run out or the first byte is 111xxxxx (no such form, e.g. 0xFF).
 * The cursor moves only on success. */
int sig_uint_decode(struct lt_cur *c, uint32_t *out);

/* Read a compressed signed integer: the unsigned form whose value is the
 * 7-, 14- or 29-bit two's complement number rotated left by one (sign in
 * bit 0).  Errors as sig_uint_decode. */
int sig_int_decode(struct lt_cur *c, int32_t *out);

/* Append v in its shortest form.  Returns 0, or -1 with LT_E_ENCODE when v
 * is past SIG_UINT_MAX (or past SIG_INT_MIN..SIG_INT_MAX for the signed
 * one), LT_E_NOMEM. */
int sig_uint_encode(struct lt_buf *b, uint32_t v);
int sig_int_encode(struct lt_buf *b, int32_t v);

/* TypeDefOrRefOrSpecEncoded (II.23.2.8): a compressed unsigned integer with
 * the row shifted left by 2 and the table in the low 2 bits (0 TypeDef,
 * 1 TypeRef, 2 TypeSpec).  decode gives the token (table << 24 | row).
 * Returns 0, or -1: decode with the cursor's code for the errors of
 * sig_uint_decode, tag 3, row 0 or a row past 0xFFFFFF; encode with
 * LT_E_ENCODE for a token of another table or row 0, LT_E_NOMEM. */
int sig_token_decode(struct lt_cur *c, uint32_t *out_token);
int sig_token_encode(struct lt_buf *b, uint32_t token);

/* ---- Decoders (sig.c) ----
 * Each takes one blob (bytes, len) and sets *out to an owned tree, freed with
 * the matching _free.  Return 0, or -1 with LT_E_SIGNATURE (truncated blob,
 * unknown or misplaced element type, INTERNAL, bad calling convention,
 * counts past the remaining bytes, nesting deeper than SIG_MAX_DEPTH, an
 * array Rank past SIG_MAX_RANK, trailing bytes) or LT_E_NOMEM; *out is
 * untouched on failure. */

/* MethodDefSig / MethodRefSig / StandAloneMethodSig (II.23.2.1-3): calling
 * convention DEFAULT, C, STDCALL, THISCALL, FASTCALL, VARARG or UNMANAGED,
 * flags HASTHIS, EXPLICITTHIS, GENERIC.  A SENTINEL is allowed once, in a
 * VARARG or C signature, followed by at least one param. */
int sig_method_decode(const uint8_t *p, size_t len, struct sig_method **out);
/* PropertySig (II.23.2.5): 0x08 or 0x28, ParamCount, CustomMod*, Type, Param*. */
int sig_property_decode(const uint8_t *p, size_t len, struct sig_method **out);
/* FieldSig (II.23.2.4): 0x06, CustomMod*, Type (a BYREF type is accepted: ref fields). */
int sig_field_decode(const uint8_t *p, size_t len, struct sig_type **out);
/* TypeSpec blob (II.23.2.14): one Type. */
int sig_typespec_decode(const uint8_t *p, size_t len, struct sig_type **out);
/* LocalVarSig (II.23.2.6): 0x07, Count (<= SIG_MAX_LOCALS), locals
 * (CustomMod* PINNED? BYREF? Type, or TYPEDBYREF). */
int sig_locals_decode(const uint8_t *p, size_t len, struct sig_list **out);
/* MethodSpec instantiation (II.23.2.15): 0x0A, GenArgCount (>= 1), types. */
int sig_methodspec_decode(const uint8_t *p, size_t len, struct sig_list **out);

/* ---- Encoders (sig.c) ----
 * Append the blob bytes (no length prefix).  Return 0, or -1 with LT_E_ENCODE
 * (a value past the compressed range, an element type that has no encoding,
 * a token the coded form cannot hold, a NULL member the element needs) or
 * LT_E_NOMEM.  On failure b may hold a partial blob. */
int sig_method_encode(const struct sig_method *m, struct lt_buf *b); /* also PropertySig */
int sig_field_encode(const struct sig_type *t, struct lt_buf *b);    /* 0x06 then the type */
int sig_type_encode(const struct sig_type *t, struct lt_buf *b);     /* TypeSpec blob: the type alone */
int sig_list_encode(const struct sig_list *l, struct lt_buf *b);     /* LocalVarSig or MethodSpec */

/* Release a tree.  NULL is a no-op. */
void sig_type_free(struct sig_type *t);
void sig_method_free(struct sig_method *m);
void sig_list_free(struct sig_list *l);

/* ---- Helpers for the weaver (sig.c) ---- */

/* What a call through a method signature does to the evaluation stack
 * (III.3.19 call): pops *nparams arguments (ParamCount: for a vararg call
 * site the params after SENTINEL too) plus one for `this` when *has_this
 * (HASTHIS without EXPLICITTHIS: with EXPLICITTHIS `this` is the first
 * param), pushes one value when *returns_value (RetType not VOID, custom
 * modifiers skipped).  Reads only the header and the start of RetType.
 * Returns 0, or -1 with LT_E_SIGNATURE when the blob is truncated or is not
 * a method signature (II.23.2.1-3). */
int sig_method_stack_effect(const uint8_t *p, size_t len, uint32_t *nparams,
			    int *has_this, int *returns_value);

/* Build a new LocalVarSig (II.23.2.6) into `out`: the locals of the existing
 * one (p, len; p == NULL means the method had no locals) followed by n_new
 * locals whose encoded types are new_types[0..new_len).  Existing local types
 * are copied byte for byte.  *first_new_index gets the 0-based local index of
 * the first new local.  Returns 0, or -1 with LT_E_SIGNATURE when the
 * existing signature or new_types (which must hold exactly n_new types) is
 * malformed, LT_E_ENCODE when n_new is 0 or the count would pass
 * SIG_MAX_LOCALS, LT_E_NOMEM.  On failure out may hold a partial blob. */
int sig_locals_append(const uint8_t *p, size_t len, const uint8_t *new_types, size_t new_len,
		      uint32_t n_new, struct lt_buf *out, uint16_t *first_new_index);

/* ---- Re-mapping (sig_remap.c) ---- */

/* Gives the token that stands for `token` (a TypeDef, TypeRef or TypeSpec
 * token of a signature) in *out.  Returns 0, or -1 with the error set. */
typedef int (*sig_token_map_fn)(void *ctx, uint32_t token, uint32_t *out);

/* Re-encode the signature blob p[0..len) into out with every
 * TypeDefOrRefOrSpecEncoded token (II.23.2.8: CLASS, VALUETYPE, GENERICINST,
 * custom modifiers, at any depth, in FNPTR signatures too) replaced by fn's:
 * for copying a signature from one image into another.  The kind is told by
 * the first byte (II.23.2.1-6, II.23.2.15: field, locals, MethodSpec
 * instantiation, property, else a method), or is a TypeSpec blob
 * (II.23.2.14) when `typespec`.  Returns 0, or -1 with the decoders' and
 * encoders' errors, or fn's. */
int sig_remap(const uint8_t *p, size_t len, int typespec, sig_token_map_fn fn, void *ctx, struct lt_buf *out);

/* ---- Text (sig_print.c) ---- */

/* Print a type / method signature in ilasm-like text for messages and tests,
 * e.g. "class [tok 0x01000005]<int32, !0>[]" or "instance void (string, ...
 * int32)".  Writes at most size bytes including the NUL (truncating like
 * snprintf) and returns the length the full text has. */
size_t sig_type_print(const struct sig_type *t, char *buf, size_t size);
size_t sig_method_print(const struct sig_method *m, char *buf, size_t size);

#endif
