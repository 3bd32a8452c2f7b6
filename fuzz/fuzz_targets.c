/* fuzz_targets.c - the fuzz targets: readers and the weaving pass run on untrusted bytes in memory. */
#include "fuzz_targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "image_body.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "lt_mono_key.h"
#include "lt_rsa.h"
#include "mdb.h"
#include "pdb_seq.h"
#include "pkg_nupkg.h"
#include "rp_output.h"
#include "rp_report.h"
#include "sig.h"
#include "weave.h"
#include "weave_file.h"
#include "weave_lines.h"

/* A broken invariant: report it and abort, so that the fuzzer keeps the input. */
static void fuzz_fail(const char *what)
{
	const struct lt_error *e = lt_error_last();
	fprintf(stderr, "fuzz: %s (last error LT%03d: %s)\n", what, e->code, e->msg);
	abort();
}

/* rc of a function under test: -1 must come with an error recorded. */
static int fuzz_expect(int rc)
{
	int code = lt_error_last()->code;

	if (rc < 0 && (code <= LT_E_NONE || code > 99))
		fuzz_fail("returned -1 without an LT_E_* error");
	return rc < 0 ? -1 : 0;
}

/* img_load takes ownership of its bytes: give it a copy. */
static int fuzz_load(const uint8_t *data, size_t size, struct img **out)
{
	uint8_t *copy = lt_malloc(size ? size : 1);

	if (!copy)
		return lt_nomem(NULL);
	if (size)
		memcpy(copy, data, size);
	return fuzz_expect(img_load(out, copy, size));
}

int fuzz_image(const uint8_t *data, size_t size)
{
	struct img *img = NULL;
	uint32_t row;

	lt_error_clear();
	if (fuzz_load(data, size, &img) < 0)
		return -1;
	(void)img_is_reference_assembly(img);
	for (row = 1; row <= md_rows(&img->md, MD_METHODDEF); row++) {
		struct lt_buf out = LT_BUF_INIT;
		struct il_body b;

		lt_error_clear();
		if (fuzz_expect(img_decode_body(img, row, &b)) < 0)
			continue;
		lt_error_clear();
		(void)fuzz_expect(il_encode(&b, img_stack_effect, img, &out));
		lt_buf_free(&out);
		il_body_free(&b);
	}
	img_free(img);
	lt_error_clear();
	return 0;
}

/* ---- fuzz_sig ---- */

/* The productions of fuzz_sig with a tree (0-5): decode and encode. */
enum { SIG_TREE_METHOD, SIG_TREE_PROPERTY, SIG_TREE_FIELD, SIG_TREE_TYPESPEC, SIG_TREE_LOCALS,
       SIG_TREE_METHODSPEC, SIG_STACK_EFFECT, SIG_LOCALS_APPEND };

/* Decode p[0..len) as production `kind` and append its encoding to out.
 * Returns 0, or -1 with the decoder's error; an encoding failure of a tree
 * the decoder accepted is a bug. */
static int sig_decode_encode(int kind, const uint8_t *p, size_t len, struct lt_buf *out)
{
	struct sig_method *m = NULL;
	struct sig_type *t = NULL;
	struct sig_list *l = NULL;
	char text[256];
	int rc;

	switch (kind) {
	case SIG_TREE_METHOD: rc = sig_method_decode(p, len, &m); break;
	case SIG_TREE_PROPERTY: rc = sig_property_decode(p, len, &m); break;
	case SIG_TREE_FIELD: rc = sig_field_decode(p, len, &t); break;
	case SIG_TREE_TYPESPEC: rc = sig_typespec_decode(p, len, &t); break;
	case SIG_TREE_LOCALS: rc = sig_locals_decode(p, len, &l); break;
	default: rc = sig_methodspec_decode(p, len, &l); break;
	}
	if (fuzz_expect(rc) < 0)
		return -1;
	if (m) {
		(void)sig_method_print(m, text, sizeof text);
		rc = sig_method_encode(m, out);
	} else if (t) {
		(void)sig_type_print(t, text, sizeof text);
		rc = kind == SIG_TREE_FIELD ? sig_field_encode(t, out) : sig_type_encode(t, out);
	} else {
		rc = sig_list_encode(l, out);
	}
	sig_method_free(m);
	sig_type_free(t);
	sig_list_free(l);
	if (rc < 0)
		fuzz_fail("a decoded signature does not encode");
	return 0;
}

