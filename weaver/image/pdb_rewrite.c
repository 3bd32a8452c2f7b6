/* pdb_rewrite.c - a portable PDB brought up to date with rewritten method bodies (PortablePdb-Metadata.md). */
#include "pdb_rewrite.h"
#include "lt_cursor.h"
#include "lt_error.h"
#include "lt_hash.h"
#include "md_find.h"
#include "pdb_seq.h"
#include "sig.h"

#include <string.h>

const uint8_t pdb_kind_hoisted_scopes[16] = { 0x1E, 0xA6, 0xA9, 0x6D, 0xC7, 0xF8, 0x74, 0x48,
					      0xBE, 0x62, 0x68, 0xBC, 0x56, 0x30, 0xDF, 0x71 };
const uint8_t pdb_kind_async_stepping[16] = { 0xC5, 0x2A, 0xFD, 0x54, 0x25, 0xE9, 0x1A, 0x40,
					      0x9C, 0x2A, 0xF9, 0x4F, 0x17, 0x10, 0x72, 0xF8 };

int pdb_method_map(const struct img *img, uint32_t row, const struct pdb_map **out)
{
	*out = NULL;
	if (row == 0 || row > img->nbodies || !img->bodies[row - 1].data)
		return 0;
	if (!img->bodies[row - 1].map)
		return lt_error_set(LT_E_PDB, "MethodDef row %u: body replaced without an offset map", row);
	*out = img->bodies[row - 1].map;
	return 0;
}

/* The StandAloneSig row of a body's locals: LocalVarSigTok at offset 8 of a
 * fat header (II.25.4.3), 0 for a tiny header or no locals. */
static uint32_t body_local_signature(const struct img_body *b)
{
	uint32_t tok;

	if (b->len < 12 || (b->data[0] & 3) != 3)
		return 0;
	tok = lt_le32(b->data + 8);
	return md_token_table(tok) == MD_STANDALONESIG ? md_token_row(tok) : 0;
}

/* The range [start, start+len) of the input body, re-mapped: a range from
 * offset 0 still starts at 0 (code inserted before the first instruction is
 * inside it), and one to the end still ends at the end.  LT_E_PDB when it
 * passes the code or holds no instruction any more. */
static int map_range(const struct pdb_map *m, uint32_t start, uint32_t len, uint32_t *nstart, uint32_t *nlen)
{
	uint32_t nend;

	if (len > m->old_size || start > m->old_size - len)
		return lt_error_set(LT_E_PDB, "IL range 0x%x+0x%x passes the method's 0x%x bytes of code", start, len,
				    m->old_size);
	*nstart = 0;
	if ((start != 0 && pdb_map_offset(m, start, nstart) < 0) || pdb_map_offset(m, start + len, &nend) < 0)
		return -1;
	if (nend <= *nstart)
		return lt_error_set(LT_E_PDB, "IL range 0x%x+0x%x holds no instruction after the rewrite", start, len);
	*nlen = nend - *nstart;
	return 0;
}

/* Replace blob cell (t, row, col) with the bytes of b. */
static int set_blob(struct md_image *pdb, enum md_table_id t, uint32_t row, unsigned col, const struct lt_buf *b)
{
	uint32_t index;

	if (md_add_blob(pdb, b->data, (uint32_t)b->len, &index) < 0)
		return -1;
	md_set(pdb, t, row, col, index);
	return 0;
}

/* MethodDebugInformation row `row`: its sequence points re-mapped. */
static int rewrite_sequence_points(struct md_image *pdb, const struct img *img, uint32_t row, const struct pdb_map *m)
{
	uint32_t doc = md_get(pdb, MD_METHODDEBUGINFORMATION, row, MD_METHODDEBUGINFORMATION_DOCUMENT);
	uint32_t index = md_get(pdb, MD_METHODDEBUGINFORMATION, row, MD_METHODDEBUGINFORMATION_SEQUENCEPOINTS);
	struct pdb_seq s = { 0 };
	struct lt_buf b = LT_BUF_INIT;
	const uint8_t *p;
	uint32_t len;
	int rc = -1;

	if (md_blob(pdb, index, &p, &len) < 0 || pdb_seq_decode(p, len, doc, &s) < 0 || pdb_seq_remap(&s, m) < 0)
		goto done;
	s.local_signature = body_local_signature(&img->bodies[row - 1]);
	if (pdb_seq_encode(&s, doc, &b) < 0 ||
	    set_blob(pdb, MD_METHODDEBUGINFORMATION, row, MD_METHODDEBUGINFORMATION_SEQUENCEPOINTS, &b) < 0)
		goto done;
	rc = 0;
done:
	pdb_seq_free(&s);
	lt_buf_free(&b);
	return rc;
}

