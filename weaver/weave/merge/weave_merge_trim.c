/* weave_merge_trim.c - where the merged run-time's attributes for the trimmer go in the target: its own
 * class of that name, its framework's, the template's class under its full name, or nowhere. */
#include "weave_merge_int.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "weave_framework.h"

#include <string.h>

/* The rows [*first, *end) of `child` that row `row` of `owner` lists in column `col` (II.22.37 MethodList,
 * II.22.35 PropertyList: up to the next row's list, else to the end of the child table). */
static void list_of(const struct md_image *md, enum md_table_id owner, uint32_t row, unsigned col,
		    enum md_table_id child, uint32_t *first, uint32_t *end)
{
	uint32_t last = md_rows(md, child) + 1;

	*first = md_get(md, owner, row, col);
	*end = row < md_rows(md, owner) ? md_get(md, owner, row + 1, col) : last;
	if (*end > last)
		*end = last;
	if (*first > *end)
		*first = *end;
}

/* The Property rows [*first, *end) of TypeDef `type` (II.22.35 PropertyMap; none: an empty range). */
static void properties_of(const struct md_image *md, uint32_t type, uint32_t *first, uint32_t *end)
{
	*first = *end = 1;
	for (uint32_t r = 1; r <= md_rows(md, MD_PROPERTYMAP); r++)
		if (md_get(md, MD_PROPERTYMAP, r, MD_PROPERTYMAP_PARENT) == type) {
			list_of(md, MD_PROPERTYMAP, r, MD_PROPERTYMAP_PROPERTYLIST, MD_PROPERTY, first, end);
			return;
		}
}

/* Whether rows a of `ma` and b of `mb` (both of table t) have the same name and the same signature bytes. */
static int same_member(const struct md_image *ma, uint32_t a, const struct md_image *mb, uint32_t b,
		       enum md_table_id t, unsigned name_col, unsigned sig_col)
{
	const uint8_t *pa, *pb;
	const char *na, *nb;
	uint32_t la, lb;

	if (md_string(ma, md_get(ma, t, a, name_col), &na) < 0 || md_string(mb, md_get(mb, t, b, name_col), &nb) < 0 ||
	    md_blob(ma, md_get(ma, t, a, sig_col), &pa, &la) < 0 || md_blob(mb, md_get(mb, t, b, sig_col), &pb, &lb) < 0)
		return -1;
	return strcmp(na, nb) == 0 && la == lb && memcmp(pa, pb, la) == 0;
}

/* The target's top-level TypeDef ns.name (a class of its own, II.22.37; a nested one does not count):
 * its row in *out, 0 when none. */
static int own_class(const struct md_image *md, const char *ns, const char *name, uint32_t *out)
{
	*out = 0;
	for (uint32_t r = 2; r <= md_rows(md, MD_TYPEDEF) && !*out; r++) {
		const char *n, *s;
		int nested = 0;

		if (md_string(md, md_get(md, MD_TYPEDEF, r, MD_TYPEDEF_NAME), &n) < 0 ||
		    md_string(md, md_get(md, MD_TYPEDEF, r, MD_TYPEDEF_NAMESPACE), &s) < 0)
			return lt_error_prefix("TypeDef row %u: ", r);
		if (strcmp(n, name) || strcmp(s, ns))
			continue; /* the NestedClass rows are walked for a class of that name only */
		for (uint32_t k = 1; k <= md_rows(md, MD_NESTEDCLASS) && !nested; k++)
			nested = md_get(md, MD_NESTEDCLASS, k, MD_NESTEDCLASS_NESTEDCLASS) == r;
		if (!nested)
			*out = r;
	}
	return 0;
}

/* Whether the target's class `own` fits the uses of template class `tt` whose constructor is template
 * MethodDef `ctor_row`: a .ctor of the same signature (*ctor its token) and a property of each name and
 * signature tt has (the named arguments of the uses, II.23.3).  The signatures hold strings only (no
 * tokens: merge_framework_attribute), so their bytes compare.  1, 0, or -1 with LT_E_METADATA. */
