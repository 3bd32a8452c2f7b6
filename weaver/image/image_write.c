/* image_write.c - laying an edited assembly out again (docs/image-layout.md).
 *
 * The section that holds the CLI header (".text": method bodies, metadata,
 * managed resources, strong-name signature, debug directory, import table
 * and entry stub, FieldRVA data) is written anew after the last section, as
 * Mono.Cecil and dnlib lay it out: the structures of known extent that are
 * still in use are copied, the metadata root, the changed bodies and new
 * debug data are written fresh, and the input bytes nothing uses any more
 * (the old root, replaced bodies, padding) are dropped.  Every RVA that
 * pointed into the section is re-pointed: the entry point, data directories,
 * CLI header fields (II.25.3.3), MethodDef and FieldRVA cells (II.22.26,
 * II.22.18), import descriptors and thunks, base relocations and the
 * addresses they fix up, debug entries.  The old address range stays
 * reserved by a section without file data, so the address space has no gap.
 * Every other section keeps its RVA and its bytes; only file offsets move. */
#include "image.h"
#include "image_text.h"
#include "md_find.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdlib.h>
#include <string.h>

#define SECTION_HEADER_SIZE 40
#define HOLE_NAME ".unused"
/* IMAGE_SCN_CNT_UNINITIALIZED_DATA | IMAGE_SCN_MEM_READ: reserved, no file data. */
#define HOLE_FLAGS 0x40000080u
#define SCN_CNT_CODE 0x20u
#define SCN_CNT_INITIALIZED_DATA 0x40u
#define REL_ABSOLUTE 0
#define REL_HIGHLOW 3
#define REL_DIR64 10
#define MAX_IMPORTS 64 /* import descriptors and thunks read; an IL-only image has one each */

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

struct layout {
	const struct img *img;
	struct text text;
	uint16_t sec;           /* index of the CLI header's section */
	uint32_t headers;       /* new SizeOfHeaders */
	uint32_t hdr_len;       /* output bytes before the first section's data */
	uint32_t first_raw;     /* input bytes before the first section's data */
	uint32_t *raw;          /* new PointerToRawData of each input section (owned) */
	uint32_t new_base;      /* offset of the freshly written part in the new section */
	uint32_t text_len, text_raw;
	uint32_t tail_start, tail_end, tail_raw; /* bytes after the last section (less a certificate) */
	uint64_t image_base;
	uint32_t md_off, md_len;
	struct img_out *out;    /* the output pass 2 writes into */
	uint32_t *saved;        /* the input's MethodDef then FieldRVA RVA cells (owned) */
};

/* A field of the input that holds an RVA (or ImageBase + RVA). */
struct site {
	uint32_t at;        /* input file offset of the field */
	uint8_t width;      /* 4 or 8 bytes */
	uint8_t va;         /* the field holds ImageBase + RVA */
	uint32_t rva;
	uint32_t keep;      /* > 0: the structure there is this long, kept whole */
	const char *what;
};

typedef int (*site_fn)(struct layout *l, const struct site *s);

static const struct pe_section *cli_section(const struct layout *l) { return &l->img->pe.sections[l->sec]; }

static int in_text(const struct layout *l, uint32_t rva)
{
	return rva >= l->text.lo && rva < l->text.hi;
}

/* The input file offset of [rva, rva+len). */
static int input_at(const struct layout *l, uint32_t rva, uint32_t len, uint32_t *out, const char *what)
{
	return pe_rva_to_offset(&l->img->pe, rva, len, out, LT_E_LAYOUT, what);
}

/* Where input file offset off (a field `len` bytes long) is in the output. */
static int output_at(const struct layout *l, uint32_t off, uint32_t len, uint32_t *out)
{
	const struct pe_file *pe = &l->img->pe;
	uint64_t end = (uint64_t)off + len;

	if (end <= l->first_raw) {
		*out = off;
		return 0;
	}
	for (uint16_t i = 0; i < pe->nsections; i++) {
		const struct pe_section *s = &pe->sections[i];
		uint32_t rva;
		if (!s->raw_size || off < s->raw_ptr || end > (uint64_t)s->raw_ptr + s->raw_size)
			continue;
		if (i != l->sec) {
			*out = l->raw[i] + (off - s->raw_ptr);
			return 0;
		}
		if (text_map(&l->text, s->virtual_address + (off - s->raw_ptr), &rva, "data") < 0)
			return -1;
		*out = l->text_raw + (rva - l->text.va);
		return 0;
	}
	if (off >= l->tail_start && end <= l->tail_end) {
		*out = l->tail_raw + (off - l->tail_start);
		return 0;
	}
	return lt_error_set(LT_E_LAYOUT, "file offset 0x%x is in no section", off);
}

/* Set the width-byte field at input file offset `at` to v in the output. */
static int put_at(struct img_out *out, const struct layout *l, uint32_t at, unsigned width, uint64_t v)
{
	uint32_t o;
	uint8_t *p;

	if (output_at(l, at, width, &o) < 0 || !(p = img_out_patch(out, o, width)))
		return -1;
	for (unsigned i = 0; i < width; i++)
		p[i] = (uint8_t)(v >> 8 * i);
	return 0;
}

static uint64_t read_field(const struct layout *l, uint32_t at, unsigned width)
{
	const uint8_t *p = l->img->file + at;
	return width == 8 ? (uint64_t)lt_le32(p) | (uint64_t)lt_le32(p + 4) << 32 : lt_le32(p);
}

