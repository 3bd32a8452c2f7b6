/* roundtrip.c - test driver for the image layer: open an assembly, edit
 * every method body (a nop at its start and one more int32 local), add a
 * TypeRef, a MemberRef and a TypeDef with a Field, a MethodDef and a Param,
 * and write the result.  The end-to-end tests then check that readers, the
 * JIT and the program itself accept the output.
 *   usage: lt-roundtrip [--rows-only] IN OUT
 * --rows-only leaves the bodies alone, so a disassembly of the output must
 * equal the input's but for the added rows. */
#include "image.h"
#include "image_body.h"
#include "lt_error.h"
#include "lt_file.h"

#include <stdio.h>
#include <string.h>

#define ELEMENT_TYPE_I4 0x08

static int edit_bodies(struct img *img, uint32_t *edited)
{
	static const uint8_t int32_type[] = { ELEMENT_TYPE_I4 };
	uint32_t row, nrows = md_rows(&img->md, MD_METHODDEF);

	for (row = 1; row <= nrows; row++) {
		struct il_instr nop = { .op = IL_NOP };
		struct il_body b;
		uint16_t first;

		if (md_get(&img->md, MD_METHODDEF, row, MD_METHODDEF_RVA) == 0)
			continue;
		if (img_decode_body(img, row, &b) < 0)
			return -1;
		if (il_insert(&b, 0, &nop, 1) < 0 || img_add_locals(img, &b, int32_type, 1, 1, &first) < 0 ||
		    img_encode_body(img, row, &b) < 0) {
			il_body_free(&b);
			return -1;
		}
		il_body_free(&b);
		(*edited)++;
	}
	return 0;
}

/* The token System.Object has in this assembly (a TypeRef, or the TypeDef in
 * a core library), as a TypeDefOrRef coded index; 0 when there is none. */
static uint32_t object_type(const struct img *img)
{
	static const enum md_table_id tabs[] = { MD_TYPEREF, MD_TYPEDEF };
	const struct md_image *md = &img->md;
	uint32_t i, r, cell;

	for (i = 0; i < 2; i++) {
		unsigned name_col = tabs[i] == MD_TYPEREF ? MD_TYPEREF_NAME : MD_TYPEDEF_NAME;
		unsigned ns_col = tabs[i] == MD_TYPEREF ? MD_TYPEREF_NAMESPACE : MD_TYPEDEF_NAMESPACE;
		for (r = 1; r <= md_rows(md, tabs[i]); r++) {
			const char *n, *ns;
			if (md_string(md, md_get(md, tabs[i], r, name_col), &n) == 0 &&
			    md_string(md, md_get(md, tabs[i], r, ns_col), &ns) == 0 &&
			    !strcmp(n, "Object") && !strcmp(ns, "System") &&
			    md_coded_encode(MD_CI_TYPEDEFORREF, md_token(tabs[i], r), &cell) == 0)
				return cell;
		}
	}
	return 0;
}

