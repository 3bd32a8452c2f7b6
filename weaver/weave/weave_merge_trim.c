/* weave_merge_trim.c - the trimmer's suppressions of the merged run-time for a target framework
 * without UnconditionalSuppressMessageAttribute: an embedded ILLink.LinkAttributes.xml. */
#include "weave_merge_int.h"
#include "lt_cursor.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "sig.h"

#include <mxml.h>
#include <stdlib.h>
#include <string.h>

/* II.23.3 custom attribute blob: element types of the named arguments the template's suppressions use. */
#define CA_PROLOG 0x0001u
#define CA_FIELD 0x53u
#define CA_PROPERTY 0x54u
#define CA_NULL_STRING 0xFFu

int merge_note_dropped(struct merge *m, uint32_t parent, uint32_t ca_row)
{
	if (lt_grow(&m->dropped, &m->dropped_cap, m->ndropped + 1, sizeof *m->dropped) < 0)
		return -1;
	m->dropped[m->ndropped++] = (struct merge_dropped){ parent, ca_row };
	return 0;
}

/* A SerString (II.23.3: a compressed length, or 0xFF for null, then UTF-8) as a new C string in *out
 * (NULL for null). */
static int ser_string(struct lt_cur *c, char **out)
{
	const uint8_t *p;
	uint32_t n;

	*out = NULL;
	if (lt_cur_left(c) && c->data[c->pos] == CA_NULL_STRING)
		return lt_cur_skip(c, 1);
	if (sig_uint_decode(c, &n) < 0 || lt_cur_bytes(c, n, &p) < 0)
		return -1;
	if (!(*out = lt_malloc((size_t)n + 1)))
		return lt_nomem(NULL);
	memcpy(*out, p, n);
	(*out)[n] = '\0';
	return 0;
}

/* A text child of el holding s (NULL: none); 0, or -1 with LT_E_NOMEM. */
static int add_text(mxml_node_t *el, const char *s)
{
	return !s || mxmlNewOpaque(el, s) ? 0 : lt_nomem(NULL);
}

/* Under el, the <attribute> of the suppression whose template blob is blob[0..len): its two
 * constructor arguments (category, check id) as <argument>s, its named string arguments
 * (Justification...) as <property> or <field> (the data formats of the trimmer's
 * "Custom Attributes Annotations"). */
static int add_suppression(mxml_node_t *el, const uint8_t *blob, uint32_t len)
{
	struct lt_cur c = lt_cur_init(blob, len, LT_E_METADATA, "UnconditionalSuppressMessage blob");
	mxml_node_t *a = mxmlNewElement(el, "attribute"), *arg;
	char *s = NULL, *name = NULL;
	uint16_t prolog, named;
	uint8_t kind, type;
	int rc = -1;

	if (!a)
		return lt_nomem(NULL);
	mxmlElementSetAttr(a, "fullname", "System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessageAttribute");
	if (lt_cur_u16(&c, &prolog) < 0)
		return -1;
	if (prolog != CA_PROLOG)
		return lt_error_set(LT_E_METADATA, "UnconditionalSuppressMessage blob: prolog 0x%04x (II.23.3)", prolog);
	for (int i = 0; i < 2; i++) {
		if (ser_string(&c, &s) < 0)
			goto done;
		if (!(arg = mxmlNewElement(a, "argument")))
			goto nomem;
		if (add_text(arg, s) < 0)
			goto done;
		free(s);
		s = NULL;
	}
	if (lt_cur_u16(&c, &named) < 0)
		goto done;
	for (uint16_t i = 0; i < named; i++) {
		if (lt_cur_u8(&c, &kind) < 0 || lt_cur_u8(&c, &type) < 0)
			goto done;
		if ((kind != CA_FIELD && kind != CA_PROPERTY) || type != SIG_STRING) {
			lt_error_set(LT_E_METADATA, "UnconditionalSuppressMessage blob: named argument %u is not a string "
				     "(II.23.3)", i);
			goto done;
		}
		if (ser_string(&c, &name) < 0 || !name || ser_string(&c, &s) < 0) {
			if (!lt_error_last()->code)
				lt_error_set(LT_E_METADATA, "UnconditionalSuppressMessage blob: named argument %u has no name", i);
			goto done;
		}
		if (!(arg = mxmlNewElement(a, kind == CA_FIELD ? "field" : "property")))
			goto nomem;
		mxmlElementSetAttr(arg, "name", name);
		if (add_text(arg, s) < 0)
			goto done;
		free(name);
		free(s);
		name = s = NULL;
	}
	rc = 0;
	goto done;
nomem:
	lt_nomem(NULL);
done:
	free(s);
	free(name);
	return rc;
}

