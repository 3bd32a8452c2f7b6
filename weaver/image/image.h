/* image.h - a .NET assembly open for editing: its PE file, its metadata and
 * its method bodies, and the writer that lays them out again.
 *
 * Layout on write (docs/image-layout.md): the section that holds the CLI
 * header is written anew after the last section with the bodies still in
 * use, the new metadata root, resources, strong-name signature, debug data,
 * import table, entry stub and FieldRVA data; its old range is reserved by a
 * section without file data; every other section keeps its RVA and bytes.
 * Tokens and heap indexes stay valid; RVAs into the section are re-pointed. */
#ifndef IMAGE_H
#define IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "lt_buf.h"
#include "lt_file.h"
#include "md_image.h"
#include "pdb_map.h"
#include "pe_file.h"

/* A method body replaced by img_set_method_body (header, code, EH sections). */
struct img_body {
	uint8_t *data; /* owned; NULL = the input's body is kept */
	uint32_t len;
	struct pdb_map *map; /* owned: input -> new IL offsets when img_encode_body
			      * wrote the body; NULL when it was set as bytes */
};

/* New data of a debug directory entry (img_set_debug_data). */
struct img_debug_data {
	uint8_t *data;      /* owned; NULL = the input's data is kept */
	uint32_t len;
	uint32_t timestamp; /* the entry's new TimeDateStamp */
	uint32_t sec_off;   /* set by img_layout: offset of the data in the new CLI section */
};

struct img {
	uint8_t *file;          /* the input file (owned) */
	size_t size;
	struct pe_file pe;
	struct md_image md;
	struct img_body *bodies;/* one per MethodDef row, index row - 1 */
	size_t nbodies;         /* rows bodies[] has room for (zeroed past the set ones) */
	struct img_debug_data *debug_data; /* pe.ndebug entries, NULL until one is set */
};

/* Open the assembly in data[0..size); takes ownership of data (freed by
 * img_free, and on failure).  Refuses what cannot be rewritten correctly:
 *   LT_E_NOT_PE / LT_E_NOT_CLI  not a PE file / not .NET,
 *   LT_E_MIXED_MODE             ILONLY clear or VTableFixups present (C++/CLI),
 *   LT_E_READY_TO_RUN           a ManagedNativeHeader (ReadyToRun/NGen code),
 *   LT_E_METADATA               malformed metadata.
 * Returns 0 and *out (free with img_free), or -1. */
int img_load(struct img **out, uint8_t *data, size_t size);

/* Free everything.  NULL is a no-op. */
void img_free(struct img *img);

/* Whether the assembly carries System.Runtime.CompilerServices.
 * ReferenceAssemblyAttribute (a reference assembly: no real bodies). */
int img_is_reference_assembly(const struct img *img);

/* Whether the CLI header's Flags say the image is strong-name signed
 * (COMIMAGE_FLAGS_STRONGNAMESIGNED, II.25.3.3.1): 1 or 0. */
int img_is_strong_named(const struct img *img);

/* The body of MethodDef `row` (1-based): the replacement if one was set,
 * else the input's bytes at its RVA, sized by parsing its header and EH
 * sections (II.25.4).  *out is borrowed until the body is replaced.
 * A method without a body (RVA 0: abstract, extern, runtime) gives
 * *out = NULL, *len = 0.  Returns 0, or -1 with LT_E_BODY when the RVA is not
 * mapped or the body does not fit its section. */
int img_method_body(const struct img *img, uint32_t row, const uint8_t **out, size_t *len);

/* Replace the body of MethodDef `row` (1-based, may be a row appended after
 * loading) with a copy of body[0..len) - a complete body with header and EH
 * sections, as il_encode writes it.  The row's offset map is dropped (the
 * debug symbols of an input method replaced this way cannot be re-mapped;
 * img_encode_body keeps one).  Returns 0, or -1 (LT_E_NOMEM). */
int img_set_method_body(struct img *img, uint32_t row, const uint8_t *body, size_t len);

/* Give debug directory entry `index` (0-based, in pe.debug order; asserted
 * below pe.ndebug) a copy of data[0..len) and TimeDateStamp `timestamp`, for
 * img_layout to place in the new CLI section, 4-byte aligned, with
 * AddressOfRawData and PointerToRawData pointing at it; SizeOfData becomes
 * len (PE/COFF "Debug Directory").  Setting an entry again replaces
 * the earlier data.  Returns 0, or -1 with LT_E_NOMEM, LT_E_LIMIT past
 * 0x7FFFFFFF bytes. */
int img_set_debug_data(struct img *img, uint32_t index, const uint8_t *data, size_t len, uint32_t timestamp);

