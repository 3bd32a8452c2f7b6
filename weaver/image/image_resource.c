/* image_resource.c - managed resources embedded in the assembly (ManifestResource, II.22.24). */
#include "image.h"
#include "lt_cursor.h"
#include "lt_error.h"

#include <string.h>

/* Where an added entry starts in the Resources directory: after the input's bytes, 8-byte aligned. */
static uint64_t added_base(const struct img *img)
{
	return ((uint64_t)img->pe.cli.resources.size + 7) & ~(uint64_t)7;
}

/* The entry at `offset` of the Resources directory (II.25.3.3: a 4-byte length, then the bytes). */
static int entry_at(const struct img *img, uint32_t offset, const uint8_t **data, uint32_t *len)
{
	const struct pe_dir *d = &img->pe.cli.resources;
	uint32_t at;

	if (offset >= added_base(img)) {
		uint64_t o = offset - added_base(img);
		if (o + 4 > img->resources.len || lt_le32(img->resources.data + o) > img->resources.len - o - 4)
			return lt_error_set(LT_E_METADATA, "managed resource at offset %u: past the resources", offset);
		*len = lt_le32(img->resources.data + o);
		*data = img->resources.data + o + 4;
		return 0;
	}
	if ((uint64_t)offset + 4 > d->size ||
	    pe_rva_to_offset(&img->pe, d->rva + offset, 4, &at, LT_E_METADATA, "managed resource") < 0)
		return lt_error_set(LT_E_METADATA, "managed resource at offset %u: past the Resources directory (%u bytes)",
				    offset, d->size);
	*len = lt_le32(img->file + at);
	if (*len > d->size - offset - 4 ||
	    pe_rva_to_offset(&img->pe, d->rva + offset + 4, *len, &at, LT_E_METADATA, "managed resource") < 0)
		return lt_error_set(LT_E_METADATA, "managed resource at offset %u: %u bytes pass the Resources directory",
				    offset, *len);
	*data = img->file + at;
	return 0;
}

int img_resource(const struct img *img, const char *name, const uint8_t **data, uint32_t *len)
{
	const struct md_image *md = &img->md;

	for (uint32_t r = 1; r <= md_rows(md, MD_MANIFESTRESOURCE); r++) {
		const char *n;
		if (md_get(md, MD_MANIFESTRESOURCE, r, MD_MANIFESTRESOURCE_IMPLEMENTATION) != 0)
			continue; /* in another file or assembly */
		if (md_string(md, md_get(md, MD_MANIFESTRESOURCE, r, MD_MANIFESTRESOURCE_NAME), &n) < 0)
			return lt_error_prefix("ManifestResource row %u: ", r);
		if (strcmp(n, name) != 0)
			continue;
		if (entry_at(img, md_get(md, MD_MANIFESTRESOURCE, r, MD_MANIFESTRESOURCE_OFFSET), data, len) < 0)
			return lt_error_prefix("ManifestResource row %u: ", r);
		return 1;
	}
	return 0;
}

int img_add_resource(struct img *img, const char *name, uint32_t flags, const uint8_t *data, size_t len)
{
	struct lt_buf *b = &img->resources;
	uint32_t cells[MD_MANIFESTRESOURCE_COLS], row;
	size_t old = b->len;

	if (len > 0x7FFFFFFFu || added_base(img) + b->len + 4 + len > 0x7FFFFFFFu)
		return lt_error_set(LT_E_LIMIT, "managed resource %s: the Resources directory would pass 2 GiB", name);
	cells[MD_MANIFESTRESOURCE_OFFSET] = (uint32_t)(added_base(img) + b->len);
	cells[MD_MANIFESTRESOURCE_FLAGS] = flags;
	cells[MD_MANIFESTRESOURCE_IMPLEMENTATION] = 0; /* II.22.24: 0, the resource is in this file */
	if (md_add_string(&img->md, name, &cells[MD_MANIFESTRESOURCE_NAME]) < 0 || lt_buf_u32(b, (uint32_t)len) < 0 ||
	    lt_buf_put(b, data, len) < 0 || lt_buf_align(b, 8) < 0 ||
	    md_append_row(&img->md, MD_MANIFESTRESOURCE, cells, &row) < 0) {
		b->len = old;
		return -1;
	}
	return 0;
}
