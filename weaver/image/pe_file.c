/* pe_file.c - reading the PE/COFF container of a .NET image (II.25). */
#include "pe_file.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdlib.h>
#include <string.h>

#define PE_MAX_SECTIONS 96    /* the PE/COFF limit */
#define PE_MAX_DEBUG 64       /* debug entries: a few in practice */
#define CLI_HEADER_SIZE 72    /* II.25.3.3 */
#define DEBUG_ENTRY_SIZE 28

static int is_pow2(uint32_t v) { return v && !(v & (v - 1)); }

static int read_dir(struct lt_cur *c, struct pe_dir *d)
{
	if (lt_cur_u32(c, &d->rva) < 0 || lt_cur_u32(c, &d->size) < 0)
		return -1;
	return 0;
}

/* II.25.2.1-25.2.2: MS-DOS header, PE signature, COFF file header. */
static int parse_coff(struct pe_file *pe, struct lt_cur *c)
{
	uint32_t lfanew, sig, ts, nsym;
	uint16_t mz;

	if (lt_cur_u16(c, &mz) < 0 || mz != 0x5A4D)
		return lt_error_set(LT_E_NOT_PE, "no MZ signature: not a PE file");
	if (lt_cur_seek(c, 0x3C) < 0 || lt_cur_u32(c, &lfanew) < 0)
		return lt_error_set(LT_E_NOT_PE, "DOS header truncated (%zu bytes): not a PE file", c->len);
	if (lt_cur_seek(c, lfanew) < 0)
		return lt_error_set(LT_E_NOT_PE, "DOS header: e_lfanew 0x%x outside the file", lfanew);
	if (lt_cur_u32(c, &sig) < 0 || sig != 0x00004550)
		return lt_error_set(LT_E_NOT_PE, "no PE signature at 0x%x: not a PE file", lfanew);
	pe->coff_offset = (uint32_t)c->pos;
	if (lt_cur_u16(c, &pe->machine) < 0 || lt_cur_u16(c, &pe->nsections) < 0 ||
	    lt_cur_u32(c, &ts) < 0 || lt_cur_u32(c, &pe->symbol_table) < 0 ||
	    lt_cur_u32(c, &nsym) < 0 || lt_cur_u16(c, &pe->opt_size) < 0 ||
	    lt_cur_u16(c, &pe->characteristics) < 0)
		return -1;
	if (pe->nsections == 0 || pe->nsections > PE_MAX_SECTIONS)
		return lt_error_set(LT_E_NOT_PE, "COFF header: %u sections", pe->nsections);
	pe->opt_offset = (uint32_t)c->pos;
	return 0;
}

/* II.25.2.3: the optional header, PE32 (magic 0x10B) or PE32+ (0x20B). */
static int parse_optional(struct pe_file *pe, struct lt_cur *file)
{
	struct lt_cur c;
	uint16_t magic;
	uint32_t ndirs_off, i;

	if (lt_cur_sub(file, pe->opt_offset, pe->opt_size, &c) < 0)
		return -1;
	if (lt_cur_u16(&c, &magic) < 0)
		return -1;
	if (magic != 0x10B && magic != 0x20B)
		return lt_error_set(LT_E_NOT_PE, "optional header: magic 0x%x", magic);
	pe->pe32plus = magic == 0x20B;
	ndirs_off = pe->pe32plus ? 108 : 92;
	if (lt_cur_seek(&c, PE_OPT_SECTION_ALIGNMENT) < 0 || lt_cur_u32(&c, &pe->section_alignment) < 0 ||
	    lt_cur_u32(&c, &pe->file_alignment) < 0 || lt_cur_seek(&c, PE_OPT_SIZE_OF_IMAGE) < 0 ||
	    lt_cur_u32(&c, &pe->size_of_image) < 0 || lt_cur_u32(&c, &pe->size_of_headers) < 0 ||
	    lt_cur_u32(&c, &pe->checksum) < 0 || lt_cur_seek(&c, ndirs_off) < 0 ||
	    lt_cur_u32(&c, &pe->ndirs) < 0)
		return lt_error_set(LT_E_NOT_PE, "optional header truncated (%u bytes)", pe->opt_size);
	if (!is_pow2(pe->section_alignment) || !is_pow2(pe->file_alignment) ||
	    pe->file_alignment < 0x200 || pe->file_alignment > 0x10000 ||
	    pe->section_alignment < pe->file_alignment)
		return lt_error_set(LT_E_NOT_PE, "optional header: SectionAlignment 0x%x, FileAlignment 0x%x",
				    pe->section_alignment, pe->file_alignment);
	if (pe->ndirs > PE_DIR_MAX)
		return lt_error_set(LT_E_NOT_PE, "optional header: %u data directories", pe->ndirs);
	for (i = 0; i < pe->ndirs; i++)
		if (read_dir(&c, &pe->dirs[i]) < 0)
			return lt_error_set(LT_E_NOT_PE, "optional header: data directory %u truncated", i);
	return 0;
}

