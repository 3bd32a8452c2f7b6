/* mdb.h - Mono's symbol files (<assembly>.mdb, version 50.0, as mcs and
 * classic xbuild projects write them; format as Mono's
 * Mono.CompilerServices.SymbolWriter reads and writes it: MonoSymbolFile.cs,
 * MonoSymbolTable.cs):
 *
 *   header       magic 0x45e82623fd7fa614 (u64), major 50, minor (i32 each),
 *                GUID (16 bytes: the module's Mvid as #GUID holds it)
 *   offset table 20 x i32 at byte 32: total file size; data section offset,
 *                size; compile unit count, table offset, size; source count,
 *                offset, size; method count, offset, size; type count;
 *                anonymous scope count, offset, size; line table LineBase,
 *                LineRange, OpcodeBase; file flags
 *   tables       source entries (Index, DataOffset: i32 each; the data: name
 *                as a 7-bit length then UTF-8, GUID, MD5, auto-generated
 *                byte); compile unit entries (Index, DataOffset; the data: its
 *                source's index, include files, namespaces as LEB128s);
 *                method entries (Token, DataOffset, LineNumberTableOffset:
 *                i32 each), sorted by token (Mono's run time bsearches them;
 *                the data: 7 LEB128s, CompileUnitIndex to Flags)
 *   line tables  a DWARF-like state machine per method (see mdb_lnt_decode),
 *                then its columns and end lines when the method's Flags say so.
 *
 * LEB128 values are BinaryWriter's 7-bit encoded int32 (at most 5 bytes; a
 * negative one as its 32 bits).  Parsed from memory; the files are read by
 * the caller. */
#ifndef MDB_H
#define MDB_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "lt_buf.h"
#include "lt_cursor.h"
#include "pdb_seq.h"

#define MDB_MAGIC 0x45e82623fd7fa614ull
#define MDB_MAJOR 50
#define MDB_HEADER 112           /* magic, versions, GUID, offset table */
#define MDB_GUID_OFFSET 16
#define MDB_TOTAL_SIZE_OFFSET 32 /* OffsetTable.TotalFileSize */
#define MDB_METHOD_TABLE_OFFSET 72 /* OffsetTable.MethodTableOffset */
#define MDB_METHOD_ENTRY 12      /* Token, DataOffset, LineNumberTableOffset */
#define MDB_SOURCE_ENTRY 8       /* Index, DataOffset */
#define MDB_UNIT_ENTRY 8         /* Index, DataOffset */
#define MDB_MAX_NAME 4095        /* longest source file name LockTime reads, bytes */

/* MethodEntry.Flags: what follows the method's line table. */
#define MDB_COLUMNS 0x2 /* ColumnsInfoIncluded: a start column per entry */
#define MDB_ENDS 0x4    /* EndInfoIncluded: an end line and column per entry */

/* end_column of an entry without an end (Mono writes its end-line delta as 0xFFFFFF). */
#define MDB_NO_END_COLUMN 0xFFFFFFFFu

struct mdb_source {
	char *name; /* NUL-terminated UTF-8 (owned), as the compiler was given it */
};

struct mdb_method {
	uint32_t token;        /* MethodDef token (0x06000000 | row) */
	uint32_t entry_offset; /* bytes from the file start to its method table entry */
	uint32_t flags;        /* MethodEntry.Flags (MDB_COLUMNS, MDB_ENDS) */
	/* Its line table as sequence points: offset (IL bytes), document (the
	 * 1-based source index), start_line (Row; 0xFEEFEE for a line Mono's run
	 * time skips), start_column (0 without MDB_COLUMNS), end_line and
	 * end_column (MDB_NO_END_COLUMN and end_line = start_line: no end,
	 * as every entry without MDB_ENDS), hidden (the
	 * DW_LNE_MONO_negate_is_hidden state).  Offsets never decrease. */
	struct pdb_seq seq;
};

struct mdb_file {
	const uint8_t *data;   /* the file (borrowed) */
	size_t size;
	uint8_t guid[16];
	int32_t line_base;     /* the line table's parameters (offset table) */
	uint32_t line_range, opcode_base;
	uint32_t nsources;
	struct mdb_source *sources; /* [index - 1] */
	uint32_t nmethods;
	struct mdb_method *methods; /* by token, increasing */
};

/* A LEB128 value (BinaryWriter's 7-bit encoded int32, at most 5 bytes) at
 * c's position into *out, moving past it.  Returns 0, or -1 with c's code
 * (the end passed, a value past 32 bits). */
int mdb_leb128(struct lt_cur *c, uint32_t *out);

