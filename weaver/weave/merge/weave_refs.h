/* weave_refs.h - framework types and members, resolved in a target's own framework for the merged run-time. */
#ifndef WEAVE_REFS_H
#define WEAVE_REFS_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "weave_opts.h"

/* How the merged run-time's references are resolved in a target
 * (weave_merge_refs.c).  A type's scope is, in order:
 *   - the target itself when it defines the type as a public TypeDef;
 *   - nothing else when the target is a core library (defines System.Object):
 *     a type it lacks is an error (Stopwatch: the merger substitutes a clock
 *     of its own, wref_clock);
 *   - with opts->refs: the reference assembly that defines it (TypeDef) or
 *     forwards it (ExportedType), preferring ones the target already
 *     references; a forwarder of an assembly the target does not reference
 *     gives the forwarder's own target;
 *   - else (none of opts->refs has it, or there are none: they add to the
 *     framework, never replace it) the target's framework, told by its AssemblyRefs: mscorlib,
 *     netstandard, System.Runtime (and its facades: the `runtime_homes`
 *     table), System.Private.CoreLib.
 * New AssemblyRefs carry a public key token (II.22.5), never a full key. */

/* The resolution context of one target: its framework (told as
 * above), its reference assemblies, each parsed only as far as lookups need
 * (its name and types; the members of its types when a member is looked
 * for on one), and the types found in them.  Release with wref_close (NULL
 * is a no-op). */
struct wref_ctx;

/* Open a context for img.  Returns 0 and *out, or -1 with LT_E_WEAVE (the
 * framework cannot be told and no reference assembly is given), the error of reading a reference assembly
 * (weave_refs_read) or of parsing it (prefixed with its path), LT_E_NOMEM;
 * an error in the members of a reference comes from the lookup that reads
 * them (wref_member). */
int wref_open(struct img *img, const struct weave_opts *opts, struct wref_ctx **out);
void wref_close(struct wref_ctx *c);

/* 1 when the target is a core library (defines System.Object publicly), else 0. */
int wref_is_corlib(const struct wref_ctx *c);

/* The target's token for the top-level type ns.name, found as said above (its own public TypeDef, else a TypeRef in the scope told
 * by opts->refs or its framework; identical rows reused).  Returns 0, or -1
 * with LT_E_WEAVE (a core library without the type, neither a reference
 * assembly nor a framework told with it), LT_E_METADATA, LT_E_NOMEM, LT_E_LIMIT. */
int wref_type(struct wref_ctx *c, const char *ns, const char *name, uint32_t *out);

/* As wref_type, only where ns.name is known to be there: the target's own public TypeDef, a
 * reference assembly (opts->refs) that defines or forwards it, or a framework whose table lists its
 * home (System.Runtime's); never a guess (mscorlib, netstandard: the framework's base assembly).
 * Returns 1 with *out, 0 when it is not known to be there (nothing added), -1 as wref_type. */
int wref_type_if_known(struct wref_ctx *c, const char *ns, const char *name, uint32_t *out);

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

/* Whether `token`, a TypeRef or TypeDef of md, names ns.name (II.22.37-38):
 * 1, 0 (another type, or a token of another table), or -1 on malformed strings. */
int wref_is_type(const struct md_image *md, uint32_t token, const char *ns, const char *name);

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