/* The child of parent named `element` whose attribute `attr` is `value`, made when missing (NULL: out of memory). */
static mxml_node_t *child_of(mxml_node_t *parent, const char *element, const char *attr, const char *value)
{
	mxml_node_t *n;

	for (n = mxmlGetFirstChild(parent); n; n = mxmlGetNextSibling(n))
		if (mxmlGetType(n) == MXML_ELEMENT && strcmp(mxmlGetElement(n), element) == 0 &&
		    strcmp(mxmlElementGetAttr(n, attr) ? mxmlElementGetAttr(n, attr) : "", value) == 0)
			return n;
	if ((n = mxmlNewElement(parent, element)))
		mxmlElementSetAttr(n, attr, value);
	return n;
}

/* The enclosing TypeDef of target TypeDef `row` (II.22.32), 0 when top-level. */
static uint32_t enclosing(const struct md_image *md, uint32_t row)
{
	for (uint32_t r = 1; r <= md_rows(md, MD_NESTEDCLASS); r++)
		if (md_get(md, MD_NESTEDCLASS, r, MD_NESTEDCLASS_NESTEDCLASS) == row)
			return md_get(md, MD_NESTEDCLASS, r, MD_NESTEDCLASS_ENCLOSINGCLASS);
	return 0;
}

/* The <type> element of target TypeDef `row` under `assembly`: a top-level type by its full name
 * ("Namespace.Name"), a nested one as <type name="Inner"> inside its enclosing type's. */
static mxml_node_t *type_element(const struct md_image *md, mxml_node_t *assembly, uint32_t row, unsigned depth)
{
	uint32_t outer = enclosing(md, row);
	const char *ns, *name;
	mxml_node_t *parent;
	char full[600];

	if (depth > 64) {
		lt_error_set(LT_E_METADATA, "TypeDef row %u: nested deeper than 64 (a NestedClass cycle)", row);
		return NULL;
	}
	if (md_string(md, md_get(md, MD_TYPEDEF, row, MD_TYPEDEF_NAMESPACE), &ns) < 0 ||
	    md_string(md, md_get(md, MD_TYPEDEF, row, MD_TYPEDEF_NAME), &name) < 0)
		return NULL;
	if (outer) {
		if (!(parent = type_element(md, assembly, outer, depth + 1)))
			return NULL;
		return child_of(parent, "type", "name", name);
	}
	snprintf(full, sizeof full, "%s%s%s", ns, ns[0] ? "." : "", name);
	return child_of(assembly, "type", "fullname", full);
}

/* The target TypeDef that owns MethodDef `row` (II.22.37 MethodList). */
static uint32_t method_owner(const struct md_image *md, uint32_t row)
{
	uint32_t owner = 0;

	for (uint32_t r = 1; r <= md_rows(md, MD_TYPEDEF); r++)
		if (md_get(md, MD_TYPEDEF, r, MD_TYPEDEF_METHODLIST) <= row)
			owner = r;
	return owner;
}

/* The element that carries the attributes of target token `parent`: a type's <type>, a method's
 * <method name="..."> inside it (every overload of that name: the template's suppressed methods have none). */
static mxml_node_t *parent_element(const struct md_image *md, mxml_node_t *assembly, uint32_t parent)
{
	uint32_t row = md_token_row(parent);
	mxml_node_t *type;
	const char *name;

	if (md_token_table(parent) == MD_TYPEDEF)
		return type_element(md, assembly, row, 0);
	if (!(type = type_element(md, assembly, method_owner(md, row), 0)) ||
	    md_string(md, md_get(md, MD_METHODDEF, row, MD_METHODDEF_NAME), &name) < 0)
		return NULL;
	return child_of(type, "method", "name", name);
}