/* LocalScope rows of changed methods re-mapped; the table must stay sorted
 * by Method, StartOffset, then Length descending, as its VariableList and
 * ConstantList runs depend on the row order. */
static int rewrite_scopes(struct md_image *pdb, const struct img *img)
{
	uint32_t r, n = md_rows(pdb, MD_LOCALSCOPE);

	for (r = 1; r <= n; r++) {
		const struct pdb_map *m;
		uint32_t start, len;

		if (pdb_method_map(img, md_get(pdb, MD_LOCALSCOPE, r, MD_LOCALSCOPE_METHOD), &m) < 0)
			return lt_error_prefix("LocalScope row %u: ", r);
		if (!m)
			continue;
		if (map_range(m, md_get(pdb, MD_LOCALSCOPE, r, MD_LOCALSCOPE_STARTOFFSET),
			      md_get(pdb, MD_LOCALSCOPE, r, MD_LOCALSCOPE_LENGTH), &start, &len) < 0)
			return lt_error_prefix("LocalScope row %u: ", r);
		md_set(pdb, MD_LOCALSCOPE, r, MD_LOCALSCOPE_STARTOFFSET, start);
		md_set(pdb, MD_LOCALSCOPE, r, MD_LOCALSCOPE_LENGTH, len);
	}
	for (r = 2; r <= n; r++) {
		uint32_t s0 = md_get(pdb, MD_LOCALSCOPE, r - 1, MD_LOCALSCOPE_STARTOFFSET);
		uint32_t s1 = md_get(pdb, MD_LOCALSCOPE, r, MD_LOCALSCOPE_STARTOFFSET);

		if (md_get(pdb, MD_LOCALSCOPE, r - 1, MD_LOCALSCOPE_METHOD) == md_get(pdb, MD_LOCALSCOPE, r, MD_LOCALSCOPE_METHOD) &&
		    (s1 < s0 || (s1 == s0 && md_get(pdb, MD_LOCALSCOPE, r, MD_LOCALSCOPE_LENGTH) >
						 md_get(pdb, MD_LOCALSCOPE, r - 1, MD_LOCALSCOPE_LENGTH))))
			return lt_error_set(LT_E_PDB, "LocalScope row %u: out of order after re-mapping (instructions moved)", r);
	}
	return 0;
}

/* State Machine Hoisted Local Scopes: (StartOffset u32, Length u32)*; a
 * (0, 0) pair is a variable with no scope and stays so. */
static int remap_hoisted(const uint8_t *p, uint32_t len, const struct pdb_map *m, struct lt_buf *out)
{
	if (len % 8)
		return lt_error_set(LT_E_PDB, "hoisted local scopes blob: %u bytes, not pairs of u32", len);
	for (uint32_t i = 0; i < len; i += 8) {
		uint32_t start = lt_le32(p + i), n = lt_le32(p + i + 4);

		if ((start || n) && map_range(m, start, n, &start, &n) < 0)
			return lt_error_prefix("hoisted local scope %u: ", i / 8);
		if (lt_buf_u32(out, start) < 0 || lt_buf_u32(out, n) < 0)
			return -1;
	}
	return 0;
}

/* Async Method Stepping Information: CatchHandlerOffset + 1 (0: none) u32,
 * then (YieldOffset u32, ResumeOffset u32, ResumeMethod compressed
 * MethodDef row)*.  Yields are in the MoveNext method (map m), resumes in
 * ResumeMethod. */
static int remap_async(const struct img *img, const uint8_t *p, uint32_t len, const struct pdb_map *m,
		       struct lt_buf *out)
{
	struct lt_cur c = lt_cur_init(p, len, LT_E_PDB, "async stepping blob");
	uint32_t v, yield, resume, method;
	const struct pdb_map *rm;

