/* fuzz_pe_fields.c - a structure-aware mutation of an assembly for the fuzzers of the image
 * readers and writer: one field of its headers, found by walking them as a loader does, set to a
 * value chosen to meet the checks on it (0, all ones, the file's size and its neighbours, the old
 * value off by one or doubled, a sign flip).  Byte mutation meets a given 4-byte field with a
 * given value rarely; the fields a writer sizes its output by (SizeOfHeaders, SizeOfImage, section
 * sizes and pointers, directories, stream offsets and sizes, row counts) are the ones that matter. */
#include "fuzz_pe_fields.h"

#include <string.h>

#define MAX_FIELDS 512

struct field {
	size_t at;
	unsigned width; /* 1, 2 or 4 bytes */
};

struct fields {
	struct field f[MAX_FIELDS];
	size_t n;
	const uint8_t *data;
	size_t size;
};

static uint32_t get(const struct fields *fs, size_t at, unsigned width)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < width; i++)
		v |= (uint32_t)fs->data[at + i] << 8 * i;
	return v;
}

/* Record the field [at, at+width) if it lies in the file; returns whether it does. */
static int add(struct fields *fs, size_t at, unsigned width)
{
	if (at > fs->size || width > fs->size - at)
		return 0;
	if (fs->n < MAX_FIELDS)
		fs->f[fs->n++] = (struct field){ at, width };
	return 1;
}

/* The file offset of `rva` through the section table at `table` (n headers), or 0. */
static size_t rva_offset(const struct fields *fs, size_t table, unsigned n, uint32_t rva)
{
	for (unsigned i = 0; i < n; i++) {
		size_t h = table + (size_t)i * 40;
		uint32_t va, vsize, raw_size, raw_ptr;
		if (h + 40 > fs->size)
			break;
		vsize = get(fs, h + 8, 4);
		va = get(fs, h + 12, 4);
		raw_size = get(fs, h + 16, 4);
		raw_ptr = get(fs, h + 20, 4);
		if (rva >= va && rva - va < (vsize > raw_size ? vsize : raw_size) && rva - va < raw_size)
			return (size_t)raw_ptr + (rva - va);
	}
	return 0;
}

/* The metadata root at `md` (II.24.2.1-2): signature, version length, stream headers; then the #~
 * header's heap sizes, Valid mask and row counts (II.24.2.6). */
static void add_metadata(struct fields *fs, size_t md)
{
	size_t at, tables = 0;
	uint32_t vlen;
	unsigned nstreams;

	if (!add(fs, md, 4) || !add(fs, md + 12, 4))
		return;
	vlen = get(fs, md + 12, 4);
	at = md + 16 + (vlen & 0xFFFF);
	if (!add(fs, at + 2, 2))
		return;
	nstreams = get(fs, at + 2, 2);
	at += 4;
	for (unsigned i = 0; i < nstreams && i < 8; i++) {
		size_t name = at + 8, end;
		if (!add(fs, at, 4) || !add(fs, at + 4, 4))
			return;
		for (end = name; end < fs->size && end < name + 32 && fs->data[end]; end++)
			;
		if (end - name == 2 && !memcmp(fs->data + name, "#~", 2))
			tables = md + get(fs, at, 4);
		at = name + ((end - name + 4) & ~(size_t)3);
	}
	if (!tables || !add(fs, tables + 6, 1) || !add(fs, tables + 8, 4) || !add(fs, tables + 12, 4))
		return;
	for (unsigned i = 0; i < 16; i++)
		add(fs, tables + 24 + 4 * i, 4);
}

/* Every field named in the file comment, in the order a loader reads them. */
static void collect(struct fields *fs)
{
	size_t pe, opt, dirs, table;
	unsigned nsections, ndirs;
	uint32_t cli_rva;
	size_t cli, md;

	if (!add(fs, 0x3C, 4))
		return;
	pe = get(fs, 0x3C, 4);
	if (!add(fs, pe + 6, 2) || !add(fs, pe + 12, 4) || !add(fs, pe + 20, 2))
		return;
	nsections = get(fs, pe + 6, 2);
	opt = pe + 24;
	table = opt + get(fs, pe + 20, 2);
	if (!add(fs, opt, 2))
		return;
	dirs = get(fs, opt, 2) == 0x20B ? opt + 112 : opt + 96;
	add(fs, opt + 32, 4); /* SectionAlignment, FileAlignment */
	add(fs, opt + 36, 4);
	add(fs, opt + 56, 4); /* SizeOfImage, SizeOfHeaders, CheckSum */
	add(fs, opt + 60, 4);
	add(fs, opt + 64, 4);
	if (!add(fs, dirs - 4, 4))
		return;
	ndirs = get(fs, dirs - 4, 4);
	for (unsigned i = 0; i < ndirs && i < 16; i++) {
		add(fs, dirs + 8 * i, 4);
		add(fs, dirs + 8 * i + 4, 4);
	}
	for (unsigned i = 0; i < nsections && i < 96; i++)
		for (unsigned k = 8; k <= 20; k += 4)
			add(fs, table + 40 * i + k, 4);
	if (ndirs <= 14 || dirs + 8 * 14 + 8 > fs->size)
		return;
	cli_rva = get(fs, dirs + 8 * 14, 4);
	if (!(cli = rva_offset(fs, table, nsections, cli_rva)))
		return;
	for (unsigned k = 0; k < 72; k += 4)
		add(fs, cli + k, 4);
	if (cli + 16 <= fs->size && (md = rva_offset(fs, table, nsections, get(fs, cli + 8, 4))))
		add_metadata(fs, md);
}

int fuzz_pe_fields(uint8_t *data, size_t size, unsigned seed)
{
	static struct fields fs;
	const struct field *f;
	uint32_t old, v;

	fs.n = 0;
	fs.data = data;
	fs.size = size;
	collect(&fs);
	if (!fs.n)
		return 0;
	f = &fs.f[seed % fs.n];
	old = get(&fs, f->at, f->width);
	switch ((seed / MAX_FIELDS) % 12) {
	case 0: v = 0; break;
	case 1: v = 0xFFFFFFFFu; break;
	case 2: v = (uint32_t)size; break;
	case 3: v = (uint32_t)size - 1; break;
	case 4: v = (uint32_t)size + 1; break;
	case 5: v = old + 1; break;
	case 6: v = old - 1; break;
	case 7: v = old * 2; break;
	case 8: v = old ^ 0x80000000u; break;
	case 9: v = old - 0x200; break; /* 0 - 0x1FA wraps: a size that overflows when aligned */
	case 10: v = 0x7FFFFFFFu; break;
	default: v = old ^ (1u << (seed / (MAX_FIELDS * 12) % (8 * f->width))); break;
	}
	for (unsigned i = 0; i < f->width; i++)
		data[f->at + i] = (uint8_t)(v >> 8 * i);
	return 1;
}
