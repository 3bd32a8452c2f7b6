/* pdb_update.c - an edited assembly's portable PDB and debug directory brought up to date together. */
#include "pdb_update.h"
#include "lt_error.h"
#include "lt_file.h"
#include "pdb_rewrite.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
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
		return lt_error_set(LT_E_NOMEM, "out of memory for zlib");
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

	/* pdb_find read the entry: the 24-byte header, then a NUL-terminated path. */
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

/* Whether paths a and b name one existing file. */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Where the rewritten PDB file goes: next to the output assembly, with the
 * input PDB's name - unless that is the input's PDB itself (an output
 * written with -o beside the input, which keeps its symbols): then
 * <output name>.pdb, and *cv_name gets that name for the CodeView entry. */
static int target_path(struct pdb_update *out, const struct pdb_found *f, const char *in_path, const char *out_path,
		       char **cv_name)
{
	const char *name = strrchr(f->path, '/');

	name = name ? name + 1 : f->path;
	*cv_name = NULL;
	if (!(out->path = pdb_path_beside(out_path, name, strlen(name))))
		return -1;
	if (!strcmp(in_path, out_path) || same_file(in_path, out_path) || !same_file(out->path, f->path))
		return 0;
	free(out->path);
	out->path = NULL;
	if (!(*cv_name = pdb_symbols_name(out_path, ".pdb")) ||
	    !(out->path = pdb_path_beside(out_path, *cv_name, strlen(*cv_name))))
		return -1;
	if (same_file(out->path, f->path))
		return lt_error_set(LT_E_PDB, "the output's PDB %s would replace the input's", out->path);
	return 0;
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

/* The rewrite proper, for a PDB found matching: 0, or -1 (error recorded). */
static int update(struct pdb_update *out, struct img *img, struct pdb_found *f, const char *in_path,
		  const char *out_path)
{
	uint8_t id[PDB_ID_SIZE], sha256[32];
	size_t id_offset;
	struct lt_buf pdb = LT_BUF_INIT, entry = LT_BUF_INIT;
	char *cv_name = NULL;
	int rc = -1;

	if ((f->source == PDB_FILE && target_path(out, f, in_path, out_path, &cv_name) < 0) ||
	    pdb_rewrite(&f->md, img, &pdb, id, &id_offset, sha256) < 0)
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
	free(cv_name);
	lt_buf_free(&pdb);
	lt_buf_free(&entry);
	return rc;
}

int pdb_update(struct pdb_update *out, struct img *img, const char *in_path, const char *out_path)
{
	struct pdb_found f;
	int rc = 0;

	memset(out, 0, sizeof *out);
	if (pdb_find(&f, img, in_path) < 0)
		return -1;
	out->source = f.source;
	if (f.source == PDB_STALE) {
		out->stale = 1;
		memcpy(out->why, f.why, sizeof f.why);
	} else if (f.source != PDB_NONE && update(out, img, &f, in_path, out_path) < 0) {
		if (lt_error_last()->code == LT_E_NOMEM) {
			rc = -1;
		} else {
			/* Leave every debug entry as it was: the old PDB keeps
			 * matching the woven assembly, with stale lines (the
			 * caller's warning says so). */
			for (uint32_t i = 0; img->debug_data && i < img->pe.ndebug; i++) {
				free(img->debug_data[i].data);
				img->debug_data[i].data = NULL;
			}
			out->stale = 1;
			snprintf(out->why, sizeof out->why, "%.120s: %.270s", f.source == PDB_FILE ? f.path : "embedded PDB",
				 lt_error_last()->msg);
		}
		free(out->path);
		out->path = NULL;
		lt_buf_free(&out->data);
	}
	pdb_found_free(&f);
	if (rc < 0)
		pdb_update_free(out);
	return rc;
}

int pdb_write_pair(const struct pdb_update *u, const char *asm_path, const struct lt_iov *asm_parts,
		   size_t nparts, const uint8_t *orig, size_t orig_len)
{
	struct lt_file_staged staged_asm = LT_FILE_STAGED_INIT, staged_pdb = LT_FILE_STAGED_INIT;
	const struct lt_iov pdb = { u->data.data, u->data.len };
	struct lt_error failure;
	int rc = -1;

	/* Both files are written before either is replaced: a failure, or a
	 * kill before the two renames, leaves the old pair. */
	if (lt_file_stage_v(&staged_asm, asm_path, asm_parts, nparts) < 0 ||
	    (u->path && lt_file_stage_v(&staged_pdb, u->path, &pdb, 1) < 0) || lt_file_commit(&staged_asm) < 0)
		goto done;
	if (u->path && lt_file_commit(&staged_pdb) < 0) {
		/* The PDB still describes the input: take the assembly back to it. */
		failure = *lt_error_last();
		if (orig)
			lt_file_write_atomic(asm_path, orig, orig_len);
		else
			unlink(asm_path);
		lt_error_set(failure.code, "%s", failure.msg);
		goto done;
	}
	lt_file_sync_folder(staged_asm.path);
	if (u->path)
		lt_file_sync_folder(staged_pdb.path);
	rc = 0;
done:
	lt_file_discard(&staged_asm);
	lt_file_discard(&staged_pdb);
	return rc;
}