/* II.25.3: the section table; every section's raw data must be in the file. */
static int parse_sections(struct pe_file *pe, struct lt_cur *file)
{
	struct lt_cur c;
	uint32_t i, skip;
	uint16_t s16;

	pe->sections_offset = pe->opt_offset + pe->opt_size;
	if (lt_cur_sub(file, pe->sections_offset, (uint64_t)pe->nsections * 40, &c) < 0)
		return lt_error_set(LT_E_NOT_PE, "section table passes the end of the file");
	pe->sections = lt_calloc(pe->nsections, sizeof *pe->sections);
	if (!pe->sections)
		return lt_nomem(NULL);
	for (i = 0; i < pe->nsections; i++) {
		struct pe_section *s = &pe->sections[i];
		const uint8_t *name;

		if (lt_cur_bytes(&c, 8, &name) < 0 || lt_cur_u32(&c, &s->virtual_size) < 0 ||
		    lt_cur_u32(&c, &s->virtual_address) < 0 || lt_cur_u32(&c, &s->raw_size) < 0 ||
		    lt_cur_u32(&c, &s->raw_ptr) < 0 || lt_cur_u32(&c, &skip) < 0 ||
		    lt_cur_u32(&c, &skip) < 0 || lt_cur_u16(&c, &s16) < 0 || lt_cur_u16(&c, &s16) < 0 ||
		    lt_cur_u32(&c, &s->characteristics) < 0)
			return -1;
		memcpy(s->name, name, 8);
		s->name[8] = '\0';
		if (s->raw_size && ((uint64_t)s->raw_ptr + s->raw_size > pe->size))
			return lt_error_set(LT_E_NOT_PE, "section %s: raw data 0x%x+0x%x passes the end of the file (0x%zx)",
					    s->name, s->raw_ptr, s->raw_size, pe->size);
		/* Section data lies after the headers (PE/COFF: SizeOfHeaders
		 * covers the section table); data inside them could not be moved
		 * apart from them when a section is added. */
		if (s->raw_size && s->raw_ptr < pe->sections_offset + (uint32_t)pe->nsections * 40)
			return lt_error_set(LT_E_NOT_PE, "section %s: raw data at 0x%x overlaps the headers (0x%x bytes)",
					    s->name, s->raw_ptr, pe->sections_offset + (uint32_t)pe->nsections * 40);
		if ((uint64_t)s->virtual_address + s->virtual_size > 0xFFFFFFFFu)
			return lt_error_set(LT_E_NOT_PE, "section %s: virtual range overflows", s->name);
		/* PE/COFF "Section Table": a section is loaded at a multiple of
		 * SectionAlignment (the writer lays new ones out by it). */
		if (s->virtual_address & (pe->section_alignment - 1))
			return lt_error_set(LT_E_NOT_PE, "section %s: RVA 0x%x is not a multiple of SectionAlignment 0x%x",
					    s->name, s->virtual_address, pe->section_alignment);
	}
	return 0;
}