/* The ldstr token (III.1.9: 0x70 in the top byte, the #US index below) of
 * the UTF-8 string s, added to #US as UTF-16 (II.24.2.4; deduplicated).
 * Malformed, overlong or surrogate UTF-8 becomes U+FFFD one byte at a time,
 * so names read from a hostile #Strings heap still give a valid string.
 * Returns 0, or -1 with LT_E_NOMEM, or LT_E_LIMIT when the #US index passes
 * the token's 24 bits. */
int img_string_token(struct img *img, const char *s, uint32_t *out);

/* The ldstr token of the UTF-16 code units units[0..n) (a string copied
 * from another image's #US), added as img_string_token adds.  Returns 0, or
 * -1 with LT_E_NOMEM, LT_E_LIMIT. */
int img_us_token(struct img *img, const uint16_t *units, uint32_t n, uint32_t *out);

/* The string of ldstr token `token` (a #US entry, II.24.2.4: UTF-16LE) as
 * UTF-8 into buf[0..n), NUL-terminated, cut at a whole character when it
 * does not fit; a lone surrogate becomes U+FFFD.  Returns 0, or -1 with
 * LT_E_METADATA for a token that is not a #US entry. */
int img_string_of_token(const struct img *img, uint32_t token, char *buf, size_t n);

/* An output range whose bytes differ from the base layout: an owned copy,
 * patched (the headers, the CLI header, debug entries, import and
 * relocation fields). */
struct img_patch {
	uint32_t off;  /* file offset in the output */
	uint32_t len;
	uint8_t *data; /* owned */
};

/* An image laid out by img_layout, held as the pieces of the output file
 * rather than one buffer: runs of the input file, zero fill, the new section
 * and patched copies of the few input ranges that change - so writing an
 * assembly never needs a second copy of it in memory.  The pieces point into
 * img->file: use them before img_free. */
struct img_out {
	struct lt_buf base_buf;    /* owns base */
	struct lt_iov *base;       /* the unpatched output in order (image_write.c): input
				    * runs, zero fill (NULL data), out->section's bytes */
	size_t nbase;
	struct img_patch *patches; /* owned, sorted by off, not overlapping */
	size_t npatches, patches_cap;
	struct lt_buf section;     /* the new bytes of the CLI section (bodies, debug data, metadata) */
	struct lt_iov *parts;      /* owned: base with the patches applied, in order */
	size_t nparts;
	size_t len;                /* the output's size in bytes */
};

#define IMG_OUT_INIT { .nbase = 0 }

/* Lay the image out again (see the file comment) into *out (release with
 * img_out_free, even on failure); write it with lt_file_write_atomic_v
 * (out->parts) or join it with img_out_join.  When nothing was edited the
 * output is still a valid image with new metadata; callers that want
 * byte-identical output for "no change" skip the write.  The image's
 * metadata cells are as loaded again afterwards.  Returns 0, or -1 with
 * LT_E_LAYOUT (no room for one more section header; a data directory other
 * than import, IAT, debug, base relocations or CLI header, or a relocation
 * other than HIGHLOW/DIR64, in the CLI header's section; something pointing
 * into the input metadata root; relocated fields that no longer share a
 * page) or LT_E_NOMEM.  The finished output is read back as an input is
 * (PE headers, metadata, every method body): one that does not read is
 * LT_E_INTERNAL, a defect of the writer, so that no caller writes it. */
int img_layout(struct img *img, struct img_out *out);

/* img_layout, joined into one buffer `out` (its old contents replaced), for
 * callers that need the bytes in memory (a package entry, tests).  Returns 0,
 * or -1 with the errors of img_layout. */
int img_write(struct img *img, struct lt_buf *out);

/* The bytes of out's output range [off, off+len), writable: the patch that
 * holds them, made (or widened, merging the patches it meets) from the base
 * layout when needed.  Ranges past the base's end are refused.  Returns the
 * pointer, valid until the next call, or NULL with LT_E_NOMEM / LT_E_LAYOUT. */
uint8_t *img_out_patch(struct img_out *out, uint32_t off, uint32_t len);

/* Append the run data[0..len) (NULL data: len zero bytes) to out->base;
 * a run of 0 bytes is skipped.  Returns 0, or -1 with LT_E_NOMEM. */
int img_out_add(struct img_out *out, const uint8_t *data, uint64_t len);

/* Build out->parts from out->base and out->patches and set out->len.
 * Returns 0, or -1 with LT_E_NOMEM. */
int img_out_finish(struct img_out *out);

/* Copy the finished output's bytes [off, off+len) to dst.  Returns 0, or
 * -1 with LT_E_INTERNAL when the range passes the output's end. */
int img_out_copy(const struct img_out *out, uint64_t off, size_t len, uint8_t *dst);

/* Append the finished output's bytes to buf.  Returns 0, or -1 with LT_E_NOMEM. */
int img_out_join(const struct img_out *out, struct lt_buf *buf);

/* Free what out owns.  The zeroed struct (IMG_OUT_INIT) is a no-op. */
void img_out_free(struct img_out *out);

#endif
