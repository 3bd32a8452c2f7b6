/* pkg_nupkg.c - a .nupkg open for editing with libzip: checks, reads, replacements, write (see pkg_nupkg.h). */
#include "pkg_nupkg.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ZIP_EOCD_SIZE 22 /* bytes of an end of central directory record without comment */

static const struct nupkg_limits default_limits = {
	NUPKG_MAX_ENTRIES, NUPKG_MAX_ENTRY_SIZE, NUPKG_MAX_TOTAL_SIZE,
};

/* name, made printable for a message (bytes outside ' '..'~' become '?'). */
static const char *shown(const char *name, char *buf, size_t n)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < n; i++)
		buf[i] = (unsigned char)name[i] < 0x20 || (unsigned char)name[i] > 0x7e ? '?' : name[i];
	buf[i] = '\0';
	return buf;
}

/* Record libzip's error ze about `what`: LT_E_NOMEM when memory ran out,
 * else LT_E_PACKAGE with libzip's message.  Returns -1. */
static int zip_failed(const char *what, zip_error_t *ze)
{
	return lt_error_set(zip_error_code_zip(ze) == ZIP_ER_MEMORY ? LT_E_NOMEM : LT_E_PACKAGE, "%s: %s", what,
			    zip_error_strerror(ze));
}

/* The path checks of nupkg_name_check on one spelling of the name. */
static const char *path_problem(const char *s)
{
	const char *seg = s, *p;

	if (!*s)
		return "empty name";
	if (*s == '/')
		return "absolute path";
	for (p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '\\')
			return "backslash (a path separator on Windows)";
		if (c == ':')
			return "':' (a drive letter or an alternate data stream)";
		if (c < 0x20 || c == 0x7f)
			return "control character";
	}
	/* Segments between '/': a trailing '/' ends a folder entry's name. */
	for (p = s;; p++) {
		if (*p != '/' && *p)
			continue;
		if (p == seg && *p)
			return "empty path segment";
		if ((p - seg == 1 && seg[0] == '.') || (p - seg == 2 && seg[0] == '.' && seg[1] == '.'))
			return "'.' or '..' segment (escapes the folder it is unpacked into)";
		if (!*p)
			return NULL;
		seg = p + 1;
	}
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int nupkg_name_check(const char *name)
{
	char decoded[NUPKG_MAX_NAME + 1], buf[128];
	size_t len = strlen(name), i, n = 0;
	const char *why;

	if (len > NUPKG_MAX_NAME)
		return lt_error_set(LT_E_PACKAGE, "entry '%s...': name longer than %u bytes",
				    shown(name, buf, 64), NUPKG_MAX_NAME);
	if ((why = path_problem(name)))
		return lt_error_set(LT_E_PACKAGE, "entry '%s': %s", shown(name, buf, sizeof buf), why);
	/* NuGet unescapes %XX (OPC part names) when it unpacks: check that spelling too. */
	for (i = 0; i < len; i++) {
		int hi = name[i] == '%' && i + 2 < len ? hex_digit(name[i + 1]) : -1;
		int lo = hi >= 0 ? hex_digit(name[i + 2]) : -1;
		if (lo >= 0) {
			decoded[n++] = (char)(hi << 4 | lo);
			i += 2;
		} else {
			decoded[n++] = name[i];
		}
	}
	if (memchr(decoded, '\0', n))
		return lt_error_set(LT_E_PACKAGE, "entry '%s': %%00 escape", shown(name, buf, sizeof buf));
	decoded[n] = '\0';
	if ((why = path_problem(decoded)))
		return lt_error_set(LT_E_PACKAGE, "entry '%s': once %%XX escapes are decoded: %s",
				    shown(name, buf, sizeof buf), why);
	return 0;
}

/* Whether s[0..) starts with folder `dir` (any case) followed by '/'. */
static size_t folder(const char *s, const char *dir)
{
	size_t n = strlen(dir);
	return strncasecmp(s, dir, n) == 0 && s[n] == '/' ? n + 1 : 0;
}

