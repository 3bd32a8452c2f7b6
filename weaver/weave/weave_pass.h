/* weave_pass.h - what the weaving passes of weave.c use: the type index and
 * user-facing names (weave_names.c), lock call sites (weave_sites.c) and the
 * rewriting of one method body (weave_rewrite.c).  Private to weaver/weave. */
#ifndef WEAVE_PASS_H
#define WEAVE_PASS_H

#include <stddef.h>
#include <stdint.h>

#include "il_body.h"
#include "image.h"
#include "weave_internal.h"
#include "weave_lines.h"

/* ---- The watch of the exit (weave_early.c) ---- */

/* Calls `watch` (bool ExitOrder.Watch(), a MethodDef token of the merged run-time; its result popped) first in the
 * module initializer (<Module>'s .cctor, II.10.5.3), else first in the entry point (II.25.3.3), else nowhere (a
 * library without one): the exit's hook is subscribed before the program's own code runs, so that a first timed
 * lock inside a ProcessExit handler still has its summary and report.  The body keeps its locals and clauses, and
 * its max stack grows as needed (il_encode).  Returns 0, or -1 (LT_E_METADATA, the errors of img_decode_body,
 * il_apply and img_encode_body). */
int weave_early(struct img *img, uint32_t watch);

/* The entry point's MethodDef row (II.25.3.3 EntryPointToken: a MethodDef of this module, not a File, nor a native
 * entry point's RVA), or 0 when there is none (a library). */
uint32_t weave_entry_point(const struct img *img);

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

/* Whether TypeDef `row` (1-based, indexed) is a value type: its Extends
 * (II.22.37) names System.ValueType or System.Enum (TypeRef, or TypeDef of
 * a core library), and it is not System.Enum itself (II.13).  Returns 1 or
 * 0, or -1 with LT_E_METADATA (a bad Extends coded index or #Strings index). */
int weave_names_is_valuetype(const struct weave_names *n, uint32_t row);

/* Whether MethodDef `row` (1-based, indexed) is the MoveNext of an async
 * state machine: a method named "MoveNext" (or "<interface>.MoveNext", an
 * explicit implementation) of a TypeDef that implements
 * System.Runtime.CompilerServices.IAsyncStateMachine (II.22.23
 * InterfaceImpl; a TypeRef, or a TypeDef of a core library) - what C# and
 * VB async methods and async iterators, mcs's async methods and F#'s
 * task { } compile to, the code the user wrote between its awaits.  An
 * iterator's MoveNext (IEnumerator) is none: its caller runs on the same
 * thread.  Returns 1 or 0, or -1 with LT_E_METADATA (a bad #Strings index
 * or Interface coded index). */
int weave_names_in_async(const struct weave_names *n, uint32_t row);

/* The name of the type of attribute constructor `ctor` (a MethodDef or
 * MemberRef token of the indexed image, II.22.10 CustomAttributeType) into
 * *name, or NULL for a generic attribute (a TypeSpec parent) or none.
 * Returns 0, or -1 with LT_E_METADATA. */
int weave_names_attribute(const struct weave_names *n, uint32_t ctor, const char **name);

/* Whether TypeDef `row` is LockTime's: the stub type WEAVE_STUB_TYPE or
 * a merged run-time type (WEAVE_MERGE_PREFIX), top-level in the empty
 * namespace.  Returns 1 or 0, or -1 with LT_E_METADATA for a bad #Strings
 * index. */
int weave_names_is_ours(const struct md_image *md, uint32_t row);

/* What compiler-generated code a method is, inside the method the user
 * wrote (weave_names_user). */
enum weave_within_kind {
	WEAVE_WITHIN_NONE,   /* the method itself, or its state machine */
	WEAVE_WITHIN_LAMBDA, /* a lambda or anonymous method (C#, VB, mcs), an F# closure */
	WEAVE_WITHIN_LOCAL   /* a C# local function */
};

struct weave_within {
	enum weave_within_kind kind;
	const char *local;  /* WEAVE_WITHIN_LOCAL: its name, local_len bytes (borrowed from the name given) */
	size_t local_len;
	int fsharp;         /* an F# closure "X@line", where X may be a value's name (weave_site_method) */
	uint32_t doc, line; /* weave_site_method: the lambda's first source line (Document row, line), or 0 */
};

