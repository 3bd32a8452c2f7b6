/* lt_rsa.c - strong-name keys from .snk blobs and PKCS#1 v1.5 signatures,
 * on Mbed TLS's RSA (mbedtls/rsa.h, 2.28). */
#include "lt_rsa.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdlib.h>
#include <string.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/rsa.h>

/* CryptoAPI blob types and the RSA magics (wincrypt.h: PRIVATEKEYBLOB,
 * PUBLICKEYBLOB, RSAPUBKEY.magic). */
#define BLOB_PRIVATE 0x07
#define BLOB_PUBLIC 0x06
#define MAGIC_RSA1 0x31415352u /* "RSA1": public */
#define MAGIC_RSA2 0x32415352u /* "RSA2": private */
/* A strong-name public key blob: SigAlgID, HashAlgID, cbPublicKey (II.6.2.1.3). */
#define SN_HEADER 12
/* BLOBHEADER (8 bytes) + RSAPUBKEY (12 bytes). */
#define CAPI_HEADER 20
/* Largest key read: 16384 bits. */
#define MAX_BITS 16384

struct lt_rsa_key {
	mbedtls_rsa_context rsa;
	uint32_t bits, exponent;
	uint8_t *modulus; /* little-endian, bits/8 bytes, as the blobs hold it */
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* dst[0..n) = src[0..n) reversed: CryptoAPI's little-endian numbers to Mbed TLS's big-endian. */
static void reversed(uint8_t *dst, const uint8_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = src[n - 1 - i];
}

int lt_rsa_from_snk(struct lt_rsa_key **out, const uint8_t *blob, size_t len)
{
	struct lt_rsa_key *k;
	uint32_t bits, magic;
	size_t half, full, need;
	uint8_t *be, e[4];
	int rc;

	*out = NULL;
	if (len >= SN_HEADER + CAPI_HEADER && blob[SN_HEADER] == BLOB_PUBLIC)
		return lt_error_set(LT_E_KEY, "a public key only (a PublicSign or DelaySign key): it cannot sign");
	if (len < CAPI_HEADER)
		return lt_error_set(LT_E_KEY, "%zu bytes: too short for a key blob (PRIVATEKEYBLOB)", len);
	if (blob[0] == BLOB_PUBLIC)
		return lt_error_set(LT_E_KEY, "a PUBLICKEYBLOB: a public key only, it cannot sign");
	magic = le32(blob + 8);
	bits = le32(blob + 12);
	if (blob[0] != BLOB_PRIVATE || blob[1] != 2 || magic != MAGIC_RSA2)
		return lt_error_set(LT_E_KEY, "not an RSA PRIVATEKEYBLOB (bType %u, bVersion %u, magic 0x%08x)", blob[0], blob[1],
				    magic);
	if (bits < 384 || bits > MAX_BITS || bits % 16)
		return lt_error_set(LT_E_KEY, "RSA key of %u bits: not one LockTime signs with", bits);
	full = bits / 8;
	half = bits / 16;
	/* modulus, prime1, prime2, exponent1, exponent2, coefficient, privateExponent */
	need = CAPI_HEADER + full + 5 * half + full;
	if (len < need)
		return lt_error_set(LT_E_KEY, "%zu bytes: a %u-bit PRIVATEKEYBLOB has %zu", len, bits, need);
	k = lt_calloc(1, sizeof *k);
	be = lt_malloc(need);
	if (!k || !be || !(k->modulus = lt_malloc(full))) {
		free(be);
		lt_rsa_free(k);
		return lt_nomem(NULL);
	}
	mbedtls_rsa_init(&k->rsa, MBEDTLS_RSA_PKCS_V15, 0);
	k->bits = bits;
	k->exponent = le32(blob + 16);
	memcpy(k->modulus, blob + CAPI_HEADER, full);
	reversed(be, blob + CAPI_HEADER, full);                                      /* N */
	reversed(be + full, blob + CAPI_HEADER + full, half);                        /* P */
	reversed(be + full + half, blob + CAPI_HEADER + full + half, half);          /* Q */
	reversed(be + full + 2 * half, blob + CAPI_HEADER + full + 5 * half, full);  /* D */
	e[0] = (uint8_t)(k->exponent >> 24);
	e[1] = (uint8_t)(k->exponent >> 16);
	e[2] = (uint8_t)(k->exponent >> 8);
	e[3] = (uint8_t)k->exponent;
	rc = mbedtls_rsa_import_raw(&k->rsa, be, full, be + full, half, be + full + half, half, be + full + 2 * half, full,
				    e, 4);
	free(be);
	if (rc != 0 || mbedtls_rsa_complete(&k->rsa) != 0 || mbedtls_rsa_check_privkey(&k->rsa) != 0) {
		lt_rsa_free(k);
		return lt_error_set(LT_E_KEY, "the %u-bit RSA key is not consistent (Mbed TLS rejects it)", bits);
	}
	*out = k;
	return 0;
}

int lt_rsa_matches(const struct lt_rsa_key *key, const uint8_t *public_key, size_t len)
{
	const uint8_t *capi = public_key + SN_HEADER;
	size_t full = key->bits / 8;

	if (len < SN_HEADER + CAPI_HEADER + full || capi[0] != BLOB_PUBLIC || le32(capi + 8) != MAGIC_RSA1)
		return 0;
	return le32(capi + 12) == key->bits && le32(capi + 16) == key->exponent &&
	       memcmp(capi + CAPI_HEADER, key->modulus, full) == 0;
}

size_t lt_rsa_size(const struct lt_rsa_key *key)
{
	return key->bits / 8;
}

int lt_rsa_sign(const struct lt_rsa_key *key, enum lt_hash_alg alg, const uint8_t *digest, uint8_t *sig)
{
	static const mbedtls_md_type_t md[] = {
		[LT_HASH_SHA1] = MBEDTLS_MD_SHA1, [LT_HASH_SHA256] = MBEDTLS_MD_SHA256,
		[LT_HASH_SHA384] = MBEDTLS_MD_SHA384, [LT_HASH_SHA512] = MBEDTLS_MD_SHA512,
		[LT_HASH_MD5] = MBEDTLS_MD_MD5,
	};
	static const unsigned char personal[] = "LockTime strong name";
	mbedtls_entropy_context entropy;
	mbedtls_ctr_drbg_context drbg;
	int rc;

	/* The random numbers blind the private-key operation (timing side
	 * channels); PKCS#1 v1.5 signatures do not depend on them. */
	mbedtls_entropy_init(&entropy);
	mbedtls_ctr_drbg_init(&drbg);
	rc = mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy, personal, sizeof personal - 1);
	if (rc == 0)
		rc = mbedtls_rsa_pkcs1_sign((mbedtls_rsa_context *)&key->rsa, mbedtls_ctr_drbg_random, &drbg,
					    MBEDTLS_RSA_PRIVATE, md[alg], (unsigned)lt_hash_size(alg), digest, sig);
	mbedtls_ctr_drbg_free(&drbg);
	mbedtls_entropy_free(&entropy);
	if (rc != 0)
		return lt_error_set(LT_E_KEY,
				    "RSA signature failed (Mbed TLS error -0x%04x)", (unsigned)-rc);
	return 0;
}

void lt_rsa_free(struct lt_rsa_key *key)
{
	if (!key)
		return;
	mbedtls_rsa_free(&key->rsa);
	free(key->modulus);
	free(key);
}
