/* weave_emit.h - a small CIL assembler for the bodies LockTime writes from scratch: instructions, labels, EH clauses. */
#ifndef WEAVE_EMIT_H
#define WEAVE_EMIT_H

#include <stdint.h>

#include "il_body.h"

/* Most EH clauses one emitted body may hold. */
#define EM_MAX_EH 4

/* An EH clause whose boundaries are labels (em_label). */
struct em_eh {
	enum il_eh_kind kind;       /* IL_EH_CATCH, IL_EH_FILTER or IL_EH_FINALLY */
	uint32_t try_start, try_end, handler_start, handler_end;
	uint32_t class_token;       /* catch: the caught type */
	uint32_t filter_start;      /* filter: its block, which ends where the handler starts (II.19) */
};

/* A body being assembled.  The em_* calls return nothing: the first failure
 * (out of memory) is recorded with lt_nomem and made sticky, and
 * em_finish reports it, so body code reads like an IL listing. */
struct em {
	struct il_instr *ins;       /* branch targets hold label numbers until em_finish */
	uint32_t n;
	size_t cap;
	uint32_t *label_at;         /* label -> index of the instruction it marks (n = the end) */
	uint32_t nlabels;
	size_t label_cap;
	struct em_eh eh[EM_MAX_EH];
	uint32_t neh;
	int failed;
};

/* An empty body.  Release with em_free (also after em_finish). */
void em_init(struct em *e);
void em_free(struct em *e);

/* A new label, not yet placed; em_mark places it before the next instruction. */
uint32_t em_label(struct em *e);
void em_mark(struct em *e, uint32_t label);

/* Instructions: em_op for operand-less ones, em_tok for token operands,
 * em_br for branches and leave to a label.  em_i4 / em_i8 / em_r8 push a
 * constant (ldc.i4 in its shortest form, ldc.i8, ldc.r8); em_ldarg, em_ldloc, em_stloc,
 * em_ldloca, em_ldarga pick the shortest form for index n (III.3.38-3.63). */
void em_op(struct em *e, enum il_op op);
void em_tok(struct em *e, enum il_op op, uint32_t token);
void em_br(struct em *e, enum il_op op, uint32_t label);
void em_i4(struct em *e, int32_t v);
void em_i8(struct em *e, int64_t v);
void em_r8(struct em *e, double v);
void em_ldarg(struct em *e, uint32_t n);
void em_ldloc(struct em *e, uint32_t n);
void em_stloc(struct em *e, uint32_t n);
void em_ldloca(struct em *e, uint32_t n);
void em_ldarga(struct em *e, uint32_t n);

/* Add an EH clause (II.25.4.6) bounded by labels. */
void em_eh(struct em *e, const struct em_eh *c);

/* Move the instructions and clauses into *out (initialized here; free with
 * il_body_free), resolving labels to instruction ids.  Returns 0, or -1 with
 * the sticky error, or LT_E_ENCODE for a label used but never placed (or a
 * branch to the end of the body), LT_E_LIMIT / LT_E_NOMEM from il_insert. */
int em_finish(struct em *e, struct il_body *out);

#endif
