/* il_body.h - CIL method bodies (II.25.4): decoding, editing, encoding and maxstack.
 *
 * A body is decoded into an array of instructions and an array of exception
 * handling (EH) clauses.  Every instruction carries an `id` that stays the
 * same while instructions are inserted or removed around it; branch targets,
 * switch targets and clause boundaries are instruction ids, never offsets, so
 * edits cannot leave them pointing into the middle of an instruction.
 * IL_ID_END stands for "the end of the body" (a clause that ends with the
 * last instruction).  The IL layer knows nothing of metadata: tokens are kept
 * as read, and the stack effect of call/callvirt/newobj/calli is asked of a
 * callback given by the caller.
 */
#ifndef IL_BODY_H
#define IL_BODY_H

#include <stddef.h>
#include <stdint.h>

#include "il_opcodes.h"
#include "lt_buf.h"

#define IL_ID_END    0xFFFFFFFFu /* target/boundary "end of body" */
#define IL_NO_OFFSET 0xFFFFFFFFu /* orig_offset of an inserted instruction */

/* Sane limits (LT_E_LIMIT beyond them). */
#define IL_MAX_CODE    (16u << 20) /* bytes of IL code */
/* EH clauses of one body: one fat EH section holds them (its DataSize is 24
 * bits: 4 + 24 * 2^19 fits), far past a compiler's (a `lock` statement is
 * one clause) while decoding, sorting (il_eh_sort) and encoding them stay
 * linear in their number. */
#define IL_MAX_CLAUSES (1u << 19)

struct il_instr {
	enum il_op op;        /* for a branch, the form asked for; see emit_op */
	uint32_t id;          /* stable identity, unique in the body */
	uint32_t orig_offset; /* IL offset it was decoded at, IL_NO_OFFSET if inserted */
	uint32_t offset;      /* IL offset given by the last il_encode */
	enum il_op emit_op;   /* the op the last il_encode wrote (a branch may change form) */
	union {
		int64_t i;       /* INT8, INT32, INT64, VAR8, VAR16 operands */
		uint64_t bits;   /* FLOAT32 (low 32 bits) / FLOAT64: raw IEEE 754 bits */
		uint32_t token;  /* TOKEN operand */
		uint32_t target; /* BR8 / BR32: target instruction id */
	} arg;
	uint32_t ntargets;    /* SWITCH: number of targets */
	uint32_t *targets;    /* SWITCH: target instruction ids (owned) */
};

/* Clause kinds: the Flags of an EH clause (II.25.4.6). */
enum il_eh_kind {
	IL_EH_CATCH = 0x0,   /* typed handler: class_token */
	IL_EH_FILTER = 0x1,  /* filter block at filter_start, handler after it */
	IL_EH_FINALLY = 0x2,
	IL_EH_FAULT = 0x4
};

/* An EH clause (II.25.4.6); boundaries are instruction ids, ends exclusive
 * (the id of the first instruction after the block, or IL_ID_END). */
struct il_eh {
	enum il_eh_kind kind;
	uint32_t try_start, try_end;
	uint32_t handler_start, handler_end;
	uint32_t filter_start; /* IL_EH_FILTER only */
	uint32_t class_token;  /* catch: the class token; finally/fault: the field as read (0) */
	uint32_t class_at;     /* as il_decode read it: the body offset of the clause's last field (the
				* class token of a catch), 0 for a clause added */
};

struct il_body {
	/* Method header (II.25.4.2-3) */
	int fat;                 /* header form as read, then as last encoded */
	uint16_t max_stack;      /* as read (8 for a tiny header); encoding writes
	                            max(this, computed) and stores it here */
	uint32_t local_var_sig_tok; /* StandAloneSig token or 0 */
	int init_locals;         /* CorILMethod_InitLocals */
	int returns_value;       /* set by the caller: ret pops one item */
	uint32_t code_size;      /* bytes of IL code as read, then as last encoded */
	uint32_t orig_code_size; /* bytes of IL code as read (0 for a new body) */
	/* Instructions in code order */
	struct il_instr *ins;
	uint32_t n;
	size_t cap;
	uint32_t next_id;        /* id the next inserted instruction gets */
	/* EH clauses in the order read or added; encoding sorts them */
	struct il_eh *eh;
	uint32_t neh;
	size_t eh_cap;
};

/* Stack effect of call, callvirt, newobj or calli with `token` (III.3.19,
 * III.4.2, III.4.21, III.3.20): *pops = items popped (arguments, `this` of an
 * instance method except for newobj, calli's function pointer), *pushes = 0 or
 * 1.  Returns 0, or -1 with an error recorded (passed up unchanged). */
typedef int (*il_stack_effect_fn)(void *ctx, uint32_t token, enum il_op op,
				  int *pops, int *pushes);

