/* image_body.h - method bodies of an open assembly as instruction lists:
 * decode with the method's own facts, encode with stack effects taken from
 * the metadata, and add locals (II.24.2.6 StandAloneSig, II.23.2.6). */
#ifndef IMAGE_BODY_H
#define IMAGE_BODY_H

#include <stdint.h>

#include "il_body.h"
#include "image.h"

/* Stack effect of a call/callvirt/newobj/calli token in img (an
 * il_stack_effect_fn; ctx is the struct img *): MethodDef, MemberRef or
 * MethodSpec signatures for calls, the StandAloneSig for calli.
 * Returns 0, or -1 with LT_E_BODY (token out of range or of the wrong
 * table) or LT_E_SIGNATURE. */
int img_stack_effect(void *ctx, uint32_t token, enum il_op op, int *pops, int *pushes);

/* Decode the body of MethodDef `row` into *out, with returns_value set from
 * the method's signature.  A method without a body gives -1 with LT_E_BODY.
 * Returns 0 (free *out with il_body_free), or -1 (errors of img_method_body,
 * il_decode, sig_method_stack_effect, prefixed with the row). */
int img_decode_body(const struct img *img, uint32_t row, struct il_body *out);

/* Encode *b (il_encode with img_stack_effect) and make it the body of
 * MethodDef `row`, keeping the input -> new IL offset map of the row
 * (img->bodies[row - 1].map, pdb_map.h) for the debug symbols: when b was
 * decoded from a body an earlier img_encode_body wrote, the two maps are
 * chained; when no map can be made (pdb_map_from_body fails: instructions
 * claiming one input offset) the body is set without one, as
 * img_set_method_body does.  Returns 0, or -1 (errors of il_encode,
 * prefixed with the row; LT_E_NOMEM). */
int img_encode_body(struct img *img, uint32_t row, struct il_body *b);

/* Give b `n` more locals, whose types are the encoded Type signatures in
 * types[0..len) (II.23.2.12): a new StandAloneSig row holds the old locals
 * followed by the new ones (LocalVarSig rows may be shared between methods,
 * so none is edited in place), b->local_var_sig_tok points at it, and
 * *first gets the index of the first new local.  Sets InitLocals, as a
 * verifiable body needs it once locals exist.
 * Returns 0, or -1 (LT_E_SIGNATURE for a malformed old signature, LT_E_ENCODE
 * past 0xFFFE locals, LT_E_METADATA for a bad old token, LT_E_NOMEM). */
int img_add_locals(struct img *img, struct il_body *b, const uint8_t *types, uint32_t len, uint32_t n,
		   uint16_t *first);

#endif
