/* weave_lines.c - source lines of lock sites from the assembly's portable PDB. */
#include "weave_lines.h"
#include "lt_cursor.h"
#include "lt_error.h"
#include "lt_file.h"
#include "sig.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/* CodeView entry data (PE-COFF.md "CodeView Debug Directory Entry"):
 * "RSDS", 16-byte GUID, u32 age, NUL-terminated UTF-8 path. */
#define CV_SIGNATURE 0x53445352u    /* "RSDS" */
#define EMBEDDED_SIGNATURE 0x4244504Du /* "MPDB" */

/* The bytes of debug directory entry e: [PointerToRawData, +SizeOfData). */
static int entry_cursor(const struct img *img, const struct pe_debug_entry *e, struct lt_cur *out)
{
	struct lt_cur file = lt_cur_init(img->file, img->size, LT_E_PDB, "debug directory entry data");
	return lt_cur_sub(&file, e->file_offset, e->size, out);
}

/* The CodeView entry: *guid gets its 16 bytes, *path its NUL-terminated path
 * (borrowed from the file).  Returns 0, or -1 when there is none or it is
 * not RSDS. */
static int codeview(const struct img *img, const uint8_t **guid, const char **path)
{
	for (uint32_t i = 0; i < img->pe.ndebug; i++) {
		struct lt_cur c;
		uint32_t sig;
		const uint8_t *rest;
		size_t left;

		if (img->pe.debug[i].type != PE_DEBUG_CODEVIEW)
			continue;
		if (entry_cursor(img, &img->pe.debug[i], &c) < 0 || lt_cur_u32(&c, &sig) < 0 ||
		    sig != CV_SIGNATURE || lt_cur_bytes(&c, 16, guid) < 0 || lt_cur_skip(&c, 4) < 0)
			return -1;
		left = lt_cur_left(&c);
		if (lt_cur_bytes(&c, left, &rest) < 0 || !memchr(rest, 0, left))
			return -1;
		*path = (const char *)rest;
		return 0;
	}
	return -1;
}

/* Inflate the Embedded Portable PDB entry, if any, into *out (malloc'd).
 * Returns 0, or -1 when there is none or it is malformed. */
static int embedded(const struct img *img, uint8_t **out, size_t *size)
{
	for (uint32_t i = 0; i < img->pe.ndebug; i++) {
		struct lt_cur c;
		uint32_t sig, n;
		const uint8_t *deflated;
		z_stream zs;
		size_t left;
		int zrc;

		if (img->pe.debug[i].type != PE_DEBUG_EMBEDDED_PDB)
			continue;
		if (entry_cursor(img, &img->pe.debug[i], &c) < 0 || lt_cur_u32(&c, &sig) < 0 ||
		    sig != EMBEDDED_SIGNATURE || lt_cur_u32(&c, &n) < 0 || n == 0 || n > LT_FILE_MAX ||
		    (left = lt_cur_left(&c)) > UINT_MAX || lt_cur_bytes(&c, left, &deflated) < 0)
			return -1;
		*out = malloc(n);
		if (!*out)
			return -1;
		memset(&zs, 0, sizeof zs);
		/* Raw Deflate (RFC 1951): no zlib header, hence windowBits -15. */
		if (inflateInit2(&zs, -15) != Z_OK) {
			free(*out);
			return -1;
		}
		zs.next_in = (Bytef *)deflated;
		zs.avail_in = (uInt)left;
		zs.next_out = *out;
		zs.avail_out = n;
		zrc = inflate(&zs, Z_FINISH);
		inflateEnd(&zs);
		if (zrc != Z_STREAM_END || zs.avail_out != 0) {
			free(*out);
			return -1;
		}
		*size = n;
		return 0;
	}
	return -1;
}

/* Read the PDB file dir + name; 0 or -1. */
static int read_next_to(const char *assembly_path, const char *name, size_t name_len, uint8_t **out, size_t *size)
{
	const char *slash = strrchr(assembly_path, '/');
	size_t dir_len = slash ? (size_t)(slash - assembly_path) + 1 : 0;
	char *path = malloc(dir_len + name_len + 1);
	int rc;

	if (!path)
		return -1;
	memcpy(path, assembly_path, dir_len);
	memcpy(path + dir_len, name, name_len);
	path[dir_len + name_len] = 0;
	rc = lt_file_read(path, out, size);
	free(path);
	return rc;
}

/* The PDB file next to the assembly: the CodeView path's last part (either
 * separator: it may be a Windows path), else the assembly's name with .pdb. */
static int pdb_file(const char *assembly_path, const char *cv_path, uint8_t **out, size_t *size)
{
	const char *base = cv_path, *p, *abase, *dot;
	char *name;
	size_t len;
	int rc;

	for (p = cv_path; *p; p++)
		if (*p == '/' || *p == '\\')
			base = p + 1;
	if (*base && read_next_to(assembly_path, base, strlen(base), out, size) == 0)
		return 0;
	abase = strrchr(assembly_path, '/');
	abase = abase ? abase + 1 : assembly_path;
	dot = strrchr(abase, '.');
	len = dot && (!strcasecmp(dot, ".dll") || !strcasecmp(dot, ".exe")) ? (size_t)(dot - abase) : strlen(abase);
	name = malloc(len + 5);
	if (!name)
		return -1;
	memcpy(name, abase, len);
	memcpy(name + len, ".pdb", 5);
	rc = read_next_to(assembly_path, name, len + 4, out, size);
	free(name);
	return rc;
}

