/* weave_merge.h - LockTime's run-time template (C# compiled to a netstandard2.0
 * assembly) merged into a target assembly: its types copied in under names no
 * user type can take, every reference re-pointed at the target's framework
 * (weaver/runtime/README.md, "Merging"). */
#ifndef WEAVE_MERGE_H
#define WEAVE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "weave_opts.h"

/* What a merged top-level type's name starts with: template type Ns.X
 * becomes <LockTime>X in the empty namespace ('<' cannot start a C#, VB or
 * F# name, and the names stay apart from the stub type <LockTime>); such a
 * type marks a merged assembly. */
#define WEAVE_MERGE_PREFIX "<LockTime>"

/* LockTime's run-time template (weaver/runtime, built by make into
 * build/gen/runtime_template.c): the assembly's bytes and their count. */
extern const uint8_t lt_runtime_template[];
extern const size_t lt_runtime_template_len;

/* How the body of a template method is replaced at merge time (the
 * template's own body is then not copied, nor anything only it uses). */
enum weave_subst_kind {
	WEAVE_SUBST_STRING,    /* ldstr `string`; ret: a baked default */
	WEAVE_SUBST_I8,        /* ldc.i8 `i8`; ret */
	WEAVE_SUBST_CALL,      /* ldarg each argument; call `token` (a method of the target); ret */
	WEAVE_SUBST_CORLIB_TIMESTAMP, /* only into a core library without System.Diagnostics.Stopwatch
				       * (Mono's mscorlib): call its own clock (wref_clock); ret */
	WEAVE_SUBST_CORLIB_FREQUENCY, /* only there too: ldc.i8 that clock's ticks per second; ret */
	WEAVE_SUBST_EMIT,      /* what emit() writes into e (its ret included): e.g. calls to merged
				* methods, whose tokens map holds, with literal arguments */
	WEAVE_SUBST_SIGTERM,   /* only where the framework is known to have PosixSignalRegistration (.NET 6+):
				* return PosixSignalRegistration.Create(SIGTERM, Signals.OnTerminate) (weave_merge_direct.c) */
	WEAVE_SUBST_SIGINT,    /* the same for SIGINT and Signals.OnInterrupt (given only for a program: an entry point) */
	WEAVE_SUBST_UNLOADING, /* only where it is known to have AssemblyLoadContext (.NET Core 3+): add
				* ExitOrder.OnUnloading to AssemblyLoadContext.Default.Unloading; return true */
};

struct em;
struct weave_merge_map;

/* One substitution: the template method `method`, named "Namespace.Type::Name"
 * ("Namespace.Outer+Inner::Name" when nested), of no overloads. */
struct weave_subst {
	const char *method;
	enum weave_subst_kind kind;
	const char *string;    /* WEAVE_SUBST_STRING: UTF-8 */
	int64_t i8;            /* WEAVE_SUBST_I8 */
	uint32_t token;        /* WEAVE_SUBST_CALL: MethodDef or MemberRef token of the target */
	/* WEAVE_SUBST_EMIT: returns 0, or -1 with the error set (e's sticky failure counts too) */
	int (*emit)(void *ctx, struct img *target, const struct weave_merge_map *map, struct em *e);
	void *ctx;
};

/* LockTime's run-time template prepared for merging (weave_template_open):
 * what every merge of it needs of the template alone - its check, its
 * members' names, where the tokens of its bodies lie - found once. */
struct weave_template;

/* The target tokens of the template's methods and fields, by template name
 * ("Namespace.Type::Name", as in struct weave_subst), for the call-site
 * stubs that call into the merged run-time (weave_merge_find). */
struct weave_merge_map {
	const struct weave_template *tmpl; /* the names (it must outlive the map) */
	uint32_t field_base;   /* template Field f is target Field field_base + f */
	uint32_t method_base;  /* template MethodDef r is target MethodDef method_base + r */
	unsigned trim_unfit;   /* bit i: the target's own class named weave_merge_trim_attribute(i) does
				* not fit the run-time's uses of it, which were left out (0: none) */
};

/* The full name of attribute i for the trimmer that the run-time template
 * declares itself (netstandard2.0 lacks it), e.g.
 * "System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessageAttribute";
 * NULL past the last. */
const char *weave_merge_trim_attribute(unsigned i);

