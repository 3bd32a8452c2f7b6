/* weave_lines.c - source lines of lock sites from the assembly's portable PDB or Mono .mdb. */
#include "weave_lines.h"
#include "lt_cursor.h"
#include "lt_error.h"
#include "lt_hash.h"
#include "lt_mem.h"
#include "mdb.h"
#include "pdb_seq.h"
#include "sig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The decoded sequence points of MethodDebugInformation row `row`. */
struct wlines_memo {
	uint32_t row;     /* 0: none decoded */
	int ok;           /* 1: seq holds them; 0: the row's blob is empty or malformed */
	struct pdb_seq seq;
};

/* Longest Document name LockTime reads, in bytes. */
#define WLINES_MAX_NAME 4096

/* Document row `doc`'s name (PortablePdb-Metadata.md "Document Name Blob":
 * a separator byte, then compressed #Blob indexes of the UTF-8 parts, the
 * separator between two parts) into buf[0..WLINES_MAX_NAME), NUL-terminated.
 * Returns its length in bytes, or -1 for a bad row or blob, or a name too long. */
static long document_name(const struct md_image *md, uint32_t doc, char *buf)
{
	const uint8_t *name, *part;
	uint32_t len, part_len, index;
	struct lt_cur c;
	size_t at = 0;
	uint8_t sep;
	int first = 1;

	if (doc == 0 || doc > md_rows(md, MD_DOCUMENT) ||
	    md_blob(md, md_get(md, MD_DOCUMENT, doc, MD_DOCUMENT_NAME), &name, &len) < 0)
		return -1;
	c = lt_cur_init(name, len, LT_E_PDB, "Document name blob");
	if (lt_cur_u8(&c, &sep) < 0)
		return -1;
	while (lt_cur_left(&c) > 0) {
		if (sig_uint_decode(&c, &index) < 0 || md_blob(md, index, &part, &part_len) < 0)
			return -1;
		if (at + (sep && !first) + part_len >= WLINES_MAX_NAME)
			return -1;
		if (sep && !first)
			buf[at++] = (char)sep;
		memcpy(buf + at, part, part_len);
		at += part_len;
		first = 0;
	}
	buf[at] = 0;
	return at ? (long)at : -1;
}

/* The number of documents: Document rows, or the .mdb's sources. */
static uint32_t documents(const struct wlines *lines)
{
	return lines->mdb ? lines->mdb->nsources : md_rows(lines->md, MD_DOCUMENT);
}

/* Document `doc`'s name (1-based: a Document row, or a .mdb source index)
 * into buf[0..WLINES_MAX_NAME), as document_name. */
static long name_of(const struct wlines *lines, uint32_t doc, char *buf)
{
	size_t len;

	if (!lines->mdb)
		return document_name(lines->md, doc, buf);
	if (doc == 0 || doc > lines->mdb->nsources)
		return -1;
	len = strlen(lines->mdb->sources[doc - 1].name);
	if (len >= WLINES_MAX_NAME)
		return -1;
	memcpy(buf, lines->mdb->sources[doc - 1].name, len + 1);
	return (long)len;
}

/* A point a report may name: not hidden, and not on the line 0xFEEFEE that
 * compilers give code of no statement (Mono's run time skips it). */
static int visible(const struct pdb_seq_point *p)
{
	return !p->hidden && p->start_line != PDB_HIDDEN_LINE;
}

static int is_separator(char c)
{
	return c == '/' || c == '\\';
}

/* Which Document rows hold code: named by a MethodDebugInformation row
 * (its Document, or the documents of its Sequence Points blob when that is
 * 0), into used[doc - 1].  Documents without code (a generated
 * AssemblyInfo.cs in obj/) do not count for the common folder.  Returns 0,
 * or -1 with LT_E_NOMEM. */