/* Pass 1: keep what a site names. */
static int collect_site(struct layout *l, const struct site *s)
{
	return s->keep ? text_keep(&l->text, s->rva, s->keep) : text_point(&l->text, s->rva);
}

/* Pass 2: re-point a site that pointed into the section. */
static int patch_site(struct layout *l, const struct site *s)
{
	uint32_t rva;

	if (!in_text(l, s->rva))
		return 0;
	if (text_map(&l->text, s->rva, &rva, s->what) < 0)
		return -1;
	return put_at(l->out, l, s->at, s->width, s->va ? l->image_base + rva : rva);
}

/* The entry point, the data directories and the CLI header's directories. */
static int walk_headers(struct layout *l, site_fn fn)
{
	const struct pe_file *pe = &l->img->pe;
	uint32_t dirs = pe->opt_offset + (pe->pe32plus ? 112 : 96), cli = pe->cli.offset;
	const struct pe_dir *cd[] = { &pe->cli.resources, &pe->cli.strong_name, &pe->cli.code_manager,
				      &pe->cli.export_jumps };
	static const uint32_t cd_at[] = { 24, 32, 40, 56 };
	uint32_t entry = lt_le32(l->img->file + pe->opt_offset + 16);

	if (entry && fn(l, &(struct site){ pe->opt_offset + 16, 4, 0, entry, 0, "entry point" }) < 0)
		return -1;
	for (uint32_t i = 0; i < pe->ndirs; i++) {
		const struct pe_dir *d = &pe->dirs[i];
		if (i == PE_DIR_CERTIFICATE || !d->rva || !in_text(l, d->rva))
			continue;
		/* II.25.2.3.3: an IL-only image has only these (the runtime
		 * refuses others); Win32 resources live in their own section. */
		if (i != PE_DIR_IMPORT && i != PE_DIR_BASERELOC && i != PE_DIR_DEBUG && i != PE_DIR_IAT &&
		    i != PE_DIR_CLI_HEADER)
			return lt_error_set(LT_E_LAYOUT, "data directory %u points into section %s, which holds the CLI header",
					    i, cli_section(l)->name);
		if (fn(l, &(struct site){ dirs + 8 * i, 4, 0, d->rva, d->size ? d->size : 1, "data directory" }) < 0)
			return -1;
	}
	for (unsigned i = 0; i < sizeof cd / sizeof *cd; i++)
		if (cd[i]->rva && fn(l, &(struct site){ cli + cd_at[i], 4, 0, cd[i]->rva, cd[i]->size ? cd[i]->size : 1,
							 "CLI header directory" }) < 0)
			return -1;
	if ((pe->cli.flags & PE_COMIMAGE_NATIVE_ENTRYPOINT) && pe->cli.entry_point &&
	    fn(l, &(struct site){ cli + 20, 4, 0, pe->cli.entry_point, 0, "native entry point" }) < 0)
		return -1;
	return 0;
}

/* A structure the walkers cannot read (a damaged file): left as it is,
 * unless it lies in the CLI section, whose bytes move (the error stands). */
static int unreadable(const struct layout *l, uint32_t rva)
{
	if (in_text(l, rva))
		return -1;
	lt_error_clear();
	return 0;
}

/* One thunk array (ILT or IAT) of an import descriptor: every entry that
 * imports by name holds the RVA of its hint/name entry. */
static int walk_thunks(struct layout *l, uint32_t rva, site_fn fn)
{
	unsigned w = l->img->pe.pe32plus ? 8 : 4;

	for (unsigned k = 0; rva && k < MAX_IMPORTS; k++) {
		uint32_t at;
		uint64_t v, ordinal = (uint64_t)1 << (8 * w - 1);
		if (input_at(l, rva + k * w, w, &at, "import thunk") < 0)
			return unreadable(l, rva + k * w);
		if (!(v = read_field(l, at, w)))
			break;
		if (!(v & ordinal) && fn(l, &(struct site){ at, (uint8_t)w, 0, (uint32_t)v, 0, "import name" }) < 0)
			return -1;
	}
	return 0;
}

/* The import descriptors (PE/COFF "Import Directory Table"): the lookup
 * table, name and address table RVAs, and the thunks. */
static int walk_imports(struct layout *l, site_fn fn)
{
	const struct pe_dir *d = &l->img->pe.dirs[PE_DIR_IMPORT];
	static const uint32_t fields[] = { 0, 12, 16 }; /* OriginalFirstThunk, Name, FirstThunk */

	if (l->img->pe.ndirs <= PE_DIR_IMPORT || !d->rva)
		return 0;
	for (uint32_t i = 0; i < MAX_IMPORTS && (uint64_t)(i + 1) * 20 <= d->size; i++) {
		uint32_t at, v[3], f;
		if (input_at(l, d->rva + 20 * i, 20, &at, "import descriptor") < 0)
			return unreadable(l, d->rva + 20 * i);
		for (f = 0; f < 3; f++)
			v[f] = lt_le32(l->img->file + at + fields[f]);
		if (!v[0] && !v[1] && !v[2])
			break;
		for (f = 0; f < 3; f++)
			if (v[f] && fn(l, &(struct site){ at + fields[f], 4, 0, v[f], 0, "import descriptor" }) < 0)
				return -1;
		if (walk_thunks(l, v[0], fn) < 0 || walk_thunks(l, v[2], fn) < 0)
			return -1;
	}
	return 0;
}