/* Whitespace for the saved XML: each element on a line of its own, indented two spaces a level. */
static const char *layout_ws(mxml_node_t *node, int where)
{
	static const char *const indents[] = { "\n", "\n  ", "\n    ", "\n      ", "\n        ", "\n          " };
	size_t depth = 0;

	if (where == MXML_WS_BEFORE_CLOSE) {
		mxml_node_t *c = mxmlGetFirstChild(node);
		if (!c || mxmlGetType(c) != MXML_ELEMENT)
			return NULL; /* <argument>text</argument> stays on one line */
	} else if (where != MXML_WS_BEFORE_OPEN || strncmp(mxmlGetElement(node), "?xml", 4) == 0) {
		return NULL; /* the declaration comes first, nothing before it */
	}
	for (mxml_node_t *p = mxmlGetParent(node); p && mxmlGetType(p) == MXML_ELEMENT; p = mxmlGetParent(p))
		if (strncmp(mxmlGetElement(p), "?xml", 4) != 0)
			depth++;
	return indents[depth < sizeof indents / sizeof *indents ? depth : sizeof indents / sizeof *indents - 1];
}

/* The document for the dropped suppressions in m, as text (free with free) in *out. */
static int link_attributes_xml(struct merge *m, char **out)
{
	mxml_node_t *doc = mxmlNewXML("1.0"), *linker, *assembly;
	const char *name = "";
	int rc = -1;

	*out = NULL;
	if (!doc)
		return lt_nomem(NULL);
	if (md_rows(m->md, MD_ASSEMBLY) &&
	    md_string(m->md, md_get(m->md, MD_ASSEMBLY, 1, MD_ASSEMBLY_NAME), &name) < 0)
		goto done;
	mxmlNewElement(doc, "!-- Written by LockTime's weaver: the trim analysis suppressions of LockTime's run-time "
			    "merged into this assembly (docs/weaving.md, \"Trimming and NativeAOT\") --");
	if (!(linker = mxmlNewElement(doc, "linker")) || !(assembly = mxmlNewElement(linker, "assembly"))) {
		lt_nomem(NULL);
		goto done;
	}
	mxmlElementSetAttr(assembly, "fullname", name);
	for (size_t i = 0; i < m->ndropped; i++) {
		const uint8_t *blob;
		uint32_t len;
		mxml_node_t *el = parent_element(m->md, assembly, m->dropped[i].parent);

		if (!el) {
			if (!lt_error_last()->code)
				lt_nomem(NULL);
			goto done;
		}
		if (md_blob(m->tm, md_get(m->tm, MD_CUSTOMATTRIBUTE, m->dropped[i].ca_row, MD_CUSTOMATTRIBUTE_VALUE), &blob,
			    &len) < 0 ||
		    add_suppression(el, blob, len) < 0) {
			lt_error_prefix("run-time template CustomAttribute row %u: ", m->dropped[i].ca_row);
			goto done;
		}
	}
	mxmlSetWrapMargin(0); /* an element's attributes on its line */
	if (!(*out = mxmlSaveAllocString(doc, layout_ws))) {
		lt_nomem(NULL);
		goto done;
	}
	rc = 0;
done:
	mxmlDelete(doc);
	return rc;
}

int merge_link_attributes(struct merge *m, int *kept)
{
	const uint8_t *theirs;
	uint32_t len;
	char *xml;
	int own, rc;

	*kept = 0;
	if (m->ndropped == 0)
		return 0;
	if ((own = img_resource(m->img, MERGE_LINK_ATTRIBUTES, &theirs, &len)) < 0)
		return -1;
	if (own) {
		*kept = (int)m->ndropped; /* theirs stays as it is: weave_file warns */
		return 0;
	}
	lt_error_clear();
	if (link_attributes_xml(m, &xml) < 0)
		return -1;
	/* II.22.24: private - the trimmer reads it; nothing else is meant to. */
	rc = img_add_resource(m->img, MERGE_LINK_ATTRIBUTES, IMG_RESOURCE_PRIVATE, (const uint8_t *)xml, strlen(xml));
	free(xml);
	return rc;
}