/* Invariant of sig_locals_append: its output is a LocalVarSig holding the
 * old locals and n_new more. */
static int sig_append(const uint8_t *p, size_t len)
{
	struct lt_buf out = LT_BUF_INIT;
	struct sig_list *old = NULL, *now = NULL;
	size_t old_len;
	uint32_t n_new;
	uint16_t first;
	int rc;

	if (len < 2)
		return 0;
	old_len = p[0] < len - 2 ? p[0] : len - 2;
	n_new = p[1];
	p += 2;
	len -= 2;
	rc = fuzz_expect(sig_locals_append(old_len ? p : NULL, old_len, p + old_len, len - old_len, n_new,
					   &out, &first));
	if (rc == 0) {
		if (sig_locals_decode(out.data, out.len, &now) < 0)
			fuzz_fail("sig_locals_append wrote a LocalVarSig that does not decode");
		if (old_len && sig_locals_decode(p, old_len, &old) < 0)
			fuzz_fail("sig_locals_append accepted a malformed LocalVarSig");
		if (now->count != (old ? old->count : 0) + n_new || first != (old ? old->count : 0))
			fuzz_fail("sig_locals_append: wrong count of locals");
	}
	sig_list_free(old);
	sig_list_free(now);
	lt_buf_free(&out);
	return rc;
}

int fuzz_sig(const uint8_t *data, size_t size)
{
	struct lt_buf once = LT_BUF_INIT, twice = LT_BUF_INIT;
	uint32_t nparams;
	int kind, has_this, ret, rc;

	lt_error_clear();
	if (size == 0)
		return 0;
	kind = data[0] % 8;
	if (kind == SIG_STACK_EFFECT)
		return fuzz_expect(sig_method_stack_effect(data + 1, size - 1, &nparams, &has_this, &ret));
	if (kind == SIG_LOCALS_APPEND)
		return sig_append(data + 1, size - 1);
	rc = sig_decode_encode(kind, data + 1, size - 1, &once);
	if (rc == 0) {
		/* The canonical encoding is a fixed point. */
		if (sig_decode_encode(kind, once.data, once.len, &twice) < 0)
			fuzz_fail("the encoding of a decoded signature does not decode");
		if (once.len != twice.len || memcmp(once.data, twice.data, once.len) != 0)
			fuzz_fail("encode(decode(encode(decode(x)))) differs from encode(decode(x))");
	}
	lt_buf_free(&once);
	lt_buf_free(&twice);
	return rc;
}

/* ---- fuzz_weave ---- */

/* img_write of img into out, then the output loaded into *again (which owns
 * out's bytes after).  Returns 0, or -1 when img_write refused with an error;
 * an output that does not read back or load is a bug. */
static int write_and_load(struct img *img, struct lt_buf *out, struct img **again)
{
	if (fuzz_expect(img_write(img, out)) < 0) {
		if (lt_error_last()->code == LT_E_INTERNAL)
			fuzz_fail("img_write laid out an image that does not read back");
		return -1;
	}
	if (img_load(again, out->data, out->len) < 0)
		fuzz_fail("img_write laid out an image that does not load");
	out->data = NULL;
	return 0;
}