int wlines_open(struct wlines *out, const struct img *img, const char *assembly_path)
{
	const uint8_t *guid;
	const char *cv_path;
	size_t size = 0;

	memset(out, 0, sizeof *out);
	if (!assembly_path || codeview(img, &guid, &cv_path) < 0)
		return 0;
	if (embedded(img, &out->data, &size) < 0 && pdb_file(assembly_path, cv_path, &out->data, &size) < 0)
		return 0;
	/* A Windows PDB ("Microsoft C/C++ MSF 7.00") fails the BSJB check. */
	if (md_read(&out->md, out->data, size) == 0 && out->md.has_pdb && !memcmp(out->md.pdb_id, guid, 16) &&
	    md_rows(&out->md, MD_METHODDEBUGINFORMATION) > 0) {
		out->has_pdb = 1;
		return 0;
	}
	wlines_free(out);
	return 0;
}

void wlines_free(struct wlines *lines)
{
	if (!lines)
		return;
	md_free(&lines->md);
	free(lines->data);
	memset(lines, 0, sizeof *lines);
}

/* The last part of Document row `doc`'s name (PortablePdb-Metadata.md
 * "Document Name Blob": separator byte, then compressed #Blob indexes of
 * the UTF-8 parts), past any '/' or '\' inside it, into buf like snprintf.
 * Returns 0, or -1 for a bad row or blob. */
static int document_file(const struct md_image *md, uint32_t doc, char *buf, size_t n, uint32_t line)
{
	const uint8_t *name, *part = NULL;
	uint32_t len, part_len = 0, index;
	struct lt_cur c;
	size_t start = 0;

	if (doc == 0 || doc > md_rows(md, MD_DOCUMENT) ||
	    md_blob(md, md_get(md, MD_DOCUMENT, doc, MD_DOCUMENT_NAME), &name, &len) < 0)
		return -1;
	c = lt_cur_init(name, len, LT_E_PDB, "Document name blob");
	if (lt_cur_skip(&c, 1) < 0)
		return -1;
	while (lt_cur_left(&c) > 0)
		if (sig_uint_decode(&c, &index) < 0 || md_blob(md, index, &part, &part_len) < 0)
			return -1;
	if (!part || part_len == 0)
		return -1;
	for (uint32_t i = 0; i < part_len; i++)
		if (part[i] == '/' || part[i] == '\\')
			start = i + 1;
	snprintf(buf, n, "%.*s:%u", (int)(part_len - start), (const char *)part + start, line);
	return 0;
}

/* The state of a walk over a SequencePoints blob. */
struct seq_walk {
	uint32_t doc, offset, line, column;
	int seen_visible; /* a non-hidden point was read: later ones are deltas */
};

/* Read one record after the first (PortablePdb-Metadata.md "Sequence
 * Points Blob"): a document-record (delta IL 0) changes w->doc and sets
 * *visible 0; a hidden point (delta lines and columns 0) sets *visible 0;
 * else w holds the point.  Returns 0, or -1 on malformed data. */
static int seq_record(struct lt_cur *c, struct seq_walk *w, int first, int *visible)
{
	uint32_t delta_il, delta_lines, ucol;
	int32_t dline, dcol;

	*visible = 0;
	if (sig_uint_decode(c, &delta_il) < 0)
		return -1;
	if (!first && delta_il == 0)
		return sig_uint_decode(c, &w->doc);
	if (w->offset > UINT32_MAX - delta_il)
		return -1;
	w->offset += delta_il;
	if (sig_uint_decode(c, &delta_lines) < 0)
		return -1;
	if (delta_lines == 0) {
		if (sig_uint_decode(c, &ucol) < 0)
			return -1;
		dcol = (int32_t)ucol;
	} else if (sig_int_decode(c, &dcol) < 0) {
		return -1;
	}
	if (delta_lines == 0 && dcol == 0)
		return 0;
	if (!w->seen_visible) {
		if (sig_uint_decode(c, &w->line) < 0 || sig_uint_decode(c, &w->column) < 0)
			return -1;
	} else {
		if (sig_int_decode(c, &dline) < 0 || sig_int_decode(c, &dcol) < 0)
			return -1;
		w->line += (uint32_t)dline;
	}
	w->seen_visible = 1;
	*visible = 1;
	return 0;
}

int wlines_find(const struct wlines *lines, uint32_t methoddef, uint32_t il_offset, char *buf, size_t n)
{
	const struct md_image *md = &lines->md;
	struct seq_walk w = { 0 };
	uint32_t found_doc = 0, found_line = 0, local_sig, len;
	const uint8_t *blob;
	struct lt_cur c;
	int visible, first = 1;

	if (!lines->has_pdb || methoddef == 0 || methoddef > md_rows(md, MD_METHODDEBUGINFORMATION))
		return 0;
	w.doc = md_get(md, MD_METHODDEBUGINFORMATION, methoddef, MD_METHODDEBUGINFORMATION_DOCUMENT);
	if (md_blob(md, md_get(md, MD_METHODDEBUGINFORMATION, methoddef, MD_METHODDEBUGINFORMATION_SEQUENCEPOINTS),
		    &blob, &len) < 0 || len == 0)
		return 0;
	c = lt_cur_init(blob, len, LT_E_PDB, "SequencePoints blob");
	if (sig_uint_decode(&c, &local_sig) < 0 || (w.doc == 0 && sig_uint_decode(&c, &w.doc) < 0))
		return 0;
	while (lt_cur_left(&c) > 0) {
		if (seq_record(&c, &w, first, &visible) < 0)
			return 0;
		first = 0;
		if (w.offset > il_offset)
			break;
		if (visible) {
			found_doc = w.doc;
			found_line = w.line;
		}
	}
	return found_doc != 0 && document_file(md, found_doc, buf, n, found_line) == 0;
}