static int fits(const struct merge *m, uint32_t own, uint32_t tt, uint32_t ctor_row, uint32_t *ctor)
{
	uint32_t a, e, ta, te;
	int same = 0;

	*ctor = 0;
	list_of(m->md, MD_TYPEDEF, own, MD_TYPEDEF_METHODLIST, MD_METHODDEF, &a, &e);
	for (uint32_t r = a; r < e && !*ctor; r++) {
		if ((same = same_member(m->md, r, m->tm, ctor_row, MD_METHODDEF, MD_METHODDEF_NAME,
					MD_METHODDEF_SIGNATURE)) < 0)
			return -1;
		if (same)
			*ctor = md_token(MD_METHODDEF, r);
	}
	if (!*ctor)
		return 0;
	properties_of(m->tm, tt, &ta, &te);
	properties_of(m->md, own, &a, &e);
	for (uint32_t t = ta; t < te; t++) {
		same = 0;
		for (uint32_t r = a; r < e && !same; r++)
			if ((same = same_member(m->md, r, m->tm, t, MD_PROPERTY, MD_PROPERTY_NAME, MD_PROPERTY_TYPE)) < 0)
				return -1;
		if (!same)
			return 0;
	}
	return 1;
}

/* Where the uses of template MethodDef `ctor_row` go when it is the constructor of an attribute for the
 * trimmer (merge_framework_attribute; else nothing changes): m->trim_ctor[ctor_row], m->trim_named,
 * *unfit as merge_plan_trim says.  0, or -1 as merge_plan_trim. */
static int plan_one(struct merge *m, uint32_t ctor_row, int netstandard, unsigned *unfit)
{
	const char *ns, *name;
	const uint8_t *sig;
	uint32_t len, tt, own, type;
	int index, known;

	if ((index = merge_framework_attribute(&m->t->x, ctor_row, &ns, &name, &tt, &sig, &len)) <= 0)
		return index;
	if (own_class(m->md, ns, name, &own) < 0)
		return -1;
	if (own) {
		/* Its own polyfill (a netstandard library's, internal): the trimmer knows the class by name. */
		uint32_t ctor;
		int ok = fits(m, own, tt, ctor_row, &ctor);

		if (ok < 0)
			return -1;
		if (ok)
			m->trim_ctor[ctor_row] = ctor;
		else
			*unfit |= 1u << (index - 1);
		return 0;
	}
	if ((known = wref_type_if_known(m->refs, ns, name, &type)) < 0)
		return -1;
	if (known)
		/* strings only: the template's signature is the target's */
		return wref_member(m->refs, type, 0, ".ctor", sig, len, &m->trim_ctor[ctor_row]);
	if (netstandard) {
		m->trim_named[tt] = 1;
		m->trim_ctor[ctor_row] = md_token(MD_METHODDEF, m->method_base + ctor_row);
	}
	return 0;
}

int merge_plan_trim(struct merge *m, unsigned *unfit)
{
	char framework[96];

	*unfit = 0;
	if (!(m->trim_ctor = lt_calloc(md_rows(m->tm, MD_METHODDEF) + 1, sizeof *m->trim_ctor)) ||
	    !(m->trim_named = lt_calloc(md_rows(m->tm, MD_TYPEDEF) + 1, 1)))
		return lt_nomem(NULL);
	if (weave_target_framework(m->img, framework, sizeof framework) < 0) {
		if (lt_error_last()->code == LT_E_NOMEM)
			return -1;
		lt_error_clear(); /* an unreadable TargetFrameworkAttribute: no framework told, as weave_job_run takes it */
		framework[0] = '\0';
	}
	for (uint32_t k = 0; k < m->t->ntrim_ctors; k++)
		if (plan_one(m, m->t->trim_ctors[k], strncmp(framework, ".NETStandard,", 13) == 0, unfit) < 0)
			return -1;
	return 0;
}