/* The most a section's VirtualSize may pass its SizeOfRawData: the writer
 * writes the zeros of that tail into the output when it keeps the section,
 * so a 2 KiB file claiming 235 MB laid out 235 MB.  Compilers and linkers
 * leave less than one FileAlignment (the raw data rounded up, not down). */
#define PE_MAX_ZERO_FILL (16u << 20)

uint32_t pe_section_span(const struct pe_section *s)
{
	return s->virtual_size > s->raw_size ? s->virtual_size : s->raw_size;
}

/* The optional header's sizes against the file and the section table
 * (II.25.2.3.2, PE/COFF "Optional Header Windows-Specific Fields" and
 * "Section Table"): the headers (SizeOfHeaders) hold the section table and
 * end before every section's data and address; the image (SizeOfImage)
 * holds every section's address range; no two sections share file bytes or
 * addresses; no section is zero-filled past its data by more than
 * PE_MAX_ZERO_FILL.  The writer lays the output out by these fields: none is
 * trusted unchecked. */
static int check_sizes(const struct pe_file *pe)
{
	uint64_t table_end = pe->sections_offset + (uint64_t)pe->nsections * 40;

	if (pe->size_of_headers > pe->size)
		return lt_error_set(LT_E_NOT_PE, "optional header: SizeOfHeaders 0x%x passes the end of the file (0x%zx)",
				    pe->size_of_headers, pe->size);
	if (pe->size_of_headers < table_end)
		return lt_error_set(LT_E_NOT_PE, "optional header: SizeOfHeaders 0x%x does not hold the section table "
				    "(it ends at 0x%llx)", pe->size_of_headers, (unsigned long long)table_end);
	for (uint16_t i = 0; i < pe->nsections; i++) {
		const struct pe_section *s = &pe->sections[i];
		uint64_t end = (uint64_t)s->virtual_address + pe_section_span(s);

		if (s->raw_size && s->raw_ptr < pe->size_of_headers)
			return lt_error_set(LT_E_NOT_PE, "optional header: SizeOfHeaders 0x%x passes section %s's data at 0x%x",
					    pe->size_of_headers, s->name, s->raw_ptr);
		if (s->virtual_address < pe->size_of_headers)
			return lt_error_set(LT_E_NOT_PE, "optional header: SizeOfHeaders 0x%x passes section %s's RVA 0x%x",
					    pe->size_of_headers, s->name, s->virtual_address);
		if (s->virtual_size > s->raw_size && s->virtual_size - s->raw_size > PE_MAX_ZERO_FILL)
			return lt_error_set(LT_E_NOT_PE, "section %s: VirtualSize 0x%x passes its raw data (0x%x bytes) by "
					    "more than 16 MiB", s->name, s->virtual_size, s->raw_size);
		if (end > pe->size_of_image)
			return lt_error_set(LT_E_NOT_PE, "optional header: SizeOfImage 0x%x ends inside section %s "
					    "(RVA 0x%x to 0x%llx)", pe->size_of_image, s->name, s->virtual_address,
					    (unsigned long long)end);
		for (uint16_t j = 0; j < i; j++) {
			const struct pe_section *t = &pe->sections[j];
			if (s->raw_size && t->raw_size && s->raw_ptr < (uint64_t)t->raw_ptr + t->raw_size &&
			    t->raw_ptr < (uint64_t)s->raw_ptr + s->raw_size)
				return lt_error_set(LT_E_NOT_PE, "section %s: raw data 0x%x+0x%x overlaps section %s's",
						    s->name, s->raw_ptr, s->raw_size, t->name);
			if (s->virtual_address < (uint64_t)t->virtual_address + pe_section_span(t) &&
			    t->virtual_address < (uint64_t)s->virtual_address + pe_section_span(s))
				return lt_error_set(LT_E_NOT_PE, "section %s: RVA range 0x%x+0x%x overlaps section %s's",
						    s->name, s->virtual_address, pe_section_span(s), t->name);
		}
	}
	return 0;
}