/* Append s[0..len) to b with what would split a line or a field escaped:
 * \n, \r, \t, \\, \" (two characters each), and \uXXXX for the other C0 and C1
 * controls, DEL, U+2028 and U+2029 (metadata names may hold any of them:
 * II.22, II.24.2.3).  Returns 0, or -1 with LT_E_NOMEM. */
int weave_escape(struct lt_buf *b, const char *s, size_t len);

/* The user-facing name of MethodDef `row` (1-based) into out (its text
 * replaced, NUL-terminated, any length): "Namespace.Outer+Inner::Method",
 * with compiler-generated lambdas, local functions and state machines
 * reported under the method the user wrote, and *within (NULL: not
 * wanted) what they were (see weave_names_user).  Returns 0, or -1 with
 * LT_E_NOMEM or LT_E_METADATA (a bad #Strings index, a MethodDef outside
 * every type, nesting deeper than WEAVE_MAX_NESTING: a NestedClass cycle,
 * II.22.32). */
int weave_names_method(const struct weave_names *n, uint32_t row, struct lt_buf *out, struct weave_within *within);

/* The user-facing name of method `method` declared in the type whose
 * nesting chain is types[0..ntypes) (outermost first; ns is the outermost
 * type's namespace, "" for none), into out (its text replaced,
 * NUL-terminated, each name escaped by weave_escape):
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
 * *within (NULL: not wanted) gets what the generated names said the code
 * is: a lambda ("<X>b__", mcs "<X>m__" and "<X>c__AnonStorey", an F#
 * closure), a local function ("<X>g__Name|", local = Name), else none;
 * doc and line 0.  ntypes 0 gives "::method".  Returns 0, or -1 with
 * LT_E_NOMEM. */
int weave_names_user(const char *ns, const char *const *types, size_t ntypes, const char *method,
		     struct lt_buf *out, struct weave_within *within);

/* ---- Sites (weave_sites.c) ---- */

/* Every lock call of an assembly, in MethodDef then IL order. */
struct weave_sites {
	struct weave_call *calls; /* owned */
	size_t n, cap;
};

/* Find every call and callvirt to a lock API (System.Threading.Monitor
 * Enter/TryEnter/Exit/Wait, System.Threading.Lock Enter/TryEnter/Exit/
 * EnterScope, Lock.Scope.Dispose, ReaderWriterLockSlim, SemaphoreSlim,
 * SpinLock, Mutex, ReaderWriterLock; matched by namespace, type, name and
 * signature shape)
 * in every MethodDef body of img but the stub type's and the lock types' own
 * (a TypeDef System.Threading.Monitor, Lock, ReaderWriterLockSlim,
 * SemaphoreSlim, SpinLock, Mutex, WaitHandle or ReaderWriterLock, and the
 * types nested in it: a framework's implementation of them, whose calls of
 * their own APIs would time one acquisition twice); a call of
 * WaitHandle.WaitOne is a Mutex.WaitOne site when its receiver is
 * statically a System.Threading.Mutex (weave_receiver_class: a local, an
 * argument, a field or a call result of that class), a WaitHandle.WaitOne
 * site (the stub tells a Mutex at run time) when it is statically a
 * System.Threading.WaitHandle, else none (an event, an unknown receiver);
 * every WaitHandle.WaitAny / WaitAll over a WaitHandle[] is a site;
 * plus one WEAVE_SYNCHRONIZED entry (IL offset 0, callee 0) ahead of the
 * calls of each method with MethodImplAttributes Synchronized (II.23.1.11)
 * but instance methods of value types (the runtime refuses to load those:
 * there is no object to lock).
 * Returns 0 (release with weave_sites_free), or -1 with LT_E_BODY,
 * LT_E_METADATA, LT_E_SIGNATURE (prefixed with the MethodDef row), LT_E_NOMEM. */
int weave_sites_find(const struct weave_names *names, struct weave_sites *out);

/* Release the list.  NULL is a no-op. */
void weave_sites_free(struct weave_sites *s);

/* ---- Receivers (weave_receiver.c) ---- */

/* The static class of the receiver of call or callvirt b->ins[call] in body
 * b of MethodDef `row` (decoded by img_decode_body: ids in code order): the
 * instruction that pushed it is found by walking back over the call's
 * arguments with each instruction's stack transition (III.1.7.5), within
 * straight-line code (no branch, switch or EH clause entering between it
 * and the call; `dup` passes its input on); when it is ldloc, ldarg (`this`
 * of a class: its owner), ldfld, ldsfld, call/callvirt (the return type),
 * newobj (the constructor's type), castclass or isinst, and that gives a
 * CLASS (II.23.2.12), *out is that TypeDef, TypeRef or TypeSpec token; else
 * *out is 0 (unknown).  Returns 0, or -1 with LT_E_METADATA or
 * LT_E_SIGNATURE (a malformed signature on the way). */