	if (lt_cur_u32(&c, &v) < 0 || (v && pdb_map_offset(m, v - 1, &v) < 0) || lt_buf_u32(out, v ? v + 1 : 0) < 0)
		return -1;
	while (lt_cur_left(&c) > 0) {
		if (lt_cur_u32(&c, &yield) < 0 || lt_cur_u32(&c, &resume) < 0 || sig_uint_decode(&c, &method) < 0 ||
		    pdb_method_map(img, method, &rm) < 0 || pdb_map_offset(m, yield, &yield) < 0 ||
		    (rm && pdb_map_offset(rm, resume, &resume) < 0))
			return -1;
		if (lt_buf_u32(out, yield) < 0 || lt_buf_u32(out, resume) < 0 || sig_uint_encode(out, method) < 0)
			return -1;
	}
	return 0;
}

/* CustomDebugInformation rows with IL offsets whose parent method changed. */
static int rewrite_custom(struct md_image *pdb, const struct img *img)
{
	struct lt_buf b = LT_BUF_INIT;
	int rc = 0;

	for (uint32_t r = 1; r <= md_rows(pdb, MD_CUSTOMDEBUGINFORMATION) && rc == 0; r++) {
		const uint8_t *kind, *p;
		const struct pdb_map *m;
		uint32_t parent, len;
		int hoisted;

		if (md_coded_decode(MD_CI_HASCUSTOMDEBUGINFORMATION,
				    md_get(pdb, MD_CUSTOMDEBUGINFORMATION, r, MD_CUSTOMDEBUGINFORMATION_PARENT), &parent) < 0 ||
		    md_guid(pdb, md_get(pdb, MD_CUSTOMDEBUGINFORMATION, r, MD_CUSTOMDEBUGINFORMATION_KIND), &kind) < 0) {
			rc = -1;
			break;
		}
		hoisted = !memcmp(kind, pdb_kind_hoisted_scopes, 16);
		if (md_token_table(parent) != MD_METHODDEF || (!hoisted && memcmp(kind, pdb_kind_async_stepping, 16)))
			continue;
		b.len = 0;
		if (pdb_method_map(img, md_token_row(parent), &m) < 0 ||
		    (m && (md_blob(pdb, md_get(pdb, MD_CUSTOMDEBUGINFORMATION, r, MD_CUSTOMDEBUGINFORMATION_VALUE), &p, &len) < 0 ||
			   (hoisted ? remap_hoisted(p, len, m, &b) : remap_async(img, p, len, m, &b)) < 0 ||
			   set_blob(pdb, MD_CUSTOMDEBUGINFORMATION, r, MD_CUSTOMDEBUGINFORMATION_VALUE, &b) < 0)))
			rc = lt_error_prefix("CustomDebugInformation row %u: ", r);
	}
	lt_buf_free(&b);
	return rc;
}

/* Offset of the #Pdb stream in a metadata root written by md_write (II.24.2.1-2). */
static int pdb_stream_offset(const uint8_t *root, size_t len, size_t *off)
{
	struct lt_cur c = lt_cur_init(root, len, LT_E_PDB, "written PDB");
	uint32_t vlen, soff, ssize;
	uint16_t n;

	if (lt_cur_skip(&c, 12) < 0 || lt_cur_u32(&c, &vlen) < 0 || lt_cur_skip(&c, vlen + 2) < 0 ||
	    lt_cur_u16(&c, &n) < 0)
		return -1;
	for (uint16_t i = 0; i < n; i++) {
		const char *name;
		size_t nl;

		if (lt_cur_u32(&c, &soff) < 0 || lt_cur_u32(&c, &ssize) < 0)
			return -1;
		name = (const char *)c.data + c.pos;
		nl = strnlen(name, lt_cur_left(&c));
		if (lt_cur_skip(&c, (nl + 4) & ~(size_t)3) < 0)
			return -1;
		if (nl == 4 && !memcmp(name, "#Pdb", 4) && ssize >= 20 && soff <= len - 20) {
			*off = soff;
			return 0;
		}
	}
	return lt_error_set(LT_E_PDB, "written PDB: no #Pdb stream");
}

