/* lt_hash.c - SHA-1, SHA-2 and MD5 digests through Mbed TLS's generic message
 * digest layer (mbedtls/md.h), which is the same in Mbed TLS 2.28 and 3.x; SHA-256
 * by the x86-64 SHA instructions where the CPU has them (Mbed TLS 2.28 has no such
 * path: hashing a PDB and its sources took a third of a weave's CPU time). */
#include "lt_hash.h"

#include <stdlib.h>
#include <string.h>

#include <mbedtls/md.h>

#include "lt_error.h"
#include "lt_mem.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LT_SHA_NI 1
#include <cpuid.h>
#include <immintrin.h>
#endif

struct lt_hash {
	mbedtls_md_context_t ctx; /* the digest, unless by_cpu */
	int by_cpu;               /* SHA-256 by the CPU's SHA instructions: the fields below hold it */
	uint32_t state[8];        /* FIPS 180-4 5.3.3 H0..H7, then the hash so far */
	uint8_t block[64];        /* an incomplete block's bytes */
	size_t used;              /* bytes in block */
	uint64_t bytes;           /* the message's length so far */
};

#ifdef LT_SHA_NI
/* Whether the CPU has the SHA extensions and the SSSE3 and SSE4.1 shuffles
 * they are used with (CPUID leaf 7 EBX bit 29; leaf 1 ECX bits 9 and 19). */
static int sha_cpu(void)
{
	static int known, has;
	unsigned a, b, c, d;

	if (!known) {
		has = __get_cpuid(1, &a, &b, &c, &d) && (c >> 9 & 1) && (c >> 19 & 1) &&
		      __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 29 & 1);
		known = 1;
	}
	return has;
}

/* FIPS 180-4 4.2.2: the 64 SHA-256 round constants. */
static const uint32_t sha256_k[64] __attribute__((aligned(16))) = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* FIPS 180-4 6.2.2 over n 64-byte blocks at p.  SHA256RNDS2 does two rounds on
 * the working variables held as ABEF and CDGH (highest lane first), with
 * W[t] + K[t] of both rounds in the low half of its third operand; SHA256MSG1
 * and SHA256MSG2 compute the schedule four words at a time. */
__attribute__((target("sha,sse4.1,ssse3"))) static void sha256_blocks(uint32_t state[8], const uint8_t *p, size_t n)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i dcba = _mm_loadu_si128((const __m128i *)&state[0]), hgfe = _mm_loadu_si128((const __m128i *)&state[4]);
	__m128i badc = _mm_shuffle_epi32(dcba, 0xB1), efgh = _mm_shuffle_epi32(hgfe, 0x1B);
	__m128i abef = _mm_alignr_epi8(badc, efgh, 8), cdgh = _mm_blend_epi16(efgh, badc, 0xF0);

	for (; n > 0; n--, p += 64) {
		__m128i w[4], abef0 = abef, cdgh0 = cdgh;
		for (int g = 0; g < 16; g++) {
			__m128i wk;
			if (g < 4)
				w[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), bswap);
			else /* W[t-16] + s0(W[t-15]) + W[t-7], then + s1(W[t-2]) */
				w[g % 4] = _mm_sha256msg2_epu32(
					_mm_add_epi32(_mm_sha256msg1_epu32(w[g % 4], w[(g + 1) % 4]),
						      _mm_alignr_epi8(w[(g + 3) % 4], w[(g + 2) % 4], 4)),
					w[(g + 3) % 4]);
			wk = _mm_add_epi32(w[g % 4], _mm_load_si128((const __m128i *)&sha256_k[4 * g]));
			cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk); /* two rounds: the new ABEF; the old is CDGH */
			abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
		}
		abef = _mm_add_epi32(abef, abef0);
		cdgh = _mm_add_epi32(cdgh, cdgh0);
	}
	badc = _mm_shuffle_epi32(abef, 0x1B);  /* lanes A B E F */
	cdgh = _mm_shuffle_epi32(cdgh, 0xB1);  /* lanes G H C D */
	_mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(badc, cdgh, 0xF0));
	_mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(cdgh, badc, 8));
}
#else
static int sha_cpu(void)
{
	return 0;
}

static void sha256_blocks(uint32_t state[8], const uint8_t *p, size_t n)
{
	(void)state, (void)p, (void)n; /* never called: sha_cpu() is 0 */
}
#endif

/* Add len bytes to a SHA-256 by the CPU. */
static void by_cpu_update(struct lt_hash *h, const uint8_t *p, size_t len)
{
	h->bytes += len;
	if (h->used) {
		size_t take = len < 64 - h->used ? len : 64 - h->used;
		memcpy(h->block + h->used, p, take);
		h->used += take;
		p += take;
		len -= take;
		if (h->used < 64)
			return;
		sha256_blocks(h->state, h->block, 1);
		h->used = 0;
	}
	sha256_blocks(h->state, p, len / 64);
	memcpy(h->block, p + len / 64 * 64, len % 64);
	h->used = len % 64;
}