static int mark_code_documents(const struct wlines *lines, uint8_t *used)
{
	const struct md_image *md = lines->md;
	uint32_t ndocs = documents(lines), doc, len;
	const uint8_t *blob;
	struct pdb_seq s;

	/* mdb_read checked every point's source index. */
	for (uint32_t m = 0; lines->mdb && m < lines->mdb->nmethods; m++)
		for (uint32_t i = 0; i < lines->mdb->methods[m].seq.n; i++)
			used[lines->mdb->methods[m].seq.points[i].document - 1] = 1;
	for (uint32_t m = 1; m <= md_rows(md, MD_METHODDEBUGINFORMATION); m++) {
		doc = md_get(md, MD_METHODDEBUGINFORMATION, m, MD_METHODDEBUGINFORMATION_DOCUMENT);
		if (doc) {
			used[doc <= ndocs ? doc - 1 : ndocs] = 1;
			continue;
		}
		if (md_blob(md, md_get(md, MD_METHODDEBUGINFORMATION, m, MD_METHODDEBUGINFORMATION_SEQUENCEPOINTS),
			    &blob, &len) < 0) {
			lt_error_clear();
			continue;
		}
		if (len == 0)
			continue;
		if (pdb_seq_decode(blob, len, 0, &s) < 0) {
			if (lt_error_last()->code == LT_E_NOMEM)
				return -1;
			lt_error_clear();
			continue;
		}
		for (uint32_t i = 0; i < s.n; i++)
			used[s.points[i].document <= ndocs ? s.points[i].document - 1 : ndocs] = 1;
		pdb_seq_free(&s);
	}
	return 0;
}

/* lines->common: the longest folder that holds every Document with code
 * (every Document when none has).  Returns 0, or -1 with LT_E_NOMEM. */
static int find_common_folder(struct wlines *lines)
{
	char first[WLINES_MAX_NAME], name[WLINES_MAX_NAME];
	uint32_t ndocs = documents(lines);
	uint8_t *used = lt_calloc(ndocs + 1, 1);
	long common = -1, len;
	int any = 0;

	if (!used)
		return lt_nomem(NULL);
	if (mark_code_documents(lines, used) < 0) {
		free(used);
		return -1;
	}
	for (uint32_t d = 0; d < ndocs; d++)
		any |= used[d];
	for (uint32_t d = 1; d <= ndocs; d++) {
		if (any && !used[d - 1])
			continue;
		len = name_of(lines, d, common < 0 ? first : name);
		if (len < 0)
			continue;
		if (common < 0) {
			common = len;
			continue;
		}
		for (long i = 0; i < common; i++)
			if (i >= len || first[i] != name[i]) {
				common = i;
				break;
			}
	}
	free(used);
	while (common > 0 && !is_separator(first[common - 1]))
		common--;
	lines->common = common > 0 ? (size_t)common : 0;
	return 0;
}

int wlines_init(struct wlines *out, const struct pdb_found *pdb, wlines_reader read)
{
	static const struct md_image none;

	out->mdb = pdb && pdb->source == PDB_MDB && pdb->mdb->nmethods > 0 ? pdb->mdb : NULL;
	out->has_pdb = out->mdb || (pdb && (pdb->source == PDB_FILE || pdb->source == PDB_EMBEDDED) &&
				    md_rows(&pdb->md, MD_METHODDEBUGINFORMATION) > 0);
	out->md = out->has_pdb && !out->mdb ? &pdb->md : &none;
	out->memo = NULL;
	out->sources = NULL;
	out->common = 0;
	out->read = read;
	if (!out->has_pdb)
		return 0;
	if (!(out->memo = lt_calloc(1, sizeof *out->memo)) ||
	    !(out->sources = lt_calloc(documents(out) + 1, sizeof *out->sources))) {
		wlines_free(out);
		return lt_nomem(NULL);
	}
	if (find_common_folder(out) < 0) {
		wlines_free(out);
		return -1;
	}
	return 0;
}

void wlines_free(struct wlines *lines)
{
	if (!lines || !lines->memo)
		return;
	if (lines->sources)
		for (uint32_t d = 0; d < documents(lines); d++)
			free(lines->sources[d].text);
	free(lines->sources);
	lines->sources = NULL;
	pdb_seq_free(&lines->memo->seq);
	free(lines->memo);
	lines->memo = NULL;
}