int weave_receiver_class(const struct weave_names *n, uint32_t row, const struct il_body *b, uint32_t call,
			 uint32_t *out);

/* The sites of an assembly woven by LockTime (weave_is_woven 1), read back
 * from the site table its merged SiteList.Load defines (weave_stubs_site_list),
 * in site id order: method, location and kind as the run-time reports them;
 * methoddef and il_offset are 0 (a woven body no longer says where its
 * calls came from), woven is 1.  Calls `fn` for each; returns the number of
 * sites, or -1 (LT_E_BODY, LT_E_METADATA: no site table, or one that is not
 * the weaver's shape). */
long weave_list_woven(const struct img *img, void (*fn)(void *ctx, const struct weave_site *s), void *ctx);

/* ---- Choosing (weave_filter.c) ---- */

/* Whether `name` matches one of patterns[0..n): each a ';'-separated list
 * of patterns over "Namespace.Type::Method" (weave_site_method's names),
 * '*' matching any run of characters, spaces around a pattern ignored.
 * Returns 1 or 0. */
int weave_pattern_match(const char *const *patterns, size_t n, const char *name);

/* Drop from `sites` the calls of the methods left alone - all calls of a
 * MethodDef together: those that carry an attribute named
 * LockTimeIgnoreAttribute (any namespace; II.22.10), or whose type, an
 * enclosing type or the assembly does, or that report under the name of
 * such a method (its lambdas, iterators, async state machines); and by
 * name (weave_site_method) those not matching opts->include (when it has
 * patterns) or matching opts->exclude.  Returns 0, or -1 with
 * LT_E_METADATA (a bad CustomAttribute row), LT_E_NOMEM. */
int weave_sites_filter(const struct weave_names *names, const struct wlines *lines, const struct weave_opts *opts,
		       struct weave_sites *sites);

/* ---- Rewriting (weave_rewrite.c) ---- */

/* Redirect the lock calls calls[0..n) (all in one MethodDef, in IL order,
 * a WEAVE_SYNCHRONIZED entry first if any) to their stubs in h: acquiring
 * calls get `ldc.i4 <site id>` (weave_call.site) ahead of them, a `tail.`
 * prefix before a call is dropped; the calls of an async state machine's
 * MoveNext (weave_names_in_async) go to its stubs (weave_stubs_for_call); a synchronized method's body is then
 * timed as a hold (weave_sync_wrap); the body is re-encoded into img.
 * The calls are checked one by one and the body edited once (il_apply):
 * time linear in the body's size.
 * Returns 0, or -1 with LT_E_WEAVE (a clause boundary at an acquiring call,
 * a prefix other than tail. before a call, a call not found in the body),
 * LT_E_LIMIT (il_apply),
 * the errors of weave_names_in_async, img_decode_body / img_encode_body,
 * weave_stubs_for_call, weave_sync_wrap, LT_E_NOMEM. */
int weave_rewrite_method(struct img *img, struct weave_stubs *h, const struct weave_names *names,
			 const struct weave_call *calls, size_t n);

/* ---- Synchronized methods (weave_sync.c) ---- */

/* Time body b of [MethodImpl(Synchronized)] MethodDef `row` as a hold of the
 * monitor the runtime takes around it - `this`, or for a static method the
 * Type object of its type (the run-time's Api.TypeOf(ldtoken T); a generic T
 * as a TypeSpec over its own parameters, II.23.2.14):
 *     obj = <that object>; Synchronized_Enter(obj, site);
 *     .try { <body, each ret now: stloc result; leave RET> }
 *     finally { Synchronized_Exit(obj); endfinally }
 *     RET: ldloc result; ret
 * `site` is the site's id (weave_call.site).
 * Locals obj (object) and result (the return type) are added
 * (img_add_locals); `tail.` prefixes are dropped (III.2.4: no tail call
 * from a try block); clauses that ended at the end of the body end at the
 * new finally.  Returns 0, or -1 with LT_E_WEAVE (a jmp, III.3.37: it cannot
 * leave a try block), LT_E_SIGNATURE, LT_E_METADATA, and the errors of
 * img_add_locals, weave_stubs_sync, il_insert, LT_E_NOMEM. */
