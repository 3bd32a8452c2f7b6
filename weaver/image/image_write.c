/* image_write.c - laying an edited assembly out again: append-and-patch.
 *
 * Every byte of the input stays (sections, resources, FieldRVA data, debug
 * data, any overlay); one section is appended with the changed method bodies
 * and a complete new metadata root.  Only header fields are patched:
 * NumberOfSections, SizeOfImage, SizeOfInitializedData, SizeOfHeaders (when
 * the section table had to grow), CheckSum, the certificate directory (an
 * Authenticode signature no longer matches, so it is dropped), the CLI
 * header's MetaData directory, and file offsets when sections moved.
 * See docs/image-layout.md. */
#include "image.h"
#include "lt_error.h"

#include <string.h>

#define SECTION_HEADER_SIZE 40
#define NEW_SECTION_NAME ".lttext"
/* IMAGE_SCN_CNT_INITIALIZED_DATA | IMAGE_SCN_MEM_READ: IL and metadata are data. */
#define NEW_SECTION_FLAGS 0x40000040u

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

/* Whether debug entry i has new data that does not fit where its old data is. */
static int debug_moves(const struct img *img, uint32_t i)
{
	const struct img_debug_data *d = img->debug_data ? &img->debug_data[i] : NULL;
	return d && d->data && (d->len > img->pe.debug[i].size || img->pe.debug[i].file_offset == 0);
}

/* The new section: its own bytes in `sec` - changed bodies (each 4-byte
 * aligned, II.25.4.3 requires it of fat headers), the metadata root, then new
 * debug entry data that outgrew its old place - and the input's heap bytes
 * that belong inside the root, left in the file and recorded in refs
 * (md_write_refs).  Offsets (MethodDef RVAs, *md_off, debug sec_off) are in
 * the section as written, refs inserted; *len is its full length.  MethodDef
 * RVAs of the changed bodies are set first, since they are metadata cells. */
static int build_section(struct img *img, uint32_t va, struct lt_buf *sec, struct md_ref *refs,
			 unsigned *nrefs, uint32_t *md_off, uint32_t *md_len, uint64_t *len)
{
	uint32_t row, nrows = md_rows(&img->md, MD_METHODDEF);
	uint64_t in_refs = 0;

	for (row = 1; row <= nrows && row <= img->nbodies; row++) {
		const struct img_body *b = &img->bodies[row - 1];
		if (!b->data)
			continue;
		if (lt_buf_align(sec, 4) < 0)
			return -1;
		md_set(&img->md, MD_METHODDEF, row, MD_METHODDEF_RVA, va + (uint32_t)sec->len);
		if (lt_buf_put(sec, b->data, b->len) < 0)
			return -1;
	}
	if (lt_buf_align(sec, 4) < 0)
		return -1;
	*md_off = (uint32_t)sec->len;
	if (md_write_refs(&img->md, sec, refs, nrefs) < 0)
		return -1;
	for (unsigned i = 0; i < *nrefs; i++)
		in_refs += refs[i].len;
	if (sec->len - *md_off + in_refs > UINT32_MAX)
		return lt_error_set(LT_E_LAYOUT, "image would pass 4 GiB");
	*md_len = (uint32_t)(sec->len - *md_off + in_refs);
	/* Past the root, refs are behind: positions count them. */
	for (uint32_t i = 0; i < img->pe.ndebug; i++) {
		if (!debug_moves(img, i))
			continue;
		if (lt_buf_align(sec, 4) < 0)
			return -1;
		img->debug_data[i].sec_off = (uint32_t)(sec->len + in_refs);
		if (lt_buf_put(sec, img->debug_data[i].data, img->debug_data[i].len) < 0)
			return -1;
	}
	*len = sec->len + in_refs;
	return 0;
}

struct layout {
	uint32_t first_raw;   /* lowest section file offset: where headers end */
	uint32_t shift;       /* bytes every section moves down to make header room */
	uint32_t headers;     /* new SizeOfHeaders */
	uint32_t tail_end;    /* input bytes kept: [0, tail_end) less a trailing certificate */
	uint32_t new_va, new_raw;
};

