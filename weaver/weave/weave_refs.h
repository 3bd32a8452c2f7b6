/* weave_refs.h - the framework types and members of the helper type, resolved in the target's framework. */
#ifndef WEAVE_REFS_H
#define WEAVE_REFS_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "lt_buf.h"
#include "weave_opts.h"

/* The framework types the helper names. */
enum wref_type {
	WT_OBJECT, WT_STRING, WT_INT64, WT_DOUBLE, WT_ENVIRONMENT, WT_STOPWATCH, WT_CULTUREINFO,
	WT_NUMBERSTYLES, WT_IFORMATPROVIDER, WT_CONSOLE, WT_TEXTWRITER, WT_FILE, WT_MONITOR,
	WT_THREADSTATIC, WT_TYPE, WT_RUNTIMETYPEHANDLE, WT_COUNT
};

/* The framework members the helper calls or reads. */
enum wref_member {
	WM_OBJECT_CTOR,          /* instance void Object::.ctor() */
	WM_GETENV,               /* string Environment::GetEnvironmentVariable(string) */
	WM_GETTIMESTAMP,         /* int64 Stopwatch::GetTimestamp() */
	WM_FREQUENCY,            /* field int64 Stopwatch::Frequency */
	WM_INVARIANT,            /* CultureInfo CultureInfo::get_InvariantCulture() */
	WM_DOUBLE_TRYPARSE,      /* bool Double::TryParse(string, NumberStyles, IFormatProvider, float64&) */
	WM_DOUBLE_TOSTRING,      /* instance string Double::ToString(string, IFormatProvider) */
	WM_STRING_CONCAT,        /* string String::Concat(string[]) */
	WM_STRING_EQUALS,        /* bool String::op_Equality(string, string) */
	WM_STRING_TOUPPER,       /* string String::ToUpperInvariant() */
	WM_STRING_ISNULLOREMPTY, /* bool String::IsNullOrEmpty(string) */
	WM_CONSOLE_ERROR,        /* TextWriter Console::get_Error() */
	WM_CONSOLE_OUT,          /* TextWriter Console::get_Out() */
	WM_WRITELINE,            /* instance void TextWriter::WriteLine(string) */
	WM_APPENDALLTEXT,        /* void File::AppendAllText(string, string) */
	WM_MONITOR_ENTER,        /* void Monitor::Enter(object, bool&) */
	WM_MONITOR_EXIT,         /* void Monitor::Exit(object) */
	WM_THREADSTATIC_CTOR,    /* instance void ThreadStaticAttribute::.ctor() */
	WM_GETTYPEFROMHANDLE,    /* Type Type::GetTypeFromHandle(RuntimeTypeHandle) */
	WM_COUNT
};

/* Signature templates (wref_sig): bytes below 0x80 are copied as they are;
 * these two stand for CLASS / VALUETYPE followed by the
 * TypeDefOrRefOrSpecEncoded token of a wref_type (II.23.2.8, II.23.2.12). */
#define WREF_CLASS(t) (0x80 | (t))
#define WREF_VALUETYPE(t) (0xC0 | (t))

/* Tokens of every type (TypeRef, or TypeDef when the target defines it) and
 * member (MemberRef, or MethodDef / Field of the target's own TypeDef).
 * The clock: with clock_hz 0, member[WM_GETTIMESTAMP] is Stopwatch's and
 * member[WM_FREQUENCY] its Frequency field; a core library without Stopwatch
 * has type[WT_STOPWATCH] and member[WM_FREQUENCY] 0, member[WM_GETTIMESTAMP]
 * a static int64() clock method of its own and clock_hz its ticks per second. */
struct wref {
	uint32_t type[WT_COUNT];
	uint32_t member[WM_COUNT];
	int64_t clock_hz;
};

/* Resolve every type and member in img, adding AssemblyRef, TypeRef and
 * MemberRef rows at the ends of their tables and reusing identical rows
 * (same scope, name and namespace; same parent, name and signature).
 * A type's scope is, in order:
 *   - the target itself when it defines the type as a public TypeDef;
 *   - nothing else when the target is a core library (defines System.Object):
 *     a type it lacks is an error, but for Stopwatch, replaced by a clock of
 *     its own (Mono's mscorlib: the internal DateTime.GetSystemTimeAsFileTime,
 *     100 ns wall-clock ticks; see struct wref);
 *   - with opts->refs: the reference assembly that defines it (TypeDef) or
 *     forwards it (ExportedType), preferring ones the target already
 *     references; a forwarder of an assembly the target does not reference
 *     gives the forwarder's own target;
 *   - else the target's framework, told by its AssemblyRefs: mscorlib
 *     (Stopwatch in System), netstandard, System.Runtime (Console in
 *     System.Console, Monitor in System.Threading; Stopwatch and Environment
 *     in System.Runtime.Extensions and File in System.IO.FileSystem when the
 *     target already references those), System.Private.CoreLib (Console in
 *     System.Console).
 * New AssemblyRefs carry a public key token (II.22.5), never a full key.
 * Returns 0, or -1 with LT_E_WEAVE (a type or member cannot be resolved,
 * the framework cannot be told, a core library without Stopwatch or a known clock), the error of reading a reference assembly
 * (weave_refs_read) or of parsing it (prefixed with its path), LT_E_METADATA (malformed
 * rows), LT_E_NOMEM, LT_E_LIMIT. */
