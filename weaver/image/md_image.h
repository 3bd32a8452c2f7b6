/* md_image.h - ECMA-335 metadata in memory: the metadata root, its heaps and
 * its tables, read from bytes (II.24), edited, and written back.
 *
 * Tables are decoded into plain cells: one uint32_t per column per row, with
 * heap indexes, table indexes and coded indexes kept in their on-disk value
 * (a coded index keeps its tag bits, II.24.2.6).  Column widths are recomputed
 * on write from the row counts and heap sizes then in force (II.24.2.6), so
 * appending rows or heap entries widens columns as needed.
 *
 * Existing rows and heap entries are never moved: every token and heap index
 * read from the input stays valid after a write.  The same reader serves
 * portable PDB metadata (tables 0x30-0x37 and the #Pdb stream).
 */
#ifndef MD_IMAGE_H
#define MD_IMAGE_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_buf.h"
#include "md_schema.h"

/* A heap (#Strings, #US, #Blob, #GUID): the input's bytes, borrowed and never
 * changed, followed by entries appended during editing.  Index i < orig_size
 * addresses the input; larger indexes address `added` (at i - orig_size). */
struct md_heap {
	const uint8_t *orig;
	uint32_t orig_size;
	uint8_t *orig_copy;     /* owned: orig when an input entry was replaced (md_set_guid), else NULL */
	struct lt_buf added;
	struct md_dedup *dedup; /* lookup of entries for deduplicated appends (owned) */
};

/* One table: rows * ncols cells, row r (1-based) column c at cells[(r-1)*ncols+c]. */
struct md_table {
	uint32_t rows;
	size_t cap;        /* rows allocated */
	uint8_t ncols;
	uint32_t *cells;   /* owned */
};

/* A stream that is neither a heap nor the table stream (#Pdb, #JTD, unknown):
 * kept byte for byte. */
struct md_stream {
	char name[32];
	const uint8_t *data; /* borrowed */
	uint32_t size;
};

struct md_image {
	/* Metadata root (II.24.2.1) */
	uint16_t major, minor;
	char version[256];
	uint16_t flags;
	/* Table stream header (II.24.2.6) */
	char tables_name[4];   /* "#~", or "#-" for uncompressed (ENC) metadata */
	uint32_t tables_reserved;
	uint8_t tables_major, tables_minor;
	uint8_t heap_sizes;    /* as read; recomputed on write */
	uint8_t tables_reserved2; /* the byte after HeapSizes ("always 1"; writers put 1, 10, 16...) */
	uint64_t valid, sorted;
	uint32_t extra_data;   /* the 4 bytes after the row counts when heap_sizes & 0x40 (#- only) */
	uint8_t tables_end_zero; /* 1 when the input put a 0 byte after the rows before padding to 4
				  * (seen as 4 zero bytes after aligned rows; Roslyn does this) */
	struct md_table tables[MD_TABLE_MAX];
	struct md_heap strings, us, blob, guid;
	/* Portable PDB (#Pdb stream, PortablePdb-Metadata.md): the 20-byte PDB id,
	 * entry point, and the row counts of the type-system tables that size the
	 * PDB's index columns (0 for tables the assembly does not have). */
	int has_pdb;
	uint8_t pdb_id[20];
	uint32_t pdb_entry_point;
	uint32_t type_system_rows[MD_TABLE_MAX];
	/* Other streams, in input order, kept verbatim. */
	struct md_stream *streams;
	uint32_t nstreams;
	/* Order of all streams as read, so writing keeps it (names; at most 8). */
	char stream_order[8][32];
	uint32_t nstream_order;
	/* Row lookups by content (md_find.h), built on first use (owned). */
	struct md_find *find;
};

