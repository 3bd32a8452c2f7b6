/* pdb_map.h - old -> new IL offset maps of rewritten method bodies, kept for
 * the debug symbols (sequence points, local scopes, async stepping offsets).
 *
 * A map is taken from an il_body right after il_encode: every instruction of
 * the new body with the offset it was decoded at in the input body (or
 * IL_NO_OFFSET for inserted code) and its offset in the new body.  Offsets
 * are bytes from the start of the IL code (II.25.4.1: after the header). */
#ifndef PDB_MAP_H
#define PDB_MAP_H

#include <stdint.h>

#include "il_body.h"

struct pdb_map {
	uint32_t old_size;  /* bytes of IL code of the input body */
	uint32_t new_size;  /* bytes of IL code of the new body */
	/* The new body's instructions in code order. */
	uint32_t n;
	uint32_t *old_off;  /* input offset, or IL_NO_OFFSET for inserted code */
	uint32_t *new_off;  /* offset in the new body (strictly increasing) */
	/* The kept instructions (old_off != IL_NO_OFFSET), by input offset. */
	uint32_t nkept;
	uint32_t *kept_old; /* strictly increasing */
	uint32_t *kept_new;
};

/* The map of b as last encoded by il_encode (b->ins[].orig_offset and
 * .offset, b->orig_code_size, b->code_size).  Returns 0 with *out (free with
 * pdb_map_free), or -1: LT_E_NOMEM; LT_E_BODY when two instructions claim
 * the same input offset or an input offset passes orig_code_size (an
 * il_body not produced by il_decode and il_insert). */
int pdb_map_from_body(const struct il_body *b, struct pdb_map **out);

/* The map of two rewrites in a row: `first` maps the input to a body that
 * was decoded again, edited and encoded with map `second`.  Code inserted by
 * either is inserted in the result.  Returns 0 with *out, or -1 with
 * LT_E_NOMEM, or LT_E_BODY when second->old_size is not first->new_size. */
int pdb_map_compose(const struct pdb_map *first, const struct pdb_map *second, struct pdb_map **out);

/* The new offset of input offset `old`: a kept instruction's new offset;
 * old_size gives new_size (the end of a scope); any other offset inside the
 * input code (an instruction that was removed) gives the new offset of the
 * first kept instruction decoded after it, or new_size when none was.
 * Returns 0 with *out, or -1 with LT_E_PDB when old > old_size. */
int pdb_map_offset(const struct pdb_map *m, uint32_t old, uint32_t *out);

/* Whether input offset `old` is that of a kept instruction. */
int pdb_map_is_kept(const struct pdb_map *m, uint32_t old);

/* Release a map.  NULL is a no-op. */
void pdb_map_free(struct pdb_map *m);

#endif
