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

/* The new section's contents: changed bodies (each 4-byte aligned, II.25.4.3
 * requires it of fat headers), the metadata root, then new debug entry data
 * that outgrew its old place.  MethodDef RVAs of the changed bodies are set
 * first, since they are metadata cells. */
static int build_section(struct img *img, uint32_t va, struct lt_buf *sec, uint32_t *md_off, uint32_t *md_len)
{
	uint32_t row, nrows = md_rows(&img->md, MD_METHODDEF);
	struct lt_buf md = LT_BUF_INIT;

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
	if (lt_buf_align(sec, 4) < 0 || md_write(&img->md, &md) < 0)
		goto fail;
	*md_off = (uint32_t)sec->len;
	*md_len = (uint32_t)md.len;
	if (lt_buf_put(sec, md.data, md.len) < 0)
		goto fail;
	for (uint32_t i = 0; i < img->pe.ndebug; i++) {
		if (!debug_moves(img, i))
			continue;
		if (lt_buf_align(sec, 4) < 0)
			goto fail;
		img->debug_data[i].sec_off = (uint32_t)sec->len;
		if (lt_buf_put(sec, img->debug_data[i].data, img->debug_data[i].len) < 0)
			goto fail;
	}
	lt_buf_free(&md);
	return 0;
fail:
	lt_buf_free(&md);
	return -1;
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

/* Patch the headers of the laid-out image in out[]. */
static void patch(const struct img *img, const struct layout *l, uint8_t *out, uint32_t sec_len,
		  uint32_t md_off, uint32_t md_len)
{
	const struct pe_file *pe = &img->pe;
	uint32_t opt = pe->opt_offset, dirs = opt + (pe->pe32plus ? 112 : 96);
	uint32_t raw_len = (uint32_t)align_up(sec_len, pe->file_alignment);
	uint8_t *sh = out + pe->sections_offset + pe->nsections * SECTION_HEADER_SIZE;
	uint32_t cli = moved(l, pe->cli.offset), i;

	lt_put16(out + pe->coff_offset + 2, (uint16_t)(pe->nsections + 1));
	if (l->shift && pe->symbol_table)
		lt_put32(out + pe->coff_offset + 8, moved(l, pe->symbol_table));
	for (i = 0; i < pe->nsections; i++)
		if (pe->sections[i].raw_size)
			lt_put32(out + pe->sections_offset + i * SECTION_HEADER_SIZE + 20,
				 moved(l, pe->sections[i].raw_ptr));
	memset(sh, 0, SECTION_HEADER_SIZE);
	memcpy(sh, NEW_SECTION_NAME, sizeof NEW_SECTION_NAME - 1);
	lt_put32(sh + 8, sec_len);
	lt_put32(sh + 12, l->new_va);
	lt_put32(sh + 16, raw_len);
	lt_put32(sh + 20, l->new_raw);
	lt_put32(sh + 36, NEW_SECTION_FLAGS);

	lt_put32(out + opt + PE_OPT_SIZE_OF_INIT_DATA, lt_le32(out + opt + PE_OPT_SIZE_OF_INIT_DATA) + raw_len);
	lt_put32(out + opt + PE_OPT_SIZE_OF_IMAGE,
		 (uint32_t)align_up((uint64_t)l->new_va + sec_len, pe->section_alignment));
	lt_put32(out + opt + PE_OPT_SIZE_OF_HEADERS, l->headers);
	if (pe->ndirs > PE_DIR_CERTIFICATE)
		memset(out + dirs + 8 * PE_DIR_CERTIFICATE, 0, 8);
	for (i = 0; i < pe->ndebug; i++) {
		const struct img_debug_data *d = img->debug_data ? &img->debug_data[i] : NULL;
		uint8_t *e = out + moved(l, pe->debug[i].entry_offset);

		if (pe->debug[i].file_offset)
			lt_put32(e + 24, moved(l, pe->debug[i].file_offset));
		if (!d || !d->data)
			continue;
		/* IMAGE_DEBUG_DIRECTORY: TimeDateStamp +4, SizeOfData +16,
		 * AddressOfRawData +20, PointerToRawData +24. */
		lt_put32(e + 4, d->timestamp);
		lt_put32(e + 16, d->len);
		if (debug_moves(img, i)) {
			lt_put32(e + 20, l->new_va + d->sec_off);
			lt_put32(e + 24, l->new_raw + d->sec_off);
		} else {
			uint8_t *old = out + moved(l, pe->debug[i].file_offset);
			memcpy(old, d->data, d->len);
			memset(old + d->len, 0, pe->debug[i].size - d->len);
		}
	}
	/* II.25.3.3: MetaData directory at offset 8 of the CLI header. */
	lt_put32(out + cli + 8, l->new_va + md_off);
	lt_put32(out + cli + 12, md_len);
}

int img_write(struct img *img, struct lt_buf *out)
{
	const struct pe_file *pe = &img->pe;
	struct lt_buf sec = LT_BUF_INIT;
	struct layout l;
	uint32_t md_off = 0, md_len = 0, total, csum_off = pe->opt_offset + PE_OPT_CHECKSUM;
	int rc = -1;

	/* The section's RVA is needed before its bodies are placed; it depends
	 * only on the input's sections, so plan once with a zero length first. */
	if (plan(img, 0, &l) < 0 || build_section(img, l.new_va, &sec, &md_off, &md_len) < 0 ||
	    plan(img, (uint32_t)sec.len, &l) < 0)
		goto done;
	total = (uint32_t)align_up((uint64_t)l.new_raw + sec.len, pe->file_alignment);
	out->len = 0;
	if (lt_buf_reserve(out, total) < 0)
		goto done;
	/* headers, room for moved sections, sections and overlay, then the new section */
	lt_buf_put(out, img->file, l.first_raw);
	lt_buf_zero(out, l.shift);
	lt_buf_put(out, img->file + l.first_raw, l.tail_end - l.first_raw);
	lt_buf_zero(out, l.new_raw - out->len);
	lt_buf_put(out, sec.data, sec.len);
	lt_buf_zero(out, total - out->len);
	patch(img, &l, out->data, (uint32_t)sec.len, md_off, md_len);
	if (pe->checksum)
		lt_put32(out->data + csum_off, pe_checksum(out->data, out->len, csum_off));
	rc = 0;
done:
	lt_buf_free(&sec);
	return rc;
}
