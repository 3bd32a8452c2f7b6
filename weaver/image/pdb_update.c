/* pdb_update.c - an edited assembly's portable PDB and debug directory brought up to date together. */
#include "pdb_update.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "mdb.h"
#include "pdb_rewrite.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

void pdb_update_free(struct pdb_update *u)
{
	if (!u)
		return;
	free(u->path);
	lt_buf_free(&u->data);
	memset(u, 0, sizeof *u);
}

/* The Embedded Portable PDB entry data (PE-COFF.md): "MPDB", the
 * uncompressed size, then pdb[0..len) as raw Deflate (RFC 1951). */
static int embedded_data(const uint8_t *pdb, size_t len, struct lt_buf *out)
{
	z_stream zs;
	uLong bound;
	int zrc;

	memset(&zs, 0, sizeof zs);
	if (len > UINT_MAX / 2)
		return lt_error_set(LT_E_LIMIT, "PDB of %zu bytes too large to embed", len);
	if (deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return lt_nomem("zlib");
	bound = deflateBound(&zs, (uLong)len);
	if (lt_buf_u32(out, PDB_EMBEDDED_SIGNATURE) < 0 || lt_buf_u32(out, (uint32_t)len) < 0 ||
	    lt_buf_reserve(out, bound) < 0) {
		deflateEnd(&zs);
		return -1;
	}
	zs.next_in = (Bytef *)pdb;
	zs.avail_in = (uInt)len;
	zs.next_out = out->data + out->len;
	zs.avail_out = (uInt)bound;
	zrc = deflate(&zs, Z_FINISH);
	out->len += bound - zs.avail_out;
	deflateEnd(&zs);
	if (zrc != Z_STREAM_END)
		return lt_error_set(LT_E_NOMEM, "deflating the PDB failed (zlib %d)", zrc);
	return 0;
}

/* Point the CodeView entry at the PDB with id `id`: the GUID in its data,
 * the stamp as TimeDateStamp for a portable entry; with `name`, the file
 * name in its path (after the last separator) replaced too. */
static int set_codeview(struct img *img, uint32_t index, const uint8_t id[PDB_ID_SIZE], const char *name)
{
	const struct pe_debug_entry *e = &img->pe.debug[index];
	struct lt_buf data = LT_BUF_INIT;
	struct lt_cur c;
	size_t keep;
	int rc;

	/* pdb_find_embedded read the entry: the 24-byte header, then a NUL-terminated path. */
	if (pdb_entry_data(img, index, &c) < 0)
		return -1;
	keep = c.len;
	if (name) {
		keep = PDB_CV_HEADER;
		for (size_t i = PDB_CV_HEADER; i < c.len && c.data[i]; i++)
			if (c.data[i] == '/' || c.data[i] == '\\')
				keep = i + 1;
	}
	if (lt_buf_put(&data, c.data, keep) < 0 || (name && lt_buf_put(&data, name, strlen(name) + 1) < 0)) {
		lt_buf_free(&data);
		return -1;
	}
	memcpy(data.data + 4, id, 16);
	rc = img_set_debug_data(img, index, data.data, data.len,
				e->minor == PDB_CV_PORTABLE_MINOR ? lt_le32(id + 16) : e->timestamp);
	lt_buf_free(&data);
	return rc;
}

/* Every PdbChecksum entry with a known algorithm gets the checksum of pdb;
 * sha256 is its SHA256 checksum, already computed for the PDB id. */
static int set_checksums(struct img *img, const uint8_t *pdb, size_t len, size_t id_offset, const uint8_t sha256[32])
{
	for (uint32_t i = 0; i < img->pe.ndebug; i++) {
		uint8_t data[16 + 64], hash[64];
		const char *alg;
		size_t nl, hlen;
		struct lt_cur c;

		if (img->pe.debug[i].type != PE_DEBUG_PDBCHECKSUM || pdb_entry_data(img, i, &c) < 0)
			continue;
		/* AlgorithmName (NUL-terminated UTF-8), then the checksum. */
		alg = (const char *)c.data;
		nl = strnlen(alg, c.len < 16 ? c.len : 16);
		if (nl == c.len || nl == 16)
			continue;
		if (!strcmp(alg, "SHA256")) {
			memcpy(hash, sha256, 32);
			hlen = 32;
		} else if (pdb_checksum(pdb, len, id_offset, alg, hash, &hlen) < 0) {
			continue; /* an algorithm we do not know: left as it was */
		}
		if (c.len != nl + 1 + hlen)
			continue;
		memcpy(data, alg, nl + 1);
		memcpy(data + nl + 1, hash, hlen);
		if (img_set_debug_data(img, i, data, c.len, img->pe.debug[i].timestamp) < 0)
			return -1;
	}
	return 0;
}

/* A PDB that is not rewritten - not found, stale, or its rewrite failed -
 * may be one that matched the input (beside another copy of the assembly,
 * on a symbol server, put back later): its id would match the woven
 * assembly too, and its lines, for the input's IL offsets, would be wrong.
 * The CodeView entry gets the woven module's new Mvid as its GUID (the PDB
 * id is GUID and stamp: PortablePdb-Metadata.md "#Pdb stream"; a Windows
 * PDB is matched by GUID and Age) and every PdbChecksum entry a checksum of
 * zeros, which no PDB has, so that no PDB written before the weave matches.
 * Returns 1 when img had a CodeView entry to change, 0 when not, -1 with
 * LT_E_NOMEM. */
static int disown(struct img *img, const struct pdb_found *f)
{
	uint8_t id[PDB_ID_SIZE];

	if (f->codeview < 0)
		return 0;
	memcpy(id + 16, f->id + 16, 4);
	if (mdb_module_guid(img, id) < 0 || set_codeview(img, (uint32_t)f->codeview, id, NULL) < 0)
		goto fail;
	for (uint32_t i = 0; i < img->pe.ndebug; i++) {
		uint8_t data[16 + 64] = { 0 };
		struct lt_cur c;
		size_t nl;

		if (img->pe.debug[i].type != PE_DEBUG_PDBCHECKSUM || pdb_entry_data(img, i, &c) < 0)
			continue;
		/* AlgorithmName (NUL-terminated UTF-8), then the checksum. */
		nl = strnlen((const char *)c.data, c.len < 16 ? c.len : 16);
		if (nl == c.len || nl == 16 || c.len > sizeof data)
			continue;
		memcpy(data, c.data, nl + 1);
		if (img_set_debug_data(img, i, data, c.len, img->pe.debug[i].timestamp) < 0)
			goto fail;
	}
	return 1;
fail:
	if (lt_error_last()->code == LT_E_NOMEM)
		return -1;
	lt_error_clear(); /* symbols never fail a weave; renew_mvid read this Mvid already */
	return 0;
}

/* The rewrite proper, for a PDB found matching: 0, or -1 (error recorded). */
static int update(struct pdb_update *out, struct img *img, struct pdb_found *f, const char *cv_name)
{
	uint8_t id[PDB_ID_SIZE], sha256[32];
	size_t id_offset;
	struct lt_buf pdb = LT_BUF_INIT, entry = LT_BUF_INIT;
	int rc = -1;

	/* Mono's symbols: a file of their own, named by no debug entry. */
	if (f->source == PDB_MDB)
		return mdb_update(f->mdb, img, &out->data);
	if (pdb_rewrite(&f->md, img, &pdb, id, &id_offset, sha256) < 0)
		goto done;
	if (f->source == PDB_EMBEDDED &&
	    (embedded_data(pdb.data, pdb.len, &entry) < 0 ||
	     img_set_debug_data(img, (uint32_t)f->embedded, entry.data, entry.len, img->pe.debug[f->embedded].timestamp) < 0))
		goto done;
	if (set_codeview(img, (uint32_t)f->codeview, id, cv_name) < 0 ||
	    set_checksums(img, pdb.data, pdb.len, id_offset, sha256) < 0)
		goto done;
	if (f->source == PDB_FILE) {
		out->data = pdb;
		pdb = (struct lt_buf)LT_BUF_INIT;
	}
	rc = 0;
done:
	lt_buf_free(&pdb);
	lt_buf_free(&entry);
	return rc;
}

void pdb_update_stale(struct pdb_update *u, const struct pdb_found *f, const char *msg)
{
	u->stale = 1;
	snprintf(u->why, sizeof u->why, "%.120s: %.270s", f->source == PDB_EMBEDDED ? "embedded PDB" : f->path, msg);
}

int pdb_update(struct pdb_update *out, struct img *img, struct pdb_found *f, const char *cv_name)
{
	int rc;

	out->source = f->source;
	if (f->source == PDB_STALE) {
		out->stale = 1;
		memcpy(out->why, f->why, sizeof f->why);
	} else if (f->source != PDB_NONE && update(out, img, f, cv_name) < 0) {
		if (lt_error_last()->code == LT_E_NOMEM)
			return -1;
		/* Every debug entry as it was, then a new PDB id. */
		for (uint32_t i = 0; img->debug_data && i < img->pe.ndebug; i++) {
			free(img->debug_data[i].data);
			img->debug_data[i].data = NULL;
		}
		pdb_update_stale(out, f, lt_error_last()->msg);
		free(out->path);
		out->path = NULL;
		lt_buf_free(&out->data);
	} else if (f->source != PDB_NONE) {
		return 0;
	}
	if ((rc = disown(img, f)) < 0)
		return -1;
	out->disowned = rc;
	return 0;
}
