/* image_out.c - an output image held as pieces: base runs plus patched copies
 * (see struct img_out in image.h).  The writer (image_write.c) describes the
 * unpatched output as runs - input bytes, zero fill, the new section's own
 * bytes - and asks here for writable bytes wherever it patches a field; only
 * those ranges are copied. */
#include "image.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdlib.h>
#include <string.h>

static uint64_t base_len(const struct img_out *out)
{
	uint64_t n = 0;

	for (size_t i = 0; i < out->nbase; i++)
		n += out->base[i].len;
	return n;
}

int img_out_add(struct img_out *out, const uint8_t *data, uint64_t len)
{
	if (!len)
		return 0;
	if (len > SIZE_MAX)
		return lt_error_set(LT_E_LAYOUT, "image would pass the address space");
	if (lt_buf_put(&out->base_buf, &(struct lt_iov){ data, (size_t)len }, sizeof(struct lt_iov)) < 0)
		return -1;
	out->base = (struct lt_iov *)(void *)out->base_buf.data;
	out->nbase++;
	return 0;
}

/* Copy bytes [off, off+len) of the runs v[0..n) laid end to end (NULL data:
 * zeros) to dst (the caller checked the range is inside them). */
static void runs_copy(const struct lt_iov *v, size_t n, uint64_t off, size_t len, uint8_t *dst)
{
	uint64_t start = 0;

	for (size_t i = 0; i < n && len; i++) {
		uint64_t end = start + v[i].len;

		if (off < end) {
			size_t k = (size_t)(end - off) < len ? (size_t)(end - off) : len;
			if (v[i].data)
				memcpy(dst, v[i].data + (off - start), k);
			else
				memset(dst, 0, k);
			dst += k;
			off += k;
			len -= k;
		}
		start = end;
	}
}

uint8_t *img_out_patch(struct img_out *out, uint32_t off, uint32_t len)
{
	uint64_t lo = off, hi = (uint64_t)off + len;
	size_t i, first = out->npatches, nmet = 0;
	struct img_patch merged;

	if (hi > base_len(out)) {
		lt_error_set(LT_E_LAYOUT, "patch at file offset 0x%x (%u bytes) is past the image", off, len);
		return NULL;
	}
	/* The patches this range meets are consecutive (sorted, disjoint). */
	for (i = 0; i < out->npatches; i++) {
		const struct img_patch *p = &out->patches[i];
		if (p->off + (uint64_t)p->len <= off || p->off >= hi)
			continue;
		if (p->off <= lo && p->off + (uint64_t)p->len >= hi)
			return p->data + (off - p->off);
		if (nmet++ == 0)
			first = i;
		if (p->off < lo)
			lo = p->off;
		if (p->off + (uint64_t)p->len > hi)
			hi = p->off + (uint64_t)p->len;
	}
	merged.off = (uint32_t)lo;
	merged.len = (uint32_t)(hi - lo);
	if (lt_grow(&out->patches, &out->patches_cap, out->npatches + 1, sizeof *out->patches) < 0)
		return NULL;
	if (!(merged.data = lt_malloc(merged.len ? merged.len : 1))) {
		lt_nomem("a patch of %u bytes", merged.len);
		return NULL;
	}
	/* Earlier patches hold earlier writes: they win over the base bytes. */
	runs_copy(out->base, out->nbase, lo, merged.len, merged.data);
	for (i = first; i < first + nmet; i++) {
		memcpy(merged.data + (out->patches[i].off - lo), out->patches[i].data, out->patches[i].len);
		free(out->patches[i].data);
	}
	if (nmet == 0)
		for (first = 0; first < out->npatches && out->patches[first].off < lo; first++)
			;
	memmove(&out->patches[first + 1], &out->patches[first + nmet],
		(out->npatches - first - nmet) * sizeof *out->patches);
	out->patches[first] = merged;
	out->npatches = out->npatches + 1 - nmet;
	return merged.data + (off - lo);
}

/* Append one piece to out->parts (room was reserved by img_out_finish). */
static void add_part(struct img_out *out, const uint8_t *data, size_t len)
{
	if (len)
		out->parts[out->nparts++] = (struct lt_iov){ data, len };
}

int img_out_finish(struct img_out *out)
{
	uint64_t pos = 0, start = 0;
	size_t i, p = 0;

	free(out->parts);
	out->nparts = 0;
	/* Each patch splits at most one base run in two, and adds itself. */
	out->parts = lt_malloc((out->nbase + 2 * out->npatches + 1) * sizeof *out->parts);
	if (!out->parts)
		return lt_nomem("the output's %zu pieces", out->nbase + 2 * out->npatches + 1);
	for (i = 0; i < out->nbase; i++) {
		const struct lt_iov *b = &out->base[i];
		uint64_t end = start + b->len;

		while (pos < end) {
			uint64_t stop = end;
			if (p < out->npatches && out->patches[p].off == pos) {
				add_part(out, out->patches[p].data, out->patches[p].len);
				pos += out->patches[p++].len;
				continue;
			}
			if (p < out->npatches && out->patches[p].off < stop)
				stop = out->patches[p].off;
			add_part(out, b->data ? b->data + (pos - start) : NULL, (size_t)(stop - pos));
			pos = stop;
		}
		start = end;
	}
	out->len = (size_t)pos;
	return 0;
}

int img_out_copy(const struct img_out *out, uint64_t off, size_t len, uint8_t *dst)
{
	if (off > out->len || len > out->len - off)
		return lt_error_set(LT_E_INTERNAL, "internal error: output range 0x%llx+0x%zx passes the image (0x%zx)",
				    (unsigned long long)off, len, out->len);
	runs_copy(out->parts, out->nparts, off, len, dst);
	return 0;
}

int img_out_join(const struct img_out *out, struct lt_buf *buf)
{
	if (lt_buf_reserve(buf, out->len) < 0)
		return -1;
	for (size_t i = 0; i < out->nparts; i++) {
		const struct lt_iov *v = &out->parts[i];
		if ((v->data ? lt_buf_put(buf, v->data, v->len) : lt_buf_zero(buf, v->len)) < 0)
			return -1;
	}
	return 0;
}

void img_out_free(struct img_out *out)
{
	for (size_t i = 0; i < out->npatches; i++)
		free(out->patches[i].data);
	free(out->patches);
	free(out->parts);
	lt_buf_free(&out->base_buf);
	lt_buf_free(&out->section);
	memset(out, 0, sizeof *out);
}