/* The base relocations (PE/COFF ".reloc"): each HIGHLOW/DIR64 entry names a
 * field holding ImageBase + RVA.  Pass 1 (patch == 0) keeps the fields and
 * what they point at; pass 2 re-points the values and moves the entries of
 * fields that moved (a block's entries must stay on one 4 KiB page). */
static int walk_relocs(struct layout *l, site_fn fn, int patch)
{
	const struct pe_file *pe = &l->img->pe;
	const struct pe_dir *d = &pe->dirs[PE_DIR_BASERELOC];
	uint32_t pos = 0;

	if (pe->ndirs <= PE_DIR_BASERELOC || !d->rva)
		return 0;
	while (pos + 8 <= d->size) {
		uint32_t at, page, size, new_page = UINT32_MAX;
		if (input_at(l, d->rva + pos, 8, &at, "relocation block") < 0)
			return unreadable(l, d->rva + pos);
		page = lt_le32(l->img->file + at);
		size = lt_le32(l->img->file + at + 4);
		if (size < 8 || size > d->size - pos)
			return in_text(l, d->rva) ? lt_error_set(LT_E_LAYOUT, "relocation block at RVA 0x%x: size %u",
								d->rva + pos, size) : 0;
		if (input_at(l, d->rva + pos, size, &at, "relocation block") < 0)
			return unreadable(l, d->rva + pos);
		for (uint32_t e = 8; e + 2 <= size; e += 2) {
			uint16_t entry = lt_le16(l->img->file + at + e);
			uint32_t loc = page + (entry & 0xFFF), field, moved;
			unsigned type = entry >> 12, w = type == REL_DIR64 ? 8 : 4;
			if (type == REL_ABSOLUTE)
				continue;
			if (type != REL_HIGHLOW && type != REL_DIR64) {
				if (in_text(l, loc))
					return lt_error_set(LT_E_LAYOUT, "relocation type %u at RVA 0x%x", type, loc);
				continue;
			}
			if (input_at(l, loc, w, &field, "relocated field") < 0) {
				if (unreadable(l, loc) < 0)
					return -1;
				continue;
			}
			if (fn(l, &(struct site){ field, (uint8_t)w, 1,
						  (uint32_t)(read_field(l, field, w) - l->image_base), 0, "relocated address" }) < 0)
				return -1;
			/* The field lies in code nothing else describes (the entry stub):
			 * the bytes around it are kept. */
			if (!patch) {
				if (text_point(&l->text, loc) < 0)
					return -1;
				continue;
			}
			if (!in_text(l, loc))
				continue;
			if (text_map(&l->text, loc, &moved, "relocated field") < 0)
				return -1;
			if (new_page != UINT32_MAX && (moved & ~0xFFFu) != new_page)
				return lt_error_set(LT_E_LAYOUT, "relocation block at RVA 0x%x: its fields now span pages", page);
			new_page = moved & ~0xFFFu;
			if (put_at(l->out, l, at + e, 2, (uint16_t)(type << 12 | (moved & 0xFFF))) < 0)
				return -1;
		}
		if (new_page != UINT32_MAX && put_at(l->out, l, at, 4, new_page) < 0)
			return -1;
		pos += size;
	}
	return 0;
}

static int walk_sites(struct layout *l, site_fn fn, int patch)
{
	return walk_headers(l, fn) < 0 || walk_imports(l, fn) < 0 || walk_relocs(l, fn, patch) < 0 ? -1 : 0;
}

static int replaced_debug(const struct img *img, uint32_t i)
{
	return img->debug_data && img->debug_data[i].data;
}

/* Pass 1: the method bodies, FieldRVA data and debug data the output keeps,
 * and the metadata root it drops. */
static int collect(struct layout *l)
{
	const struct img *img = l->img;
	const struct pe_file *pe = &img->pe;
	const struct pe_section *s = cli_section(l);
	uint32_t row, nrows = md_rows(&img->md, MD_METHODDEF);

	l->text.drop_lo = pe->cli.metadata.rva;
	l->text.drop_hi = pe->cli.metadata.rva + pe->cli.metadata.size;
	if (walk_sites(l, collect_site, 0) < 0)
		return -1;
	for (row = 1; row <= nrows; row++) {
		uint32_t rva = md_get(&img->md, MD_METHODDEF, row, MD_METHODDEF_RVA);
		const uint8_t *body;
		size_t len;
		if ((row <= img->nbodies && img->bodies[row - 1].data) || !in_text(l, rva))
			continue;
		/* A body that does not parse is kept with the bytes around it. */
		if (img_method_body(img, row, &body, &len) < 0) {
			lt_error_clear();
			if (text_point(&l->text, rva) < 0)
				return -1;
		} else if (text_keep(&l->text, rva, (uint32_t)len) < 0) {
			return -1;
		}
	}
	for (row = 1; row <= md_rows(&img->md, MD_FIELDRVA); row++)
		if (text_point(&l->text, md_get(&img->md, MD_FIELDRVA, row, MD_FIELDRVA_RVA)) < 0)
			return -1;
	for (uint32_t i = 0; i < pe->ndebug; i++) {
		const struct pe_debug_entry *e = &pe->debug[i];
		uint32_t rva = e->rva;
		if (replaced_debug(img, i))
			continue;
		if (!rva && e->file_offset >= s->raw_ptr && e->file_offset - s->raw_ptr < s->raw_size)
			rva = s->virtual_address + (e->file_offset - s->raw_ptr);
		if (rva && (e->size ? text_keep(&l->text, rva, e->size) : text_point(&l->text, rva)) < 0)
			return -1;
	}
	return text_plan(&l->text);
}