/* Length of the segment at s (up to '/'), or 0 when it is the last one. */
static size_t segment(const char *s)
{
	const char *slash = strchr(s, '/');
	return slash ? (size_t)(slash - s) : 0;
}

int nupkg_is_assembly(const char *name, size_t *tfm_at, size_t *tfm_len)
{
	size_t at = folder(name, "lib"), len = strlen(name), n;

	if (!at && (at = folder(name, "runtimes"))) {
		/* runtimes/<rid>/lib/<tfm>/ */
		if (!(n = segment(name + at)))
			return 0;
		at += n + 1;
		if (!(n = folder(name + at, "lib")))
			return 0;
		at += n;
	}
	if (!at || !(n = segment(name + at)) || len < 4 ||
	    (strcasecmp(name + len - 4, ".dll") && strcasecmp(name + len - 4, ".exe")) ||
	    name[len - 5] == '/')
		return 0;
	*tfm_at = at;
	*tfm_len = n;
	return 1;
}

int nupkg_is_signature(const char *name)
{
	return strcasecmp(name, ".signature.p7s") == 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcasecmp(*(char *const *)a, *(char *const *)b);
}

/* No two names equal ignoring ASCII case. */
static int check_duplicates(const struct nupkg *p)
{
	char **names, buf[128];
	uint32_t i;
	int rc = 0;

	if (p->nentries < 2)
		return 0;
	if (!(names = lt_malloc(p->nentries * sizeof *names)))
		return lt_nomem(NULL);
	for (i = 0; i < p->nentries; i++)
		names[i] = p->entries[i].name;
	qsort(names, p->nentries, sizeof *names, cmp_name);
	for (i = 1; i < p->nentries && rc == 0; i++)
		if (strcasecmp(names[i - 1], names[i]) == 0)
			rc = lt_error_set(LT_E_PACKAGE, "entry '%s': duplicate name (two entries unpack to one file)",
					  shown(names[i], buf, sizeof buf));
	free(names);
	return rc;
}