/* Total size in bytes of the method body at bytes[0..avail): header, code,
 * and every EH section (the last one's DataSize bytes, no trailing padding).
 * `bytes` is the body's first byte (its RVA).  Checks the header, the code
 * size and every section header against avail.
 * Returns 0 with *out set, or -1: LT_E_BODY (malformed or truncated header
 * or section, II.25.4.1-5), LT_E_LIMIT (code over IL_MAX_CODE). */
int il_body_size(const uint8_t *bytes, size_t avail, uint32_t *out);

/* Decode the body at bytes[0..avail) into *out (which it initializes):
 * header (tiny or fat, II.25.4.2-3), every instruction (prefixes are
 * instructions of their own, ids 0..n-1 in code order), every EH section
 * (small and fat, several with MoreSects, II.25.4.5-6).  Targets and clause
 * boundaries are resolved to ids.  Does not read past bytes + avail.
 * Returns 0, or -1 (out holds nothing to free) with:
 *   LT_E_BODY   "IL offset 0x..: ..." for an unknown header kind or flag,
 *               code size 0 or past avail, an unknown opcode, a truncated
 *               operand, a branch or switch target outside the code or
 *               inside an instruction, an EH section of unknown kind or
 *               wrong size, an EH clause of unknown kind, or clause bounds
 *               outside the code or not at instruction starts;
 *   LT_E_LIMIT  code over IL_MAX_CODE, more than IL_MAX_CLAUSES clauses;
 *   LT_E_NOMEM. */
int il_decode(const uint8_t *bytes, size_t avail, struct il_body *out);

/* A call or callvirt met by il_scan_calls: its code offset and MethodDef /
 * MemberRef / MethodSpec token.  Returns 0 to go on, -1 to stop (with the
 * error set). */
typedef int (*il_call_fn)(void *ctx, uint32_t offset, enum il_op op, uint32_t token);

/* Walk the body at bytes[0..avail) as il_decode reads it - header, section
 * sizes, every instruction's opcode and operand (III.1.2, branch targets in
 * the code) - without building it: fn is called for each call and callvirt.
 * For finding the few bodies worth decoding; what only il_decode checks
 * (targets at instruction starts, EH clauses) is left to it.  Returns 0, or
 * -1 with LT_E_BODY, or fn's -1. */
int il_scan_calls(const uint8_t *bytes, size_t avail, il_call_fn fn, void *ctx);

/* Release what a body owns; the body is empty afterwards.  NULL is a no-op. */
void il_body_free(struct il_body *b);

/* Index in b->ins of the instruction with `id`: 0 with *out set, or -1 with
 * LT_E_ENCODE when no instruction has it (removed, or never existed). */
int il_index_of(const struct il_body *b, uint32_t id, uint32_t *out);

/* An id -> index table: (*out)[id] = index in b->ins for id < b->next_id,
 * UINT32_MAX for ids not in the body.  Caller frees *out with free().
 * Returns 0, or -1 with LT_E_NOMEM. */
int il_id_map(const struct il_body *b, uint32_t **out);

/* Insert n instructions (copied from ins[0..n)) before index `at` (0..b->n;
 * b->n appends).  They get the ids b->next_id, b->next_id + 1, ... in order
 * (so a caller may branch between them by reading b->next_id first) and
 * orig_offset IL_NO_OFFSET; switch target arrays are copied.  Existing ids
 * are kept, and nothing is retargeted: a branch or clause boundary that names
 * the instruction now after the inserted ones keeps naming it (use
 * il_retarget to move it onto the new code).
 * Returns 0, or -1: LT_E_ENCODE (at > b->n, an op >= IL_OP_COUNT),
 * LT_E_LIMIT (more than IL_MAX_CODE instructions), LT_E_NOMEM. */
int il_insert(struct il_body *b, uint32_t at, const struct il_instr *ins, uint32_t n);

/* Remove the n instructions at indexes at..at+n-1.  Branches and clause
 * boundaries naming them are not changed: retarget them first, or encoding
 * fails with LT_E_ENCODE.  Returns 0, or -1 with LT_E_ENCODE when the range
 * passes b->n. */
int il_remove(struct il_body *b, uint32_t at, uint32_t n);

/* What il_retarget moves (a mask). */
enum il_retarget_which {
	IL_RT_BRANCH = 0x01,        /* branch and switch targets */
	IL_RT_TRY_START = 0x02,
	IL_RT_TRY_END = 0x04,
	IL_RT_HANDLER_START = 0x08,
	IL_RT_HANDLER_END = 0x10,
	IL_RT_FILTER_START = 0x20,
	IL_RT_ALL = 0x3F
};

/* Make every reference of the kinds in `which` that names from_id name to_id
 * instead (either may be IL_ID_END).  After il_insert before instruction X,
 * every reference still names X, so the new code lies inside a block whose
 * (exclusive) end names X and outside a block whose start names X, and
 * branches to X skip it.  Retargeting X to the first inserted id flips that
 * for the kinds chosen: IL_RT_TRY_END / IL_RT_HANDLER_END put the new code
 * after the block, IL_RT_TRY_START / IL_RT_HANDLER_START / IL_RT_FILTER_START
 * put it inside, IL_RT_BRANCH makes branches run it.
 * Returns the number of references changed. */
