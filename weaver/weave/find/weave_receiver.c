/* weave_receiver.c - the static type of a call's receiver: the instruction that pushed it, found
 * by walking back over the call's arguments in its basic block (III.1.7.5 stack transitions). */
#include "weave_pass.h"
#include "image_body.h"
#include "lt_error.h"
#include "sig.h"

#include <stdlib.h>

/* The class a value of signature type t has: its TypeDefOrRef token, or 0
 * for anything else (custom modifiers skipped). */
static uint32_t class_of(const struct sig_type *t)
{
	while (t && (t->elem == SIG_CMOD_REQD || t->elem == SIG_CMOD_OPT))
		t = t->inner;
	return t && t->elem == SIG_CLASS ? t->token : 0;
}

/* The signature blob of MethodDef, MemberRef or Field token `token`:
 * 1 with *p, *len, 0 for another table or a row out of range, -1 with LT_E_METADATA. */
static int blob_of(const struct md_image *md, uint32_t token, const uint8_t **p, uint32_t *len)
{
	enum md_table_id tab = md_token_table(token);
	uint32_t row = md_token_row(token), col;

	if (tab == MD_METHODDEF)
		col = MD_METHODDEF_SIGNATURE;
	else if (tab == MD_MEMBERREF)
		col = MD_MEMBERREF_SIGNATURE;
	else if (tab == MD_FIELD)
		col = MD_FIELD_SIGNATURE;
	else
		return 0;
	if (row == 0 || row > md_rows(md, tab))
		return 0;
	return md_blob(md, md_get(md, tab, row, col), p, len) < 0 ? -1 : 1;
}

/* The class of local `index` of body b (II.23.2.6 LocalVarSig), 0 when unknown. */
static int local_class(const struct md_image *md, const struct il_body *b, int64_t index, uint32_t *out)
{
	uint32_t row = md_token_row(b->local_var_sig_tok), len;
	const uint8_t *p;
	struct sig_list *l;

	if (md_token_table(b->local_var_sig_tok) != MD_STANDALONESIG || row == 0 || row > md_rows(md, MD_STANDALONESIG))
		return 0;
	if (md_blob(md, md_get(md, MD_STANDALONESIG, row, MD_STANDALONESIG_SIGNATURE), &p, &len) < 0 ||
	    sig_locals_decode(p, len, &l) < 0)
		return -1;
	if (index >= 0 && (uint64_t)index < l->count)
		*out = class_of(l->types[index]);
	sig_list_free(l);
	return 0;
}

/* The class of argument `index` of MethodDef `row` (II.23.2.1: `this` is
 * argument 0 of an instance method, of its owner's type), 0 when unknown. */
static int arg_class(const struct weave_names *n, uint32_t row, int64_t index, uint32_t *out)
{
	const uint8_t *p;
	uint32_t len;
	struct sig_method *m;
	int rc = blob_of(&n->img->md, md_token(MD_METHODDEF, row), &p, &len);

	if (rc <= 0)
		return rc;
	if (sig_method_decode(p, len, &m) < 0)
		return -1;
	if (m->conv & SIG_HASTHIS) {
		uint32_t owner = weave_names_owner(n, row);
		if (index == 0 && owner && weave_names_is_valuetype(n, owner) == 0)
			*out = md_token(MD_TYPEDEF, owner);
		index--;
	}
	if (index >= 0 && (uint64_t)index < m->nparams)
		*out = class_of(m->params[index]);
	sig_method_free(m);
	return 0;
}

/* The class of what instruction `in` pushes, for the loads and calls whose
 * operand or signature says it; 0 when unknown. */