static int plan(const struct img *img, uint32_t sec_len, struct layout *l)
{
	const struct pe_file *pe = &img->pe;
	uint64_t va_end = 0, table_end, min_va = UINT32_MAX, raw_end = 0;
	const struct pe_dir *cert = pe->ndirs > PE_DIR_CERTIFICATE ? &pe->dirs[PE_DIR_CERTIFICATE] : NULL;
	uint16_t i;

	l->first_raw = UINT32_MAX;
	for (i = 0; i < pe->nsections; i++) {
		const struct pe_section *s = &pe->sections[i];
		uint32_t span = s->virtual_size > s->raw_size ? s->virtual_size : s->raw_size;
		if (s->raw_size && s->raw_ptr < l->first_raw)
			l->first_raw = s->raw_ptr;
		if (s->raw_size && (uint64_t)s->raw_ptr + s->raw_size > raw_end)
			raw_end = (uint64_t)s->raw_ptr + s->raw_size;
		if (s->virtual_address < min_va)
			min_va = s->virtual_address;
		if (align_up((uint64_t)s->virtual_address + span, pe->section_alignment) > va_end)
			va_end = align_up((uint64_t)s->virtual_address + span, pe->section_alignment);
	}
	if (l->first_raw == UINT32_MAX)
		l->first_raw = (uint32_t)img->size;
	/* The table needs room for one more 40-byte header; when the first
	 * section's data follows too closely, every section moves down by whole
	 * FileAlignment units (file offsets only; RVAs do not change). */
	table_end = (uint64_t)pe->sections_offset + (uint64_t)(pe->nsections + 1) * SECTION_HEADER_SIZE;
	l->headers = (uint32_t)align_up(table_end > pe->size_of_headers ? table_end : pe->size_of_headers,
					pe->file_alignment);
	l->shift = l->headers > l->first_raw ? (uint32_t)align_up(l->headers - l->first_raw, pe->file_alignment) : 0;
	if (l->headers > min_va)
		return lt_error_set(LT_E_LAYOUT, "no room for another section header below RVA 0x%llx",
				    (unsigned long long)min_va);
	/* An Authenticode certificate table trails the sections' data; its
	 * "RVA" is a file offset.  One that points anywhere else is not cut
	 * off (that would cut the sections): only its directory is cleared. */
	l->tail_end = (uint32_t)img->size;
	if (cert && cert->rva && cert->rva >= raw_end && cert->rva <= img->size)
		l->tail_end = cert->rva;
	l->new_va = (uint32_t)va_end;
	l->new_raw = (uint32_t)align_up((uint64_t)l->tail_end + l->shift, pe->file_alignment);
	if ((uint64_t)l->new_va + sec_len > 0xFFFFFFFFu ||
	    align_up((uint64_t)l->new_raw + sec_len, pe->file_alignment) > 0xFFFFFFFFu)
		return lt_error_set(LT_E_LAYOUT, "image would pass 4 GiB");
	return 0;
}

static uint32_t moved(const struct layout *l, uint32_t off)
{
	return off >= l->first_raw ? off + l->shift : off;
}

/* Set the 32-bit field at output offset off (in a patch of out). */
static int put32_at(struct img_out *out, uint32_t off, uint32_t v)
{
	uint8_t *p = img_out_patch(out, off, 4);

	if (!p)
		return -1;
	lt_put32(p, v);
	return 0;
}

/* Patch the headers of the laid-out image: the whole header area, the
 * CLI header's MetaData directory and the debug entries. */
static int patch(const struct img *img, const struct layout *l, struct img_out *out, uint32_t sec_len,
		 uint32_t md_off, uint32_t md_len)
{
	const struct pe_file *pe = &img->pe;
	uint32_t opt = pe->opt_offset, dirs = opt + (pe->pe32plus ? 112 : 96);
	uint32_t raw_len = (uint32_t)align_up(sec_len, pe->file_alignment);
	/* The header area, with the room made for the new section header. */
	uint8_t *h = img_out_patch(out, 0, l->first_raw + l->shift), *sh;
	uint32_t cli = moved(l, pe->cli.offset), i;

	if (!h)
		return -1;
	sh = h + pe->sections_offset + pe->nsections * SECTION_HEADER_SIZE;

	lt_put16(h + pe->coff_offset + 2, (uint16_t)(pe->nsections + 1));
	if (l->shift && pe->symbol_table)
		lt_put32(h + pe->coff_offset + 8, moved(l, pe->symbol_table));
	for (i = 0; i < pe->nsections; i++)
		if (pe->sections[i].raw_size)
			lt_put32(h + pe->sections_offset + i * SECTION_HEADER_SIZE + 20,
				 moved(l, pe->sections[i].raw_ptr));
	memset(sh, 0, SECTION_HEADER_SIZE);
	memcpy(sh, NEW_SECTION_NAME, sizeof NEW_SECTION_NAME - 1);
	lt_put32(sh + 8, sec_len);
	lt_put32(sh + 12, l->new_va);
	lt_put32(sh + 16, raw_len);
	lt_put32(sh + 20, l->new_raw);
	lt_put32(sh + 36, NEW_SECTION_FLAGS);

	lt_put32(h + opt + PE_OPT_SIZE_OF_INIT_DATA, lt_le32(h + opt + PE_OPT_SIZE_OF_INIT_DATA) + raw_len);
	lt_put32(h + opt + PE_OPT_SIZE_OF_IMAGE,
		 (uint32_t)align_up((uint64_t)l->new_va + sec_len, pe->section_alignment));
	lt_put32(h + opt + PE_OPT_SIZE_OF_HEADERS, l->headers);
	if (pe->ndirs > PE_DIR_CERTIFICATE)
		memset(h + dirs + 8 * PE_DIR_CERTIFICATE, 0, 8);
	for (i = 0; i < pe->ndebug; i++) {
		const struct img_debug_data *d = img->debug_data ? &img->debug_data[i] : NULL;
		uint32_t e = moved(l, pe->debug[i].entry_offset);

		/* IMAGE_DEBUG_DIRECTORY: TimeDateStamp +4, SizeOfData +16,
		 * AddressOfRawData +20, PointerToRawData +24. */
		if (pe->debug[i].file_offset && put32_at(out, e + 24, moved(l, pe->debug[i].file_offset)) < 0)
			return -1;
		if (!d || !d->data)
			continue;
		if (put32_at(out, e + 4, d->timestamp) < 0 || put32_at(out, e + 16, d->len) < 0)
			return -1;
		if (debug_moves(img, i)) {
			if (put32_at(out, e + 20, l->new_va + d->sec_off) < 0 ||
			    put32_at(out, e + 24, l->new_raw + d->sec_off) < 0)
				return -1;
		} else {
			uint8_t *old = img_out_patch(out, moved(l, pe->debug[i].file_offset), pe->debug[i].size);
			if (!old)
				return -1;
			memcpy(old, d->data, d->len);
			memset(old + d->len, 0, pe->debug[i].size - d->len);
		}
	}
	/* II.25.3.3: MetaData directory at offset 8 of the CLI header. */
	if (put32_at(out, cli + 8, l->new_va + md_off) < 0 || put32_at(out, cli + 12, md_len) < 0)
		return -1;
	return 0;
}