uint32_t il_retarget(struct il_body *b, uint32_t from_id, uint32_t to_id, unsigned which);

/* One edit of a batch applied by il_apply, at index `at` of b->ins as it is
 * before the batch. */
struct il_edit {
	uint32_t at;
	int drop;                   /* remove ins[at] (n must be 0): every reference to it moves onto
				     * the next instruction kept (IL_ID_END when none) */
	const struct il_instr *ins; /* insert these n before ins[at] (at == b->n: append), as il_insert */
	uint32_t n;
	unsigned retarget;          /* references of these kinds (il_retarget_which) to ins[at] move
				     * onto the first instruction inserted */
};

/* Apply edits[0..nedits) (ascending `at`, one edit an index) in one pass over
 * the body and its clauses: the same result as the il_remove, il_insert and
 * il_retarget calls the edits describe, made one after another in order
 * (inserted instructions get ids from b->next_id in edit order; a reference
 * to a dropped instruction first moves onto the one after it, then, with
 * that one's retarget, onto its first inserted instruction), in time linear
 * in the body's size instead of in its size times the edits.
 * Returns 0, or -1 (b unchanged): LT_E_ENCODE (an edit past the body, out
 * of order, dropping and inserting at once, an op >= IL_OP_COUNT),
 * LT_E_LIMIT (more than IL_MAX_CODE instructions), LT_E_NOMEM. */
int il_apply(struct il_body *b, const struct il_edit *edits, uint32_t nedits);

/* Append an EH clause (boundaries are ids; checked when encoding).
 * Returns 0, or -1: LT_E_LIMIT (IL_MAX_CLAUSES), LT_E_NOMEM. */
int il_add_eh(struct il_body *b, const struct il_eh *c);

/* The IL offset, in the last encoding, of the instruction decoded at
 * old_offset; old_offset == b->orig_code_size maps to the new code size (the
 * end of a scope).  For debug symbols (sequence points, scopes).
 * Returns 0 with *out set, or -1 with LT_E_BODY when no kept instruction
 * was decoded at old_offset. */
int il_map_offset(const struct il_body *b, uint32_t old_offset, uint32_t *out);

/* Largest evaluation stack depth over every path (III.1.7.5): depths are
 * propagated from offset 0 (depth 0), each try start (0), each catch or
 * filter handler and filter start (1: the exception), each finally or fault
 * handler (0), through fall-through, branch and switch targets; leave and
 * endfinally empty the stack.  Unreachable code is not counted.
 * fn (with ctx) gives the effect of call/callvirt/newobj/calli; ret pops 1
 * when b->returns_value.  Returns 0 with *out set, or -1 with:
 *   LT_E_BODY    a stack underflow, different depths where paths join,
 *                control falling off the end of the code (III.1.7.4-5);
 *   LT_E_ENCODE  a target id not in the body, a call with fn NULL, a
 *                callback effect out of range;
 *   LT_E_NOMEM, or whatever fn returned. */
int il_max_stack(const struct il_body *b, il_stack_effect_fn fn, void *ctx, uint32_t *out);

/* Encode b as a method body appended to out (II.25.4):
 *  - branches: a branch starts in short form when its op is short or it was
 *    inserted (orig_offset IL_NO_OFFSET), else long; short ones whose offset
 *    does not fit in int8 are widened until nothing changes.  The form
 *    written is stored in emit_op; op is left as asked.  Offsets are stored
 *    in each instruction's `offset` and b->code_size;
 *  - max stack = max(b->max_stack, il_max_stack(b, fn, ctx)), stored back;
 *  - tiny header when code < 64 bytes, no locals token, no EH clauses, no
 *    InitLocals and max stack <= 8; else a fat header.  A fat body must start
 *    at a 4-byte aligned RVA (II.25.4.1): the caller aligns `out` before
 *    calling; the EH section is aligned relative to the body's start;
 *  - EH clauses sorted so an inner try block precedes the blocks enclosing
 *    it (I.12.4.2.5; otherwise their order is kept), in one section, small
 *    form when every clause fits (offsets <= 0xFFFF, lengths <= 0xFF) and
 *    the section is <= 255 bytes, else fat (II.25.4.5-6).  b->eh is left in
 *    the order written.  b->fat tells which header was written.
 * Returns 0, or -1 (out may hold a partial body: truncate it) with:
 *   LT_E_ENCODE  a body without instructions, a target or clause boundary
 *                id not in the body, a branch to IL_ID_END, a clause whose end is not after its start,
 *                code or max stack too large for the header;
 *   LT_E_BODY / others from il_max_stack; LT_E_NOMEM. */
int il_encode(struct il_body *b, il_stack_effect_fn fn, void *ctx, struct lt_buf *out);

#endif
