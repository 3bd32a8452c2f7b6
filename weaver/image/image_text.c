/* image_text.c - the kept runs of the section that holds the CLI header
 * (see image_text.h): structures of known extent are kept as they are,
 * unknown bytes only when something points into them, everything else (the
 * old metadata root, old bodies, padding) is dropped. */
#include "image_text.h"
#include "lt_error.h"

#include <stdlib.h>
#include <string.h>

#define MERGE_GAP 16 /* also the alignment modulus kept for each run */

static int in_section(const struct text *t, uint32_t rva) { return rva >= t->lo && rva < t->hi; }

int text_keep(struct text *t, uint32_t rva, uint32_t len)
{
	if (!in_section(t, rva))
		return 0;
	if (len > t->hi - rva)
		len = t->hi - rva;
	/* Structures mostly come in address order (bodies): one that starts
	 * at or just after the last kept one extends it, which keeps the list
	 * short (text_plan would merge them anyway). */
	if (t->nspans) {
		struct text_span *last = &t->spans[t->nspans - 1];
		uint64_t end = (uint64_t)last->old + last->len;
		if (rva >= last->old && rva <= end + MERGE_GAP) {
			if ((uint64_t)rva + len > end)
				last->len = rva + len - last->old;
			return 0;
		}
	}
	if (lt_buf_put(&t->span_buf, &(struct text_span){ rva, len, 0 }, sizeof(struct text_span)) < 0)
		return -1;
	t->spans = (struct text_span *)(void *)t->span_buf.data;
	t->nspans++;
	return 0;
}

int text_point(struct text *t, uint32_t rva)
{
	if (!in_section(t, rva))
		return 0;
	if (lt_buf_put(&t->ptr_buf, &rva, sizeof rva) < 0)
		return -1;
	t->ptrs = (uint32_t *)(void *)t->ptr_buf.data;
	t->nptrs++;
	return 0;
}

static int by_old(const void *a, const void *b)
{
	const struct text_span *x = a, *y = b;
	return x->old < y->old ? -1 : x->old > y->old;
}

/* Sort the spans and merge those that overlap or lie closer than `gap`. */
static void merge(struct text *t, uint32_t gap)
{
	size_t i, n = 0;

	qsort(t->spans, t->nspans, sizeof *t->spans, by_old);
	for (i = 0; i < t->nspans; i++) {
		struct text_span *last = n ? &t->spans[n - 1] : NULL;
		uint64_t end = last ? (uint64_t)last->old + last->len : 0;
		if (last && t->spans[i].old <= end + gap) {
			uint64_t e = (uint64_t)t->spans[i].old + t->spans[i].len;
			if (e > end)
				last->len = (uint32_t)(e - last->old);
		} else {
			t->spans[n++] = t->spans[i];
		}
	}
	t->nspans = n;
	t->span_buf.len = n * sizeof *t->spans;
}

/* The index of the first span that starts after rva (spans sorted). */
static size_t after(const struct text *t, size_t n, uint32_t rva)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->spans[mid].old <= rva)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The kept span holding rva (its end counts: a pointer just past a run), or NULL. */
static const struct text_span *find(const struct text *t, uint32_t rva)
{
	size_t i = after(t, t->nspans, rva);

	if (i == 0 || rva > (uint64_t)t->spans[i - 1].old + t->spans[i - 1].len)
		return NULL;
	return &t->spans[i - 1];
}

int text_plan(struct text *t)
{
	size_t i, n;
	uint64_t at = 0;

	merge(t, 0);
	/* A pointer into unclaimed bytes keeps the whole run of them: from the
	 * end of the structure before it (or the dropped root) to the start of
	 * the one after it.  Spans kept here are not searched (n is fixed). */
	n = t->nspans;
	for (i = 0; i < t->nptrs; i++) {
		uint32_t p = t->ptrs[i], lo = t->lo, hi = t->hi;
		size_t k = after(t, n, p);

		if (k > 0 && p < (uint64_t)t->spans[k - 1].old + t->spans[k - 1].len)
			continue;
		if (p >= t->drop_lo && p < t->drop_hi)
			return lt_error_set(LT_E_LAYOUT, "RVA 0x%x points into the metadata root", p);
		if (k > 0)
			lo = t->spans[k - 1].old + t->spans[k - 1].len;
		if (k < n)
			hi = t->spans[k].old;
		if (t->drop_hi <= p && t->drop_hi > lo)
			lo = t->drop_hi;
		if (t->drop_lo > p && t->drop_lo < hi)
			hi = t->drop_lo;
		if (text_keep(t, lo, hi - lo) < 0)
			return -1;
	}
	merge(t, MERGE_GAP);
	for (i = 0; i < t->nspans; i++) {
		uint32_t want = (t->spans[i].old - t->lo) % MERGE_GAP;
		at += (want - at % MERGE_GAP + MERGE_GAP) % MERGE_GAP;
		t->spans[i].at = (uint32_t)at;
		at += t->spans[i].len;
		if (at > UINT32_MAX / 2)
			return lt_error_set(LT_E_LAYOUT, "image would pass 4 GiB");
	}
	t->kept_len = (uint32_t)at;
	return 0;
}

int text_map(const struct text *t, uint32_t rva, uint32_t *out, const char *what)
{
	const struct text_span *s;

	if (!in_section(t, rva)) {
		*out = rva;
		return 0;
	}
	if (!(s = find(t, rva)))
		return lt_error_set(LT_E_LAYOUT, "%s at RVA 0x%x is not in a kept part of its section", what, rva);
	*out = t->va + s->at + (rva - s->old);
	return 0;
}

void text_free(struct text *t)
{
	lt_buf_free(&t->span_buf);
	lt_buf_free(&t->ptr_buf);
	memset(t, 0, sizeof *t);
}