/* The freshly written part of the new section, in out->section: changed
 * bodies (each 4-byte aligned, II.25.4.3 requires it of fat headers), new
 * debug data (4-byte aligned), then the metadata root with the input's heap
 * bytes left in the file (refs).  MethodDef and FieldRVA cells are set to
 * their new RVAs first, since they are metadata (restore_rvas puts the
 * input's back: the image stays readable as loaded).  *len gets the part's
 * length, refs included. */
static int build_fresh(struct layout *l, struct img *img, struct lt_buf *sec, struct md_ref *refs,
		       unsigned *nrefs, uint64_t *len)
{
	uint32_t row, rva, nrows = md_rows(&img->md, MD_METHODDEF), base = l->text.va + l->new_base;
	uint32_t nfields = md_rows(&img->md, MD_FIELDRVA);
	uint64_t in_refs = 0;

	if (!(l->saved = lt_malloc(((size_t)nrows + nfields + 1) * sizeof *l->saved)))
		return lt_nomem("the input's %u body and field RVAs", nrows + nfields);
	for (row = 1; row <= nrows; row++)
		l->saved[row - 1] = md_get(&img->md, MD_METHODDEF, row, MD_METHODDEF_RVA);
	for (row = 1; row <= nfields; row++)
		l->saved[nrows + row - 1] = md_get(&img->md, MD_FIELDRVA, row, MD_FIELDRVA_RVA);

	for (row = 1; row <= nrows; row++) {
		const struct img_body *b = row <= img->nbodies ? &img->bodies[row - 1] : NULL;
		if (!b || !b->data) {
			if (text_map(&l->text, md_get(&img->md, MD_METHODDEF, row, MD_METHODDEF_RVA), &rva,
				     "method body") < 0)
				return lt_error_prefix("MethodDef row %u: ", row);
			md_set(&img->md, MD_METHODDEF, row, MD_METHODDEF_RVA, rva);
			continue;
		}
		if (lt_buf_align(sec, 4) < 0)
			return -1;
		md_set(&img->md, MD_METHODDEF, row, MD_METHODDEF_RVA, base + (uint32_t)sec->len);
		if (lt_buf_put(sec, b->data, b->len) < 0)
			return -1;
	}
	for (row = 1; row <= md_rows(&img->md, MD_FIELDRVA); row++) {
		if (text_map(&l->text, md_get(&img->md, MD_FIELDRVA, row, MD_FIELDRVA_RVA), &rva, "field data") < 0)
			return lt_error_prefix("FieldRVA row %u: ", row);
		md_set(&img->md, MD_FIELDRVA, row, MD_FIELDRVA_RVA, rva);
	}
	for (uint32_t i = 0; i < img->pe.ndebug; i++) {
		if (!replaced_debug(img, i))
			continue;
		if (lt_buf_align(sec, 4) < 0)
			return -1;
		img->debug_data[i].sec_off = l->new_base + (uint32_t)sec->len;
		if (lt_buf_put(sec, img->debug_data[i].data, img->debug_data[i].len) < 0)
			return -1;
	}
	if (lt_buf_align(sec, 4) < 0)
		return -1;
	l->md_off = l->new_base + (uint32_t)sec->len;
	if (md_write_refs(&img->md, sec, refs, nrefs) < 0)
		return -1;
	for (unsigned i = 0; i < *nrefs; i++)
		in_refs += refs[i].len;
	*len = sec->len + in_refs;
	if (*len - (l->md_off - l->new_base) > UINT32_MAX)
		return lt_error_set(LT_E_LAYOUT, "image would pass 4 GiB");
	l->md_len = (uint32_t)(*len - (l->md_off - l->new_base));
	return 0;
}

static void restore_rvas(struct layout *l, struct img *img)
{
	uint32_t row, nrows = md_rows(&img->md, MD_METHODDEF);

	if (!l->saved)
		return;
	for (row = 1; row <= nrows; row++)
		md_set(&img->md, MD_METHODDEF, row, MD_METHODDEF_RVA, l->saved[row - 1]);
	for (row = 1; row <= md_rows(&img->md, MD_FIELDRVA); row++)
		md_set(&img->md, MD_FIELDRVA, row, MD_FIELDRVA_RVA, l->saved[nrows + row - 1]);
	free(l->saved);
	l->saved = NULL;
}

/* File offsets: headers (grown by one section header when needed), the other
 * sections' data in table order, the new section, then the bytes that
 * followed the last section (a trailing Authenticode certificate is cut:
 * its "RVA" is a file offset, and the signature no longer matches). */
