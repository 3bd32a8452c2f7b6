/* weave_internal.h - what the weaving passes share: the lock calls found in
 * method bodies, and the helper type that times them (docs/weaving.md). */
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
};

/* The helper type under construction. */
struct weave_helper;

/* Append the helper TypeDef `<LockTime>` as the last TypeDef of img, with
 * its fields, .cctor and the record/report methods (docs/weaving.md), with
 * every framework type it needs resolved against the target's own framework
 * (opts->refs, else its AssemblyRefs).  Returns 0 and *out, or -1
 * (LT_E_WEAVE when a framework type cannot be resolved, LT_E_NOMEM). */
int weave_helper_begin(struct img *img, const struct weave_opts *opts, struct weave_helper **out);

/* The MethodDef token of the wrapper for calls to `callee` of `kind` made
 * with call (callvirt = 0) or callvirt (1), adding the wrapper on first use.
 * Acquiring wrappers take the callee's arguments plus (string method,
 * string location); others take exactly the callee's arguments.
 * Returns 0, or -1 (LT_E_WEAVE, LT_E_SIGNATURE, LT_E_NOMEM). */
int weave_helper_wrapper(struct weave_helper *h, uint32_t callee, enum weave_kind kind, int callvirt,
			 uint32_t *out_token);

/* What a [MethodImpl(Synchronized)] body calls to be timed. */
struct weave_sync_calls {
	uint32_t enter;            /* void (object lock, string method, string location): a frame acquired now, no wait */
	uint32_t leave;            /* void (object lock): release the frame and report (docs/weaving.md) */
	uint32_t type_from_handle; /* Type Type::GetTypeFromHandle(RuntimeTypeHandle): a static method's lock */
};

/* The tokens of *out: the helper's Synchronized_Enter / Synchronized_Exit
 * (added on first use; both do nothing under LOCKTIME_DISABLED) and the
 * framework's GetTypeFromHandle.  Returns 0, or -1 (LT_E_NOMEM, LT_E_LIMIT,
 * LT_E_ENCODE). */
int weave_helper_sync(struct weave_helper *h, struct weave_sync_calls *out);

/* The kind of lock call a helper method named `name` wraps, as
 * weave_helper_wrapper and weave_helper_sync name them ("Monitor_Enter",
 * "Monitor_Enter_2", "Synchronized_Enter"...), into *out.  Returns 1, or 0
 * for any other name (the helper's own methods, "_Timed" parts). */
int weave_helper_kind_of(const char *name, enum weave_kind *out);

/* Encode the helper's method bodies into img and free h (also on failure).
 * Returns 0, or -1. */
int weave_helper_end(struct weave_helper *h);

/* Free without finishing (error paths).  NULL is a no-op. */
void weave_helper_free(struct weave_helper *h);

/* The name of the helper TypeDef; its presence marks a woven assembly. */
#define WEAVE_HELPER_TYPE "<LockTime>"

#endif
