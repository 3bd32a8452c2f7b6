/* lt_set.h - the one hashed lookup of LockTime: an open-addressing set of
 * non-zero 32-bit ids (heap offsets + 1, table rows) whose keys live
 * elsewhere, found by a hash and an equality test the caller supplies.
 * md_heap.c deduplicates heap appends with it, md_find.c finds rows. */
#ifndef LT_SET_H
#define LT_SET_H

#include <stddef.h>
#include <stdint.h>

struct lt_set_slot {
	uint32_t id;   /* 0: empty */
	uint32_t hash; /* the id's key hash, kept so that growing needs no keys */
};

struct lt_set {
	struct lt_set_slot *slots; /* owned */
	uint32_t cap;              /* slots, a power of two (0 before the first add) */
	uint32_t used;
};

#define LT_SET_INIT { NULL, 0, 0 }
#define LT_SET_HASH_INIT 2166136261u

/* A hash of p[0..n) continued from h (start with LT_SET_HASH_INIT); a key hashed
 * in pieces must be hashed in the same pieces everywhere. */
uint32_t lt_set_hash(uint32_t h, const void *p, size_t n);

/* Whether id's key equals the one looked for (1 or 0); ctx is the caller's. */
typedef int (*lt_set_eq_fn)(const void *ctx, uint32_t id);

/* The first id added with `hash` for which eq(ctx, id) holds, or 0. */
uint32_t lt_set_find(const struct lt_set *s, uint32_t hash, lt_set_eq_fn eq, const void *ctx);

/* Make room for `n` ids in all without growing again (ids stay at most half
 * the slots).  Returns 0, or -1 with LT_E_NOMEM (LT_E_LIMIT past 2^30). */
int lt_set_reserve(struct lt_set *s, uint32_t n);

/* Add id (non-zero) with its key's hash; the caller has checked with
 * lt_set_find that no equal key is there, so the first one added stays the
 * one found.  Grows at half load.  Returns 0, or -1 as lt_set_reserve. */
int lt_set_add(struct lt_set *s, uint32_t hash, uint32_t id);

/* Release the slots; *s is empty (LT_SET_INIT) afterwards.  NULL is a no-op. */
void lt_set_free(struct lt_set *s);

#endif