int fuzz_weave(const uint8_t *data, size_t size)
{
	struct weave_opts opts = { .threshold_ms = 1.0, .output = "stderr" };
	struct weave_job job = { .found = { .codeview = -1, .embedded = -1 } };
	struct lt_buf out = LT_BUF_INIT;
	struct img *img = NULL, *again = NULL;
	enum weave_outcome outcome, outcome2;
	long nsites;
	int rc = -1;

	lt_error_clear();
	if (fuzz_load(data, size, &img) < 0)
		return -1;
	/* As `locktime weave` does, in memory: the sites' lines and the
	 * rewrite from the embedded PDB, then the image laid out. */
	if (fuzz_expect(weave_job_run(&job, img, &opts, &(struct weave_symbols){ 0 })) < 0)
		goto done;
	outcome = job.outcome;
	if (write_and_load(img, &out, &again) < 0)
		goto done;
	if (outcome == WEAVE_WOVEN &&
	    (weave_image(again, &opts, &outcome2, &nsites, NULL) < 0 || outcome2 != WEAVE_ALREADY_WOVEN))
		fuzz_fail("a woven image is not seen as already woven");
	rc = 0;
done:
	weave_job_free(&job);
	img_free(again);
	img_free(img);
	lt_buf_free(&out);
	return rc;
}

/* ---- fuzz_roundtrip ---- */

/* Heap h of the input and of the output hold the same bytes; the output's
 * may end in up to 3 zero bytes more (a stream's size is a multiple of 4,
 * II.24.2.2: the writer pads an input heap that was not). */
static void same_heap(const struct md_heap *a, const struct md_heap *b, const char *name)
{
	uint32_t pad = b->orig_size - a->orig_size;

	for (uint32_t i = 0; b->orig_size >= a->orig_size && i < pad && pad < 4; i++)
		if (b->orig[a->orig_size + i])
			pad = 4;
	if (b->orig_size < a->orig_size || pad >= 4 || (a->orig_size && memcmp(a->orig, b->orig, a->orig_size) != 0)) {
		fprintf(stderr, "fuzz: %s heap: %u bytes in, %u out\n", name, a->orig_size, b->orig_size);
		fuzz_fail("img_write changed a heap it was not asked to change");
	}
}

/* The cells of table t of md, rows in key order when `sort` (qsort of whole rows). */
static unsigned row_cols;
static int row_cmp(const void *a, const void *b) { return memcmp(a, b, row_cols * sizeof(uint32_t)); }

static uint32_t *table_rows(const struct md_image *md, unsigned t, int sort)
{
	const struct md_table *tab = &md->tables[t];
	uint32_t *rows = lt_malloc((size_t)tab->rows * tab->ncols * sizeof *rows + 1);

	if (!rows)
		fuzz_fail("out of memory");
	for (uint32_t row = 1; row <= tab->rows; row++)
		for (unsigned col = 0; col < tab->ncols; col++) {
			int rva = (t == MD_METHODDEF && col == MD_METHODDEF_RVA) || (t == MD_FIELDRVA && col == MD_FIELDRVA_RVA);
			rows[(size_t)(row - 1) * tab->ncols + col] = rva ? 0 : md_get(md, t, row, col);
		}
	row_cols = tab->ncols;
	if (sort)
		qsort(rows, tab->rows, tab->ncols * sizeof *rows, row_cmp);
	return rows;
}

/* What the writer was not asked to change is unchanged in `out`: every table
 * cell but MethodDef's and FieldRVA's RVA (II.22.26, II.22.18) - the rows of
 * a table marked Sorted in any order, since the writer puts them in key
 * order (II.22) -, every heap (padded to 4 bytes), every method body that parses. */
static void same_image(const struct img *in, const struct img *out)
{
	for (unsigned t = 0; t < MD_TABLE_MAX; t++) {
		const struct md_table *a = &in->md.tables[t], *b = &out->md.tables[t];
		int sorted = md_schema[t].nkeys && (in->md.sorted >> t & 1);
		uint32_t *x, *y;
		if (a->rows != b->rows)
			fuzz_fail("img_write changed a table's row count");
		if (!a->rows)
			continue;
		x = table_rows(&in->md, t, sorted);
		y = table_rows(&out->md, t, sorted);
		if (memcmp(x, y, (size_t)a->rows * a->ncols * sizeof *x) != 0) {
			fprintf(stderr, "fuzz: table 0x%02x (%s)\n", t, md_schema[t].name);
			fuzz_fail("img_write changed a table cell it was not asked to change");
		}
		free(x);
		free(y);
	}
	same_heap(&in->md.strings, &out->md.strings, "#Strings");
	same_heap(&in->md.us, &out->md.us, "#US");
	same_heap(&in->md.blob, &out->md.blob, "#Blob");
	same_heap(&in->md.guid, &out->md.guid, "#GUID");
	for (uint32_t row = 1; row <= md_rows(&in->md, MD_METHODDEF); row++) {
		const uint8_t *a, *b;
		size_t alen, blen;
		if (img_method_body(in, row, &a, &alen) < 0) {
			lt_error_clear();
			continue;
		}
		if (img_method_body(out, row, &b, &blen) < 0 || alen != blen || (alen && memcmp(a, b, alen) != 0)) {
			fprintf(stderr, "fuzz: MethodDef row %u\n", row);
			fuzz_fail("img_write changed a method body it was not asked to change");
		}
	}
}

