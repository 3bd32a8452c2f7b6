/* weave_early.c - the call that begins the watch of the exit before the program's own code runs: first in the
 * module initializer, else in the entry point (ExitOrder.Watch, weaver/runtime/README.md). */
#include "weave_pass.h"
#include "il_body.h"
#include "image_body.h"
#include "lt_error.h"

#include <string.h>

/* The module initializer: <Module>'s type initializer (II.10.5.3), a method named .cctor in the MethodList run
 * of TypeDef row 1 (II.22.37), or 0 when it has none.  Returns -1 with LT_E_METADATA for a bad #Strings index. */
static int module_initializer(const struct md_image *md, uint32_t *row)
{
	uint32_t methods = md_rows(md, MD_METHODDEF), first, end;
	const char *name;

	*row = 0;
	if (md_rows(md, MD_TYPEDEF) == 0)
		return 0;
	first = md_get(md, MD_TYPEDEF, 1, MD_TYPEDEF_METHODLIST);
	end = md_rows(md, MD_TYPEDEF) > 1 ? md_get(md, MD_TYPEDEF, 2, MD_TYPEDEF_METHODLIST) : methods + 1;
	for (uint32_t r = first; r < end && r <= methods; r++) {
		if (md_string(md, md_get(md, MD_METHODDEF, r, MD_METHODDEF_NAME), &name) < 0)
			return lt_error_prefix("<Module> MethodDef row %u: ", r);
		if (strcmp(name, ".cctor") == 0) {
			*row = r;
			return 0;
		}
	}
	return 0;
}

uint32_t weave_entry_point(const struct img *img)
{
	uint32_t token = img->pe.cli.entry_point;

	if ((img->pe.cli.flags & PE_COMIMAGE_NATIVE_ENTRYPOINT) || md_token_table(token) != MD_METHODDEF ||
	    md_token_row(token) == 0 || md_token_row(token) > md_rows(&img->md, MD_METHODDEF))
		return 0;
	return md_token_row(token);
}

int weave_early(struct img *img, uint32_t watch)
{
	const struct il_instr call[2] = { { .op = IL_CALL, .arg.token = watch }, { .op = IL_POP } };
	struct il_body b;
	uint32_t row;
	int rc;

	if (module_initializer(&img->md, &row) < 0)
		return -1;
	if (!row && !(row = weave_entry_point(img)))
		return 0;
	if (img_decode_body(img, row, &b) < 0)
		return -1;
	/* Before the first instruction; a branch to it or a clause from it stays there: the call runs once, outside. */
	rc = il_apply(&b, &(struct il_edit){ .at = 0, .ins = call, .n = 2 }, 1) < 0 || img_encode_body(img, row, &b) < 0
		     ? lt_error_prefix("MethodDef row %u: ", row)
		     : 0;
	il_body_free(&b);
	return rc;
}
