/* image_sign.c - strong names: how an input is signed, and signing a laid-out image again (II.6.2.1.3). */
#include "image_sign.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "pe_file.h"

#include <stdlib.h>
#include <string.h>

/* CryptoAPI ALG_IDs of the digests (wincrypt.h). */
#define CALG_SHA1 0x8004u
#define CALG_SHA_256 0x800Cu
#define CALG_SHA_384 0x800Du
#define CALG_SHA_512 0x800Eu

/* PE32 and PE32+ put the data directories at these optional-header offsets. */
#define DIRS_PE32 96
#define DIRS_PE32PLUS 112

static enum lt_hash_alg alg_of(const uint8_t *key, uint32_t len)
{
	/* The strong-name public key blob: SigAlgID, then HashAlgID (II.6.2.1.3). */
	uint32_t id = len >= 8 ? (uint32_t)key[4] | (uint32_t)key[5] << 8 | (uint32_t)key[6] << 16 | (uint32_t)key[7] << 24 : 0;

	switch (id) {
	case CALG_SHA_256: return LT_HASH_SHA256;
	case CALG_SHA_384: return LT_HASH_SHA384;
	case CALG_SHA_512: return LT_HASH_SHA512;
	default: return LT_HASH_SHA1; /* CALG_SHA1, and what the runtimes take for others */
	}
}

int img_strong_name(const struct img *img, struct img_sn *out)
{
	const struct md_image *md = &img->md;
	const struct pe_dir *sig = &img->pe.cli.strong_name;
	uint32_t off, i;

	memset(out, 0, sizeof *out);
	out->alg = LT_HASH_SHA1;
	if (md_rows(md, MD_ASSEMBLY) == 0)
		return 0;
	if (md_blob(md, md_get(md, MD_ASSEMBLY, 1, MD_ASSEMBLY_PUBLICKEY), &out->public_key, &out->public_key_len) < 0)
		return lt_error_prefix("Assembly row 1: PublicKey: ");
	if (out->public_key_len == 0) {
		out->public_key = NULL;
		return 0;
	}
	out->alg = alg_of(out->public_key, out->public_key_len);
	if (sig->rva == 0 || sig->size == 0)
		return 0;
	if (pe_rva_to_offset(&img->pe, sig->rva, sig->size, &off, LT_E_NOT_PE, "StrongNameSignature") < 0)
		return -1;
	if (!(img->pe.cli.flags & PE_COMIMAGE_STRONGNAMESIGNED)) {
		out->kind = IMG_SN_DELAY;
		return 0;
	}
	out->kind = IMG_SN_PUBLIC;
	for (i = 0; i < sig->size; i++)
		if (img->file[off + i]) {
			out->kind = IMG_SN_SIGNED;
			break;
		}
	return 0;
}

/* Hash [from, to) of image, less the part that overlaps [skip, skip+skip_len). */
static int hash_range(struct lt_hash *h, const uint8_t *image, uint64_t from, uint64_t to, uint64_t skip,
		      uint64_t skip_len)
{
	if (skip >= to || skip + skip_len <= from)
		return lt_hash_update(h, image + from, to - from);
	if (skip > from && lt_hash_update(h, image + from, skip - from) < 0)
		return -1;
	return skip + skip_len < to ? lt_hash_update(h, image + skip + skip_len, to - (skip + skip_len)) : 0;
}

/* The strong-name digest of image (see img_strong_name_sign); sig_off and
 * sig_len locate the signature blob. */
static int digest(const struct pe_file *pe, const uint8_t *image, uint32_t sig_off, uint32_t sig_len,
		  enum lt_hash_alg alg, uint8_t out[LT_HASH_MAX])
{
	static const uint8_t zeros[8];
	uint32_t checksum = pe->opt_offset + PE_OPT_CHECKSUM;
	uint32_t cert = pe->opt_offset + (pe->pe32plus ? DIRS_PE32PLUS : DIRS_PE32) + 8 * PE_DIR_CERTIFICATE;
	uint32_t headers = pe->sections_offset + 40u * pe->nsections;
	struct lt_hash *h;
	int rc;

	if (lt_hash_new(&h, alg) < 0)
		return -1;
	/* Headers: CheckSum and the Certificate Table entry as zeros (they
	 * change when a file is signed with Authenticode or checksummed). */
	rc = lt_hash_update(h, image, checksum) < 0 || lt_hash_update(h, zeros, 4) < 0 ||
	     lt_hash_update(h, image + checksum + 4, cert - (checksum + 4)) < 0 || lt_hash_update(h, zeros, 8) < 0 ||
	     lt_hash_update(h, image + cert + 8, headers - (cert + 8)) < 0 ? -1 : 0;
	for (uint16_t s = 0; s < pe->nsections && rc == 0; s++)
		rc = hash_range(h, image, pe->sections[s].raw_ptr, (uint64_t)pe->sections[s].raw_ptr + pe->sections[s].raw_size,
				sig_off, sig_len);
	if (rc == 0)
		rc = lt_hash_final(h, out);
	lt_hash_free(h);
	return rc;
}

int img_strong_name_sign(uint8_t *image, size_t len, const struct lt_rsa_key *key, enum lt_hash_alg alg)
{
	struct pe_file pe;
	uint8_t hash[LT_HASH_MAX], *sig = NULL;
	uint32_t sig_off, sig_len, checksum;
	struct pe_checksum sum;
	int rc = -1;

	if (pe_parse(&pe, image, len) < 0)
		return -1;
	sig_len = pe.cli.strong_name.size;
	if (pe.cli.strong_name.rva == 0 ||
	    pe_rva_to_offset(&pe, pe.cli.strong_name.rva, sig_len, &sig_off, LT_E_NOT_PE, "StrongNameSignature") < 0)
		goto done;
	if (sig_len != lt_rsa_size(key)) {
		lt_error_set(LT_E_KEY, "the StrongNameSignature blob has %u bytes, the key signs %zu", sig_len, lt_rsa_size(key));
		goto done;
	}
	if (!(sig = lt_malloc(sig_len))) {
		lt_nomem(NULL);
		goto done;
	}
	if (digest(&pe, image, sig_off, sig_len, alg, hash) < 0 || lt_rsa_sign(key, alg, hash, sig) < 0)
		goto done;
	for (uint32_t i = 0; i < sig_len; i++)
		image[sig_off + i] = sig[sig_len - 1 - i];
	if (pe.checksum) {
		checksum = pe.opt_offset + PE_OPT_CHECKSUM;
		pe_checksum_init(&sum, checksum);
		pe_checksum_add(&sum, image, len);
		lt_put32(image + checksum, pe_checksum_end(&sum));
	}
	rc = 0;
done:
	free(sig);
	pe_free(&pe);
	return rc;
}