int fuzz_roundtrip(const uint8_t *data, size_t size)
{
	struct lt_buf out = LT_BUF_INIT;
	struct img *img = NULL, *again = NULL;
	int rc = -1;

	lt_error_clear();
	if (fuzz_load(data, size, &img) < 0)
		return -1;
	if (write_and_load(img, &out, &again) < 0)
		goto done;
	same_image(img, again);
	rc = 0;
done:
	img_free(again);
	img_free(img);
	lt_buf_free(&out);
	return rc;
}

/* ---- fuzz_pdb ---- */

/* Invariant of pdb_seq: a Sequence Points blob that decodes encodes, and the
 * encoding decodes to the same points. */
static void pdb_seq_round_trip(const struct md_image *md, uint32_t row)
{
	uint32_t doc = md_get(md, MD_METHODDEBUGINFORMATION, row, MD_METHODDEBUGINFORMATION_DOCUMENT), len;
	struct pdb_seq seq = { 0 }, again = { 0 };
	struct lt_buf out = LT_BUF_INIT;
	const uint8_t *blob;

	lt_error_clear();
	if (md_blob(md, md_get(md, MD_METHODDEBUGINFORMATION, row, MD_METHODDEBUGINFORMATION_SEQUENCEPOINTS),
		    &blob, &len) < 0 || len == 0 || fuzz_expect(pdb_seq_decode(blob, len, doc, &seq)) < 0)
		return;
	if (pdb_seq_encode(&seq, doc, &out) < 0)
		fuzz_fail("a decoded Sequence Points blob does not encode");
	if (pdb_seq_decode(out.data, (uint32_t)out.len, doc, &again) < 0)
		fuzz_fail("an encoded Sequence Points blob does not decode");
	if (again.n != seq.n || again.local_signature != seq.local_signature ||
	    memcmp(again.points, seq.points, seq.n * sizeof *seq.points) != 0)
		fuzz_fail("Sequence Points: decode(encode(points)) differs from points");
	pdb_seq_free(&seq);
	pdb_seq_free(&again);
	lt_buf_free(&out);
}

int fuzz_pdb(const uint8_t *data, size_t size)
{
	static const uint32_t offsets[] = { 0, 1, 0x10, UINT32_MAX };
	struct pdb_found pdb = { .source = PDB_EMBEDDED, .codeview = -1, .embedded = -1 };
	struct wlines lines;
	struct lt_buf out = LT_BUF_INIT;
	struct md_image again;
	struct pdb_seq_point point;
	char text[300];
	uint32_t row;
	size_t i;
	int rc;

	lt_error_clear();
	if (fuzz_expect(md_read(&pdb.md, data, size)) < 0)
		return -1;
	if (fuzz_expect(wlines_init(&lines, pdb.md.has_pdb ? &pdb : NULL, NULL)) < 0) {
		md_free(&pdb.md);
		return -1;
	}
	for (row = 1; lines.has_pdb && row <= md_rows(&pdb.md, MD_METHODDEBUGINFORMATION); row++) {
		for (i = 0; i < sizeof offsets / sizeof *offsets; i++)
			if (wlines_point(&lines, row, offsets[i], i % 2 ? WLINES_AFTER : WLINES_AT_OR_BEFORE, &point) > 0)
				(void)wlines_format(&lines, point.document, point.start_line, point.start_column, text,
						    sizeof text);
		pdb_seq_round_trip(&pdb.md, row);
	}
	lt_error_clear();
	rc = fuzz_expect(md_write(&pdb.md, &out));
	if (rc == 0) {
		if (md_read(&again, out.data, out.len) < 0)
			fuzz_fail("md_write wrote metadata that does not read");
		md_free(&again);
	}
	lt_buf_free(&out);
	wlines_free(&lines);
	md_free(&pdb.md);
	return rc;
}

