/* weave_internal.h - what the weaving passes share: the lock calls found in
 * method bodies, the site table, and the stub type whose stubs time them
 * (docs/weaving.md). */
#ifndef WEAVE_INTERNAL_H
#define WEAVE_INTERNAL_H

#include <stdint.h>

#include "weave_opts.h"

/* A call or callvirt to a lock API found in a method body. */
struct weave_call {
	uint32_t methoddef;   /* MethodDef row holding the call (1-based) */
	uint32_t il_offset;   /* offset of the call instruction in the input body */
	enum weave_kind kind;
	uint32_t callee;      /* the call's token operand (MemberRef, MethodDef or MethodSpec) */
	uint8_t callvirt;     /* 1 for callvirt, 0 for call */
	uint8_t shared_line;  /* 1: another acquiring site is on its line: reports add the column */
	uint32_t doc, line, column; /* its source (weave_sites_locate): Document row, 1-based line and
				     * column; line 0 when there is none */
	uint32_t site;        /* acquiring calls: the site id (0-based, dense) its stub is given */
};

/* One row of the site table a woven assembly carries (the run-time's
 * SiteList.Load), its strings as #US tokens of the target. */
struct weave_site_row {
	uint32_t method;       /* ldstr token: "Namespace.Type::Method" */
	uint32_t location;     /* ldstr token: "File.cs:42" (":column" when shared) or "IL_001c" */
	uint32_t file;         /* ldstr token: the document's full path, "" when none */
	uint32_t line;         /* 1-based source line, 0 none */
	uint32_t kind;         /* ldstr token: weave_kind_name */
	/* Compiler-generated code inside the method the user wrote (weave_within), as ldstr tokens, all 0 for
	 * the method itself: "lambda" or "local function", the enclosing method ("Namespace.Type::Method"),
	 * and the lambda's first line ("Program.cs:9", "" unknown) or the local function's name. */
	uint32_t within_kind, within_method, within_what;
};

/* The acquiring sites of one weave: row i is site id i (weave_call.site). */
struct weave_site_table {
	uint32_t assembly;     /* ldstr token of the assembly's simple name (II.22.2) */
	const struct weave_site_row *rows;
	uint32_t n;
};

/* The stub type under construction: the call-site stubs. */
struct weave_stubs;

/* Merge LockTime's run-time (the template, lt_runtime_template) into img,
 * with the weave's options baked in (Baked.*: threshold, sink, and the
 * summary, report and lock order when given) and `sites` as its site
 * table, then append the stub TypeDef `<LockTime>` (the last TypeDef) for
 * the call-site stubs.  Every framework type the run-time needs is
 * resolved in the target's framework (opts->refs, else its AssemblyRefs).
 * Returns 0 and *out, or -1 (LT_E_WEAVE: a bad option, a framework member
 * the target lacks, merged types there already; weave_merge's errors,
 * LT_E_NOMEM).  On failure img is half-edited: the caller drops it. */
int weave_stubs_begin(struct img *img, const struct weave_opts *opts, const struct weave_site_table *sites,
		       struct weave_stubs **out);

/* The attributes for the trimmer whose uses in the merged run-time were left
 * out because the target's own class of that name does not fit them
 * (weave_merge_map's trim_unfit): a set of bits, 0 when none. */
unsigned weave_stubs_trim_unfit(const struct weave_stubs *h);

/* The MethodDef token of the stub for calls to `callee` of `kind` made
 * with call (callvirt = 0) or callvirt (1), adding the stub on first use;
 * in_async: the calls are in an async state machine's MoveNext
 * (weave_names_in_async), where a SemaphoreSlim.Wait stub (WEAVE_SEM_WAIT,
 * WEAVE_SEM_TRYWAIT) is one of its own that keeps the hold out of the lock
 * order (Api.AcquiredSemaphoreInAsync); other kinds ignore it.
 * Acquiring stubs take the callee's arguments plus (int32 site); others
 * take exactly the callee's arguments (weaver/runtime/README.md has their
 * shapes).  Returns 0, or -1 (LT_E_WEAVE, LT_E_SIGNATURE, LT_E_NOMEM). */
int weave_stubs_for_call(struct weave_stubs *h, uint32_t callee, enum weave_kind kind, int callvirt, int in_async,
			 uint32_t *out_token);

/* What a [MethodImpl(Synchronized)] body calls to be timed. */
struct weave_sync_calls {
	uint32_t enter;            /* void (object lock, int32 site): a frame acquired now, no wait */
	uint32_t leave;            /* void (object lock): the frame released */
	uint32_t type_of;          /* object (RuntimeTypeHandle): a static method's lock, the Type */
};

/* The tokens of *out: the stub type's Synchronized_Enter / Synchronized_Exit
 * (added on first use; both do nothing when the run-time is off) and the
 * run-time's TypeOf.  Returns 0, or -1 (LT_E_NOMEM, LT_E_LIMIT,
 * LT_E_ENCODE). */
int weave_stubs_sync(struct weave_stubs *h, struct weave_sync_calls *out);

/* The MethodDef token of the merged run-time's bool ExitOrder.Watch() (weave_early). */
uint32_t weave_stubs_watch(const struct weave_stubs *h);

/* Encode the stub type's method bodies into img and free h (also on failure).
 * Returns 0, or -1. */
int weave_stubs_end(struct weave_stubs *h);

/* Free without finishing (error paths).  NULL is a no-op. */
void weave_stubs_free(struct weave_stubs *h);

/* The name of the stub TypeDef; it, or a merged run-time type
 * (WEAVE_MERGE_PREFIX), marks a woven assembly. */
#define WEAVE_STUB_TYPE "<LockTime>"

#endif
