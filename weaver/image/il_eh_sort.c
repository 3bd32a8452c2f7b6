/* il_eh_sort.c - EH clauses ordered inner-first (see il_eh_sort.h). */
#include "il_eh_sort.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdlib.h>
#include <string.h>

static int within(uint32_t s, uint32_t e, uint32_t os, uint32_t oe) { return os <= s && e <= oe; }

/* I.12.4.2.5: clause a must precede clause c when a's try block lies inside
 * c's try block (and is not the same block), handler or filter. */
static int nested_in(const struct il_span *a, const struct il_span *c)
{
	return (within(a->ts, a->te, c->ts, c->te) && (a->ts != c->ts || a->te != c->te)) ||
	       within(a->ts, a->te, c->hs, c->he) || within(a->ts, a->te, c->fs, c->hs);
}

/* The pairs (a, c) with a nested in c, a != c, in the order found. */
struct pair { uint32_t a, c; };

struct pairs {
	struct pair *v;
	size_t n, cap;
};

static int pair_add(struct pairs *p, uint32_t a, uint32_t c)
{
	if (p->n >= IL_EH_SORT_MAX_PAIRS)
		return lt_error_set(LT_E_LIMIT, "EH clauses nested deeper than %u pairs", IL_EH_SORT_MAX_PAIRS);
	if (lt_grow(&p->v, &p->cap, p->n + 1, sizeof *p->v) < 0)
		return -1;
	p->v[p->n++] = (struct pair){ a, c };
	return 0;
}

/* Every pair, testing each: for bodies whose blocks overlap without nesting. */
static int pairs_tangled(const struct il_span *sp, uint32_t n, struct pairs *p)
{
	if (n > IL_EH_SORT_TANGLED_MAX)
		return lt_error_set(LT_E_LIMIT, "%u EH clauses whose blocks overlap without nesting (I.12.4.2.7): "
				    "more than %u", n, IL_EH_SORT_TANGLED_MAX);
	p->n = 0;
	for (uint32_t a = 0; a < n; a++)
		for (uint32_t c = 0; c < n; c++)
			if (a != c && nested_in(&sp[a], &sp[c]) && pair_add(p, a, c) < 0)
				return -1;
	return 0;
}

/* A block of clause `owner`: kind 0 try, 1 handler, 2 filter. */
struct block {
	uint32_t start, end, owner, kind;
};

static int block_cmp(const void *x, const void *y)
{
	const struct block *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1; /* the outer block first */
	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	return a->kind < b->kind ? -1 : a->kind > b->kind;
}

/* Whether block k holds the try block of clause a for nested_in: not a's
 * own block, nor a try block that is a's exactly. */
static int holds(const struct il_span *sp, const struct block *k, uint32_t a)
{
	return k->owner != a && !(k->kind == 0 && sp[k->owner].ts == sp[a].ts && sp[k->owner].te == sp[a].te);
}

/* The pairs of a properly nested body (any two blocks disjoint, or one
 * inside the other): a sweep over the blocks in start order keeps the chain
 * of blocks around the current one, and the blocks holding a try block are
 * that chain and the blocks equal to it.  Returns 0, 1 when two blocks
 * overlap without nesting (pairs_tangled must do), or -1. */
