/* weave_merge_template.c - a run-time template prepared once for any number of merges (weave_merge.h):
 * its check, its members' names, where the tokens of its bodies lie. */
#include "weave_merge_int.h"
#include "image.h"
#include "il_body.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void first_finding(void *ctx, const char *what)
{
	char *buf = ctx;

	if (!buf[0])
		snprintf(buf, 400, "%s", what);
}

static int by_name(const void *a, const void *b)
{
	const struct merge_named *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* t->names of every Field and MethodDef, and t->sorted. */
static int name_members(struct weave_template *t)
{
	size_t n = (size_t)t->nfields + t->nmethods;
	char name[400];

	if (!(t->names = lt_calloc(n ? n : 1, sizeof *t->names)) || !(t->sorted = lt_calloc(n ? n : 1, sizeof *t->sorted)))
		return lt_nomem(NULL);
	for (size_t i = 0; i < n; i++) {
		int method = i >= t->nfields;

		if (merge_member_name(&t->x, method ? MD_METHODDEF : MD_FIELD,
				      (uint32_t)(method ? i - t->nfields : i) + 1, name, sizeof name) < 0)
			return -1;
		if (!(t->names[i] = lt_strdup(name)))
			return lt_nomem(NULL);
		t->sorted[i] = (struct merge_named){ t->names[i], (uint32_t)i };
	}
	qsort(t->sorted, n, sizeof *t->sorted, by_name);
	return 0;
}

/* The body of MethodDef row r and the offsets of its tokens (appended to *patch, *npatch of them, room
 * for *cap), as il_decode meets them: each instruction's token operand, the LocalVarSigTok, each catch
 * clause's class. */
static int find_tokens(struct weave_template *t, uint32_t r, size_t *npatch, size_t *cap)
{
	const uint8_t *p;
	size_t len;
	uint32_t size, hdr;
	struct il_body b;
	int rc = 0;

	if (img_method_body(t->img, r, &p, &len) < 0 || il_body_size(p, len, &size) < 0 || il_decode(p, size, &b) < 0)
		return -1;
	t->body[r - 1] = p;
	t->body_len[r - 1] = size;
	hdr = b.fat ? 12 : 1; /* II.25.4.2-3 */
	for (uint32_t i = 0; i <= b.n + b.neh && rc == 0; i++) {
		uint32_t at;

		if (i < b.n) { /* the operand after a one- or two-byte opcode */
			const struct il_opcode_info *info = il_op_info(b.ins[i].op);

			if (info->operand != IL_OPND_TOKEN)
				continue;
			at = hdr + b.ins[i].orig_offset + (info->code > 0xFF ? 2 : 1);
		} else if (i == b.n) {
			if (!b.local_var_sig_tok)
				continue;
			at = 8; /* II.25.4.3: Flags, MaxStack, CodeSize, LocalVarSigTok */
		} else {
			if (b.eh[i - b.n - 1].kind != IL_EH_CATCH)
				continue;
			at = b.eh[i - b.n - 1].class_at;
		}
		if (lt_grow(&t->patch, cap, *npatch + 1, sizeof *t->patch) < 0)
			rc = -1;
		else
			t->patch[(*npatch)++] = at;
	}
	il_body_free(&b);
	return rc;
}

/* t->trim_ctors: the constructors of the attributes for the trimmer the template declares. */
static int find_trim_ctors(struct weave_template *t)
{
	size_t cap = 0;

	for (uint32_t r = 1; r <= t->nmethods; r++) {
		const char *ns, *name;
		const uint8_t *sig;
		uint32_t len, type;
		int index = merge_framework_attribute(&t->x, r, &ns, &name, &type, &sig, &len);

		if (index < 0)
			return -1;
		if (index == 0)
			continue;
		if (lt_grow(&t->trim_ctors, &cap, (size_t)t->ntrim_ctors + 1, sizeof *t->trim_ctors) < 0)
			return -1;
		t->trim_ctors[t->ntrim_ctors++] = r;
	}
	return 0;
}

int weave_template_open(const struct img *tmpl, struct weave_template **out)
{
	struct weave_template *t = lt_calloc(1, sizeof *t);
	char finding[400] = "";
	size_t npatch = 0, cap = 0;
	long n;

	if (!t)
		return lt_nomem(NULL);
	t->img = tmpl;
	t->nfields = md_rows(&tmpl->md, MD_FIELD);
	t->nmethods = md_rows(&tmpl->md, MD_METHODDEF);
	if (merge_index_open(&tmpl->md, &t->x) < 0)
		goto fail;
	if ((n = merge_check(&t->x, first_finding, finding)) != 0) {
		if (n < 0)
			lt_error_prefix("run-time template: ");
		else
			lt_error_set(LT_E_WEAVE, "the run-time template uses what the merger does not support: %s%s",
				     finding, n > 1 ? " (and more: weave_merge_check lists them)" : "");
		goto fail;
	}
	if (name_members(t) < 0 || find_trim_ctors(t) < 0)
		goto fail;
	if (!(t->body = lt_calloc(t->nmethods + 1u, sizeof *t->body)) ||
	    !(t->body_len = lt_calloc(t->nmethods + 1u, sizeof *t->body_len)) ||
	    !(t->patch_first = lt_calloc(t->nmethods + 1u, sizeof *t->patch_first))) {
		lt_nomem(NULL);
		goto fail;
	}
	for (uint32_t r = 1; r <= t->nmethods; r++) {
		if (find_tokens(t, r, &npatch, &cap) < 0) {
			lt_error_prefix("run-time method %s: ", t->names[t->nfields + r - 1]);
			goto fail;
		}
		t->patch_first[r] = (uint32_t)npatch;
	}
	*out = t;
	return 0;
fail:
	weave_template_free(t);
	return -1;
}

void weave_template_free(struct weave_template *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->names && i < (size_t)t->nfields + t->nmethods; i++)
		free(t->names[i]);
	free(t->names);
	free(t->sorted);
	free(t->trim_ctors);
	free(t->body);
	free(t->body_len);
	free(t->patch_first);
	free(t->patch);
	merge_index_close(&t->x);
	free(t);
}
