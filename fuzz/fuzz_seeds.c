/* fuzz_seeds.c - seed inputs for fuzz_sig: every signature blob of real assemblies, one file each.
 *
 *   fuzz_seeds OUTDIR ASSEMBLY...
 *
 * Each distinct blob is written to OUTDIR/<64-bit FNV-1a hash in hex>, in the
 * input format of fuzz_sig (fuzz_targets.h): a selector byte, then the blob.
 * MethodDef and method MemberRef signatures become MethodDefSig seeds and
 * stack-effect seeds, field ones FieldSig seeds, Property.Type PropertySig
 * seeds, TypeSpec and MethodSpec blobs their own, StandAloneSig blobs
 * LocalVarSig seeds (and sig_locals_append seeds adding one int32) or
 * StandAloneMethodSig seeds.  Exits 0, or 1 when an input cannot be read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "lt_file.h"
#include "sig.h"

/* Selectors of fuzz_sig. */
enum { SEL_METHOD = 0, SEL_PROPERTY = 1, SEL_FIELD = 2, SEL_TYPESPEC = 3, SEL_LOCALS = 4,
       SEL_METHODSPEC = 5, SEL_STACK = 6, SEL_APPEND = 7 };

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325u;
	while (n--)
		h = (h ^ *p++) * 0x100000001b3u;
	return h;
}

/* Write head[0..nhead) then blob[0..len) as one seed (no-op when it exists). */
static int seed_write(const char *dir, const uint8_t *head, size_t nhead, const uint8_t *blob, size_t len)
{
	uint8_t *all = malloc(nhead + len + 1);
	char path[4096];
	FILE *f;
	int rc = 0;

	if (!all)
		return lt_nomem(NULL);
	memcpy(all, head, nhead);
	memcpy(all + nhead, blob, len);
	snprintf(path, sizeof path, "%s/%016llx", dir, (unsigned long long)fnv1a(all, nhead + len));
	f = fopen(path, "wb");
	if (!f || fwrite(all, 1, nhead + len, f) != nhead + len)
		rc = lt_error_set(LT_E_IO, "cannot write %s", path);
	if (f && fclose(f) != 0)
		rc = lt_error_set(LT_E_IO, "cannot write %s", path);
	free(all);
	return rc;
}

/* The seeds of one signature blob p[0..len) read from table t. */
static int seed_blob(const char *dir, enum md_table_id t, const uint8_t *p, uint32_t len)
{
	uint8_t head[3];
	int field = len > 0 && (p[0] & SIG_CONV_MASK) == SIG_CONV_FIELD;
	int locals = len > 0 && (p[0] & SIG_CONV_MASK) == SIG_CONV_LOCAL_SIG;

	switch (t) {
	case MD_PROPERTY: head[0] = SEL_PROPERTY; break;
	case MD_FIELD: head[0] = SEL_FIELD; break;
	case MD_TYPESPEC: head[0] = SEL_TYPESPEC; break;
	case MD_METHODSPEC: head[0] = SEL_METHODSPEC; break;
	case MD_STANDALONESIG: head[0] = locals ? SEL_LOCALS : SEL_METHOD; break;
	default: head[0] = field ? SEL_FIELD : SEL_METHOD; break;
	}
	if (seed_write(dir, head, 1, p, len) < 0)
		return -1;
	if (head[0] == SEL_METHOD) {
		head[0] = SEL_STACK;
		return seed_write(dir, head, 1, p, len);
	}
	if (head[0] == SEL_LOCALS && len <= 0xFF) {
		/* sig_locals_append: the old LocalVarSig (len bytes), then one new local: int32. */
		uint8_t body[0x100];
		head[0] = SEL_APPEND;
		head[1] = (uint8_t)len;
		head[2] = 1;
		memcpy(body, p, len);
		body[len] = SIG_I4;
		return seed_write(dir, head, 3, body, len + 1);
	}
	return 0;
}

static int seed_image(const char *dir, const struct img *img)
{
	static const struct {
		enum md_table_id table;
		unsigned col;
	} cols[] = {
		{ MD_METHODDEF, MD_METHODDEF_SIGNATURE }, { MD_MEMBERREF, MD_MEMBERREF_SIGNATURE },
		{ MD_FIELD, MD_FIELD_SIGNATURE }, { MD_PROPERTY, MD_PROPERTY_TYPE },
		{ MD_TYPESPEC, MD_TYPESPEC_SIGNATURE }, { MD_STANDALONESIG, MD_STANDALONESIG_SIGNATURE },
		{ MD_METHODSPEC, MD_METHODSPEC_INSTANTIATION },
	};
	size_t i;
	uint32_t row, len;
	const uint8_t *p;

	for (i = 0; i < sizeof cols / sizeof *cols; i++)
		for (row = 1; row <= md_rows(&img->md, cols[i].table); row++)
			if (md_blob(&img->md, md_get(&img->md, cols[i].table, row, cols[i].col), &p, &len) < 0 ||
			    seed_blob(dir, cols[i].table, p, len) < 0)
				return -1;
	return 0;
}

int main(int argc, char **argv)
{
	int i, failed = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: fuzz_seeds OUTDIR ASSEMBLY...\n");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		struct img *img = NULL;
		uint8_t *data;
		size_t size;

		if (lt_file_read(argv[i], &data, &size) < 0 || img_load(&img, data, size) < 0 ||
		    seed_image(argv[1], img) < 0) {
			fprintf(stderr, "%s: error LT%03d: %s\n", argv[i], lt_error_last()->code, lt_error_last()->msg);
			failed = 1;
		}
		img_free(img);
	}
	return failed;
}
