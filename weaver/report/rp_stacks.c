/* rp_stacks.c - a site's call stacks (its "stacks"): ordered, freed (added up in rp_merge.c). */
#include "rp_report.h"

#include <stdlib.h>
#include <string.h>

int64_t rp_stack_cost(const struct rp_stack *st)
{
	return st->role == RP_WAITER ? st->wait_ns : st->hold_ns;
}

static int by_cost(const void *pa, const void *pb)
{
	const struct rp_stack *a = pa, *b = pb;
	int64_t ca = rp_stack_cost(a), cb = rp_stack_cost(b);
	if (a->role != b->role)
		return a->role < b->role ? -1 : 1;
	if (a->what != b->what)
		return a->what < b->what ? -1 : 1;
	if (ca != cb)
		return ca > cb ? -1 : 1;
	return a->count > b->count ? -1 : a->count < b->count;
}

void rp_stacks_sort(struct rp_site *s)
{
	if (s->n_stacks > 1)
		qsort(s->stacks, s->n_stacks, sizeof *s->stacks, by_cost);
}

void rp_stacks_free(struct rp_site *s)
{
	for (size_t i = 0; i < s->n_stacks; i++) {
		for (size_t k = 0; k < s->stacks[i].n_frames; k++) {
			free(s->stacks[i].frames[k].method);
			free(s->stacks[i].frames[k].file);
		}
		free(s->stacks[i].frames);
	}
	free(s->stacks);
	s->stacks = NULL;
	s->n_stacks = 0;
}