/* Read every central directory entry into p->entries, checking each. */
static int read_entries(struct nupkg *p)
{
	zip_int64_t n = zip_get_num_entries(p->zip, 0);
	uint64_t total = 0;
	char buf[128];
	uint32_t i;

	if (n < 0 || (uint64_t)n > p->lim.max_entries)
		return lt_error_set(LT_E_PACKAGE, "%lld entries: more than the limit of %llu", (long long)n,
				    (unsigned long long)p->lim.max_entries);
	if (n && !(p->entries = lt_calloc((size_t)n, sizeof *p->entries)))
		return lt_nomem(NULL);
	for (i = 0; i < (uint64_t)n; i++) {
		struct nupkg_entry *e = &p->entries[i];
		zip_stat_t st;

		if (zip_stat_index(p->zip, i, ZIP_FL_ENC_RAW, &st) < 0)
			return zip_failed("central directory", zip_get_error(p->zip));
		if (!(st.valid & ZIP_STAT_NAME) || !(st.valid & ZIP_STAT_SIZE))
			return lt_error_set(LT_E_PACKAGE, "entry %u: no name or size", i);
		if (nupkg_name_check(st.name) < 0)
			return -1;
		if (!(e->name = lt_strdup(st.name)))
			return lt_nomem(NULL);
		p->nentries = i + 1;
		e->size = st.size;
		e->mtime = st.valid & ZIP_STAT_MTIME ? st.mtime : 0;
		shown(e->name, buf, sizeof buf);
		if (st.size > p->lim.max_entry_size)
			return lt_error_set(LT_E_PACKAGE, "entry '%s': declares %llu bytes, more than the limit of %llu",
					    buf, (unsigned long long)st.size, (unsigned long long)p->lim.max_entry_size);
		total += st.size; /* no overflow: each size <= max_entry_size < 2^63 / 2^32 entries */
		if (total > p->lim.max_total_size)
			return lt_error_set(LT_E_PACKAGE, "entries up to '%s' declare %llu bytes in all, more than the limit of %llu",
					    buf, (unsigned long long)total, (unsigned long long)p->lim.max_total_size);
		if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
			return lt_error_set(LT_E_PACKAGE, "entry '%s': encrypted", buf);
		if ((st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE)
			return lt_error_set(LT_E_PACKAGE, "entry '%s': compression method %d (NuGet reads only Stored and Deflate)",
					    buf, st.comp_method);
	}
	return check_duplicates(p);
}

/* The one .nuspec at the root, parsed into p->spec. */
static int read_nuspec(struct nupkg *p)
{
	uint32_t i, found = 0, at = 0;
	uint8_t *text;
	size_t size;
	int rc;

	for (i = 0; i < p->nentries; i++) {
		const char *name = p->entries[i].name;
		size_t len = strlen(name);
		if (strchr(name, '/') || len <= 7 || strcasecmp(name + len - 7, ".nuspec"))
			continue;
		if (found++)
			return lt_error_set(LT_E_PACKAGE, "two .nuspec manifests at the root: '%s' and '%s'",
					    p->entries[at].name, name);
		at = i;
	}
	if (!found)
		return lt_error_set(LT_E_PACKAGE, "no .nuspec manifest at the package root");
	if (p->entries[at].size > NUPKG_MAX_NUSPEC_SIZE)
		return lt_error_set(LT_E_PACKAGE, "%s: declares %llu bytes, more than the limit of %llu", p->entries[at].name,
				    (unsigned long long)p->entries[at].size, (unsigned long long)NUPKG_MAX_NUSPEC_SIZE);
	if (nupkg_read(p, at, &text, &size) < 0)
		return -1;
	rc = nuspec_parse(&p->spec, (const char *)text, size);
	free(text);
	return rc < 0 ? lt_error_prefix("%s: ", p->entries[at].name) : 0;
}

int nupkg_open(struct nupkg **out, const uint8_t *data, size_t size, const struct nupkg_limits *lim)
{
	struct nupkg *p;
	zip_error_t ze;

	*out = NULL;
	/* libzip reads an empty source as an empty archive; the smallest zip
	 * file is its end of central directory record (APPNOTE 4.3.16). */
	if (size < ZIP_EOCD_SIZE)
		return lt_error_set(LT_E_PACKAGE, "not a zip archive: %zu bytes, less than an end of central directory record",
				    size);
	if (!(p = lt_calloc(1, sizeof *p)))
		return lt_nomem(NULL);
	p->lim = lim ? *lim : default_limits;
	zip_error_init(&ze);
	if (!(p->src = zip_source_buffer_create(data, size, 0, &ze))) {
		zip_failed("zip archive", &ze);
		goto fail;
	}
	/* ZIP_CHECKCONS: each local header must agree with its central
	 * directory entry, and libzip refuses two entries of one name. */
	if (!(p->zip = zip_open_from_source(p->src, ZIP_CHECKCONS, &ze))) {
		if (zip_error_code_zip(&ze) == ZIP_ER_EXISTS)
			lt_error_set(LT_E_PACKAGE, "zip archive: two entries have the same name");
		else
			zip_failed("zip archive", &ze);
		goto fail;
	}
	/* Ours, besides the archive's: the written archive is read from it. */
	zip_source_keep(p->src);
	if (read_entries(p) < 0 || read_nuspec(p) < 0)
		goto fail;
	zip_error_fini(&ze);
	*out = p;
	return 0;
fail:
	zip_error_fini(&ze);
	nupkg_free(p);
	return -1;
}

void nupkg_free(struct nupkg *p)
{
	uint32_t i;

	if (!p)
		return;
	if (p->zip)
		zip_discard(p->zip);
	zip_source_free(p->src);
	for (i = 0; i < p->nentries; i++)
		free(p->entries[i].name);
	free(p->entries);
	free(p);
}

int nupkg_read(struct nupkg *p, uint32_t i, uint8_t **out, size_t *size)
{
	const struct nupkg_entry *e = &p->entries[i];
	zip_file_t *f;
	uint8_t *data, probe;
	zip_int64_t n = 0;
	size_t got = 0;
	char buf[128];

	*out = NULL;
	*size = 0;
	shown(e->name, buf, sizeof buf);
	if (!(data = lt_malloc((size_t)e->size + 1)))
		return lt_nomem(NULL);
	if (!(f = zip_fopen_index(p->zip, i, 0))) {
		free(data);
		return zip_failed(buf, zip_get_error(p->zip));
	}
	/* Never more than the declared size; then one byte more must be the
	 * end (libzip checks the CRC when it reaches it). */
	while (got < e->size && (n = zip_fread(f, data + got, e->size - got)) > 0)
		got += (size_t)n;
	if (got == e->size)
		n = zip_fread(f, &probe, 1);
	if (n != 0 || got != e->size) {
		if (n < 0)
			zip_failed(buf, zip_file_get_error(f));
		else if (got < e->size)
			lt_error_set(LT_E_PACKAGE, "%s: data ends after %zu of its %llu declared bytes", buf, got,
				     (unsigned long long)e->size);
		else
			lt_error_set(LT_E_PACKAGE, "%s: data goes on past its declared %llu bytes (a zip bomb?)", buf,
				     (unsigned long long)e->size);
		zip_fclose(f);
		free(data);
		return -1;
	}
	zip_fclose(f);
	data[got] = '\0';
	*out = data;
	*size = got;
	return 0;
}

int nupkg_replace(struct nupkg *p, uint32_t i, uint8_t *data, size_t size)
{
	zip_source_t *s = zip_source_buffer(p->zip, data, size, 1);

	if (!s) {
		free(data);
		return zip_failed(p->entries[i].name, zip_get_error(p->zip));
	}
	if (zip_file_replace(p->zip, i, s, 0) < 0) {
		zip_source_free(s);
		return zip_failed(p->entries[i].name, zip_get_error(p->zip));
	}
	/* The time stays the input's (the source's would be now), so that the
	 * same input gives the same bytes. */
	if (zip_file_set_mtime(p->zip, i, p->entries[i].mtime, 0) < 0 ||
	    zip_set_file_compression(p->zip, i, ZIP_CM_DEFLATE, 0) < 0)
		return zip_failed(p->entries[i].name, zip_get_error(p->zip));
	p->changed = 1;
	return 0;
}

int nupkg_delete(struct nupkg *p, uint32_t i)
{
	if (zip_delete(p->zip, i) < 0)
		return zip_failed(p->entries[i].name, zip_get_error(p->zip));
	p->changed = 1;
	return 0;
}

int nupkg_write(struct nupkg *p, struct lt_buf *out)
{
	zip_stat_t st;
	zip_int64_t n;
	size_t start = out->len;
	int rc = -1;

	if (zip_close(p->zip) < 0) {
		zip_failed("writing the package", zip_get_error(p->zip));
		zip_discard(p->zip);
		p->zip = NULL;
		return -1;
	}
	p->zip = NULL;
	/* zip_close wrote the new archive into the source: read it back. */
	zip_stat_init(&st);
	if (zip_source_stat(p->src, &st) < 0 || !(st.valid & ZIP_STAT_SIZE) || zip_source_open(p->src) < 0)
		return zip_failed("reading the written package", zip_source_error(p->src));
	if (lt_buf_reserve(out, st.size) == 0) {
		n = zip_source_read(p->src, out->data + start, st.size);
		if (n == (zip_int64_t)st.size) {
			out->len = start + st.size;
			rc = 0;
		} else {
			zip_failed("reading the written package", zip_source_error(p->src));
		}
	}
	zip_source_close(p->src);
	return rc;
}