int weave_sync_wrap(struct img *img, struct weave_stubs *h, const struct weave_names *names, struct il_body *b,
		    uint32_t row, uint32_t site);

/* ---- Locations (weave_locate.c, weave_csharp.c) ---- */

/* The input body of one method, decoded at its first Lock.EnterScope site
 * and kept for the others, so that a method of n such sites is decoded once
 * (not n times).  Start zeroed; release with weave_input_body_free. */
struct weave_input_body {
	uint32_t row; /* the MethodDef row b holds, 0 none */
	struct il_body b;
};

/* Release ib's body and zero it.  A zeroed one is a no-op. */
void weave_input_body_free(struct weave_input_body *ib);

/* The source of every acquiring site of `sites` into its doc, line and
 * column (weave_call): the start of the last visible sequence point at or
 * before its call (the statement holding it).  C# 13 `lock` on a
 * System.Threading.Lock - a Lock.EnterScope call - has no sequence point of
 * its own (Roslyn): the point before the call is the statement before the
 * lock or a `{`, the one after it the lock's block.  The lock keyword is
 * then looked for between the two in the source file (wlines_source);
 * without the file it is taken to be on the line above the block's `{`
 * (Debug builds) or on the line after the statement before (Release
 * builds: there is no `{` point), at most the block's first line.  Sites
 * that share a line get shared_line 1.  Reads the input
 * bodies of img.  Returns 0, or -1 with LT_E_NOMEM. */
int weave_sites_locate(const struct img *img, const struct wlines *lines, struct weave_sites *sites);

/* In C# source text[0..len), from (from_line, from_column) up to, not
 * including, (to_line, to_column) - 1-based, as sequence points give them,
 * columns in characters - the last `lock` keyword that a '(' follows,
 * outside comments, string and character literals (C# 6.3.3, 6.4.5): its
 * line and column into *line and *column.  Returns 1, or 0 when there is none. */
int weave_csharp_last_lock(const uint8_t *text, size_t len, uint32_t from_line, uint32_t from_column,
			   uint32_t to_line, uint32_t to_column, uint32_t *line, uint32_t *column);

/* The location string of site c (located by weave_sites_locate):
 * "<path>:<line>", with ":<column>" when another site shares the line
 * (wlines_format), into buf[0..n) like snprintf.  Returns 1, or 0 with buf
 * "IL_<4 hex digits of its IL offset>" when c has no source line. */
int weave_location(const struct wlines *lines, const struct weave_call *c, char *buf, size_t n);

/* The user-facing name of the method holding a site, MethodDef `row`
 * (weave_names_method, into name), where a VB lambda "_Lambda$__N-M" -
 * whose name does not say which method it was written in - and an F#
 * closure "X@line" are named after the method of the user's type (out of
 * "_Closure$__" and closure classes) whose source lines, in `lines`, hold
 * the lambda's first line most tightly (without debug info a VB lambda
 * stays "Type::_Lambda$__N-M", an F# closure "Type::X"); *within (NULL:
 * not wanted) says what the code is, with its first line when known.
 * Returns 0, or -1 as weave_names_method or with LT_E_NOMEM. */
int weave_site_method(const struct weave_names *names, const struct wlines *lines, uint32_t row, struct lt_buf *name,
		      struct weave_within *within);

/* The name a report shows for the sites of MethodDef `row`: its
 * weave_site_method name followed by what the code is - " (lambda at
 * Program.cs:9)" (" (lambda)" without a line), " > Work" for a local
 * function Work - into out (replaced, NUL-terminated).  Returns 0, or -1 as
 * weave_site_method. */
int weave_site_name(const struct weave_names *names, const struct wlines *lines, uint32_t row, struct lt_buf *out);

/* Append what w says the code is (weave_site_name's part after the
 * method) to out, NUL-terminated.  Returns 0, or -1 with LT_E_NOMEM. */
int weave_within_append(const struct wlines *lines, const struct weave_within *w, struct lt_buf *out);

/* What w says the code is, as the site table's Within call and the
 * report's "within" field give it: returns "lambda" with the lambda's first
 * line ("Program.cs:9", or "" unknown) in what, "local function" with its
 * name (escaped as weave_escape does) in what, or "" for the method itself
 * (what empty); what is NUL-terminated (replaced).  Returns NULL with
 * LT_E_NOMEM. */
const char *weave_within_parts(const struct wlines *lines, const struct weave_within *w, struct lt_buf *what);

#endif