/* Parse the .mdb data[0..size) (borrowed: it must outlive *out) into *out:
 * the header and offset table (magic, major version 50, TotalFileSize the
 * file's size, each table inside the file), every source (name non-empty, at
 * most MDB_MAX_NAME bytes, no NUL), every compile unit (its source index
 * valid), and every method (tokens of MethodDefs, strictly increasing; a
 * valid compile unit; its line table decoded by mdb_lnt_decode).  Returns 0
 * (release with mdb_free), or -1 with LT_E_PDB naming the part and what is
 * wrong, or LT_E_NOMEM; *out is released then. */
int mdb_read(const uint8_t *data, size_t size, struct mdb_file *out);

/* Release what mdb_read allocated.  NULL is a no-op. */
void mdb_free(struct mdb_file *f);

/* The method with MethodDef token `token`, or NULL when the file has none. */
const struct mdb_method *mdb_method(const struct mdb_file *f, uint32_t token);

/* Decode the line table at byte `offset` of f's file for a method with
 * MethodEntry.Flags `flags` into *out (local_signature 0).  The state machine
 * starts at offset 0, line 1, file 1, not hidden; opcodes: 0 extended (a
 * size byte, then DW_LNE_end_sequence 1 ends the table,
 * DW_LNE_MONO_negate_is_hidden 0x40 flips hidden, 0x41-0x7F are skipped),
 * DW_LNS_copy 1 adds an entry, DW_LNS_advance_pc 2 / advance_line 3 /
 * set_file 4 take a LEB128, DW_LNS_const_add_pc 8 adds (255 - OpcodeBase) /
 * LineRange to the offset; from OpcodeBase on, special opcodes add
 * (op - OpcodeBase) / LineRange to the offset and LineBase + (op -
 * OpcodeBase) % LineRange to the line, then add an entry.  A change after
 * the last entry adds one at the end.  Then one start column per entry
 * (MDB_COLUMNS), then per entry an end-line delta and end column, or
 * 0xFFFFFF for none (MDB_ENDS).  Offsets and lines below 0x20000000,
 * offsets never decreasing, files 1..f->nsources, columns below 0x10000.
 * Returns 0 (free *out with pdb_seq_free), or -1 with LT_E_PDB (what is
 * wrong at which byte) or LT_E_NOMEM. */
int mdb_lnt_decode(const struct mdb_file *f, uint32_t offset, uint32_t flags, struct pdb_seq *out);

/* Encode s as a line table with f's parameters for a method with Flags
 * `flags`, appended to out: the shortest form Mono's writer uses (a special
 * opcode whenever the line and offset steps fit, DW_LNS_const_add_pc for an
 * offset step below twice the largest a special opcode takes), so that a
 * table decoded from mcs's output encodes to the same bytes.  Returns 0, or
 * -1 with LT_E_PDB (offsets decreasing, a file not 1..f->nsources) or
 * LT_E_NOMEM. */
int mdb_lnt_encode(const struct mdb_file *f, const struct pdb_seq *s, uint32_t flags, struct lt_buf *out);

/* The .mdb of an edited assembly into out: f's file with `guid` as its GUID,
 * then a copy of its method table (MethodTableOffset names it), then for
 * each method i with seqs[i] not NULL a new line table (mdb_lnt_encode)
 * named by its entry in the copy; TotalFileSize set to the new size.  Only
 * the header's bytes change, and mdb_read reads nothing else from them, so
 * the output reads as the input did.  No seqs: f's file with the GUID.  Returns 0,
 * or -1 with LT_E_PDB, LT_E_LIMIT (a file past 2 GiB) or LT_E_NOMEM. */
int mdb_write(const struct mdb_file *f, const uint8_t guid[16], const struct pdb_seq *const *seqs,
	      struct lt_buf *out);

/* The GUID a .mdb must carry for img: its Module row's Mvid (II.22.30; Mono
 * compares the two).  Returns 0, or -1 with LT_E_METADATA (no Module row, a
 * bad #GUID index; an index of 0 gives zeros). */
int mdb_module_guid(const struct img *img, uint8_t guid[16]);

/* The .mdb f read for the input of img, brought up to date with img's edits
 * into out (mdb_write): the line table of every method whose body
 * img_encode_body replaced re-mapped with its offset map (pdb_seq_remap),
 * and img's Mvid (mdb_module_guid) as the GUID.  Returns 0, or -1 with
 * LT_E_PDB (a replaced body without an offset map, a table that cannot be
 * re-mapped), LT_E_METADATA, LT_E_LIMIT or LT_E_NOMEM. */
int mdb_update(const struct mdb_file *f, const struct img *img, struct lt_buf *out);

#endif