static int plan_file(struct layout *l)
{
	const struct pe_file *pe = &l->img->pe;
	const struct pe_dir *cert = pe->ndirs > PE_DIR_CERTIFICATE ? &pe->dirs[PE_DIR_CERTIFICATE] : NULL;
	uint64_t table_end, headers, pos, raw_end = 0, min_va = UINT32_MAX, va_end = 0;

	l->first_raw = UINT32_MAX;
	for (uint16_t i = 0; i < pe->nsections; i++) {
		const struct pe_section *s = &pe->sections[i];
		if (s->raw_size && s->raw_ptr < l->first_raw)
			l->first_raw = s->raw_ptr;
		if (s->raw_size && (uint64_t)s->raw_ptr + s->raw_size > raw_end)
			raw_end = (uint64_t)s->raw_ptr + s->raw_size;
		if (s->virtual_address < min_va)
			min_va = s->virtual_address;
		if (align_up((uint64_t)s->virtual_address + pe_section_span(s), pe->section_alignment) > va_end)
			va_end = align_up((uint64_t)s->virtual_address + pe_section_span(s), pe->section_alignment);
	}
	table_end = (uint64_t)pe->sections_offset + (uint64_t)(pe->nsections + 1) * SECTION_HEADER_SIZE;
	headers = align_up(table_end > pe->size_of_headers ? table_end : pe->size_of_headers, pe->file_alignment);
	if (headers > min_va)
		return lt_error_set(LT_E_LAYOUT, "no room for another section header below RVA 0x%llx",
				    (unsigned long long)min_va);
	l->headers = (uint32_t)headers;
	l->hdr_len = l->headers > l->first_raw ? l->headers : (uint32_t)align_up(l->first_raw, pe->file_alignment);
	pos = l->hdr_len;
	for (uint16_t i = 0; i < pe->nsections; i++) {
		l->raw[i] = pe->sections[i].raw_ptr;
		if (i == l->sec || !pe->sections[i].raw_size)
			continue;
		l->raw[i] = (uint32_t)pos;
		pos += align_up(pe->sections[i].raw_size, pe->file_alignment);
	}
	l->text.va = (uint32_t)va_end;
	l->text_raw = (uint32_t)pos;
	l->tail_start = (uint32_t)raw_end;
	l->tail_end = (uint32_t)l->img->size;
	if (cert && cert->rva && cert->rva >= raw_end && cert->rva <= l->img->size)
		l->tail_end = cert->rva;
	if (pos > UINT32_MAX || va_end > UINT32_MAX)
		return lt_error_set(LT_E_LAYOUT, "image would pass 4 GiB");
	return 0;
}

/* The output's header area, patched by checked puts only: a field the
 * layout placed past it is an internal error, never a write outside. */
struct hdr_area {
	uint8_t *p;
	uint32_t len;
};

/* Copy n bytes of src (NULL: zeros) to offset `at` of the header area.
 * Returns 0, or -1 with LT_E_INTERNAL when [at, at+n) is not inside it. */
static int hdr_put(struct hdr_area *h, uint64_t at, const void *src, uint32_t n)
{
	if (at > h->len || n > h->len - at)
		return lt_error_set(LT_E_INTERNAL, "internal error: a header field at 0x%llx (%u bytes) passes the "
				    "headers (0x%x bytes)", (unsigned long long)at, n, h->len);
	if (src)
		memcpy(h->p + at, src, n);
	else
		memset(h->p + at, 0, n);
	return 0;
}

/* A little-endian integer of `width` bytes (2 or 4) at `at`: hdr_put's checks. */
static int hdr_put_le(struct hdr_area *h, uint64_t at, uint32_t v, unsigned width)
{
	uint8_t b[4];

	lt_put32(b, v);
	return hdr_put(h, at, b, width);
}

static int hdr_put32(struct hdr_area *h, uint64_t at, uint32_t v) { return hdr_put_le(h, at, v, 4); }

/* One section header (PE/COFF "Section Table"): Name, VirtualSize,
 * VirtualAddress, SizeOfRawData, PointerToRawData, zeroed relocation and
 * line-number fields, Characteristics. */
static int hdr_section(struct hdr_area *h, uint64_t at, const void *name, uint32_t vsize, uint32_t va,
		       uint32_t raw_size, uint32_t raw_ptr, uint32_t flags)
{
	return hdr_put(h, at, NULL, SECTION_HEADER_SIZE) < 0 || hdr_put(h, at, name, 8) < 0 ||
	       hdr_put32(h, at + 8, vsize) < 0 || hdr_put32(h, at + 12, va) < 0 || hdr_put32(h, at + 16, raw_size) < 0 ||
	       hdr_put32(h, at + 20, raw_ptr) < 0 || hdr_put32(h, at + 36, flags) < 0 ? -1 : 0;
}

/* The section table, the optional header's sizes and the certificate
 * directory, in the output's header area. */