/* Every construct of the template outside what weave_merge supports, each
 * given to report() as one line ("TypeDef LockTime.X+<>c: a closure, lambda,
 * iterator, async state machine or other compiler-generated type"): generic
 * types or methods of its own, closures and state machines, <Module> members,
 * methods without IL bodies (abstract, P/Invoke, internal calls), vararg
 * methods, explicit static constructors (a .cctor of a type that is not
 * beforefieldinit), FieldRVA data, field marshalling, explicit layouts, events,
 * security, resources, module references, references to assemblies other
 * than netstandard, custom attributes on its members other than ThreadStatic,
 * CompilerGenerated, DebuggerHidden, DebuggerNonUserCode (named, with what
 * the compiler's own say of the code: an async method, an iterator...), two top-level types
 * of one name (in two namespaces: merged, they would clash).  report may be
 * NULL.  Returns the number of them (0: supported), or -1 with LT_E_METADATA
 * for malformed rows. */
long weave_merge_check(const struct img *tmpl, void (*report)(void *ctx, const char *what), void *ctx);

/* Prepare template `tmpl` (which must outlive *out, unchanged) for
 * weave_merge, once for any number of merges: its check (weave_merge_check),
 * the names of its Fields and MethodDefs, the constructors of its attributes
 * for the trimmer (weave_merge_trim_attribute), and in each method body (II.25.4)
 * the offsets of its tokens (operands, the fat header's LocalVarSigTok, catch
 * clauses' classes).  Returns 0 (free *out with weave_template_free), or -1
 * with LT_E_WEAVE (the template outside the subset: the first of
 * weave_merge_check's findings), LT_E_METADATA, the errors of il_decode
 * (LT_E_BODY, LT_E_LIMIT), LT_E_NOMEM. */
int weave_template_open(const struct img *tmpl, struct weave_template **out);

/* Release a prepared template (not its image).  NULL is a no-op. */
void weave_template_free(struct weave_template *t);

/* Merge the prepared template `tmpl` into `target` (whose other edits may come
 * before or after; the merged TypeDefs go after its last TypeDef, their
 * members at the ends of their tables, so no existing token moves):
 *  - every TypeDef but <Module>, with nesting (II.22.32), Extends,
 *    InterfaceImpl and MethodImpl rows, made NotPublic (nested:
 *    NestedAssembly), top-level ones renamed (WEAVE_MERGE_PREFIX; not an
 *    attribute class merged under its full name, below), each
 *    marked [CompilerGenerated]; its Field, MethodDef, Param, Constant and
 *    Property rows (PropertyMap, MethodSemantics); the custom attributes
 *    weave_merge_check allows; an attribute for the trimmer
 *    (weave_merge_trim_attribute) as the target's own class of that name
 *    when it fits (else left out: out->trim_unfit), the target framework's,
 *    or for a .NETStandard target the template's class merged under its
 *    own full name; left out elsewhere (.NET Framework, Mono: nothing trims
 *    them);
 *  - every method body (II.25.4), its bytes as the template has them with
 *    each token re-mapped in place (a token's size is fixed: the code, its
 *    branches and max stack stay the same): TypeRefs and
 *    MemberRefs resolved in the target's framework (wref_type, wref_member:
 *    opts->refs, else its AssemblyRefs; a core library's own TypeDefs), TypeSpec,
 *    MethodSpec and StandAloneSig rows re-encoded (sig_remap) and shared
 *    when identical, #US strings added; EH clause classes re-mapped;
 *  - the bodies of the methods substs[0..nsubsts) name replaced (struct
 *    weave_subst).
 * A reference is resolved when a copied row or body uses it: what only a
 * substituted body used is never looked for.  *out (may be NULL) gets the
 * tokens of the template's members.
 * Deterministic: the same inputs give the same rows.
 * Returns 0, 1 when the target holds merged types already (nothing done),
 * or -1 with LT_E_WEAVE (a type or member the target's framework
 * lacks, named "the target's framework has no System.X::Y needed by
 * LockTime's run-time"; a substitution naming no template method), and the
 * errors of wref_open, sig_remap, il_encode, LT_E_METADATA,
 * LT_E_NOMEM, LT_E_LIMIT.  On failure the target is left half-edited:
 * the caller drops it. */
int weave_merge(struct img *target, const struct weave_template *tmpl, const struct weave_opts *opts,
		const struct weave_subst *substs, size_t nsubsts, struct weave_merge_map *out);

/* The target token of template member `name` ("Namespace.Type::Name") in m
 * (of overloads, the first row's; a Field's before a MethodDef's): 1 with
 * *out, 0 when m has none.  A binary search of the template's names. */
int weave_merge_find(const struct weave_merge_map *m, const char *name, uint32_t *out);

#endif
