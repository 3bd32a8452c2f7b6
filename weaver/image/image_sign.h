/* image_sign.h - strong names (ECMA-335 II.6.2.1.3, II.25.3.3): how an
 * input is signed, and signing the bytes of a laid-out image again. */
#ifndef IMAGE_SIGN_H
#define IMAGE_SIGN_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "lt_buf.h"
#include "lt_hash.h"
#include "lt_rsa.h"

/* How an assembly is strong-named. */
enum img_sn_kind {
	IMG_SN_NONE,    /* no public key, or no StrongNameSignature directory */
	IMG_SN_DELAY,   /* DelaySign: room for a signature, StrongNameSigned flag clear */
	IMG_SN_PUBLIC,  /* PublicSign: the flag set, the signature all zeros */
	IMG_SN_SIGNED,  /* signed with the private key */
};

struct img_sn {
	enum img_sn_kind kind;
	const uint8_t *public_key; /* the Assembly row's PublicKey blob (borrowed), NULL for none */
	uint32_t public_key_len;
	enum lt_hash_alg alg;      /* the signature's digest: the public key blob's HashAlgID
				    * (CALG_SHA1, _SHA_256, _SHA_384, _SHA_512), SHA-1 otherwise */
};

/* How the loaded input img is strong-named, into *out: the Assembly row's
 * PublicKey (II.22.2), the CLI header's StrongNameSignature directory and
 * StrongNameSigned flag (II.25.3.3), and whether the signature's bytes are
 * all zeros.  Returns 0, or -1 with LT_E_METADATA (a bad PublicKey index)
 * or LT_E_NOT_PE (a StrongNameSignature directory outside the sections). */
int img_strong_name(const struct img *img, struct img_sn *out);

/* Sign the PE image image[0..len) in place with `key`: the digest `alg` of
 * the bytes the runtimes hash for a strong name (Roslyn, .NET Framework,
 * Mono's sn alike: the headers through the section table with CheckSum and
 * the Certificate Table directory entry taken as zeros, then each
 * section's raw data in section-table order but the StrongNameSignature
 * blob), signed with RSASSA-PKCS1-v1_5 and stored reversed (little-endian,
 * as CryptoAPI keeps numbers) in that blob; then the CheckSum set again
 * when it was not 0.  Returns 0, or -1 with LT_E_NOT_PE (headers the PE
 * reader refuses), LT_E_KEY (the blob is not the key's signature size),
 * the errors of lt_rsa_sign, LT_E_NOMEM. */
int img_strong_name_sign(uint8_t *image, size_t len, const struct lt_rsa_key *key, enum lt_hash_alg alg);

#endif