int pe_rva_cursor(const struct pe_file *pe, uint32_t rva, struct lt_cur *out, int code, const char *what)
{
	uint32_t i;

	for (i = 0; i < pe->nsections; i++) {
		const struct pe_section *s = &pe->sections[i];
		/* Bytes past VirtualSize are not mapped; bytes past SizeOfRawData are
		 * zero-filled and not in the file: the readable part is the smaller. */
		uint32_t mapped = s->virtual_size && s->virtual_size < s->raw_size ? s->virtual_size : s->raw_size;

		if (rva >= s->virtual_address && rva - s->virtual_address < mapped) {
			uint32_t delta = rva - s->virtual_address;
			*out = lt_cur_init(pe->data + s->raw_ptr + delta, mapped - delta, code, what);
			return 0;
		}
	}
	return lt_error_set(code, "%s: RVA 0x%x is in no section", what, rva);
}

int pe_rva_to_offset(const struct pe_file *pe, uint32_t rva, uint32_t len, uint32_t *out, int code,
		     const char *what)
{
	struct lt_cur c;

	if (pe_rva_cursor(pe, rva, &c, code, what) < 0)
		return -1;
	if (len > lt_cur_left(&c))
		return lt_error_set(code, "%s: RVA range 0x%x+0x%x passes the end of its section", what, rva, len);
	*out = (uint32_t)(c.data - pe->data);
	return 0;
}

/* II.25.3.3: the CLI header. */
static int parse_cli(struct pe_file *pe)
{
	const struct pe_dir *d = &pe->dirs[PE_DIR_CLI_HEADER];
	struct pe_cli_header *h = &pe->cli;
	struct lt_cur c;
	uint32_t cb;

	if (pe->ndirs <= PE_DIR_CLI_HEADER || d->rva == 0)
		return lt_error_set(LT_E_NOT_CLI, "no CLI header: not a .NET assembly");
	if (d->size < CLI_HEADER_SIZE ||
	    pe_rva_to_offset(pe, d->rva, CLI_HEADER_SIZE, &h->offset, LT_E_NOT_PE, "CLI header") < 0)
		return lt_error_set(LT_E_NOT_PE, "CLI header at RVA 0x%x (0x%x bytes) is not in the file",
				    d->rva, d->size);
	c = lt_cur_init(pe->data + h->offset, CLI_HEADER_SIZE, LT_E_NOT_PE, "CLI header");
	if (lt_cur_u32(&c, &cb) < 0 || lt_cur_u16(&c, &h->major_runtime) < 0 ||
	    lt_cur_u16(&c, &h->minor_runtime) < 0 || read_dir(&c, &h->metadata) < 0 ||
	    lt_cur_u32(&c, &h->flags) < 0 || lt_cur_u32(&c, &h->entry_point) < 0 ||
	    read_dir(&c, &h->resources) < 0 || read_dir(&c, &h->strong_name) < 0 ||
	    read_dir(&c, &h->code_manager) < 0 || read_dir(&c, &h->vtable_fixups) < 0 ||
	    read_dir(&c, &h->export_jumps) < 0 || read_dir(&c, &h->native_header) < 0)
		return -1;
	if (cb < CLI_HEADER_SIZE)
		return lt_error_set(LT_E_NOT_PE, "CLI header: cb %u < 72", cb);
	if (h->metadata.rva == 0 || h->metadata.size == 0)
		return lt_error_set(LT_E_NOT_CLI, "CLI header names no metadata");
	return 0;
}