/* The sequence points of MethodDef `methoddef` (its MethodDebugInformation
 * row has the same number), decoded on the first ask: 1 with *out, 0 when
 * there are none (no PDB, no row, an empty or malformed blob), -1 when
 * memory runs out decoding them (LT_E_NOMEM). */
static int points_of(const struct wlines *lines, uint32_t methoddef, const struct pdb_seq **out)
{
	const struct md_image *md = lines->md;
	struct wlines_memo *m = lines->memo;
	const uint8_t *blob;
	uint32_t len;

	if (lines->mdb) {
		const struct mdb_method *me = mdb_method(lines->mdb, 0x06000000u | methoddef);
		if (!me || me->seq.n == 0)
			return 0;
		*out = &me->seq;
		return 1;
	}
	if (!lines->has_pdb || methoddef == 0 || methoddef > md_rows(md, MD_METHODDEBUGINFORMATION))
		return 0;
	if (m->row != methoddef) {
		pdb_seq_free(&m->seq);
		m->row = methoddef;
		m->ok = md_blob(md, md_get(md, MD_METHODDEBUGINFORMATION, methoddef, MD_METHODDEBUGINFORMATION_SEQUENCEPOINTS),
				&blob, &len) == 0 && len > 0 &&
			pdb_seq_decode(blob, len, md_get(md, MD_METHODDEBUGINFORMATION, methoddef,
							 MD_METHODDEBUGINFORMATION_DOCUMENT), &m->seq) == 0;
		if (!m->ok && lt_error_last()->code == LT_E_NOMEM) {
			m->row = 0;
			return -1;
		}
	}
	*out = &m->seq;
	return m->ok;
}

int wlines_format(const struct wlines *lines, uint32_t doc, uint32_t line, uint32_t column, char *buf, size_t n)
{
	char name[WLINES_MAX_NAME];
	long len = name_of(lines, doc, name);
	size_t start = lines->common;

	if (len < 0)
		return 0;
	/* A name the common folder does not hold (the blob changed): its file name. */
	if (start >= (size_t)len)
		for (long i = start = 0; i < len; i++)
			start = is_separator(name[i]) ? (size_t)i + 1 : start;
	for (long i = 0; i < len; i++)
		name[i] = name[i] == '\\' ? '/' : name[i];
	if (column)
		snprintf(buf, n, "%s:%u:%u", name + start, line, column);
	else
		snprintf(buf, n, "%s:%u", name + start, line);
	return 1;
}

int wlines_path(const struct wlines *lines, uint32_t doc, char *buf, size_t n)
{
	char name[WLINES_MAX_NAME];
	long len = lines->has_pdb ? document_name(lines->md, doc, name) : -1;

	if (len < 0)
		return 0;
	name[len] = 0;
	snprintf(buf, n, "%s", name);
	return 1;
}

/* The digest a Document's HashAlgorithm GUID names (PortablePdb-Metadata.md
 * "Document Table"; the GUIDs in #GUID byte order, II.24.2.5), -1 for others. */
static int document_hash_alg(const uint8_t guid[16], enum lt_hash_alg *alg)
{
	static const uint8_t sha1[16] = { 0xec, 0x16, 0x18, 0xff, 0x5e, 0xaa, 0x10, 0x4d,
					  0x87, 0xf7, 0x6f, 0x49, 0x63, 0x83, 0x34, 0x60 }; /* ff1816ec-aa5e-4d10-87f7-6f4963833460 */
	static const uint8_t sha256[16] = { 0x0f, 0xd0, 0x29, 0x88, 0xb8, 0x11, 0x13, 0x42,
					    0x87, 0x8b, 0x77, 0x0e, 0x85, 0x97, 0xac, 0x16 }; /* 8829d00f-11b8-4213-878b-770e8597ac16 */

	if (memcmp(guid, sha1, 16) == 0)
		*alg = LT_HASH_SHA1;
	else if (memcmp(guid, sha256, 16) == 0)
		*alg = LT_HASH_SHA256;
	else
		return -1;
	return 0;
}

