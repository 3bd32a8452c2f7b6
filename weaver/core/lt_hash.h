/* lt_hash.h - message digests (SHA-1, SHA-2) for the PDB id, PdbChecksum, the
 * derived Mvid, public-key tokens and the sources' Document hashes, on Mbed
 * TLS (FIPS 180-4); MD5 (RFC 1321) for the names of Mono's key container
 * files. */
#ifndef LT_HASH_H
#define LT_HASH_H

#include <stddef.h>
#include <stdint.h>

/* The digests LockTime computes. */
enum lt_hash_alg {
	LT_HASH_SHA1,   /* 20 bytes: public-key tokens (II.6.3), derived GUIDs, strong names */
	LT_HASH_SHA256, /* 32 bytes: the PDB id and PdbChecksum (PE-COFF.md) */
	LT_HASH_SHA384, /* 48 bytes: PdbChecksum */
	LT_HASH_SHA512, /* 64 bytes: PdbChecksum */
	LT_HASH_MD5,    /* 16 bytes: Mono's key container file names (lt_mono_key.h); nothing is signed with it */
};

/* The longest digest, in bytes. */
#define LT_HASH_MAX 64

/* An incremental digest; opaque. */
struct lt_hash;

/* The digest size of alg in bytes (16 to LT_HASH_MAX). */
size_t lt_hash_size(enum lt_hash_alg alg);

/* The algorithm named by a PdbChecksum entry ("SHA256", "SHA384", "SHA512";
 * PE-COFF.md, "PDB Checksum Debug Directory Entry") into *out.  Returns 0,
 * or -1 with LT_E_PDB naming an unknown algorithm. */
int lt_hash_by_name(const char *name, enum lt_hash_alg *out);

/* Start a digest of alg in *out (release with lt_hash_free).  Returns 0, or
 * -1 with LT_E_NOMEM. */
int lt_hash_new(struct lt_hash **out, enum lt_hash_alg alg);

/* Add len bytes at data (NULL allowed when len is 0).  Returns 0, or -1
 * with LT_E_NOMEM when the digest cannot go on. */
int lt_hash_update(struct lt_hash *h, const void *data, size_t len);

/* Finish the digest into out[0..lt_hash_size)); h cannot be updated again.
 * Returns 0, or -1 with LT_E_NOMEM. */
int lt_hash_final(struct lt_hash *h, uint8_t out[LT_HASH_MAX]);

/* Release h.  NULL is a no-op. */
void lt_hash_free(struct lt_hash *h);

/* The digest of len bytes at data into out[0..lt_hash_size)).  Returns 0,
 * or -1 with LT_E_NOMEM. */
int lt_hash_buf(enum lt_hash_alg alg, const void *data, size_t len, uint8_t out[LT_HASH_MAX]);

#endif