int img_layout(struct img *img, struct img_out *out)
{
	const struct pe_file *pe = &img->pe;
	struct md_ref refs[MD_MAX_REFS];
	struct pe_checksum csum;
	struct layout l;
	uint8_t *field;
	uint32_t md_off = 0, md_len = 0, sec_len, csum_off = pe->opt_offset + PE_OPT_CHECKSUM;
	uint64_t len = 0;
	size_t i, done = 0;
	unsigned nrefs = 0, r;

	/* Appends are over: the heaps' lookups are not needed while writing. */
	md_heap_drop_lookup(&img->md.strings);
	md_heap_drop_lookup(&img->md.us);
	md_heap_drop_lookup(&img->md.blob);
	md_heap_drop_lookup(&img->md.guid);
	/* The section's RVA is needed before its bodies are placed; it depends
	 * only on the input's sections, so plan once with a zero length first. */
	if (plan(img, 0, &l) < 0 ||
	    build_section(img, l.new_va, &out->section, refs, &nrefs, &md_off, &md_len, &len) < 0 ||
	    len > UINT32_MAX || plan(img, (uint32_t)len, &l) < 0)
		return len > UINT32_MAX ? lt_error_set(LT_E_LAYOUT, "image would pass 4 GiB") : -1;
	sec_len = (uint32_t)len;
	/* headers, room for moved sections, sections and overlay, then the new
	 * section - its own bytes around the input heaps it takes in place */
	out->nbase = 0;
	out->base[out->nbase++] = (struct lt_iov){ img->file, l.first_raw };
	out->base[out->nbase++] = (struct lt_iov){ NULL, l.shift };
	out->base[out->nbase++] = (struct lt_iov){ img->file + l.first_raw, l.tail_end - l.first_raw };
	out->base[out->nbase++] = (struct lt_iov){ NULL, l.new_raw - l.tail_end - l.shift };
	for (r = 0; r < nrefs; r++) {
		out->base[out->nbase++] = (struct lt_iov){ out->section.data + done, refs[r].at - done };
		out->base[out->nbase++] = (struct lt_iov){ refs[r].data, refs[r].len };
		done = refs[r].at;
	}
	out->base[out->nbase++] = (struct lt_iov){ out->section.data + done, out->section.len - done };
	out->base[out->nbase++] = (struct lt_iov){ NULL, align_up((uint64_t)l.new_raw + sec_len, pe->file_alignment) -
								 ((uint64_t)l.new_raw + sec_len) };
	if (patch(img, &l, out, sec_len, md_off, md_len) < 0)
		return -1;
	if (!pe->checksum)
		return img_out_finish(out);
	/* The CheckSum field is summed as 0 whatever it holds: its patch is
	 * taken before the pieces are fixed, and set from their sum after. */
	if (!(field = img_out_patch(out, csum_off, 4)) || img_out_finish(out) < 0)
		return -1;
	pe_checksum_init(&csum, csum_off);
	for (i = 0; i < out->nparts; i++)
		pe_checksum_add(&csum, out->parts[i].data, out->parts[i].len);
	lt_put32(field, pe_checksum_end(&csum));
	return 0;
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