/* Read Document row doc's file into s when its hash matches the Document's.
 * Returns 0, or -1 with LT_E_NOMEM. */
static int read_source(const struct md_image *md, wlines_reader read, uint32_t doc, struct wlines_source *s)
{
	char name[WLINES_MAX_NAME];
	const uint8_t *guid, *hash;
	uint8_t digest[LT_HASH_MAX];
	enum lt_hash_alg alg;
	uint32_t hash_len;
	int hashed;

	s->state = -1;
	if (document_name(md, doc, name) < 0 ||
	    md_guid(md, md_get(md, MD_DOCUMENT, doc, MD_DOCUMENT_HASHALGORITHM), &guid) < 0 ||
	    md_blob(md, md_get(md, MD_DOCUMENT, doc, MD_DOCUMENT_HASH), &hash, &hash_len) < 0) {
		lt_error_clear();
		return 0;
	}
	if (document_hash_alg(guid, &alg) < 0 || hash_len != lt_hash_size(alg))
		return 0;
	if (!read)
		return 0;
	if (read(name, &s->text, &s->len) < 0)
		goto none;
	hashed = lt_hash_buf(alg, s->text, s->len, digest) == 0;
	if (hashed && memcmp(digest, hash, hash_len) == 0) {
		s->state = 1;
		return 0;
	}
	free(s->text);
	s->text = NULL;
	s->len = 0;
	if (hashed)
		return 0; /* changed since the build */
none:
	if (lt_error_last()->code == LT_E_NOMEM) {
		s->state = 0;
		return -1;
	}
	lt_error_clear();
	return 0;
}

int wlines_source(const struct wlines *lines, uint32_t doc, const uint8_t **text, size_t *len)
{
	struct wlines_source *s;

	/* A .mdb has only MD5 hashes of its sources, which LockTime does not compute. */
	if (!lines->has_pdb || lines->mdb || doc == 0 || doc > md_rows(lines->md, MD_DOCUMENT))
		return 0;
	s = &lines->sources[doc - 1];
	if (s->state == 0 && read_source(lines->md, lines->read, doc, s) < 0)
		return -1;
	if (s->state < 0)
		return 0;
	*text = s->text;
	*len = s->len;
	return 1;
}

int wlines_point(const struct wlines *lines, uint32_t methoddef, uint32_t il_offset, enum wlines_which which,
		 struct pdb_seq_point *out)
{
	const struct pdb_seq *s = NULL;
	const struct pdb_seq_point *found = NULL;
	uint32_t lo = 0, hi, i;
	int rc = points_of(lines, methoddef, &s);

	if (rc <= 0)
		return rc;
	/* Points are in increasing offset order (pdb_seq_decode): [0, lo) are
	 * those at or before the offset.  The last visible one of them, or the
	 * first visible one after. */
	for (hi = s->n; lo < hi;) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (s->points[mid].offset <= il_offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (which == WLINES_AT_OR_BEFORE) {
		for (i = lo; i > 0 && !found; i--)
			if (visible(&s->points[i - 1]))
				found = &s->points[i - 1];
	} else {
		for (i = lo; i < s->n && !found; i++)
			if (visible(&s->points[i]))
				found = &s->points[i];
	}
	if (found)
		*out = *found;
	return found != NULL;
}

int wlines_span(const struct wlines *lines, uint32_t methoddef, uint32_t *doc, uint32_t *first, uint32_t *last)
{
	const struct pdb_seq *s = NULL;
	int found = points_of(lines, methoddef, &s);

	if (found <= 0)
		return found;
	found = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct pdb_seq_point *p = &s->points[i];
		if (!visible(p) || (found && p->document != *doc))
			continue;
		if (!found) {
			*doc = p->document;
			*first = p->start_line;
			*last = p->end_line;
			found = 1;
		}
		*first = p->start_line < *first ? p->start_line : *first;
		*last = p->end_line > *last ? p->end_line : *last;
	}
	return found;
}
