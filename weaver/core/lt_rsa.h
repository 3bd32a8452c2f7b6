/* lt_rsa.h - RSA strong-name keys (a .snk file: CryptoAPI PRIVATEKEYBLOB)
 * and PKCS#1 v1.5 signatures with them, on Mbed TLS. */
#ifndef LT_RSA_H
#define LT_RSA_H

#include <stddef.h>
#include <stdint.h>

#include "lt_hash.h"

/* An RSA key pair; opaque. */
struct lt_rsa_key;

/* Read a key pair from blob[0..len): a CryptoAPI PRIVATEKEYBLOB as `sn -k`
 * writes it (BLOBHEADER bType 7, bVersion 2, aiKeyAlg CALG_RSA_SIGN or
 * CALG_RSA_KEYX; RSAPUBKEY magic "RSA2", bitlen, pubexp; then modulus,
 * prime1, prime2, exponent1, exponent2, coefficient and privateExponent,
 * each little-endian, bitlen/8 or bitlen/16 bytes), and check it (Mbed TLS
 * mbedtls_rsa_check_privkey).  Returns 0 with *out (free with
 * lt_rsa_free), or -1 with LT_E_KEY naming what is wrong - a public key
 * only (PUBLICKEYBLOB, or the 12-byte-header public key that PublicSign
 * builds use), a bad header, a short blob, an inconsistent key - or
 * LT_E_NOMEM. */
int lt_rsa_from_snk(struct lt_rsa_key **out, const uint8_t *blob, size_t len);

/* Whether `key` is the key of a strong-name public key blob (ECMA-335
 * II.6.2.1.3: SigAlgID, HashAlgID, cbPublicKey, then a CryptoAPI
 * PUBLICKEYBLOB): same modulus and public exponent.  1 yes, 0 no (also
 * for a malformed blob). */
int lt_rsa_matches(const struct lt_rsa_key *key, const uint8_t *public_key, size_t len);

/* The size of the key's signatures (its modulus), in bytes. */
size_t lt_rsa_size(const struct lt_rsa_key *key);

/* Sign `digest` (lt_hash_size(alg) bytes, made with alg) with RSASSA-PKCS1-v1_5
 * (RFC 8017 8.2) into sig[0..lt_rsa_size(key)), big-endian as RFC 8017
 * gives it.  Returns 0, or -1 with LT_E_KEY (the key does not sign) or
 * LT_E_NOMEM. */
int lt_rsa_sign(const struct lt_rsa_key *key, enum lt_hash_alg alg, const uint8_t *digest, uint8_t *sig);

/* Release key.  NULL is a no-op. */
void lt_rsa_free(struct lt_rsa_key *key);

#endif