/* FIPS 180-4 5.1.1: a 1 bit, zeros, the length in bits (64 bits, big-endian), to a
 * whole block; then the hash, big-endian. */
static void by_cpu_final(struct lt_hash *h, uint8_t out[32])
{
	uint64_t bits = h->bytes * 8;

	h->block[h->used++] = 0x80;
	if (h->used > 56) {
		memset(h->block + h->used, 0, 64 - h->used);
		sha256_blocks(h->state, h->block, 1);
		h->used = 0;
	}
	memset(h->block + h->used, 0, 56 - h->used);
	for (int k = 0; k < 8; k++)
		h->block[56 + k] = (uint8_t)(bits >> (56 - 8 * k));
	sha256_blocks(h->state, h->block, 1);
	for (int k = 0; k < 32; k++)
		out[k] = (uint8_t)(h->state[k / 4] >> (24 - 8 * (k % 4)));
}

static const struct {
	const char *name;
	mbedtls_md_type_t type;
	size_t size;
} algs[] = {
	[LT_HASH_SHA1] = { "SHA1", MBEDTLS_MD_SHA1, 20 },
	[LT_HASH_SHA256] = { "SHA256", MBEDTLS_MD_SHA256, 32 },
	[LT_HASH_SHA384] = { "SHA384", MBEDTLS_MD_SHA384, 48 },
	[LT_HASH_SHA512] = { "SHA512", MBEDTLS_MD_SHA512, 64 },
	[LT_HASH_MD5] = { "MD5", MBEDTLS_MD_MD5, 16 },
};

size_t lt_hash_size(enum lt_hash_alg alg)
{
	return algs[alg].size;
}

int lt_hash_by_name(const char *name, enum lt_hash_alg *out)
{
	/* SHA-1 and MD5 are no PdbChecksum algorithms: SHA256 to SHA512 are. */
	for (size_t a = LT_HASH_SHA256; a <= LT_HASH_SHA512; a++)
		if (!strcmp(name, algs[a].name)) {
			*out = (enum lt_hash_alg)a;
			return 0;
		}
	return lt_error_set(LT_E_PDB, "PdbChecksum: unknown hash algorithm \"%.32s\"", name);
}

int lt_hash_new(struct lt_hash **out, enum lt_hash_alg alg)
{
	struct lt_hash *h = lt_malloc(sizeof *h);

	*out = NULL;
	if (!h)
		return lt_nomem("a %s digest", algs[alg].name);
	mbedtls_md_init(&h->ctx);
	h->by_cpu = alg == LT_HASH_SHA256 && sha_cpu();
	if (h->by_cpu) {
		/* FIPS 180-4 5.3.3 */
		static const uint32_t h0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
						0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
		memcpy(h->state, h0, sizeof h0);
		h->used = 0;
		h->bytes = 0;
		*out = h;
		return 0;
	}
	if (mbedtls_md_setup(&h->ctx, mbedtls_md_info_from_type(algs[alg].type), 0) != 0 ||
	    mbedtls_md_starts(&h->ctx) != 0) {
		lt_hash_free(h);
		return lt_nomem("a %s digest", algs[alg].name);
	}
	*out = h;
	return 0;
}

int lt_hash_update(struct lt_hash *h, const void *data, size_t len)
{
	if (h->by_cpu) {
		if (len)
			by_cpu_update(h, data, len);
		return 0;
	}
	if (len && mbedtls_md_update(&h->ctx, data, len) != 0)
		return lt_error_set(LT_E_NOMEM, "digest update failed");
	return 0;
}

int lt_hash_final(struct lt_hash *h, uint8_t out[LT_HASH_MAX])
{
	if (h->by_cpu) {
		by_cpu_final(h, out);
		return 0;
	}
	if (mbedtls_md_finish(&h->ctx, out) != 0)
		return lt_error_set(LT_E_NOMEM, "digest finish failed");
	return 0;
}

void lt_hash_free(struct lt_hash *h)
{
	if (!h)
		return;
	mbedtls_md_free(&h->ctx);
	free(h);
}

int lt_hash_buf(enum lt_hash_alg alg, const void *data, size_t len, uint8_t out[LT_HASH_MAX])
{
	struct lt_hash *h;
	int rc;

	if (lt_hash_new(&h, alg) < 0)
		return -1;
	rc = lt_hash_update(h, data, len) < 0 || lt_hash_final(h, out) < 0 ? -1 : 0;
	lt_hash_free(h);
	return rc;
}