static int patch_headers(const struct layout *l, struct img_out *out)
{
	static const char hole_name[8] = HOLE_NAME;
	const struct pe_file *pe = &l->img->pe;
	const struct pe_section *s = cli_section(l);
	uint32_t opt = pe->opt_offset, dirs = opt + (pe->pe32plus ? 112 : 96);
	uint32_t raw_len = (uint32_t)align_up(l->text_len, pe->file_alignment), old, sym = 0;
	uint64_t table = pe->sections_offset;
	struct hdr_area h = { NULL, l->hdr_len };

	if (pe->symbol_table && output_at(l, pe->symbol_table, 1, &sym) < 0)
		lt_error_clear(); /* COFF symbols of an image are deprecated: dropped when not in a section */
	if (!(h.p = img_out_patch(out, 0, l->hdr_len)))
		return -1;
	if (hdr_put_le(&h, pe->coff_offset + 2, pe->nsections + 1u, 2) < 0 || /* NumberOfSections */
	    (pe->symbol_table && hdr_put32(&h, pe->coff_offset + 8, sym) < 0))
		return -1;
	for (uint16_t i = 0; i < pe->nsections; i++) {
		uint64_t e = table + (uint64_t)i * SECTION_HEADER_SIZE;
		if (i != l->sec) {
			if (pe->sections[i].raw_size && hdr_put32(&h, e + 20, l->raw[i]) < 0)
				return -1;
			continue;
		}
		/* The old range stays reserved: VirtualAddress and VirtualSize kept. */
		if (hdr_section(&h, e, hole_name, pe_section_span(s), s->virtual_address, 0, 0, HOLE_FLAGS) < 0)
			return -1;
	}
	if (hdr_section(&h, table + (uint64_t)pe->nsections * SECTION_HEADER_SIZE, s->name, l->text_len, l->text.va,
			raw_len, l->text_raw, s->characteristics) < 0 ||
	    hdr_put32(&h, opt + PE_OPT_SIZE_OF_IMAGE,
		      (uint32_t)align_up((uint64_t)l->text.va + l->text_len, pe->section_alignment)) < 0 ||
	    hdr_put32(&h, opt + PE_OPT_SIZE_OF_HEADERS, l->headers) < 0)
		return -1;
	/* SizeOfCode / SizeOfInitializedData count file bytes of such sections. */
	if (s->characteristics & (SCN_CNT_CODE | SCN_CNT_INITIALIZED_DATA)) {
		uint32_t f = s->characteristics & SCN_CNT_CODE ? PE_OPT_SIZE_OF_CODE : PE_OPT_SIZE_OF_INIT_DATA;
		old = lt_le32(pe->data + opt + f);
		if (hdr_put32(&h, opt + f, (old > s->raw_size ? old - s->raw_size : 0) + raw_len) < 0)
			return -1;
	}
	if (s->characteristics & SCN_CNT_CODE && lt_le32(pe->data + opt + 20) == s->virtual_address &&
	    hdr_put32(&h, opt + 20, l->text.va) < 0) /* BaseOfCode */
		return -1;
	if (pe->ndirs > PE_DIR_CERTIFICATE && hdr_put(&h, dirs + 8 * PE_DIR_CERTIFICATE, NULL, 8) < 0)
		return -1;
	return 0;
}

/* Debug directory entries (PE/COFF "Debug Directory"): new data where
 * build_fresh put it, kept data where it moved. */
static int patch_debug(const struct layout *l, struct img_out *out)
{
	const struct img *img = l->img;

	for (uint32_t i = 0; i < img->pe.ndebug; i++) {
		const struct pe_debug_entry *e = &img->pe.debug[i];
		uint32_t at = e->entry_offset, rva, off;
		/* IMAGE_DEBUG_DIRECTORY: TimeDateStamp +4, SizeOfData +16,
		 * AddressOfRawData +20, PointerToRawData +24. */
		if (replaced_debug(img, i)) {
			const struct img_debug_data *d = &img->debug_data[i];
			if (put_at(out, l, at + 4, 4, d->timestamp) < 0 || put_at(out, l, at + 16, 4, d->len) < 0 ||
			    put_at(out, l, at + 20, 4, l->text.va + d->sec_off) < 0 ||
			    put_at(out, l, at + 24, 4, l->text_raw + d->sec_off) < 0)
				return -1;
			continue;
		}
		if (e->rva && in_text(l, e->rva)) {
			if (text_map(&l->text, e->rva, &rva, "debug data") < 0 || put_at(out, l, at + 20, 4, rva) < 0 ||
			    put_at(out, l, at + 24, 4, l->text_raw + (rva - l->text.va)) < 0)
				return -1;
		} else if (e->file_offset) {
			if (output_at(l, e->file_offset, e->size ? e->size : 1, &off) < 0 ||
			    put_at(out, l, at + 24, 4, off) < 0)
				return -1;
		}
	}
	return 0;
}

/* The output as runs: headers, the other sections, the new section (kept
 * spans, then the fresh part with the input heaps it takes in place), the
 * bytes after the sections. */
static int add_runs(const struct layout *l, struct img_out *out, const struct md_ref *refs, unsigned nrefs)
{
	const struct img *img = l->img;
	const struct pe_file *pe = &img->pe;
	const struct pe_section *s = cli_section(l);
	uint64_t pos;
	size_t done = 0;

	if (img_out_add(out, img->file, l->first_raw) < 0 || img_out_add(out, NULL, l->hdr_len - l->first_raw) < 0)
		return -1;
	for (uint16_t i = 0; i < pe->nsections; i++) {
		const struct pe_section *x = &pe->sections[i];
		if (i == l->sec || !x->raw_size)
			continue;
		if (img_out_add(out, img->file + x->raw_ptr, x->raw_size) < 0 ||
		    img_out_add(out, NULL, align_up(x->raw_size, pe->file_alignment) - x->raw_size) < 0)
			return -1;
	}
	pos = 0;
	for (size_t k = 0; k < l->text.nspans; k++) {
		const struct text_span *t = &l->text.spans[k];
		uint32_t off = t->old - s->virtual_address, in_file = 0;
		if (off < s->raw_size)
			in_file = s->raw_size - off < t->len ? s->raw_size - off : t->len;
		if (img_out_add(out, NULL, t->at - pos) < 0 ||
		    img_out_add(out, img->file + s->raw_ptr + off, in_file) < 0 ||
		    img_out_add(out, NULL, t->len - in_file) < 0)
			return -1;
		pos = (uint64_t)t->at + t->len;
	}
	if (img_out_add(out, NULL, l->new_base - pos) < 0)
		return -1;
	for (unsigned r = 0; r < nrefs; r++) {
		if (img_out_add(out, out->section.data + done, refs[r].at - done) < 0 ||
		    img_out_add(out, refs[r].data, refs[r].len) < 0)
			return -1;
		done = refs[r].at;
	}
	if (img_out_add(out, out->section.data + done, out->section.len - done) < 0 ||
	    img_out_add(out, NULL, align_up(l->text_len, pe->file_alignment) - l->text_len) < 0)
		return -1;
	return img_out_add(out, img->file + l->tail_start, l->tail_end > l->tail_start ? l->tail_end - l->tail_start : 0);
}

