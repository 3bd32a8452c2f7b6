/* lt_hash.c - SHA-1, SHA-2 and MD5 digests through Mbed TLS's generic message
 * digest layer (mbedtls/md.h), which is the same in Mbed TLS 2.28 and 3.x. */
#include "lt_hash.h"

#include <stdlib.h>
#include <string.h>

#include <mbedtls/md.h>

#include "lt_error.h"
#include "lt_mem.h"

struct lt_hash {
	mbedtls_md_context_t ctx;
};

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
	if (len && mbedtls_md_update(&h->ctx, data, len) != 0)
		return lt_error_set(LT_E_NOMEM, "digest update failed");
	return 0;
}

int lt_hash_final(struct lt_hash *h, uint8_t out[LT_HASH_MAX])
{
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