/* ---- fuzz_mdb ---- */

/* Invariant of mdb_lnt: a method's decoded line table encodes, and the
 * encoding decodes to the same points. */
static void mdb_lnt_round_trip(const struct mdb_file *f, const struct mdb_method *m)
{
	struct mdb_file encoded = *f;
	struct lt_buf out = LT_BUF_INIT;
	struct pdb_seq again = { 0 };

	if (mdb_lnt_encode(f, &m->seq, m->flags, &out) < 0)
		fuzz_fail("a decoded .mdb line table does not encode");
	encoded.data = out.data;
	encoded.size = out.len;
	if (mdb_lnt_decode(&encoded, 0, m->flags, &again) < 0)
		fuzz_fail("an encoded .mdb line table does not decode");
	if (again.n != m->seq.n || (again.n && memcmp(again.points, m->seq.points, again.n * sizeof *again.points) != 0))
		fuzz_fail(".mdb line table: decode(encode(points)) differs from points");
	pdb_seq_free(&again);
	lt_buf_free(&out);
}

int fuzz_mdb(const uint8_t *data, size_t size)
{
	struct mdb_file f, again;
	struct pdb_found found = { .source = PDB_MDB, .codeview = -1, .embedded = -1, .mdb = &f };
	const struct pdb_seq **seqs;
	struct lt_buf out = LT_BUF_INIT;
	struct pdb_seq_point point;
	struct wlines lines;
	char text[300];

	lt_error_clear();
	if (fuzz_expect(mdb_read(data, size, &f)) < 0)
		return -1;
	if (fuzz_expect(wlines_init(&lines, &found, NULL)) < 0) {
		mdb_free(&f);
		return -1;
	}
	for (uint32_t i = 0; i < f.nmethods; i++) {
		if (wlines_point(&lines, f.methods[i].token & 0xFFFFFF, 0x10, WLINES_AT_OR_BEFORE, &point) > 0)
			(void)wlines_format(&lines, point.document, point.start_line, point.start_column, text, sizeof text);
		mdb_lnt_round_trip(&f, &f.methods[i]);
	}
	wlines_free(&lines);
	/* Every line table written anew: the file reads again with the same points. */
	if (!(seqs = lt_calloc(f.nmethods + 1, sizeof *seqs)))
		fuzz_fail("out of memory");
	for (uint32_t i = 0; i < f.nmethods; i++)
		seqs[i] = &f.methods[i].seq;
	if (mdb_write(&f, f.guid, seqs, &out) == 0) {
		if (mdb_read(out.data, out.len, &again) < 0)
			fuzz_fail("mdb_write wrote a file that does not read");
		for (uint32_t i = 0; i < f.nmethods; i++)
			if (again.methods[i].seq.n != f.methods[i].seq.n)
				fuzz_fail("mdb_write changed a method's line table");
		mdb_free(&again);
	} else if (lt_error_last()->code != LT_E_NOMEM && lt_error_last()->code != LT_E_LIMIT) {
		fuzz_fail("mdb_write failed on what mdb_read accepted");
	}
	free(seqs);
	lt_buf_free(&out);
	mdb_free(&f);
	return 0;
}

/* ---- fuzz_nupkg ---- */