/* A method body the layout keeps is copied byte for byte (II.25.4): no
 * field it re-points (a relocated address, an import, a directory, the CLI
 * header) may lie inside one, or the body would change with it.  Only a
 * damaged or crafted input has such a field.  Returns 0, or -1 with
 * LT_E_LAYOUT naming the MethodDef. */
static int bodies_unpatched(const struct layout *l, const struct img_out *out)
{
	const struct img *img = l->img;

	for (uint32_t row = 1; row <= md_rows(&img->md, MD_METHODDEF); row++) {
		uint32_t rva = md_get(&img->md, MD_METHODDEF, row, MD_METHODDEF_RVA), moved;
		const uint8_t *body;
		size_t len, a = 0, b = out->npatches;
		uint64_t lo;

		if ((row <= img->nbodies && img->bodies[row - 1].data) || !in_text(l, rva))
			continue;
		if (img_method_body(img, row, &body, &len) < 0) {
			lt_error_clear(); /* kept with the bytes around it, unchecked */
			continue;
		}
		if (text_map(&l->text, rva, &moved, "method body") < 0)
			return -1;
		lo = (uint64_t)l->text_raw + (moved - l->text.va);
		while (a < b) { /* the first patch that ends after lo */
			size_t m = a + (b - a) / 2;
			if (out->patches[m].off + (uint64_t)out->patches[m].len <= lo)
				a = m + 1;
			else
				b = m;
		}
		if (a < out->npatches && out->patches[a].off < lo + len)
			return lt_error_set(LT_E_LAYOUT, "MethodDef row %u: its body (RVA 0x%x, %zu bytes) holds a field "
					    "the layout re-points (output offset 0x%x)", row, rva, len, out->patches[a].off);
	}
	return 0;
}

/* Copy the output bytes of the input range [at, at+len) (a structure the
 * layout moved) into view, the output's size. */
static int view_input(const struct layout *l, const struct img_out *out, uint32_t at, uint32_t len, uint8_t *view)
{
	uint32_t o;

	return output_at(l, at, len, &o) < 0 ? -1 : img_out_copy(out, o, len, view + o);
}

/* Whether MethodDef `row` of img (its input cells, restored after the
 * layout) has a body the writer placed: a replaced one, or an input body
 * whose RVA lies in a section. */
static int in_a_section(const struct img *img, uint32_t row)
{
	uint32_t off, rva;

	if (row <= img->nbodies && img->bodies[row - 1].data)
		return 1;
	rva = row <= md_rows(&img->md, MD_METHODDEF) ? md_get(&img->md, MD_METHODDEF, row, MD_METHODDEF_RVA) : 0;
	if (rva && pe_rva_to_offset(&img->pe, rva, 1, &off, LT_E_BODY, "MethodDef body") == 0)
		return 1;
	lt_error_clear();
	return 0;
}

/* The finished output read back as an input is read (img_load, `locktime
 * list`): PE headers and section table, CLI header, debug directory,
 * metadata root, streams, tables and every cell (II.24.2.6), and the RVA
 * of every MethodDef whose input body was in a section (or replaced) in a
 * section.  Only those ranges are copied into a view
 * of the output's size (calloc: pages never written take no memory), so
 * the check costs about the tables' size, not a second image.  Returns
 * 0, or -1 with LT_E_NOMEM, or LT_E_INTERNAL naming what did not read: a
 * defect of the writer, caught before any file is replaced. */
static int read_back(const struct layout *l, const struct img_out *out, const struct md_ref *refs, unsigned nrefs)
{
	const struct pe_file *in = &l->img->pe;
	struct pe_file pe = { 0 };
	struct md_image md = { 0 };
	uint8_t *view = lt_calloc(out->len ? out->len : 1, 1);
	uint64_t pos, in_refs = 0;
	uint32_t off, md_at;
	int rc = -1;

	if (!view)
		return lt_nomem("a view of the %zu-byte output", out->len);
	if (img_out_copy(out, 0, l->hdr_len, view) < 0 || view_input(l, out, in->cli.offset, 72, view) < 0 ||
	    (in->ndebug && view_input(l, out, in->debug[0].entry_offset, in->ndebug * 28, view) < 0))
		goto done;
	/* The metadata but the input's heap bytes (refs) it holds, of which the
	 * reader reads only the first byte (II.24.2.3-4): their sizes and cells'
	 * indexes into them are checked all the same. */
	pos = (uint64_t)l->text_raw + l->md_off;
	for (unsigned r = 0; r <= nrefs; r++) {
		uint64_t at = r < nrefs ? (uint64_t)l->text_raw + l->new_base + refs[r].at + in_refs
					: (uint64_t)l->text_raw + l->md_off + l->md_len;
		if (img_out_copy(out, pos, (size_t)(at - pos), view + pos) < 0 ||
		    (r < nrefs && refs[r].len && img_out_copy(out, at, 1, view + at) < 0))
			goto done;
		if (r < nrefs) {
			in_refs += refs[r].len;
			pos = at + refs[r].len;
		}
	}
	if (pe_parse(&pe, view, out->len) < 0 ||
	    pe_rva_to_offset(&pe, pe.cli.metadata.rva, pe.cli.metadata.size, &md_at, LT_E_METADATA, "metadata") < 0)
		goto done;
	/* One table's cells at a time: the memory of the largest table, not of all. */
	for (unsigned t = 0; t < MD_TABLE_MAX; t++) {
		if (md_read_tables(&md, view + md_at, pe.cli.metadata.size, 1ull << t) < 0)
			goto done;
		for (uint32_t row = 1; t == MD_METHODDEF && row <= md_rows(&md, MD_METHODDEF); row++) {
			uint32_t rva = md_get(&md, MD_METHODDEF, row, MD_METHODDEF_RVA);
			if (!rva || !in_a_section(l->img, row))
				continue; /* a body outside every section in the input stays so: the input's defect */
			if (pe_rva_to_offset(&pe, rva, 1, &off, LT_E_BODY, "MethodDef body") < 0) {
				lt_error_prefix("MethodDef row %u: ", row);
				goto done;
			}
		}
		md_free(&md);
	}
	rc = 0;
done:
	if (rc < 0 && lt_error_last()->code != LT_E_NOMEM) {
		struct lt_error why = *lt_error_last();
		lt_error_set(LT_E_INTERNAL, "internal error: the woven image does not read back (%s)", why.msg);
	}
	md_free(&md);
	pe_free(&pe);
	free(view);
	return rc;
}

