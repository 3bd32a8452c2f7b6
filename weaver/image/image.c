/* image.c - opening an assembly for editing: PE, metadata, method bodies. */
#include "image.h"
#include "il_body.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static int check_supported(const struct pe_file *pe)
{
	const struct pe_cli_header *h = &pe->cli;

	/* ReadyToRun and NGen images carry precompiled native code for the IL
	 * in a ManagedNativeHeader; new IL would run beside stale code.  Tested
	 * first: crossgen clears ILONLY too, and this is the message that helps. */
	if (h->native_header.rva != 0 || (h->flags & PE_COMIMAGE_IL_LIBRARY))
		return lt_error_set(LT_E_READY_TO_RUN, "ReadyToRun image: weave the IL-only assembly before crossgen");
	/* II.25.3.3.1: without ILONLY the image carries native code (C++/CLI);
	 * VTableFixups also mean native entry points into managed code. */
	if (!(h->flags & PE_COMIMAGE_ILONLY) || h->vtable_fixups.rva != 0)
		return lt_error_set(LT_E_MIXED_MODE, "mixed-mode (C++/CLI) image: native code cannot be rewritten");
	return 0;
}

int img_load(struct img **out, uint8_t *data, size_t size)
{
	struct img *img = lt_calloc(1, sizeof *img);
	uint32_t off;

	if (!img) {
		free(data);
		return lt_nomem(NULL);
	}
	img->file = data;
	img->size = size;
	if (pe_parse(&img->pe, data, size) < 0 || check_supported(&img->pe) < 0)
		goto fail;
	if (pe_rva_to_offset(&img->pe, img->pe.cli.metadata.rva, img->pe.cli.metadata.size, &off,
			     LT_E_METADATA, "metadata") < 0)
		goto fail;
	if (md_read(&img->md, data + off, img->pe.cli.metadata.size) < 0)
		goto fail;
	*out = img;
	return 0;
fail:
	img_free(img);
	return -1;
}

void img_free(struct img *img)
{
	uint32_t i;

	if (!img)
		return;
	for (i = 0; i < img->nbodies; i++) {
		free(img->bodies[i].data);
		pdb_map_free(img->bodies[i].map);
	}
	free(img->bodies);
	for (i = 0; img->debug_data && i < img->pe.ndebug; i++)
		free(img->debug_data[i].data);
	free(img->debug_data);
	md_free(&img->md);
	pe_free(&img->pe);
	free(img->file);
	free(img);
}

/* Whether TypeRef `tok` is System.Runtime.CompilerServices.<name>. */
static int typeref_is(const struct img *img, uint32_t tok, const char *ns, const char *name)
{
	const char *n, *s;
	uint32_t row = md_token_row(tok);

	if (md_token_table(tok) != MD_TYPEREF || row == 0 || row > md_rows(&img->md, MD_TYPEREF))
		return 0;
	if (md_string(&img->md, md_get(&img->md, MD_TYPEREF, row, MD_TYPEREF_NAME), &n) < 0 ||
	    md_string(&img->md, md_get(&img->md, MD_TYPEREF, row, MD_TYPEREF_NAMESPACE), &s) < 0)
		return 0;
	return strcmp(n, name) == 0 && strcmp(s, ns) == 0;
}

/* Whether MethodDef row m belongs to TypeDef ns.name: the TypeDef whose
 * method list (II.22.37 MethodList, up to the next row's) holds m. */
static int methoddef_owner_is(const struct md_image *md, uint32_t m, const char *ns, const char *name)
{
	uint32_t n = md_rows(md, MD_TYPEDEF);
	const char *tn, *ts;

	for (uint32_t t = n; t >= 1; t--) {
		if (md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_METHODLIST) > m)
			continue;
		if (t < n && md_get(md, MD_TYPEDEF, t + 1, MD_TYPEDEF_METHODLIST) <= m)
			return 0;
		return md_string(md, md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_NAME), &tn) == 0 &&
		       md_string(md, md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_NAMESPACE), &ts) == 0 &&
		       strcmp(tn, name) == 0 && strcmp(ts, ns) == 0;
	}
	return 0;
}

int img_is_strong_named(const struct img *img)
{
	return (img->pe.cli.flags & PE_COMIMAGE_STRONGNAMESIGNED) != 0;
}