/* The PDB's description of the input must fit img: as many rows per type-system table at most. */
static int check_matches(const struct md_image *pdb, const struct img *img)
{
	uint32_t n = pdb->type_system_rows[MD_METHODDEF], mdi = md_rows(pdb, MD_METHODDEBUGINFORMATION);

	for (unsigned t = 0; t < MD_DOCUMENT; t++)
		if (pdb->type_system_rows[t] > md_rows(&img->md, t))
			return lt_error_set(LT_E_PDB, "#Pdb: %u %s rows, the assembly has %u: not this assembly's PDB",
					    pdb->type_system_rows[t], md_schema[t].name, md_rows(&img->md, t));
	if (mdi && mdi != n)
		return lt_error_set(LT_E_PDB, "MethodDebugInformation has %u rows for %u MethodDefs", mdi, n);
	return 0;
}

int pdb_rewrite(struct md_image *pdb, const struct img *img, struct lt_buf *out, uint8_t id[20], size_t *id_offset,
		uint8_t sha256[32])
{
	uint32_t n = pdb->type_system_rows[MD_METHODDEF], mdi = md_rows(pdb, MD_METHODDEBUGINFORMATION), row;
	uint8_t hash[64];
	size_t hash_len;

	if (check_matches(pdb, img) < 0)
		return -1;
	for (row = 1; row <= mdi; row++) {
		const struct pdb_map *m;

		if (md_get(pdb, MD_METHODDEBUGINFORMATION, row, MD_METHODDEBUGINFORMATION_SEQUENCEPOINTS) == 0)
			continue;
		if (pdb_method_map(img, row, &m) < 0 || (m && rewrite_sequence_points(pdb, img, row, m) < 0))
			return lt_error_prefix("MethodDebugInformation row %u: ", row);
	}
	if (rewrite_scopes(pdb, img) < 0 || rewrite_custom(pdb, img) < 0)
		return -1;
	/* One MethodDebugInformation row per MethodDef: the added methods have no source. */
	for (row = n + 1; mdi && row <= md_rows(&img->md, MD_METHODDEF); row++) {
		static const uint32_t none[MD_METHODDEBUGINFORMATION_COLS] = { 0, 0 };
		uint32_t added;

		if (md_append_row(pdb, MD_METHODDEBUGINFORMATION, none, &added) < 0)
			return -1;
	}
	for (unsigned t = 0; t < MD_DOCUMENT; t++)
		pdb->type_system_rows[t] = md_rows(&img->md, t);
	/* Appends are over: the lookups' memory back before the PDB is written. */
	md_drop_lookups(pdb);
	/* PE-COFF.md: the id is derived from the hash of the PDB with the id zeroed. */
	memset(pdb->pdb_id, 0, sizeof pdb->pdb_id);
	out->len = 0;
	if (md_write(pdb, out) < 0 || pdb_stream_offset(out->data, out->len, id_offset) < 0 ||
	    pdb_checksum(out->data, out->len, *id_offset, "SHA256", hash, &hash_len) < 0)
		return -1;
	memcpy(sha256, hash, 32);
	memcpy(id, hash, 20);
	id[7] = (uint8_t)((id[7] & 0x0F) | 0x40);  /* GUID version 4 (RFC 4122 4.1.3) */
	id[8] = (uint8_t)((id[8] & 0x3F) | 0x80);  /* RFC 4122 variant */
	id[19] |= 0x80;                            /* stamp: top bit set */
	memcpy(out->data + *id_offset, id, 20);
	memcpy(pdb->pdb_id, id, 20);
	return 0;
}

int pdb_checksum(const uint8_t *pdb, size_t len, size_t id_offset, const char *alg, uint8_t out[64], size_t *out_len)
{
	static const uint8_t zero[20];
	enum lt_hash_alg a;
	struct lt_hash *h;
	int rc;

	if (lt_hash_by_name(alg, &a) < 0)
		return -1;
	if (id_offset > len || len - id_offset < 20)
		return lt_error_set(LT_E_PDB, "PDB id at 0x%zx passes the PDB's 0x%zx bytes", id_offset, len);
	if (lt_hash_new(&h, a) < 0)
		return -1;
	rc = lt_hash_update(h, pdb, id_offset) < 0 || lt_hash_update(h, zero, sizeof zero) < 0 ||
	     lt_hash_update(h, pdb + id_offset + 20, len - id_offset - 20) < 0 || lt_hash_final(h, out) < 0 ? -1 : 0;
	lt_hash_free(h);
	*out_len = lt_hash_size(a);
	return rc;
}
