/* pdb_find.c - finding an assembly's portable PDB (embedded or a file next to it) and telling whether it matches. */
#include "pdb_find.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "lt_file.h"
#include "mdb.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

void pdb_found_release_data(struct pdb_found *f)
{
	md_free(&f->md);
	mdb_free(f->mdb);
	free(f->mdb);
	f->mdb = NULL;
	free(f->data);
	f->data = NULL;
	f->size = 0;
}

void pdb_found_free(struct pdb_found *f)
{
	if (!f)
		return;
	pdb_found_release_data(f);
	free(f->path);
	memset(f, 0, sizeof *f);
	f->codeview = f->embedded = -1;
}

int pdb_found_stale(struct pdb_found *f, char *path, const char *fmt, ...)
{
	va_list ap;

	pdb_found_release_data(f);
	if (path != f->path)
		free(f->path);
	f->path = path;
	f->source = PDB_STALE;
	va_start(ap, fmt);
	vsnprintf(f->why, sizeof f->why, fmt, ap);
	va_end(ap);
	return 0;
}

int pdb_entry_data(const struct img *img, uint32_t index, struct lt_cur *out)
{
	struct lt_cur file = lt_cur_init(img->file, img->size, LT_E_PDB, "debug directory entry data");
	return lt_cur_sub(&file, img->pe.debug[index].file_offset, img->pe.debug[index].size, out);
}

/* The RSDS CodeView entry: its index, GUID (16 bytes) and PDB id stamp, and
 * the path's last part (borrowed, NUL-terminated).  -1 when there is none
 * (or it is not RSDS: an old NB10 entry names no portable PDB). */
static int codeview(const struct img *img, uint8_t id[PDB_ID_SIZE], int *portable, const char **name)
{
	for (uint32_t i = 0; i < img->pe.ndebug; i++) {
		const struct pe_debug_entry *e = &img->pe.debug[i];
		const uint8_t *guid, *rest;
		struct lt_cur c;
		uint32_t sig;
		size_t left;

		if (e->type != PE_DEBUG_CODEVIEW)
			continue;
		if (pdb_entry_data(img, i, &c) < 0 || lt_cur_u32(&c, &sig) < 0 || sig != PDB_CV_SIGNATURE ||
		    lt_cur_bytes(&c, 16, &guid) < 0 || lt_cur_skip(&c, 4) < 0)
			return -1;
		left = lt_cur_left(&c);
		if (lt_cur_bytes(&c, left, &rest) < 0 || !memchr(rest, 0, left))
			return -1;
		*name = (const char *)rest;
		for (const char *p = *name; *p; p++)
			if (*p == '/' || *p == '\\')
				*name = p + 1;
		memcpy(id, guid, 16);
		lt_put32(id + 16, e->timestamp);
		*portable = e->minor == PDB_CV_PORTABLE_MINOR;
		return (int)i;
	}
	return -1;
}

/* Inflate the Embedded Portable PDB entry `index` into f->data.  Returns 0,
 * 1 with the reason in why when the data is malformed, or -1 (LT_E_NOMEM). */
static int inflate_entry(const struct img *img, uint32_t index, struct pdb_found *f, char *why, size_t n)
{
	struct lt_cur c;
	const uint8_t *deflated;
	uint32_t sig, size;
	size_t left;
	z_stream zs;
	int zrc;

	if (pdb_entry_data(img, index, &c) < 0 || lt_cur_u32(&c, &sig) < 0 || sig != PDB_EMBEDDED_SIGNATURE ||
	    lt_cur_u32(&c, &size) < 0) {
		snprintf(why, n, "embedded PDB entry: no \"MPDB\" header");
		return 1;
	}
	left = lt_cur_left(&c);
	/* Deflate expands 1032:1 at most (zlib's FAQ): a larger size is a lie,
	 * refused before the allocation it would ask for. */
	if (size == 0 || size > LT_FILE_MAX || (uint64_t)size > (uint64_t)left * 1032 + 64 || left > UINT_MAX ||
	    lt_cur_bytes(&c, left, &deflated) < 0) {
		snprintf(why, n, "embedded PDB entry: uncompressed size %u", size);
		return 1;
	}
	if (!(f->data = lt_malloc(size)))
		return lt_nomem("a %u-byte embedded PDB", size);
	memset(&zs, 0, sizeof zs);
	/* Raw Deflate (RFC 1951): no zlib header, hence windowBits -15. */
	if (inflateInit2(&zs, -15) != Z_OK)
		return lt_nomem("zlib");
	zs.next_in = (Bytef *)deflated;
	zs.avail_in = (uInt)left;
	zs.next_out = f->data;
	zs.avail_out = size;
	zrc = inflate(&zs, Z_FINISH);
	inflateEnd(&zs);
	if (zrc != Z_STREAM_END || zs.avail_out != 0) {
		snprintf(why, n, "embedded PDB entry: Deflate data %s its size %u",
			 zrc == Z_STREAM_END ? "shorter than" : "does not inflate to", size);
		return 1;
	}
	f->size = size;
	return 0;
}

