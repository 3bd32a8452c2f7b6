/* pkg_nuspec.c - reading a NuGet .nuspec manifest with Mini-XML (see pkg_nuspec.h). */
#include "pkg_nuspec.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <mxml.h>
#include <stdio.h>
#include <string.h>

/* Mini-XML reports parse errors through one global callback; the last
 * message is kept here and turned into the LT016 text. */
static char mxml_message[256];

static void nuspec_on_mxml_error(const char *msg)
{
	snprintf(mxml_message, sizeof mxml_message, "%s", msg);
}

/* The element name without a namespace prefix ("nuspec:id" -> "id"). */
static const char *local_name(mxml_node_t *node)
{
	const char *name = mxmlGetElement(node), *colon;

	if (!name)
		return "";
	colon = strchr(name, ':');
	return colon ? colon + 1 : name;
}

/* The first child element of `parent` named `name`, or NULL. */
static mxml_node_t *child(mxml_node_t *parent, const char *name)
{
	mxml_node_t *n;

	for (n = mxmlGetFirstChild(parent); n; n = mxmlGetNextSibling(n))
		if (mxmlGetType(n) == MXML_ELEMENT && !strcmp(local_name(n), name))
			return n;
	return NULL;
}

/* Characters allowed in ids and versions (NuGet's PackageIdValidator and
 * SemVer 2.0: ASCII letters, digits and a few separators). */
static int allowed(const char *s, const char *extra)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr(extra, *s)))
			return 0;
	return 1;
}

/* The text of <what> under `metadata` - its character data, trimmed - into
 * out[0..max] after checking it against the characters in `extra`. */
static int text_of(mxml_node_t *metadata, const char *what, const char *extra, char *out, size_t max)
{
	mxml_node_t *el = child(metadata, what), *n;
	size_t len = 0, start = 0;

	if (!el)
		return lt_error_set(LT_E_PACKAGE, "<metadata> has no <%s>", what);
	out[0] = '\0';
	for (n = mxmlGetFirstChild(el); n; n = mxmlGetNextSibling(n)) {
		const char *s = mxmlGetOpaque(n);
		size_t add;

		if (mxmlGetType(n) != MXML_OPAQUE || !s)
			return lt_error_set(LT_E_PACKAGE, "<%s> holds more than text", what);
		add = strlen(s);
		if (add > max - len)
			return lt_error_set(LT_E_PACKAGE, "<%s> is longer than %zu characters", what, max);
		memcpy(out + len, s, add);
		len += add;
		out[len] = '\0';
	}
	while (len > 0 && strchr(" \t\r\n", out[len - 1]))
		out[--len] = '\0';
	while (start < len && strchr(" \t\r\n", out[start]))
		start++;
	memmove(out, out + start, len - start + 1);
	if (!out[0])
		return lt_error_set(LT_E_PACKAGE, "<%s> is empty", what);
	if (!allowed(out, extra)) {
		for (char *c = out; *c; c++) /* shown in the message: no terminal controls */
			if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
				*c = '?';
		return lt_error_set(LT_E_PACKAGE, "<%s> '%s' has a character NuGet does not allow", what, out);
	}
	return 0;
}

/* Every <dependencies><group targetFramework="..."> in document order. */
static int read_groups(mxml_node_t *metadata, struct nuspec *out)
{
	mxml_node_t *deps = child(metadata, "dependencies"), *g;

	for (g = deps ? mxmlGetFirstChild(deps) : NULL; g; g = mxmlGetNextSibling(g)) {
		const char *tfm, *p;

		if (mxmlGetType(g) != MXML_ELEMENT || strcmp(local_name(g), "group") ||
		    !(tfm = mxmlElementGetAttr(g, "targetFramework")) || !*tfm)
			continue;
		if (strlen(tfm) > NUSPEC_MAX_TFM)
			return lt_error_set(LT_E_PACKAGE, "targetFramework longer than %d characters",
					    NUSPEC_MAX_TFM);
		for (p = tfm; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '/' || *p == '\\')
				return lt_error_set(LT_E_PACKAGE, "targetFramework '%s' has a control character or a path separator",
						    tfm);
		if (out->ntfms == NUSPEC_MAX_GROUPS)
			return lt_error_set(LT_E_PACKAGE, "more than %d dependency groups", NUSPEC_MAX_GROUPS);
		memcpy(out->tfms[out->ntfms++], tfm, strlen(tfm) + 1);
	}
	return 0;
}

/* The <package> element: a child of the document, or of the <?xml ...?>
 * declaration, which Mini-XML makes the parent of what follows it. */
static mxml_node_t *root_package(mxml_node_t *doc)
{
	mxml_node_t *n, *inner;

	for (n = mxmlGetFirstChild(doc); n; n = mxmlGetNextSibling(n)) {
		if (mxmlGetType(n) != MXML_ELEMENT)
			continue;
		if (!strcmp(local_name(n), "package"))
			return n;
		if (!strncmp(mxmlGetElement(n), "?xml", 4) && (inner = child(n, "package")))
			return inner;
	}
	return NULL;
}

int nuspec_parse(struct nuspec *out, const char *text, size_t len)
{
	mxml_node_t *doc, *package, *metadata = NULL;
	int rc = -1;

	memset(out, 0, sizeof *out);
	if (memchr(text, '\0', len))
		return lt_error_set(LT_E_PACKAGE, "NUL byte in the manifest (only UTF-8 is read)");
	/* Parsed below a node of our own: Mini-XML then reports an element
	 * left open at the end (it does not when that element is the first). */
	if (!(doc = mxmlNewElement(MXML_NO_PARENT, "nuspec-document")))
		return lt_nomem(NULL);
	mxml_message[0] = '\0';
	mxmlSetErrorCallback(nuspec_on_mxml_error);
	if (!mxmlLoadString(doc, text, MXML_OPAQUE_CALLBACK))
		lt_error_set(LT_E_PACKAGE, "malformed XML: %s", mxml_message[0] ? mxml_message : "no element");
	else if (!(package = root_package(doc)) || !(metadata = child(package, "metadata")))
		lt_error_set(LT_E_PACKAGE, "no <package><metadata> element");
	else if (text_of(metadata, "id", "._-", out->id, NUSPEC_MAX_ID) == 0 &&
		 text_of(metadata, "version", ".+-", out->version, NUSPEC_MAX_VERSION) == 0 &&
		 read_groups(metadata, out) == 0)
		rc = 0;
	mxmlDelete(doc);
	return rc;
}
