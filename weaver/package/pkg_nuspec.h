/* pkg_nuspec.h - the .nuspec manifest of a NuGet package: id, version and target frameworks. */
#ifndef PKG_NUSPEC_H
#define PKG_NUSPEC_H

#include <stddef.h>

#define NUSPEC_MAX_ID 100       /* characters of a package id (NuGet's limit) */
#define NUSPEC_MAX_VERSION 64   /* characters of a version string */
#define NUSPEC_MAX_TFM 63       /* characters of a targetFramework value */
#define NUSPEC_MAX_GROUPS 128   /* dependency groups kept */

/* What LockTime reads from <package><metadata>.  Plain strings, NUL-terminated. */
struct nuspec {
	char id[NUSPEC_MAX_ID + 1];           /* <id>: letters, digits, '.', '_', '-' */
	char version[NUSPEC_MAX_VERSION + 1]; /* <version>: letters, digits, '.', '+', '-' */
	/* targetFramework of each <dependencies><group>, in document order
	 * (".NETStandard2.0", "net6.0"); groups without one are skipped. */
	char tfms[NUSPEC_MAX_GROUPS][NUSPEC_MAX_TFM + 1];
	size_t ntfms;
};

/* Parse the manifest text[0..len) (UTF-8 XML, a BOM allowed; text[len] must
 * be '\0') with Mini-XML into *out.  Element names are matched without their
 * namespace prefix.  Returns 0, or -1 with LT_E_PACKAGE when: the text holds
 * a NUL byte (UTF-16 is not read), the XML is malformed (Mini-XML's message),
 * there is no <package> root with a <metadata> child, <id> or <version> is
 * missing, empty, too long or has a character outside the sets above, a
 * targetFramework is too long or has a control character, '/' or '\', or
 * there are more than NUSPEC_MAX_GROUPS groups with one.  Messages do not
 * name the file: callers prefix the entry name. */
int nuspec_parse(struct nuspec *out, const char *text, size_t len);

#endif