static int pushed_class(const struct weave_names *n, uint32_t row, const struct il_body *b,
			const struct il_instr *in, uint32_t *out)
{
	const struct md_image *md = &n->img->md;
	const uint8_t *p;
	uint32_t len, parent;
	int rc;

	switch (in->op) {
	case IL_LDLOC_0: case IL_LDLOC_1: case IL_LDLOC_2: case IL_LDLOC_3:
		return local_class(md, b, in->op - IL_LDLOC_0, out);
	case IL_LDLOC_S: case IL_LDLOC:
		return local_class(md, b, in->arg.i, out);
	case IL_LDARG_0: case IL_LDARG_1: case IL_LDARG_2: case IL_LDARG_3:
		return arg_class(n, row, in->op - IL_LDARG_0, out);
	case IL_LDARG_S: case IL_LDARG:
		return arg_class(n, row, in->arg.i, out);
	case IL_CASTCLASS: case IL_ISINST:
		*out = in->arg.token;
		return 0;
	case IL_NEWOBJ:
		/* III.4.21: the object is of the constructor's type. */
		if (md_token_table(in->arg.token) == MD_METHODDEF) {
			uint32_t owner = weave_names_owner(n, md_token_row(in->arg.token));
			*out = owner ? md_token(MD_TYPEDEF, owner) : 0;
		} else if (md_token_table(in->arg.token) == MD_MEMBERREF &&
			   md_token_row(in->arg.token) >= 1 && md_token_row(in->arg.token) <= md_rows(md, MD_MEMBERREF)) {
			if (md_coded_decode(MD_CI_MEMBERREFPARENT,
					    md_get(md, MD_MEMBERREF, md_token_row(in->arg.token), MD_MEMBERREF_CLASS), &parent) < 0)
				return -1;
			*out = md_token_table(parent) == MD_METHODDEF ? 0 : parent;
		}
		return 0;
	case IL_LDFLD: case IL_LDSFLD: {
		struct sig_type *t;
		if ((rc = blob_of(md, in->arg.token, &p, &len)) <= 0)
			return rc;
		if (sig_field_decode(p, len, &t) < 0)
			return -1;
		*out = class_of(t);
		sig_type_free(t);
		return 0;
	}
	case IL_CALL: case IL_CALLVIRT: {
		struct sig_method *m;
		if ((rc = blob_of(md, in->arg.token, &p, &len)) <= 0)
			return rc;
		if (sig_method_decode(p, len, &m) < 0)
			return -1;
		*out = class_of(m->ret);
		sig_method_free(m);
		return 0;
	}
	default:
		return 0;
	}
}

/* Whether a branch, switch or EH clause enters body b at an instruction of
 * ids (lo, hi] - code order, ids 0..n-1 as il_decode gives them: then the
 * stack there may come from elsewhere. */
static int entered_between(const struct il_body *b, uint32_t lo, uint32_t hi)
{
#define IN(id) ((id) != IL_ID_END && (id) > lo && (id) <= hi)
	for (uint32_t k = 0; k < b->n; k++) {
		const struct il_instr *in = &b->ins[k];
		if (il_op_is_branch(in->op) && IN(in->arg.target))
			return 1;
		for (uint32_t t = 0; t < in->ntargets; t++)
			if (IN(in->targets[t]))
				return 1;
	}
	for (uint32_t e = 0; e < b->neh; e++)
		if (IN(b->eh[e].try_start) || IN(b->eh[e].handler_start) ||
		    (b->eh[e].kind == IL_EH_FILTER && IN(b->eh[e].filter_start)))
			return 1;
	return 0;
#undef IN
}

int weave_receiver_class(const struct weave_names *n, uint32_t row, const struct il_body *b, uint32_t call,
			 uint32_t *out)
{
	int pops, pushes;
	uint32_t above, k;

	*out = 0;
	if (call >= b->n || img_stack_effect((void *)n->img, b->ins[call].arg.token, b->ins[call].op, &pops, &pushes) < 0)
		return call >= b->n ? 0 : -1;
	if (pops < 1)
		return 0;
	above = (uint32_t)pops - 1; /* the arguments pushed after the receiver */
	for (k = call; k-- > 0;) {
		const struct il_instr *in = &b->ins[k];
		const struct il_opcode_info *info = il_op_info(in->op);
		if (info->flow != IL_FLOW_NEXT && info->flow != IL_FLOW_COND && info->flow != IL_FLOW_META)
			return 0; /* no fall-through: the receiver came along another path */
		pops = info->pops;
		pushes = info->pushes;
		if (pops == IL_STACK_VAR &&
		    img_stack_effect((void *)n->img, in->arg.token, in->op, &pops, &pushes) < 0)
			return -1;
		if (pops < 0 || pushes < 0)
			return 0;
		if (in->op == IL_DUP && above <= 1) {
			above = 0; /* either copy: the receiver is dup's input */
			continue;
		}
		if (above < (uint32_t)pushes)
			break;
		above = above - (uint32_t)pushes + (uint32_t)pops;
	}
	if (k == UINT32_MAX || b->ins[k].id != k || b->ins[call].id != call || entered_between(b, k, call))
		return 0;
	return pushed_class(n, row, b, &b->ins[k], out);
}
