/* weave_framework.c - the framework of an assembly (its TargetFrameworkAttribute), and whether it has live metrics. */
#include "weave_framework.h"
#include "lt_cursor.h"
#include "lt_error.h"
#include "sig.h"
#include "weave_pass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TARGET_FRAMEWORK "TargetFrameworkAttribute"

/* The fixed argument of a TargetFrameworkAttribute value blob v[0..len)
 * (II.23.3: prolog 0x0001, then a SerString: a compressed length and UTF-8
 * bytes, or 0xFF for null) into buf.  Returns 0, or -1 with LT_E_METADATA. */
static int framework_string(const uint8_t *v, uint32_t len, char *buf, size_t size)
{
	struct lt_cur c = lt_cur_init(v, len, LT_E_METADATA, "custom attribute value");
	uint16_t prolog;
	uint32_t n;

	if (lt_cur_u16(&c, &prolog) < 0 || prolog != 0x0001)
		return lt_error_set(LT_E_METADATA, "custom attribute value: no prolog 0x0001 (II.23.3)");
	if (lt_cur_left(&c) >= 1 && v[c.pos] == 0xFF)
		return 0; /* a null string */
	if (sig_uint_decode(&c, &n) < 0 || n > lt_cur_left(&c))
		return lt_error_set(LT_E_METADATA, "custom attribute value: a string past its end (II.23.3)");
	snprintf(buf, size, "%.*s", (int)n, (const char *)v + c.pos);
	return 0;
}

/* weave_target_framework with the index `n` of img (a core library defines
 * the attribute itself: its constructor is a MethodDef). */
static int find_framework(const struct weave_names *n, char *buf, size_t size)
{
	const struct md_image *md = &n->img->md;
	uint32_t parent, ctor, vlen;
	const uint8_t *v;
	const char *name;

	for (uint32_t r = 1; r <= md_rows(md, MD_CUSTOMATTRIBUTE); r++) {
		if (md_coded_decode(MD_CI_HASCUSTOMATTRIBUTE, md_get(md, MD_CUSTOMATTRIBUTE, r, MD_CUSTOMATTRIBUTE_PARENT), &parent) < 0 ||
		    md_coded_decode(MD_CI_CUSTOMATTRIBUTETYPE, md_get(md, MD_CUSTOMATTRIBUTE, r, MD_CUSTOMATTRIBUTE_TYPE), &ctor) < 0)
			return lt_error_prefix("CustomAttribute row %u: ", r);
		if (md_token_table(parent) != MD_ASSEMBLY)
			continue;
		if (weave_names_attribute(n, ctor, &name) < 0)
			return lt_error_prefix("CustomAttribute row %u: ", r);
		if (!name || strcmp(name, TARGET_FRAMEWORK) != 0)
			continue;
		if (md_blob(md, md_get(md, MD_CUSTOMATTRIBUTE, r, MD_CUSTOMATTRIBUTE_VALUE), &v, &vlen) < 0 ||
		    framework_string(v, vlen, buf, size) < 0)
			return lt_error_prefix("CustomAttribute row %u: ", r);
		return 0;
	}
	return 0;
}

int weave_target_framework(const struct img *img, char *buf, size_t size)
{
	struct weave_names n;
	int rc;

	if (size > 0)
		buf[0] = '\0';
	if (weave_names_init(&n, img) < 0)
		return -1;
	rc = find_framework(&n, buf, size);
	weave_names_free(&n);
	return rc;
}

int weave_framework_metrics(const char *framework)
{
	static const char core[] = ".NETCoreApp,", version[] = "Version=v";
	const char *v;

	if (strncmp(framework, ".NETFramework,", strlen(".NETFramework,")) == 0)
		return 0;
	if (strncmp(framework, core, strlen(core)) != 0 || !(v = strstr(framework, version)))
		return -1;
	v += strlen(version);
	if (*v < '0' || *v > '9')
		return -1;
	return strtol(v, NULL, 10) >= 6; /* System.Diagnostics.Metrics came with .NET 6 */
}