int img_layout(struct img *img, struct img_out *out)
{
	const struct pe_file *pe = &img->pe;
	struct layout l = { .img = img };
	struct md_ref refs[MD_MAX_REFS];
	struct pe_checksum csum;
	uint8_t *field;
	uint32_t csum_off = pe->opt_offset + PE_OPT_CHECKSUM, cli_rva = pe->dirs[PE_DIR_CLI_HEADER].rva;
	uint64_t fresh = 0;
	unsigned nrefs = 0;
	int rc = -1;

	/* Appends are over: the heaps' lookups and the rows' indexes are not needed while writing. */
	md_drop_lookups(&img->md);
	for (l.sec = 0; l.sec < pe->nsections; l.sec++) {
		const struct pe_section *s = &pe->sections[l.sec];
		if (cli_rva >= s->virtual_address && cli_rva - s->virtual_address < pe_section_span(s))
			break;
	}
	if (l.sec == pe->nsections)
		return lt_error_set(LT_E_LAYOUT, "the CLI header is in no section");
	l.text.lo = pe->sections[l.sec].virtual_address;
	l.text.hi = l.text.lo + pe_section_span(&pe->sections[l.sec]);
	l.image_base = pe->pe32plus ? read_field(&l, pe->opt_offset + 24, 8) : lt_le32(img->file + pe->opt_offset + 28);
	if (!(l.raw = lt_calloc(pe->nsections, sizeof *l.raw))) {
		lt_nomem("%u section layouts", pe->nsections);
		goto done;
	}
	l.out = out;
	if (collect(&l) < 0 || plan_file(&l) < 0)
		goto done;
	l.new_base = (uint32_t)align_up(l.text.kept_len, 4);
	rc = build_fresh(&l, img, &out->section, refs, &nrefs, &fresh);
	restore_rvas(&l, img);
	if (rc < 0)
		goto done;
	rc = -1;
	if (l.new_base + fresh > UINT32_MAX - l.text.va || l.text_raw + align_up(l.new_base + fresh, pe->file_alignment) >
	    UINT32_MAX) {
		lt_error_set(LT_E_LAYOUT, "image would pass 4 GiB");
		goto done;
	}
	l.text_len = (uint32_t)(l.new_base + fresh);
	l.tail_raw = (uint32_t)(l.text_raw + align_up(l.text_len, pe->file_alignment));
	if (add_runs(&l, out, refs, nrefs) < 0 || patch_headers(&l, out) < 0 || walk_sites(&l, patch_site, 1) < 0 ||
	    patch_debug(&l, out) < 0 ||
	    /* II.25.3.3: MetaData directory at offset 8 of the CLI header. */
	    put_at(out, &l, pe->cli.offset + 8, 4, l.text.va + l.md_off) < 0 ||
	    put_at(out, &l, pe->cli.offset + 12, 4, l.md_len) < 0 || bodies_unpatched(&l, out) < 0)
		goto done;
	if (!pe->checksum) {
		rc = img_out_finish(out) < 0 ? -1 : read_back(&l, out, refs, nrefs);
		goto done;
	}
	/* The CheckSum field is summed as 0 whatever it holds: its patch is
	 * taken before the pieces are fixed, and set from their sum after. */
	if (!(field = img_out_patch(out, csum_off, 4)) || img_out_finish(out) < 0)
		goto done;
	pe_checksum_init(&csum, csum_off);
	for (size_t i = 0; i < out->nparts; i++)
		pe_checksum_add(&csum, out->parts[i].data, out->parts[i].len);
	lt_put32(field, pe_checksum_end(&csum));
	rc = read_back(&l, out, refs, nrefs);
done:
	free(l.raw);
	text_free(&l.text);
	return rc;
}

int img_write(struct img *img, struct lt_buf *out)
{
	struct img_out o = IMG_OUT_INIT;
	int rc;

	out->len = 0;
	rc = img_layout(img, &o) < 0 || img_out_join(&o, out) < 0 ? -1 : 0;
	img_out_free(&o);
	return rc;
}