int wref_resolve(struct img *img, const struct weave_opts *opts, struct wref *out);

/* The resolution context of one target: its framework (told as
 * wref_resolve says), its reference assemblies read once.  Release with
 * wref_close (NULL is a no-op). */
struct wref_ctx;

/* Open a context for img.  Returns 0 and *out, or -1 with the errors of
 * wref_resolve for telling the framework and reading opts->refs. */
int wref_open(struct img *img, const struct weave_opts *opts, struct wref_ctx **out);
void wref_close(struct wref_ctx *c);

/* 1 when the target is a core library (defines System.Object publicly), else 0. */
int wref_is_corlib(const struct wref_ctx *c);

/* The target's token for the top-level type ns.name, found as wref_resolve
 * finds its types (its own public TypeDef, else a TypeRef in the scope told
 * by opts->refs or its framework; identical rows reused).  Returns 0, or -1
 * with LT_E_WEAVE (a core library without the type, no reference assembly
 * with it), LT_E_METADATA, LT_E_NOMEM, LT_E_LIMIT. */
int wref_type(struct wref_ctx *c, const char *ns, const char *name, uint32_t *out);

/* The type `name` nested in `outer` (a token wref_type or wref_nested gave):
 * a TypeRef scoped to a TypeRef outer (II.22.38), or the target's nested
 * TypeDef (II.22.32) visible to its other types.  Returns 0, or -1 with
 * LT_E_WEAVE (no such nested TypeDef), LT_E_METADATA, LT_E_NOMEM. */
int wref_nested(struct wref_ctx *c, uint32_t outer, const char *name, uint32_t *out);

/* The field (field 1) or method `name` with signature sig[0..len) (in the
 * target's tokens) of type `owner`: the Field / MethodDef of a TypeDef of
 * the target, else an identical MemberRef on the TypeRef or TypeSpec owner,
 * else a new one.  With reference assemblies, the reference assembly that
 * defines the type must have the member, there or on a base type (a field
 * by name, a method by name, parameter count and instance-ness): a type
 * none of them defines, or a base outside them, is not checked.
 * Returns 0, or -1 with LT_E_WEAVE (the TypeDef, or the reference
 * assemblies, have no such member), LT_E_METADATA, LT_E_SIGNATURE,
 * LT_E_NOMEM, LT_E_LIMIT. */
int wref_member(struct wref_ctx *c, uint32_t owner, int field, const char *name, const uint8_t *sig, uint32_t len,
		uint32_t *out);

/* The clock of a core library that has no Stopwatch: a static int64()
 * method of its own (*method, a MethodDef token) and its ticks per second
 * (*hz).  Returns 0, or -1 with LT_E_WEAVE when it has none LockTime knows. */
int wref_clock(struct wref_ctx *c, uint32_t *method, int64_t *hz);

/* Append the signature template tmpl[0..n) to out, with type tokens from r.
 * Returns 0, or -1 with LT_E_ENCODE (a type index past WT_COUNT), LT_E_NOMEM. */
int wref_sig(const struct wref *r, const uint8_t *tmpl, size_t n, struct lt_buf *out);

/* The method `name` with signature sig[0..len) (II.23.2.1) declared by type
 * `owner`: for a TypeRef, an identical MemberRef row, else a new one
 * (II.22.25); for a TypeDef of img, its MethodDef of that name and signature
 * (II.22.37 method list).  Returns 1 with *out, 0 when a TypeDef has no such
 * method or owner is of another table, or -1 with LT_E_METADATA (malformed
 * rows), LT_E_NOMEM, LT_E_LIMIT. */
int wref_method(struct md_image *md, uint32_t owner, const char *name, const uint8_t *sig, uint32_t len,
		uint32_t *out);

/* The public key token of a public key blob (II.6.3) into out: the last 8
 * bytes of its SHA-1, in reverse order.  Returns 0, or -1 with LT_E_NOMEM. */
int wref_public_key_token(const uint8_t *key, size_t len, uint8_t out[8]);

#endif