int fuzz_nupkg(const uint8_t *data, size_t size)
{
	static const struct nupkg_limits lim = { 256, 1 << 20, 4 << 20 };
	struct nupkg *p = NULL, *again = NULL;
	struct lt_buf out = LT_BUF_INIT;
	uint32_t i;
	int rc;

	lt_error_clear();
	if (fuzz_expect(nupkg_open(&p, data, size, &lim)) < 0)
		return -1;
	for (i = 0; i < p->nentries; i++) {
		struct img *img = NULL;
		uint8_t *entry;
		size_t len, tfm_at, tfm_len;

		lt_error_clear();
		if (fuzz_expect(nupkg_read(p, i, &entry, &len)) < 0)
			continue;
		if (nupkg_is_assembly(p->entries[i].name, &tfm_at, &tfm_len)) {
			(void)fuzz_expect(img_load(&img, entry, len));
			img_free(img);
		} else {
			free(entry);
		}
	}
	lt_error_clear();
	rc = fuzz_expect(nupkg_write(p, &out));
	if (rc == 0) {
		if (nupkg_open(&again, out.data, out.len, &lim) < 0)
			fuzz_fail("nupkg_write wrote a package that does not open");
		nupkg_free(again);
	}
	nupkg_free(p);
	lt_buf_free(&out);
	return rc;
}

int fuzz_report(const uint8_t *data, size_t size)
{
	struct rp_report r = RP_REPORT_INIT;
	struct rp_limits zero = { 0, 0, 1 };
	struct lt_buf out = LT_BUF_INIT;
	size_t sites, deadlocks, events, over;
	int rc;

	lt_error_clear();
	rc = fuzz_expect(rp_add_json(&r, (const char *)data, size));
	if (rc == 0) {
		sites = r.n_sites;
		deadlocks = r.n_deadlocks;
		events = r.n_timelines ? r.timelines[0].n_events : 0;
		lt_error_clear();
		if (fuzz_expect(rp_add_json(&r, (const char *)data, size)) == 0 && r.n_sites != sites)
			fuzz_fail("a report added onto itself changed its number of sites");
		if (r.n_deadlocks > deadlocks)
			fuzz_fail("a report added onto itself gave a deadlock twice");
		if (r.n_timelines > 1 || (r.n_timelines && r.timelines[0].n_events != events))
			fuzz_fail("a report added onto itself gave its timeline twice, or an event twice");
		rp_sort(&r);
		lt_error_clear();
		if (rp_write_html(&r, &out) || rp_write_pprof(&r, &out) || rp_write_text(&r, &out) ||
		    rp_write_check(&r, &zero, &out, &over) || rp_write_trace(&r, &out))
			if (lt_error_last()->code != LT_E_NOMEM)
				fuzz_fail("a writer failed on a report the reader accepted");
	}
	lt_buf_free(&out);
	rp_free(&r);
	return rc;
}

int fuzz_monokey(const uint8_t *data, size_t size)
{
	struct lt_rsa_key *key;
	uint8_t *blob;
	size_t len, bits;
	int rc;

	lt_error_clear();
	if (fuzz_expect(lt_mono_key_parse(data, size, &blob, &len)) < 0)
		return -1;
	bits = len >= 20 ? (size_t)blob[12] | (size_t)blob[13] << 8 | (size_t)blob[14] << 16 | (size_t)blob[15] << 24 : 0;
	if (len < 20 || blob[0] != 0x07 || memcmp(blob + 8, "RSA2", 4) || len != 20 + 2 * (bits / 8) + 5 * (bits / 16))
		fuzz_fail("lt_mono_key_parse made no PRIVATEKEYBLOB of its bit length's size");
	lt_error_clear();
	rc = fuzz_expect(lt_rsa_from_snk(&key, blob, len));
	lt_rsa_free(key);
	free(blob);
	return rc;
}

const struct fuzz_target fuzz_targets[] = {
	{ "image", fuzz_image },
	{ "sig", fuzz_sig },
	{ "weave", fuzz_weave },
	{ "roundtrip", fuzz_roundtrip },
	{ "pdb", fuzz_pdb },
	{ "mdb", fuzz_mdb },
	{ "nupkg", fuzz_nupkg },
	{ "report", fuzz_report },
	{ "monokey", fuzz_monokey },
};
const size_t fuzz_ntargets = sizeof fuzz_targets / sizeof *fuzz_targets;
