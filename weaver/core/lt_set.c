/* lt_set.c - open-addressing set of ids with linear probing (see lt_set.h). */
#include "lt_set.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdlib.h>
#include <string.h>

#define LT_SET_MAX_CAP (1u << 31)

/* Eight bytes a step (a byte at a time, as FNV-1a was, took 5% of a weave: every
 * entry of the input heaps is hashed once): each word xored in, multiplied by
 * 2^64 / the golden ratio and its high bits folded down; the tail word carries
 * the tail's length, and the last fold gives the low 32 bits, which pick the
 * slot, every input bit. */
uint32_t lt_set_hash(uint32_t h, const void *p, size_t n)
{
	const uint64_t k = 0x9E3779B97F4A7C15u;
	const uint8_t *b = p;
	uint64_t x = h, w;

	for (; n >= 8; n -= 8, b += 8) {
		memcpy(&w, b, 8);
		x = (x ^ w) * k;
		x ^= x >> 29;
	}
	w = (uint64_t)n << 56;
	for (size_t i = 0; i < n; i++)
		w |= (uint64_t)b[i] << (8 * i);
	x = (x ^ w) * k;
	return (uint32_t)(x ^ x >> 32);
}

uint32_t lt_set_find(const struct lt_set *s, uint32_t hash, lt_set_eq_fn eq, const void *ctx)
{
	uint32_t mask = s->cap - 1, i;

	if (!s->cap)
		return 0;
	for (i = hash & mask; s->slots[i].id; i = (i + 1) & mask)
		if (s->slots[i].hash == hash && eq(ctx, s->slots[i].id))
			return s->slots[i].id;
	return 0;
}

/* Put id in the first free slot of its probe sequence. */
static void place(struct lt_set_slot *slots, uint32_t cap, uint32_t hash, uint32_t id)
{
	uint32_t i;

	for (i = hash & (cap - 1); slots[i].id; i = (i + 1) & (cap - 1))
		;
	slots[i].id = id;
	slots[i].hash = hash;
}

int lt_set_reserve(struct lt_set *s, uint32_t n)
{
	struct lt_set_slot *slots;
	uint32_t cap = s->cap ? s->cap : 64;

	while (n > cap / 2) {
		if (cap >= LT_SET_MAX_CAP)
			return lt_error_set(LT_E_LIMIT, "lookup of more than %u entries", LT_SET_MAX_CAP / 2);
		cap *= 2;
	}
	if (cap == s->cap)
		return 0;
	if (!(slots = lt_calloc(cap, sizeof *slots)))
		return lt_nomem("a lookup of %u entries", n);
	/* Placed again from the kept hashes: no key is read. */
	for (uint32_t i = 0; i < s->cap; i++)
		if (s->slots[i].id)
			place(slots, cap, s->slots[i].hash, s->slots[i].id);
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	return 0;
}

int lt_set_add(struct lt_set *s, uint32_t hash, uint32_t id)
{
	if (s->used == UINT32_MAX || lt_set_reserve(s, s->used + 1) < 0)
		return -1;
	place(s->slots, s->cap, hash, id);
	s->used++;
	return 0;
}

void lt_set_free(struct lt_set *s)
{
	if (!s)
		return;
	free(s->slots);
	*s = (struct lt_set)LT_SET_INIT;
}
