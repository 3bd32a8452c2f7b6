/* weave_pass.h - what the weaving passes of weave.c use: the type index and
 * user-facing names (weave_names.c), lock call sites (weave_sites.c) and the
 * rewriting of one method body (weave_rewrite.c).  Private to weaver/weave. */
#ifndef WEAVE_PASS_H
#define WEAVE_PASS_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "weave_internal.h"
#include "weave_lines.h"

/* ---- Names (weave_names.c) ---- */

/* Which TypeDef owns each MethodDef (II.22.37 MethodList runs) and which
 * TypeDef encloses each nested TypeDef (II.22.32 NestedClass). */
struct weave_names {
	const struct img *img;     /* borrowed */
	uint32_t nmethods, ntypes; /* MethodDef and TypeDef rows indexed */
	uint32_t *owner;           /* owner[m - 1]: TypeDef row of MethodDef m, 0 if none */
	uint32_t *enclosing;       /* enclosing[t - 1]: enclosing TypeDef row of t, 0 if none */
};

/* Deepest chain of nested types followed (a longer one is a cycle). */
#define WEAVE_MAX_NESTING 64

/* Index the MethodDef and TypeDef rows of img as they are now (rows
 * appended later are not indexed).  Returns 0 (release with
 * weave_names_free), or -1 with LT_E_NOMEM. */
int weave_names_init(struct weave_names *n, const struct img *img);

/* Release the index.  NULL, or an index that failed to init, is a no-op. */
void weave_names_free(struct weave_names *n);

/* The TypeDef row (1-based) that owns MethodDef `row`, or 0 when none does
 * (row past the index, or outside every MethodList run). */
uint32_t weave_names_owner(const struct weave_names *n, uint32_t row);

/* Whether TypeDef `row` is the top-level helper type WEAVE_HELPER_TYPE.
 * Returns 1 or 0, or -1 with LT_E_METADATA for a bad #Strings index. */
int weave_names_is_helper(const struct md_image *md, uint32_t row);

/* The user-facing name of MethodDef `row` (1-based) into buf[0..size)
 * (truncated like snprintf, always NUL-terminated when size > 0):
 * "Namespace.Outer+Inner::Method", with compiler-generated lambdas, local
 * functions and state machines reported under the method the user wrote
 * (see weave_names_user).  Returns 0, or -1 with LT_E_METADATA (a bad
 * #Strings index, a MethodDef outside every type, nesting deeper than
 * WEAVE_MAX_NESTING: a NestedClass cycle, II.22.32). */
int weave_names_method(const struct weave_names *n, uint32_t row, char *buf, size_t size);

/* The user-facing name of method `method` declared in the type whose
 * nesting chain is types[0..ntypes) (outermost first; ns is the outermost
 * type's namespace, "" for none), into buf[0..size) like snprintf:
 *  - a method named "<X>..." (lambda <Main>b__0_0, local function
 *    <Main>g__Local|0_0, <Main>$) is reported as X;
 *  - the innermost type, while it is compiler-generated and nested, is
 *    dropped; one that serves a method X makes the method X: state
 *    machines (C# "<X>d__N", mcs "<X>c__Iterator0", VB
 *    "VB$StateMachine_N_X"), closures named after X (mcs
 *    "<X>c__AnonStorey0", F# "X@12"); other closure classes (C# <>c,
 *    <>c__DisplayClass0_0, VB _Closure$__1-0) only go;
 *  - the rest is "ns.T0+T1+...::method" (no "ns." when ns is empty);
 *    generic arity suffixes (List`1) are kept.
 * Always succeeds; ntypes 0 gives "::method". */
void weave_names_user(const char *ns, const char *const *types, size_t ntypes, const char *method,
		      char *buf, size_t size);

/* ---- Sites (weave_sites.c) ---- */

/* Every lock call of an assembly, in MethodDef then IL order. */
struct weave_sites {
	struct weave_call *calls; /* owned */
	size_t n, cap;
};

/* Find every call and callvirt to a lock API (System.Threading.Monitor
 * Enter/TryEnter/Exit/Wait, System.Threading.Lock Enter/TryEnter/Exit/
 * EnterScope, Lock.Scope.Dispose, matched by namespace, type, name and
 * signature shape) in every MethodDef body of img but the helper type's,
 * plus one WEAVE_SYNCHRONIZED entry (IL offset 0, callee 0) ahead of the
 * calls of each method with MethodImplAttributes Synchronized (II.23.1.11).
 * Returns 0 (release with weave_sites_free), or -1 with LT_E_BODY,
 * LT_E_METADATA, LT_E_SIGNATURE (prefixed with the MethodDef row), LT_E_NOMEM. */
int weave_sites_find(const struct weave_names *names, struct weave_sites *out);

/* Release the list.  NULL is a no-op. */
void weave_sites_free(struct weave_sites *s);

/* ---- Rewriting (weave_rewrite.c) ---- */

/* Redirect the lock calls calls[0..n) (all in one MethodDef, in IL order,
 * no WEAVE_SYNCHRONIZED entry) to their wrappers in h: acquiring calls get
 * `ldstr method; ldstr location` ahead of them (location: "<file>:<line>"
 * from `lines` when it has one, else "IL_<offset>"), a `tail.` prefix before a
 * call is dropped; the body is re-encoded into img.
 * Returns 0, or -1 with LT_E_WEAVE (a clause boundary at an acquiring call,
 * a prefix other than tail. before a call, a call not found in the body),
 * the errors of img_decode_body / img_encode_body, weave_helper_wrapper,
 * LT_E_NOMEM. */
int weave_rewrite_method(struct img *img, struct weave_helper *h, const struct weave_names *names,
			 const struct wlines *lines, const struct weave_call *calls, size_t n);

/* The location string of a site: "<file>:<line>" from `lines`, else
 * "IL_<4 hex digits of il_offset>", into buf[0..n) like snprintf. */
void weave_location(const struct wlines *lines, uint32_t methoddef, uint32_t il_offset, char *buf, size_t n);

#endif
