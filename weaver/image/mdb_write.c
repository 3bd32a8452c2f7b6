/* mdb_write.c - a Mono .mdb brought up to date with an edited assembly: new GUID, re-mapped line tables (see mdb.h). */
#include "mdb.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "pdb_rewrite.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int mdb_write(const struct mdb_file *f, const uint8_t guid[16], const struct pdb_seq *const *seqs,
	      struct lt_buf *out)
{
	size_t at, table;
	uint32_t changed = 0;

	/* Every table and data offset of the input stays valid: after its last
	 * byte go a copy of the method table, then the new line tables it
	 * points at (nothing when no line table changes).  No input byte but the header's changes, and nothing is
	 * read from the header (mdb_read), so what read before reads again even
	 * where the input's data overlap (a method entry that is also another
	 * entry's data). */
	if (lt_buf_put(out, f->data, f->size) < 0)
		return -1;
	memcpy(out->data + MDB_GUID_OFFSET, guid, 16);
	for (uint32_t i = 0; i < f->nmethods; i++)
		changed += seqs[i] != NULL;
	if (changed && lt_buf_zero(out, (size_t)f->nmethods * MDB_METHOD_ENTRY) < 0)
		return -1;
	table = f->size;
	for (uint32_t i = 0; changed && i < f->nmethods; i++) {
		memcpy(out->data + table + (size_t)i * MDB_METHOD_ENTRY, f->data + f->methods[i].entry_offset,
		       MDB_METHOD_ENTRY);
		if (!seqs[i])
			continue;
		at = out->len;
		if (at > INT32_MAX)
			return lt_error_set(LT_E_LIMIT, "Mono symbol file past 2 GiB");
		if (mdb_lnt_encode(f, seqs[i], f->methods[i].flags, out) < 0)
			return lt_error_prefix("method 0x%08x: ", f->methods[i].token);
		/* LineNumberTableOffset, the third field of the method entry. */
		lt_put32(out->data + table + (size_t)i * MDB_METHOD_ENTRY + 8, (uint32_t)at);
	}
	if (changed)
		lt_put32(out->data + MDB_METHOD_TABLE_OFFSET, (uint32_t)table);
	if (out->len > INT32_MAX)
		return lt_error_set(LT_E_LIMIT, "Mono symbol file past 2 GiB");
	lt_put32(out->data + MDB_TOTAL_SIZE_OFFSET, (uint32_t)out->len);
	return 0;
}

int mdb_module_guid(const struct img *img, uint8_t guid[16])
{
	const struct md_image *md = &img->md;
	const uint8_t *g;
	uint32_t index;

	if (md_rows(md, MD_MODULE) == 0)
		return lt_error_set(LT_E_METADATA, "no Module row (II.22.30)");
	memset(guid, 0, 16);
	index = md_get(md, MD_MODULE, 1, MD_MODULE_MVID);
	if (index == 0)
		return 0;
	if (md_guid(md, index, &g) < 0)
		return lt_error_prefix("Module row 1: ");
	memcpy(guid, g, 16);
	return 0;
}

int mdb_update(const struct mdb_file *f, const struct img *img, struct lt_buf *out)
{
	struct pdb_seq *mapped = lt_calloc(f->nmethods + 1, sizeof *mapped);
	const struct pdb_seq **seqs = lt_calloc(f->nmethods + 1, sizeof *seqs);
	const struct pdb_map *m;
	uint8_t guid[16];
	int rc = -1;

	if (!mapped || !seqs) {
		lt_nomem(NULL);
		goto done;
	}
	if (mdb_module_guid(img, guid) < 0)
		goto done;
	for (uint32_t i = 0; i < f->nmethods; i++) {
		const struct mdb_method *me = &f->methods[i];
		if (pdb_method_map(img, me->token & 0xFFFFFF, &m) < 0) {
			lt_error_prefix("method 0x%08x: ", me->token);
			goto done;
		}
		if (!m || me->seq.n == 0)
			continue;
		/* A copy re-mapped: pdb_seq_remap takes its points. */
		for (uint32_t k = 0; k < me->seq.n; k++)
			if (pdb_seq_push(&mapped[i], &me->seq.points[k]) < 0)
				goto done;
		if (pdb_seq_remap(&mapped[i], m) < 0) {
			lt_error_prefix("method 0x%08x: ", me->token);
			goto done;
		}
		seqs[i] = &mapped[i];
	}
	rc = mdb_write(f, guid, seqs, out);
done:
	for (uint32_t i = 0; mapped && i < f->nmethods; i++)
		pdb_seq_free(&mapped[i]);
	free(mapped);
	free(seqs);
	return rc;
}