static int pairs_nested(const struct il_span *sp, uint32_t n, struct pairs *p)
{
	struct block *bl = lt_malloc((size_t)n * 3 * sizeof *bl);
	const struct block **chain = lt_malloc((size_t)n * 3 * sizeof *chain);
	uint32_t *seen = lt_malloc((size_t)n * sizeof *seen), nb = 0, depth = 0;
	int rc = 0;

	if (!bl || !chain || !seen) {
		rc = lt_nomem("sorting EH clauses");
		goto done;
	}
	for (uint32_t c = 0; c < n; c++) {
		bl[nb++] = (struct block){ sp[c].ts, sp[c].te, c, 0 };
		bl[nb++] = (struct block){ sp[c].hs, sp[c].he, c, 1 };
		if (sp[c].fs < sp[c].hs)
			bl[nb++] = (struct block){ sp[c].fs, sp[c].hs, c, 2 };
		seen[c] = UINT32_MAX;
	}
	qsort(bl, nb, sizeof *bl, block_cmp);
	for (uint32_t i = 0, j; i < nb && rc == 0; i = j) {
		for (j = i; j < nb && bl[j].start == bl[i].start && bl[j].end == bl[i].end; j++)
			;
		while (depth && chain[depth - 1]->end <= bl[i].start)
			depth--;
		if (depth && chain[depth - 1]->end < bl[i].end) {
			rc = 1;
			break;
		}
		for (uint32_t q = i; q < j && rc == 0; q++) {
			uint32_t a = bl[q].owner;
			for (uint32_t d = 0; bl[q].kind == 0 && d < depth + (j - i) && rc == 0; d++) {
				const struct block *k = d < depth ? chain[d] : &bl[i + d - depth];
				if (!holds(sp, k, a) || seen[k->owner] == a)
					continue;
				seen[k->owner] = a;
				rc = pair_add(p, a, k->owner);
			}
		}
		for (uint32_t q = i; q < j; q++)
			chain[depth++] = &bl[q];
	}
done:
	free(bl);
	free(chain);
	free(seen);
	return rc;
}

/* A min-heap of clause indexes. */
struct heap {
	uint32_t *v;
	uint32_t n;
};

static void heap_push(struct heap *h, uint32_t x)
{
	uint32_t i = h->n++;

	for (; i && h->v[(i - 1) / 2] > x; i = (i - 1) / 2)
		h->v[i] = h->v[(i - 1) / 2];
	h->v[i] = x;
}

static uint32_t heap_pop(struct heap *h)
{
	uint32_t top = h->v[0], x = h->v[--h->n], i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1] < h->v[c])
			c++;
		if (h->v[c] >= x)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = x;
	return top;
}

/* The order from the pairs: repeatedly the first clause with no inner
 * clause left to take, else (nested both ways) the first not taken. */
static int order_pairs(const struct pairs *p, uint32_t n, uint32_t *order)
{
	uint32_t *at = lt_calloc((size_t)n + 1, sizeof *at), *to = lt_malloc((p->n ? p->n : 1) * sizeof *to);
	uint32_t *inner = lt_calloc(n, sizeof *inner), next = 0;
	uint8_t *taken = lt_calloc(n, 1);
	struct heap h = { lt_malloc((size_t)n * sizeof *h.v), 0 };
	int rc = -1;

	if (!at || !to || !inner || !taken || !h.v) {
		lt_nomem("sorting EH clauses");
		goto done;
	}
	/* Each a's outer clauses, in the order found. */
	for (size_t k = 0; k < p->n; k++) {
		at[p->v[k].a + 1]++;
		inner[p->v[k].c]++;
	}
	for (uint32_t a = 0; a < n; a++)
		at[a + 1] += at[a];
	for (size_t k = 0; k < p->n; k++)
		to[at[p->v[k].a]++] = p->v[k].c;
	for (uint32_t a = n; a > 0; a--)
		at[a] = at[a - 1];
	at[0] = 0;
	for (uint32_t c = 0; c < n; c++)
		if (inner[c] == 0)
			heap_push(&h, c);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t pick;
		if (h.n) {
			pick = heap_pop(&h);
		} else {
			while (taken[next])
				next++;
			pick = next;
		}
		taken[pick] = 1;
		order[k] = pick;
		for (uint32_t e = at[pick]; e < at[pick + 1]; e++)
			if (!taken[to[e]] && --inner[to[e]] == 0)
				heap_push(&h, to[e]);
	}
	rc = 0;
done:
	free(at);
	free(to);
	free(inner);
	free(taken);
	free(h.v);
	return rc;
}

int il_eh_sort(const struct il_span *sp, uint32_t n, uint32_t *order)
{
	struct pairs p = { 0 };
	int rc = pairs_nested(sp, n, &p);

	if (rc > 0)
		rc = pairs_tangled(sp, n, &p);
	if (rc == 0)
		rc = order_pairs(&p, n, order);
	free(p.v);
	return rc;
}
