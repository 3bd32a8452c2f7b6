/* il_eh_sort.h - the order EH clauses are written in: inner blocks first
 * (ECMA-335 I.12.4.2.5), otherwise as they were, in time near-linear in the
 * clauses of a properly nested body (I.12.4.2.7). */
#ifndef IL_EH_SORT_H
#define IL_EH_SORT_H

#include <stdint.h>

/* A clause's blocks as instruction indexes, ends exclusive: try [ts, te),
 * handler [hs, he), filter [fs, hs) (fs = hs without a filter). */
struct il_span { uint32_t ts, te, hs, he, fs; };

/* Most clauses whose blocks overlap without nesting (malformed:
 * I.12.4.2.7) that il_eh_sort orders, pair by pair. */
#define IL_EH_SORT_TANGLED_MAX 4096u
/* Most (inner, outer) clause pairs il_eh_sort follows: a depth of nesting
 * no compiler writes (a chain of n nested clauses has n(n-1)/2). */
#define IL_EH_SORT_MAX_PAIRS (1u << 25)

/* The order of clauses sp[0..n) into order[0..n) (indexes into sp): clause
 * a must come before clause c when a's try block lies inside c's try block
 * (and is not the same block), handler or filter; of the clauses free to
 * come next, the first one of the input does.  (Clauses nested both ways,
 * which is malformed, come in input order.)  Returns 0, or -1 with
 * LT_E_NOMEM, or LT_E_LIMIT past IL_EH_SORT_TANGLED_MAX or
 * IL_EH_SORT_MAX_PAIRS. */
int il_eh_sort(const struct il_span *sp, uint32_t n, uint32_t *order);

#endif
