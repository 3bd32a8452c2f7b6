/* weave_lines.c - source lines of lock sites from the assembly's portable PDB. */
#include "weave_lines.h"
#include "lt_cursor.h"
#include "lt_error.h"
#include "lt_mem.h"
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

int wlines_init(struct wlines *out, const struct pdb_found *pdb)
{
	static const struct md_image none;

	out->has_pdb = pdb && (pdb->source == PDB_FILE || pdb->source == PDB_EMBEDDED) &&
		       md_rows(&pdb->md, MD_METHODDEBUGINFORMATION) > 0;
	out->md = out->has_pdb ? &pdb->md : &none;
	out->memo = NULL;
	if (out->has_pdb && !(out->memo = lt_calloc(1, sizeof *out->memo)))
		return lt_nomem(NULL);
	return 0;
}

void wlines_free(struct wlines *lines)
{
	if (!lines || !lines->memo)
		return;
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

int wlines_find(const struct wlines *lines, uint32_t methoddef, uint32_t il_offset, char *buf, size_t n)
{
	return wlines_point(lines, methoddef, il_offset, WLINES_AT_OR_BEFORE, buf, n, NULL);
}

int wlines_point(const struct wlines *lines, uint32_t methoddef, uint32_t il_offset, enum wlines_which which,
		 char *buf, size_t n, uint32_t *point)
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
			if (!s->points[i - 1].hidden)
				found = &s->points[i - 1];
	} else {
		for (i = lo; i < s->n && !found; i++)
			if (!s->points[i].hidden)
				found = &s->points[i];
	}
	rc = found && document_file(lines->md, found->document, buf, n, found->start_line) == 0;
	if (rc && point)
		*point = found->offset;
	return rc;
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
		if (p->hidden || (found && p->document != *doc))
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