/* Decide whether f->data is the portable PDB with id `id` (16 bytes, or 20
 * when `portable`): PDB_FILE/PDB_EMBEDDED with f->md, or stale (0); -1
 * when memory runs out reading it. */
static int judge(struct pdb_found *f, enum pdb_source source, const uint8_t id[PDB_ID_SIZE], int portable,
		 const char *what)
{
	if (f->size < 4 || lt_le32(f->data) != 0x424A5342u) /* "BSJB" */
		return pdb_found_stale(f, f->path, "%s is not a portable PDB (a Windows PDB?)", what);
	if (md_read(&f->md, f->data, f->size) < 0)
		return lt_error_last()->code == LT_E_NOMEM ? -1 : pdb_found_stale(f, f->path, "%s: %s", what, lt_error_last()->msg);
	if (!f->md.has_pdb)
		return pdb_found_stale(f, f->path, "%s has no #Pdb stream", what);
	if (memcmp(f->md.pdb_id, id, portable ? PDB_ID_SIZE : 16) != 0)
		return pdb_found_stale(f, f->path, "%s does not match the assembly (PDB id differs from the CodeView entry's)", what);
	f->source = source;
	return 0;
}

/* f takes the file `path`'s data in place of what it held. */
static void take_file(struct pdb_found *f, uint8_t *data, size_t size, char *path)
{
	md_free(&f->md);
	free(f->data);
	if (path != f->path)
		free(f->path);
	f->data = data;
	f->size = size;
	f->path = path;
}

/* The file's data judged against f's CodeView entry: PDB_FILE or stale. */
int pdb_found_file(struct pdb_found *f, uint8_t *data, size_t size, char *path)
{
	take_file(f, data, size, path);
	return judge(f, PDB_FILE, f->id, f->portable, path);
}

int pdb_found_mdb(struct pdb_found *f, uint8_t *data, size_t size, char *path, const struct img *img)
{
	uint8_t guid[16];

	take_file(f, data, size, path);
	if (!(f->mdb = lt_calloc(1, sizeof *f->mdb)))
		return lt_nomem(NULL);
	if (mdb_read(data, size, f->mdb) < 0 || mdb_module_guid(img, guid) < 0) {
		if (lt_error_last()->code == LT_E_NOMEM)
			return -1;
		pdb_found_stale(f, path, "%s: %s", path, lt_error_last()->msg);
		lt_error_clear();
		return 0;
	}
	if (memcmp(guid, f->mdb->guid, 16) != 0)
		return pdb_found_stale(f, path, "%s: Mono symbols of another build (their GUID is not the module's Mvid)",
				       path);
	f->source = PDB_MDB;
	return 0;
}

int pdb_find_embedded(struct pdb_found *out, const struct img *img)
{
	char why[sizeof out->why];
	int rc;

	memset(out, 0, sizeof *out);
	out->codeview = codeview(img, out->id, &out->portable, &out->cv_name);
	out->embedded = -1;
	for (uint32_t i = 0; i < img->pe.ndebug; i++)
		if (img->pe.debug[i].type == PE_DEBUG_EMBEDDED_PDB)
			out->embedded = (int)i;
	if (out->embedded < 0)
		return 0;
	if ((rc = inflate_entry(img, (uint32_t)out->embedded, out, why, sizeof why)) != 0) {
		if (rc > 0)
			return pdb_found_stale(out, NULL, "%s", why);
		pdb_found_free(out);
		return -1;
	}
	if (out->codeview < 0)
		return pdb_found_stale(out, NULL, "embedded PDB without a CodeView entry to match it");
	if (judge(out, PDB_EMBEDDED, out->id, out->portable, "embedded PDB") < 0) {
		pdb_found_free(out);
		return -1;
	}
	return 0;
}