/* The debug directory: an array of 28-byte IMAGE_DEBUG_DIRECTORY entries. */
static int parse_debug(struct pe_file *pe)
{
	const struct pe_dir *d = &pe->dirs[PE_DIR_DEBUG];
	uint32_t off, i;

	if (pe->ndirs <= PE_DIR_DEBUG || d->rva == 0 || d->size == 0)
		return 0;
	if (d->size % DEBUG_ENTRY_SIZE || d->size / DEBUG_ENTRY_SIZE > PE_MAX_DEBUG)
		return lt_error_set(LT_E_NOT_PE, "debug directory: size %u is not a count of entries", d->size);
	if (pe_rva_to_offset(pe, d->rva, d->size, &off, LT_E_NOT_PE, "debug directory") < 0)
		return -1;
	pe->ndebug = d->size / DEBUG_ENTRY_SIZE;
	pe->debug = lt_calloc(pe->ndebug, sizeof *pe->debug);
	if (!pe->debug)
		return lt_nomem(NULL);
	for (i = 0; i < pe->ndebug; i++) {
		struct pe_debug_entry *e = &pe->debug[i];
		const uint8_t *p = pe->data + off + i * DEBUG_ENTRY_SIZE;

		e->entry_offset = off + i * DEBUG_ENTRY_SIZE;
		e->timestamp = lt_le32(p + 4);
		e->major = lt_le16(p + 8);
		e->minor = lt_le16(p + 10);
		e->type = lt_le32(p + 12);
		e->size = lt_le32(p + 16);
		e->rva = lt_le32(p + 20);
		e->file_offset = lt_le32(p + 24);
		if (e->size && (uint64_t)e->file_offset + e->size > pe->size)
			return lt_error_set(LT_E_NOT_PE, "debug entry %u: data 0x%x+0x%x passes the end of the file",
					    i, e->file_offset, e->size);
	}
	return 0;
}

int pe_parse(struct pe_file *out, const uint8_t *data, size_t size)
{
	struct lt_cur c = lt_cur_init(data, size, LT_E_NOT_PE, "PE headers");

	memset(out, 0, sizeof *out);
	out->data = data;
	out->size = size;
	if (size > 0xFFFFFFFFu)
		return lt_error_set(LT_E_LIMIT, "file larger than 4 GiB");
	if (parse_coff(out, &c) < 0 || parse_optional(out, &c) < 0 || parse_sections(out, &c) < 0 ||
	    check_sizes(out) < 0 || parse_cli(out) < 0 || parse_debug(out) < 0) {
		pe_free(out);
		return -1;
	}
	return 0;
}

void pe_free(struct pe_file *pe)
{
	if (!pe)
		return;
	free(pe->sections);
	free(pe->debug);
	pe->sections = NULL;
	pe->debug = NULL;
}

void pe_checksum_init(struct pe_checksum *c, uint32_t checksum_offset)
{
	memset(c, 0, sizeof *c);
	c->skip = checksum_offset;
}

/* Add the word at file offset `at` unless it is half of the CheckSum field. */
static void checksum_word(struct pe_checksum *c, uint64_t at, uint16_t word)
{
	if (at == c->skip || at == (uint64_t)c->skip + 2)
		return;
	c->sum += word;
	c->sum = (c->sum & 0xFFFF) + (c->sum >> 16);
}

void pe_checksum_add(struct pe_checksum *c, const uint8_t *data, size_t len)
{
	size_t i = 0;

	if (len && (c->pos & 1)) {
		checksum_word(c, c->pos - 1, (uint16_t)(c->low | (data ? data[0] : 0) << 8));
		c->pos++;
		i = 1;
	}
	for (; i + 1 < len; i += 2, c->pos += 2)
		checksum_word(c, c->pos, data ? lt_le16(data + i) : 0);
	if (i < len) {
		c->low = data ? data[i] : 0;
		c->pos++;
	}
}

uint32_t pe_checksum_end(struct pe_checksum *c)
{
	/* An odd last byte counts as a word with a zero high byte. */
	if (c->pos & 1)
		checksum_word(c, c->pos - 1, c->low);
	c->sum = (c->sum & 0xFFFF) + (c->sum >> 16);
	return (uint32_t)(c->sum + c->pos);
}
