/* lt_set.c - open-addressing set of ids with linear probing (see lt_set.h). */
#include "lt_set.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdlib.h>

#define LT_SET_MAX_CAP (1u << 31)

uint32_t lt_set_hash(uint32_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 16777619u;
	return h;
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