int img_is_reference_assembly(const struct img *img)
{
	const struct md_image *md = &img->md;
	uint32_t r, parent, ctor, cls;

	for (r = 1; r <= md_rows(md, MD_CUSTOMATTRIBUTE); r++) {
		if (md_coded_decode(MD_CI_HASCUSTOMATTRIBUTE, md_get(md, MD_CUSTOMATTRIBUTE, r, MD_CUSTOMATTRIBUTE_PARENT), &parent) < 0 ||
		    parent != md_token(MD_ASSEMBLY, 1))
			continue;
		if (md_coded_decode(MD_CI_CUSTOMATTRIBUTETYPE, md_get(md, MD_CUSTOMATTRIBUTE, r, MD_CUSTOMATTRIBUTE_TYPE), &ctor) < 0 ||
		    md_token_row(ctor) == 0)
			continue;
		/* The constructor of a type of its own (a core library's reference
		 * assembly, System.Runtime's: a MethodDef) or another's (a MemberRef). */
		if (md_token_table(ctor) == MD_METHODDEF) {
			if (methoddef_owner_is(md, md_token_row(ctor), "System.Runtime.CompilerServices", "ReferenceAssemblyAttribute"))
				return 1;
			continue;
		}
		if (md_token_table(ctor) != MD_MEMBERREF || md_token_row(ctor) > md_rows(md, MD_MEMBERREF))
			continue;
		if (md_coded_decode(MD_CI_MEMBERREFPARENT, md_get(md, MD_MEMBERREF, md_token_row(ctor), MD_MEMBERREF_CLASS), &cls) < 0)
			continue;
		if (typeref_is(img, cls, "System.Runtime.CompilerServices", "ReferenceAssemblyAttribute"))
			return 1;
	}
	return 0;
}

int img_method_body(const struct img *img, uint32_t row, const uint8_t **out, size_t *len)
{
	struct lt_cur c;
	uint32_t rva, size;

	if (row - 1 < img->nbodies && img->bodies[row - 1].data) {
		*out = img->bodies[row - 1].data;
		*len = img->bodies[row - 1].len;
		return 0;
	}
	*out = NULL;
	*len = 0;
	if (row > md_rows(&img->md, MD_METHODDEF))
		return 0; /* a row appended without a body yet */
	rva = md_get(&img->md, MD_METHODDEF, row, MD_METHODDEF_RVA);
	if (rva == 0)
		return 0;
	if (pe_rva_cursor(&img->pe, rva, &c, LT_E_BODY, "method body") < 0 ||
	    il_body_size(c.data, lt_cur_left(&c), &size) < 0)
		return lt_error_prefix("MethodDef row %u: ", row);
	*out = c.data;
	*len = size;
	return 0;
}

int img_set_method_body(struct img *img, uint32_t row, const uint8_t *body, size_t len)
{
	uint8_t *copy;

	if (row == 0 || len == 0 || len > 0x7FFFFFFF)
		return lt_error_set(LT_E_ENCODE, "MethodDef row %u: body of %zu bytes", row, len);
	if (row > img->nbodies) {
		/* Room for every MethodDef row there is (a merge appends its rows,
		 * then sets their bodies), an eighth more for rows appended later:
		 * zeroed, the whole array is touched, and doubling it made it
		 * twice the rows (1.3 MB for mscorlib.dll, 4.9 MB for 100,000 methods). */
		size_t was = img->nbodies, want = md_rows(&img->md, MD_METHODDEF);
		struct img_body *grown;

		if (want < was + was / 8)
			want = was + was / 8;
		if (want < row)
			want = row;
		if (!(grown = lt_realloc(img->bodies, want * sizeof *grown)))
			return lt_nomem("bodies of %zu MethodDef rows", want);
		memset(grown + was, 0, (want - was) * sizeof *grown);
		img->bodies = grown;
		img->nbodies = want;
	}
	copy = lt_malloc(len);
	if (!copy)
		return lt_nomem(NULL);
	memcpy(copy, body, len);
	free(img->bodies[row - 1].data);
	pdb_map_free(img->bodies[row - 1].map);
	img->bodies[row - 1].data = copy;
	img->bodies[row - 1].len = (uint32_t)len;
	img->bodies[row - 1].map = NULL;
	return 0;
}

int img_set_debug_data(struct img *img, uint32_t index, const uint8_t *data, size_t len, uint32_t timestamp)
{
	uint8_t *copy;

	assert(index < img->pe.ndebug);
	if (len > 0x7FFFFFFF)
		return lt_error_set(LT_E_LIMIT, "debug entry %u: %zu bytes of data", index, len);
	if (!img->debug_data && !(img->debug_data = lt_calloc(img->pe.ndebug, sizeof *img->debug_data)))
		return lt_nomem(NULL);
	if (!(copy = lt_malloc(len ? len : 1)))
		return lt_nomem(NULL);
	memcpy(copy, data, len);
	free(img->debug_data[index].data);
	img->debug_data[index] = (struct img_debug_data){ copy, (uint32_t)len, timestamp, 0 };
	return 0;
}
