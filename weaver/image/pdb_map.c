/* pdb_map.c - old -> new IL offset maps of rewritten method bodies, for the debug symbols. */
#include "pdb_map.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdlib.h>
#include <string.h>

/* An empty map of n instructions and nkept kept ones. */
static struct pdb_map *map_new(uint32_t n, uint32_t nkept)
{
	struct pdb_map *m = lt_calloc(1, sizeof *m);
	size_t cells = (size_t)(n ? n : 1) * 2 + (size_t)(nkept ? nkept : 1) * 2;
	uint32_t *all = lt_malloc(cells * sizeof *all);

	if (!m || !all) {
		free(m);
		free(all);
		lt_nomem("an offset map of %u instructions", n);
		return NULL;
	}
	/* One allocation: old_off | new_off | kept_old | kept_new. */
	m->old_off = all;
	m->new_off = all + (n ? n : 1);
	m->kept_old = m->new_off + (n ? n : 1);
	m->kept_new = m->kept_old + (nkept ? nkept : 1);
	m->n = n;
	m->nkept = nkept;
	return m;
}

void pdb_map_free(struct pdb_map *m)
{
	if (!m)
		return;
	free(m->old_off);
	free(m);
}

struct pair {
	uint32_t old, new;
};

static int pair_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	return x->old < y->old ? -1 : x->old > y->old;
}

/* Fill kept_old/kept_new from old_off/new_off, sorted by input offset; the
 * input offsets must be distinct and below old_size. */
static int index_kept(struct pdb_map *m)
{
	struct pair *p = lt_malloc((size_t)(m->nkept ? m->nkept : 1) * sizeof *p);
	uint32_t i, k = 0;
	int sorted = 1;

	if (!p)
		return lt_nomem("an offset map");
	for (i = 0; i < m->n; i++) {
		if (m->old_off[i] == IL_NO_OFFSET)
			continue;
		p[k] = (struct pair){ m->old_off[i], m->new_off[i] };
		if (k > 0 && p[k].old <= p[k - 1].old)
			sorted = 0;
		k++;
	}
	/* Editing keeps instructions in order; qsort only for a body whose
	 * instructions were moved around. */
	if (!sorted)
		qsort(p, k, sizeof *p, pair_cmp);
	for (i = 0; i < k; i++) {
		if ((i > 0 && p[i].old == p[i - 1].old) || p[i].old >= m->old_size) {
			uint32_t bad = p[i].old;
			free(p);
			return lt_error_set(LT_E_BODY, "offset map: input offset 0x%x %s", bad,
					    bad >= m->old_size ? "passes the input code" : "claimed twice");
		}
		m->kept_old[i] = p[i].old;
		m->kept_new[i] = p[i].new;
	}
	free(p);
	return 0;
}

/* The end of building map m: index it and give it to *out, or free it. */
static int finish(struct pdb_map *m, struct pdb_map **out)
{
	if (index_kept(m) < 0) {
		pdb_map_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

int pdb_map_from_body(const struct il_body *b, struct pdb_map **out)
{
	struct pdb_map *m;
	uint32_t i, nkept = 0;

	for (i = 0; i < b->n; i++)
		nkept += b->ins[i].orig_offset != IL_NO_OFFSET;
	if (!(m = map_new(b->n, nkept)))
		return -1;
	m->old_size = b->orig_code_size;
	m->new_size = b->code_size;
	for (i = 0; i < b->n; i++) {
		m->old_off[i] = b->ins[i].orig_offset;
		m->new_off[i] = b->ins[i].offset;
	}
	return finish(m, out);
}

/* The first index of the ascending a[0..n) whose value is >= v, or n. */
static uint32_t lower_bound(const uint32_t *a, uint32_t n, uint32_t v)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Index in first->new_off (strictly increasing) of offset `off`, or n. */
static uint32_t find_new(const struct pdb_map *m, uint32_t off)
{
	uint32_t i = lower_bound(m->new_off, m->n, off);

	return i < m->n && m->new_off[i] == off ? i : m->n;
}

int pdb_map_compose(const struct pdb_map *first, const struct pdb_map *second, struct pdb_map **out)
{
	struct pdb_map *m;
	uint32_t i, nkept = 0, *old;

	if (second->old_size != first->new_size)
		return lt_error_set(LT_E_BODY, "offset maps: the second rewrite read 0x%x bytes of code, the first wrote 0x%x",
				    second->old_size, first->new_size);
	old = lt_malloc((size_t)(second->n ? second->n : 1) * sizeof *old);
	if (!old)
		return lt_nomem("an offset map");
	for (i = 0; i < second->n; i++) {
		uint32_t j = second->old_off[i] == IL_NO_OFFSET ? first->n : find_new(first, second->old_off[i]);
		old[i] = j < first->n ? first->old_off[j] : IL_NO_OFFSET;
		nkept += old[i] != IL_NO_OFFSET;
	}
	if (!(m = map_new(second->n, nkept))) {
		free(old);
		return -1;
	}
	m->old_size = first->old_size;
	m->new_size = second->new_size;
	memcpy(m->old_off, old, (size_t)second->n * sizeof *old);
	memcpy(m->new_off, second->new_off, (size_t)second->n * sizeof *old);
	free(old);
	return finish(m, out);
}

int pdb_map_offset(const struct pdb_map *m, uint32_t old, uint32_t *out)
{
	uint32_t k;

	if (old > m->old_size)
		return lt_error_set(LT_E_PDB, "IL offset 0x%x passes the method's 0x%x bytes of code", old, m->old_size);
	k = lower_bound(m->kept_old, m->nkept, old);
	*out = k < m->nkept ? m->kept_new[k] : m->new_size;
	return 0;
}

int pdb_map_is_kept(const struct pdb_map *m, uint32_t old)
{
	uint32_t k = lower_bound(m->kept_old, m->nkept, old);
	return k < m->nkept && m->kept_old[k] == old;
}