/* Parse the metadata root at data[0..size) (the bytes the CLI header's
 * MetaData directory names, or a whole portable PDB file).  data is borrowed
 * and must outlive *out.  Checks every stream offset and size, heap-size flag,
 * row count (against the stream size), and every cell: heap indexes inside
 * their heap, table indexes <= rows + 1 (list columns may point one past the
 * end; a non-null coded index <= rows), coded-index tags valid (a cell of 0
 * is null whatever its tag).  Also rejected: a signature other than BSJB, a
 * version length not a multiple of 4 or past 256, more than 8 streams, a
 * stream name not terminated within 32 bytes, a duplicate stream name, both
 * #~ and #-, no table stream, a Valid bit for a table the spec does not
 * define, a row count past 0xFFFFFF or whose rows pass the stream, a #GUID
 * heap that is not a whole number of GUIDs, a #Strings, #US or #Blob heap
 * whose first byte is not 0 (the empty entry at index 0), a #Pdb stream
 * naming a non type-system table or with bytes after its counts.
 * On failure *out is released (md_free) and left empty.
 * Returns 0, or -1 with LT_E_METADATA naming the stream, table, row and column
 * (LT_E_NOMEM when memory runs out). */
int md_read(struct md_image *out, const uint8_t *data, size_t size);

/* md_read for a reader that needs only some tables (a reference assembly
 * looked into by name): the cells of table t are read and checked only when
 * bit t of `tables` is set; every table keeps its row count, so coded
 * indexes and md_rows stay right, but md_get and md_set must not be called
 * on a table left out (its cells are NULL), nor may *out be written. */
int md_read_tables(struct md_image *out, const uint8_t *data, size_t size, uint64_t tables);

/* Release what md_read and the edit functions allocated.  NULL is a no-op. */
void md_free(struct md_image *md);

/* An empty image to build from scratch (tests, new metadata): root version
 * 1.1 with the given version string (at most 255 bytes, e.g. "v4.0.30319"),
 * table stream "#~" 2.0, the usual Sorted word (every sorted table of II.22
 * and of the portable PDB).  Release with md_free. */
void md_init(struct md_image *md, const char *version);

/* The sizes that column widths depend on (II.24.2.6): every table's row count
 * (for PDB metadata, tables below MD_DOCUMENT take type_system_rows from the
 * #Pdb stream) and the given HeapSizes bits. */
void md_image_sizes(const struct md_image *md, uint8_t heap_sizes, struct md_sizes *out);

/* Release a heap's appended entries and lookup (md_free calls it). */
void md_heap_free(struct md_heap *h);

/* Release only the lookup of deduplicated appends (rebuilt by the next
 * append that needs it): memory back before a large write. */
void md_heap_drop_lookup(struct md_heap *h);

/* Serialize the whole metadata root (II.24.2.1-24.2.6), appending it to `out`
 * (stream offsets are relative to the root's first byte): same
 * version string and stream order, heaps = input bytes + appended entries
 * (padded to 4), tables with column widths and HeapSizes recomputed, sorted
 * tables whose Sorted bit is set stably sorted by their key (appended rows move
 * into place; callers must only append rows to sorted tables that no other row
 * refers to).  Streams missing from the input that now have content are added
 * after the others (#Pdb, #~, #Strings, #US, #GUID, #Blob order).
 * Returns 0, or -1 (LT_E_NOMEM, LT_E_LIMIT when a heap would pass 4 GiB or a
 * cell does not fit its column, i.e. a cell the caller set past its target). */
int md_write(const struct md_image *md, struct lt_buf *out);

/* Bytes of the metadata root that md_write_refs leaves out of its output:
 * they belong at offset `at` of that output, and are the `len` bytes at
 * `data` (a heap's or a kept stream's input bytes, borrowed from the file). */
struct md_ref {
	size_t at;
	const uint8_t *data;
	size_t len;
};

#define MD_MAX_REFS 16 /* at most one a stream written */

/* md_write without copying the input's heap and stream bytes: each run of
 * them is recorded in refs[] (*nrefs of them, in ascending `at`) instead, so
 * a writer can emit them from the input file (img_layout).  The root is
 * `out`'s new bytes with every ref's bytes inserted at its `at`.  Returns and
 * fails as md_write. */
int md_write_refs(const struct md_image *md, struct lt_buf *out, struct md_ref refs[MD_MAX_REFS],
		  unsigned *nrefs);

/* Cell access; row is 1-based.  The caller guarantees row and col are in range
 * (asserted): both come from the table itself, never from file data unchecked. */