static int add_rows(struct img *img)
{
	static const uint8_t ctor_sig[] = { 0x20, 0x00, 0x01 };           /* instance void () */
	static const uint8_t field_sig[] = { 0x06, ELEMENT_TYPE_I4 };       /* int32 */
	static const uint8_t method_sig[] = { 0x00, 0x01, 0x01, ELEMENT_TYPE_I4 }; /* void (int32) */
	struct md_image *md = &img->md;
	uint32_t tr[MD_TYPEREF_COLS], mr[MD_MEMBERREF_COLS], td[MD_TYPEDEF_COLS], fd[MD_FIELD_COLS];
	uint32_t mdef[MD_METHODDEF_COLS], pa[MD_PARAM_COLS], row, trow, frow, mrow;
	struct il_instr code[3] = { { .op = IL_LDARG_0 }, { .op = IL_STSFLD }, { .op = IL_RET } };
	struct il_body b = { 0 };
	int rc;

	/* TypeRef and MemberRef: scoped to the first AssemblyRef, or this module. */
	if (md_coded_encode(MD_CI_RESOLUTIONSCOPE, md_rows(md, MD_ASSEMBLYREF) ? md_token(MD_ASSEMBLYREF, 1)
									       : md_token(MD_MODULE, 1),
			    &tr[MD_TYPEREF_RESOLUTIONSCOPE]) < 0 ||
	    md_add_string(md, "LockTimeProbe", &tr[MD_TYPEREF_NAME]) < 0 ||
	    md_add_string(md, "System", &tr[MD_TYPEREF_NAMESPACE]) < 0 ||
	    md_append_row(md, MD_TYPEREF, tr, &trow) < 0 ||
	    md_coded_encode(MD_CI_MEMBERREFPARENT, md_token(MD_TYPEREF, trow), &mr[MD_MEMBERREF_CLASS]) < 0 ||
	    md_add_string(md, ".ctor", &mr[MD_MEMBERREF_NAME]) < 0 ||
	    md_add_blob(md, ctor_sig, sizeof ctor_sig, &mr[MD_MEMBERREF_SIGNATURE]) < 0 ||
	    md_append_row(md, MD_MEMBERREF, mr, &row) < 0)
		return -1;
	/* TypeDef last, then its Field, MethodDef and Param at the ends of their tables. */
	td[MD_TYPEDEF_FLAGS] = 0x00100180; /* NotPublic | Abstract | Sealed | BeforeFieldInit */
	td[MD_TYPEDEF_EXTENDS] = object_type(img);
	td[MD_TYPEDEF_FIELDLIST] = md_rows(md, MD_FIELD) + 1;
	td[MD_TYPEDEF_METHODLIST] = md_rows(md, MD_METHODDEF) + 1;
	fd[MD_FIELD_FLAGS] = 0x0011;        /* Private | Static */
	mdef[MD_METHODDEF_RVA] = 0;         /* set when the body is written */
	mdef[MD_METHODDEF_IMPLFLAGS] = 0;
	mdef[MD_METHODDEF_FLAGS] = 0x0091;  /* Private | Static | HideBySig */
	mdef[MD_METHODDEF_PARAMLIST] = md_rows(md, MD_PARAM) + 1;
	pa[MD_PARAM_FLAGS] = 0;
	pa[MD_PARAM_SEQUENCE] = 1;
	if (md_add_string(md, "<LockTimeProbe>", &td[MD_TYPEDEF_NAME]) < 0 ||
	    md_add_string(md, "", &td[MD_TYPEDEF_NAMESPACE]) < 0 ||
	    md_append_row(md, MD_TYPEDEF, td, &row) < 0 ||
	    md_add_string(md, "Value", &fd[MD_FIELD_NAME]) < 0 ||
	    md_add_blob(md, field_sig, sizeof field_sig, &fd[MD_FIELD_SIGNATURE]) < 0 ||
	    md_append_row(md, MD_FIELD, fd, &frow) < 0 ||
	    md_add_string(md, "Set", &mdef[MD_METHODDEF_NAME]) < 0 ||
	    md_add_blob(md, method_sig, sizeof method_sig, &mdef[MD_METHODDEF_SIGNATURE]) < 0 ||
	    md_append_row(md, MD_METHODDEF, mdef, &mrow) < 0 ||
	    md_add_string(md, "value", &pa[MD_PARAM_NAME]) < 0 ||
	    md_append_row(md, MD_PARAM, pa, &row) < 0)
		return -1;
	/* static void Set(int32 value) { Value = value; } */
	code[1].arg.token = md_token(MD_FIELD, frow);
	if (il_insert(&b, 0, code, 3) < 0) {
		il_body_free(&b);
		return -1;
	}
	rc = img_encode_body(img, mrow, &b);
	il_body_free(&b);
	return rc;
}

int main(int argc, char **argv)
{
	struct lt_buf out = LT_BUF_INIT;
	struct img *img = NULL;
	uint32_t edited = 0;
	uint8_t *data;
	size_t size;
	int rc = 1, rows_only = argc == 4 && !strcmp(argv[1], "--rows-only");

	argv += rows_only;
	if (argc != 3 + rows_only) {
		fprintf(stderr, "usage: lt-roundtrip [--rows-only] IN OUT\n");
		return 2;
	}
	if (lt_file_read(argv[1], &data, &size) == 0 && img_load(&img, data, size) == 0 &&
	    (rows_only || edit_bodies(img, &edited) == 0) && add_rows(img) == 0 && img_write(img, &out) == 0 &&
	    lt_file_write_atomic(argv[2], out.data, out.len) == 0) {
		printf("%s: %u bodies edited, %zu bytes written\n", argv[1], edited, out.len);
		rc = 0;
	} else {
		fprintf(stderr, "%s: error LT%03d: %s\n", argv[1], lt_error_last()->code, lt_error_last()->msg);
	}
	lt_buf_free(&out);
	img_free(img);
	return rc;
}
