/* weave_filter.c - which lock sites are woven: --include/--exclude patterns over method names, and LockTimeIgnoreAttribute. */
#include "weave_pass.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdlib.h>
#include <string.h>

/* The attribute that keeps LockTime away, matched by type name in any
 * namespace (as Fody's add-ins match theirs): no reference is needed. */
#define IGNORE_ATTRIBUTE "LockTimeIgnoreAttribute"

/* Whether s matches pat[0..plen): '*' any run of characters, all else itself. */
static int glob(const char *pat, size_t plen, const char *s)
{
	size_t p = 0, star = (size_t)-1, mark = 0, i = 0, n = strlen(s);

	while (i < n) {
		if (p < plen && pat[p] == '*') {
			star = p++;
			mark = i;
		} else if (p < plen && pat[p] == s[i]) {
			p++;
			i++;
		} else if (star != (size_t)-1) {
			p = star + 1;
			i = ++mark;
		} else {
			return 0;
		}
	}
	while (p < plen && pat[p] == '*')
		p++;
	return p == plen;
}

int weave_pattern_match(const char *const *patterns, size_t n, const char *name)
{
	for (size_t k = 0; k < n; k++) {
		for (const char *p = patterns[k];; ) {
			size_t len = strcspn(p, ";");
			const char *b = p, *e = p + len;
			/* spaces around a pattern are not part of it */
			while (b < e && (*b == ' ' || *b == '\t'))
				b++;
			while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
				e--;
			if (e > b && glob(b, (size_t)(e - b), name))
				return 1;
			if (!p[len])
				break;
			p += len + 1;
		}
	}
	return 0;
}

/* What carries IGNORE_ATTRIBUTE: MethodDef and TypeDef rows, the assembly. */
struct ignored {
	uint8_t *method, *type; /* [row], 1-based rows */
	int assembly;
	char **names;           /* user-facing names of the attributed methods (owned) */
	size_t nnames, cap;
};

/* Find what carries the attribute (II.22.10 CustomAttribute: Parent, Type). */
static int find_ignored(const struct weave_names *names, const struct wlines *lines, struct ignored *ig)
{
	const struct md_image *md = &names->img->md;
	uint32_t parent, ctor;
	const char *name;

	memset(ig, 0, sizeof *ig);
	ig->method = lt_calloc(names->nmethods + 1, 1);
	ig->type = lt_calloc(names->ntypes + 1, 1);
	if (!ig->method || !ig->type)
		return lt_nomem(NULL);
	for (uint32_t r = 1; r <= md_rows(md, MD_CUSTOMATTRIBUTE); r++) {
		if (md_coded_decode(MD_CI_CUSTOMATTRIBUTETYPE, md_get(md, MD_CUSTOMATTRIBUTE, r, MD_CUSTOMATTRIBUTE_TYPE), &ctor) < 0 ||
		    md_coded_decode(MD_CI_HASCUSTOMATTRIBUTE, md_get(md, MD_CUSTOMATTRIBUTE, r, MD_CUSTOMATTRIBUTE_PARENT), &parent) < 0 ||
		    weave_names_attribute(names, ctor, &name) < 0)
			return lt_error_prefix("CustomAttribute row %u: ", r);
		if (!name || strcmp(name, IGNORE_ATTRIBUTE) != 0)
			continue;
		if (parent >> 24 == MD_METHODDEF && (parent & 0xFFFFFF) <= names->nmethods)
			ig->method[parent & 0xFFFFFF] = 1;
		else if (parent >> 24 == MD_TYPEDEF && (parent & 0xFFFFFF) <= names->ntypes)
			ig->type[parent & 0xFFFFFF] = 1;
		else if (parent >> 24 == MD_ASSEMBLY)
			ig->assembly = 1;
	}
	/* A method's lambdas, iterators and async state machines report under
	 * its name: they are left alone with it. */
	for (uint32_t m = 1; m <= names->nmethods; m++) {
		struct lt_buf method = LT_BUF_INIT;
		if (!ig->method[m])
			continue;
		if (lt_grow(&ig->names, &ig->cap, ig->nnames + 1, sizeof *ig->names) < 0 ||
		    weave_site_method(names, lines, m, &method, NULL) < 0) {
			lt_buf_free(&method);
			return -1;
		}
		ig->names[ig->nnames++] = (char *)method.data;
	}
	return 0;
}

static void ignored_free(struct ignored *ig)
{
	free(ig->method);
	free(ig->type);
	for (size_t i = 0; i < ig->nnames; i++)
		free(ig->names[i]);
	free(ig->names);
}

/* Whether a pattern of the n patterns matches the method's name or its
 * reported name (a lambda's " (lambda at ...)" added). */
static int matches(const char *const *patterns, size_t n, const char *method, const char *shown)
{
	return weave_pattern_match(patterns, n, method) || weave_pattern_match(patterns, n, shown);
}

/* Whether the sites of MethodDef row, in `method` (weave_site_method)
 * and reported as `shown` (weave_site_name), are left alone. */
static int left_alone(const struct weave_names *names, const struct ignored *ig, const struct weave_opts *opts,
		      uint32_t row, const char *method, const char *shown)
{
	uint32_t type = weave_names_owner(names, row);

	if (ig->assembly || ig->method[row])
		return 1;
	for (int depth = 0; type && depth < WEAVE_MAX_NESTING; depth++, type = names->enclosing[type - 1])
		if (ig->type[type])
			return 1;
	for (size_t i = 0; i < ig->nnames; i++)
		if (strcmp(ig->names[i], method) == 0)
			return 1;
	if (opts->ninclude && !matches(opts->include, opts->ninclude, method, shown))
		return 1;
	return matches(opts->exclude, opts->nexclude, method, shown);
}

int weave_sites_filter(const struct weave_names *names, const struct wlines *lines, const struct weave_opts *opts,
		       struct weave_sites *sites)
{
	struct ignored ig;
	struct lt_buf method = LT_BUF_INIT, shown = LT_BUF_INIT;
	struct weave_within within;
	size_t kept = 0, i = 0, j;
	int rc = -1;

	if (find_ignored(names, lines, &ig) < 0)
		goto done;
	while (i < sites->n) {
		uint32_t row = sites->calls[i].methoddef;
		for (j = i; j < sites->n && sites->calls[j].methoddef == row; j++)
			;
		/* Named once: the method, then the same text with what the code is. */
		if (weave_site_method(names, lines, row, &method, &within) < 0)
			goto done;
		shown.len = 0;
		if (lt_buf_put(&shown, method.data, method.len) < 0 || weave_within_append(lines, &within, &shown) < 0 ||
		    lt_buf_reserve(&shown, 1) < 0)
			goto done;
		shown.data[shown.len] = '\0';
		/* A method's calls stay or go together: an Enter and its Exit. */
		if (!left_alone(names, &ig, opts, row, (const char *)method.data, (const char *)shown.data)) {
			memmove(&sites->calls[kept], &sites->calls[i], (j - i) * sizeof *sites->calls);
			kept += j - i;
		}
		i = j;
	}
	sites->n = kept;
	rc = 0;
done:
	lt_buf_free(&method);
	lt_buf_free(&shown);
	ignored_free(&ig);
	return rc;
}
