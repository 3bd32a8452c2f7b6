/* merge.c - test driver for the run-time merger (weaver/weave/merge/weave_merge.h).
 *   usage: lt-merge --check TEMPLATE
 *              print each construct of TEMPLATE outside the merger's subset; exit 1 if any
 *          lt-merge TEMPLATE IN OUT [-r REF | -s METHOD=SUBST]...
 *              merge TEMPLATE into IN (framework types resolved with the REFs, else IN's
 *              AssemblyRefs) and write OUT; prints "merged", or "already merged" (OUT not
 *              written).  Each -s replaces the body of template method METHOD
 *              ("Namespace.Type::Name"), SUBST being one of
 *                string:TEXT        ldstr TEXT; ret
 *                i8:N               ldc.i8 N; ret
 *                corlib-timestamp   a core library's own clock, when it has no Stopwatch
 *                corlib-frequency   that clock's ticks per second, likewise
 *                record:METHOD2:S   ldstr S; ldc.i8 9; call the merged METHOD2 (string, int64); ret
 *                                   (a body calling into the merged run-time, as a site table's) */
#include "image.h"
#include "lt_error.h"
#include "lt_file.h"
#include "weave_emit.h"
#include "weave_inputs.h"
#include "weave_merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 256

static int open_image(const char *path, struct img **out)
{
	uint8_t *data;
	size_t size;

	if (lt_file_read(path, &data, &size) < 0 || img_load(out, data, size) < 0)
		return lt_error_prefix("%s: ", path);
	return 0;
}

static void print_finding(void *ctx, const char *what)
{
	printf("%s: outside the merger's subset: %s\n", (const char *)ctx, what);
}

static int check(const char *path)
{
	struct img *tmpl;
	long n;

	if (open_image(path, &tmpl) < 0) {
		fprintf(stderr, "%s: error LT%03d: %s\n", path, lt_error_last()->code, lt_error_last()->msg);
		return 1;
	}
	n = weave_merge_check(tmpl, print_finding, (void *)path);
	if (n < 0)
		fprintf(stderr, "%s: error LT%03d: %s\n", path, lt_error_last()->code, lt_error_last()->msg);
	img_free(tmpl);
	return n != 0;
}

/* record:METHOD2:S - ctx is "METHOD2:S" (a copy owned by main). */
static int emit_record(void *ctx, struct img *target, const struct weave_merge_map *map, struct em *e)
{
	char *method = ctx, *s = strrchr(method, ':');
	uint32_t tok, str;

	*s = 0;
	if (!weave_merge_find(map, method, &tok))
		return lt_error_set(LT_E_WEAVE, "record: no merged method %s", method);
	*s = ':';
	if (img_string_token(target, s + 1, &str) < 0)
		return -1;
	em_tok(e, IL_LDSTR, str);
	em_i8(e, 9);
	em_tok(e, IL_CALL, tok);
	em_op(e, IL_RET);
	return 0;
}

/* METHOD=SUBST into *s; arg is modified (split) and must outlive *s. */
static int parse_subst(char *arg, struct weave_subst *s)
{
	char *kind = strchr(arg, '='), *value;

	if (!kind)
		return -1;
	*kind++ = 0;
	value = strchr(kind, ':');
	if (value)
		*value++ = 0;
	memset(s, 0, sizeof *s);
	s->method = arg;
	if (strcmp(kind, "string") == 0 && value)
		*s = (struct weave_subst){ .method = arg, .kind = WEAVE_SUBST_STRING, .string = value };
	else if (strcmp(kind, "i8") == 0 && value)
		*s = (struct weave_subst){ .method = arg, .kind = WEAVE_SUBST_I8, .i8 = strtoll(value, NULL, 0) };
	else if (strcmp(kind, "corlib-timestamp") == 0 && !value)
		s->kind = WEAVE_SUBST_CORLIB_TIMESTAMP;
	else if (strcmp(kind, "corlib-frequency") == 0 && !value)
		s->kind = WEAVE_SUBST_CORLIB_FREQUENCY;
	else if (strcmp(kind, "record") == 0 && value && strchr(value, ':'))
		*s = (struct weave_subst){ .method = arg, .kind = WEAVE_SUBST_EMIT, .emit = emit_record, .ctx = value };
	else
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *paths[MAX_ARGS];
	struct weave_subst substs[MAX_ARGS];
	struct weave_ref *refs = NULL;
	struct weave_opts opts = { .threshold_ms = 1 };
	size_t nsubsts = 0;
	struct img *tmpl = NULL, *img = NULL;
	struct weave_template *prepared = NULL;
	struct lt_buf out = LT_BUF_INIT;
	int rc = 1, merged;

	if (argc == 3 && strcmp(argv[1], "--check") == 0)
		return check(argv[2]);
	for (int i = 4; i < argc; i += 2) {
		if (i + 1 >= argc || opts.nrefs == MAX_ARGS || nsubsts == MAX_ARGS ||
		    (strcmp(argv[i], "-r") && strcmp(argv[i], "-s")) ||
		    (argv[i][1] == 's' && parse_subst(argv[i + 1], &substs[nsubsts++]) < 0)) {
			argc = 0;
			break;
		}
		if (argv[i][1] == 'r')
			paths[opts.nrefs++] = argv[i + 1];
	}
	if (argc < 4) {
		fprintf(stderr, "usage: lt-merge --check TEMPLATE | lt-merge TEMPLATE IN OUT [-r REF | -s METHOD=SUBST]...\n");
		return 2;
	}
	if (weave_refs_read(&refs, paths, opts.nrefs) < 0 || open_image(argv[1], &tmpl) < 0 ||
	    weave_template_open(tmpl, &prepared) < 0 || open_image(argv[2], &img) < 0)
		goto done;
	opts.refs = refs;
	merged = weave_merge(img, prepared, &opts, substs, nsubsts, NULL);
	if (merged < 0)
		goto done;
	if (merged == 1) {
		printf("already merged\n");
		rc = 0;
		goto done;
	}
	printf("merged\n");
	if (img_write(img, &out) == 0 && lt_file_write_atomic(argv[3], out.data, out.len) == 0)
		rc = 0;
done:
	if (rc)
		fprintf(stderr, "%s: error LT%03d: %s\n", argv[2], lt_error_last()->code, lt_error_last()->msg);
	lt_buf_free(&out);
	weave_refs_free(refs, opts.nrefs);
	img_free(img);
	weave_template_free(prepared);
	img_free(tmpl);
	return rc;
}