static inline uint32_t md_get(const struct md_image *md, enum md_table_id t, uint32_t row, unsigned col)
{
	const struct md_table *tab = &md->tables[t];

	assert(row >= 1 && row <= tab->rows && col < tab->ncols);
	return tab->cells[(size_t)(row - 1) * tab->ncols + col];
}

static inline void md_set(struct md_image *md, enum md_table_id t, uint32_t row, unsigned col, uint32_t v)
{
	struct md_table *tab = &md->tables[t];

	assert(row >= 1 && row <= tab->rows && col < tab->ncols);
	tab->cells[(size_t)(row - 1) * tab->ncols + col] = v;
}

static inline uint32_t md_rows(const struct md_image *md, enum md_table_id t) { return md->tables[t].rows; }

/* Append a row (cells in column order); *out_row gets its 1-based row number.
 * Returns 0, or -1 (LT_E_NOMEM, LT_E_LIMIT past 0xFFFFFF rows). */
int md_append_row(struct md_image *md, enum md_table_id t, const uint32_t *cells, uint32_t *out_row);

/* Heap reads.  Each checks the index against the heap (original and added
 * parts) and the entry's extent; -1 with LT_E_METADATA when out of range.
 *  md_string: NUL-terminated UTF-8 at index (II.24.2.3); *out borrowed.
 *  md_blob:   compressed length then bytes (II.24.2.4); *out borrowed, *len bytes.
 *  md_us:     like md_blob; the bytes are UTF-16LE plus the final flag byte.
 *  md_guid:   1-based GUID index (II.24.2.5); *out points at 16 bytes; index 0
 *             (the null GUID) gives 16 zero bytes. */
int md_string(const struct md_image *md, uint32_t index, const char **out);
int md_blob(const struct md_image *md, uint32_t index, const uint8_t **out, uint32_t *len);
int md_us(const struct md_image *md, uint32_t index, const uint8_t **out, uint32_t *len);
int md_guid(const struct md_image *md, uint32_t index, const uint8_t **out);

/* Heap appends, deduplicated against the whole heap (input entries too):
 * adding an existing entry returns its index.  *out gets the heap index.
 *  md_add_string: UTF-8 without NUL.  md_add_blob: the bytes without length.
 *  md_add_us: UTF-16LE code units (n of them); the flag byte is computed
 *  (II.24.2.4).  md_add_guid: 16 bytes; *out is the 1-based GUID index.
 * Return 0, or -1 (LT_E_NOMEM, LT_E_LIMIT). */
int md_add_string(struct md_image *md, const char *s, uint32_t *out);
int md_add_blob(struct md_image *md, const uint8_t *p, uint32_t len, uint32_t *out);
int md_add_us(struct md_image *md, const uint16_t *units, uint32_t n, uint32_t *out);
int md_add_guid(struct md_image *md, const uint8_t guid[16], uint32_t *out);

/* Replace #GUID entry `index` (1-based, an input or an added entry) with
 * guid.  The heap's input part is copied first, so the file's bytes stay
 * as they were.  Returns 0, or -1 with LT_E_METADATA (no such entry) or
 * LT_E_NOMEM. */
int md_set_guid(struct md_image *md, uint32_t index, const uint8_t guid[16]);

/* Tokens (II.22, III.1.9): table id in the top byte, 1-based row below. */
static inline uint32_t md_token(enum md_table_id t, uint32_t row) { return (uint32_t)t << 24 | row; }
static inline enum md_table_id md_token_table(uint32_t tok) { return (enum md_table_id)(tok >> 24); }
static inline uint32_t md_token_row(uint32_t tok) { return tok & 0xFFFFFF; }

/* Coded indexes (II.24.2.6): decode a cell into a token, encode a token into
 * a cell.  Return 0, or -1 with LT_E_METADATA when the tag (or the token's
 * table) is not one the coded index allows. */
int md_coded_decode(enum md_coded_index k, uint32_t cell, uint32_t *out_token);
int md_coded_encode(enum md_coded_index k, uint32_t token, uint32_t *out_cell);

#endif
