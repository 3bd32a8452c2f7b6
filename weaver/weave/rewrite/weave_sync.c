/* weave_sync.c - timing a [MethodImpl(Synchronized)] body as a hold of the monitor the runtime takes around it. */
#include "weave_pass.h"
#include "il_body.h"
#include "image_body.h"
#include "lt_error.h"
#include "md_find.h"
#include "sig.h"

#include <string.h>

/* II.23.1.10 MethodAttributes. */
#define METHOD_STATIC 0x0010

/* Set `in` to the shortest ldloc or stloc of local n (III.3.43, III.3.63). */
static void local_op(struct il_instr *in, int store, uint32_t n)
{
	in->op = n <= 3 ? (enum il_op)((store ? IL_STLOC_0 : IL_LDLOC_0) + n)
		 : n <= 0xFF ? (store ? IL_STLOC_S : IL_LDLOC_S) : (store ? IL_STLOC : IL_LDLOC);
	in->arg.i = n;
}

/* The token `ldtoken` names TypeDef `type` by so that typeof gives the Type
 * the runtime locks: the TypeDef, or for a generic type (GenericParam rows
 * owned by it, II.22.20) the TypeSpec GENERICINST CLASS|VALUETYPE type n
 * VAR 0 .. VAR n-1 (II.23.2.14): the instantiation the method runs in. */
static int type_token(struct img *img, const struct weave_names *names, uint32_t type, uint32_t *out)
{
	struct md_image *md = &img->md;
	struct lt_buf blob = LT_BUF_INIT;
	uint32_t nparams = 0, owner;
	int valuetype, rc = -1;

	for (uint32_t r = 1; r <= md_rows(md, MD_GENERICPARAM); r++) {
		if (md_coded_decode(MD_CI_TYPEORMETHODDEF, md_get(md, MD_GENERICPARAM, r, MD_GENERICPARAM_OWNER),
				    &owner) < 0)
			return lt_error_prefix("GenericParam row %u: ", r);
		nparams += owner == md_token(MD_TYPEDEF, type);
	}
	*out = md_token(MD_TYPEDEF, type);
	if (nparams == 0)
		return 0;
	if ((valuetype = weave_names_is_valuetype(names, type)) < 0)
		return -1;
	if (lt_buf_u8(&blob, SIG_GENERICINST) < 0 || lt_buf_u8(&blob, valuetype ? SIG_VALUETYPE : SIG_CLASS) < 0 ||
	    sig_token_encode(&blob, *out) < 0 || sig_uint_encode(&blob, nparams) < 0)
		goto done;
	for (uint32_t k = 0; k < nparams; k++)
		if (lt_buf_u8(&blob, SIG_VAR) < 0 || sig_uint_encode(&blob, k) < 0)
			goto done;
	rc = md_typespec(md, blob.data, (uint32_t)blob.len, out);
done:
	lt_buf_free(&blob);
	return rc;
}

/* Refuse jmp, drop tail. prefixes (their references move onto the call). */
static int check_body(struct il_body *b, uint32_t row)
{
	for (uint32_t i = 0; i < b->n; i++) {
		if (b->ins[i].op == IL_JMP)
			return lt_error_set(LT_E_WEAVE, "MethodDef row %u: a synchronized method with jmp cannot be timed "
					    "(III.3.37: jmp cannot leave a try block)", row);
		if (b->ins[i].op == IL_TAIL && i + 1 < b->n) {
			il_retarget(b, b->ins[i].id, b->ins[i + 1].id, IL_RT_ALL);
			if (il_remove(b, i, 1) < 0)
				return -1;
			i--;
		}
	}
	return 0;
}

/* The locals obj (object) and, for a method that returns a value, result
 * (its RetType, custom modifiers and BYREF included: II.23.2.6 allows them
 * in a LocalVarSig).  *obj gets the first one's index. */
static int add_locals(struct img *img, struct il_body *b, uint32_t row, uint16_t *obj)
{
	const struct md_image *md = &img->md;
	struct lt_buf types = LT_BUF_INIT;
	struct sig_method *m = NULL;
	const uint8_t *p;
	uint32_t len;
	int rc = -1;

	if (md_blob(md, md_get(md, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE), &p, &len) < 0 ||
	    sig_method_decode(p, len, &m) < 0)
		return lt_error_prefix("MethodDef row %u: ", row);
	if (lt_buf_u8(&types, SIG_OBJECT) < 0 || (b->returns_value && sig_type_encode(m->ret, &types) < 0) ||
	    img_add_locals(img, b, types.data, (uint32_t)types.len, 1 + !!b->returns_value, obj) < 0)
		goto done;
	rc = 0;
done:
	sig_method_free(m);
	lt_buf_free(&types);
	return rc;
}

/* Turn each ret of the first `end` instructions into `stloc result; leave
 * to` (`leave to` alone for a void method); the ret keeps its id, so
 * branches to it store the value they carry. */
static int leave_instead_of_ret(struct il_body *b, uint32_t end, uint32_t result, uint32_t to)
{
	struct il_instr leave = { .op = IL_LEAVE, .arg.target = to };

	for (uint32_t i = 0; i < end; i++) {
		if (b->ins[i].op != IL_RET)
			continue;
		if (!b->returns_value) {
			b->ins[i].op = IL_LEAVE;
			b->ins[i].arg.target = to;
			continue;
		}
		local_op(&b->ins[i], 1, result);
		if (il_insert(b, i + 1, &leave, 1) < 0)
			return -1;
		i++;
		end++;
	}
	return 0;
}

int weave_sync_wrap(struct img *img, struct weave_stubs *h, const struct weave_names *names, struct il_body *b,
		    uint32_t row, uint32_t site)
{
	int is_static = !!(md_get(&img->md, MD_METHODDEF, row, MD_METHODDEF_FLAGS) & METHOD_STATIC);
	struct il_instr pro[7], tail[5];
	struct weave_sync_calls calls;
	uint32_t type_tok = 0, body_end, try_start, fin, ret, np = 0;
	uint16_t obj;

	if (check_body(b, row) < 0 || add_locals(img, b, row, &obj) < 0 || weave_stubs_sync(h, &calls) < 0 ||
	    (is_static && type_token(img, names, weave_names_owner(names, row), &type_tok) < 0))
		return -1;
	memset(pro, 0, sizeof pro);
	memset(tail, 0, sizeof tail);
	/* finally { Synchronized_Exit(obj); endfinally }  RET: [ldloc result;] ret */
	local_op(&tail[0], 0, obj);
	tail[1] = (struct il_instr){ .op = IL_CALL, .arg.token = calls.leave };
	tail[2].op = IL_ENDFINALLY;
	local_op(&tail[3], 0, obj + 1u);
	tail[4].op = IL_RET;
	body_end = b->n;
	try_start = b->ins[0].id;
	fin = b->next_id;
	ret = fin + 3;
	if (b->returns_value) {
		if (il_insert(b, b->n, tail, 5) < 0)
			return -1;
	} else if (il_insert(b, b->n, tail, 3) < 0 || il_insert(b, b->n, &tail[4], 1) < 0) {
		return -1;
	}
	/* A clause that ended with the old body now ends where the finally starts. */
	il_retarget(b, IL_ID_END, fin, IL_RT_TRY_END | IL_RT_HANDLER_END);
	if (leave_instead_of_ret(b, body_end, obj + 1u, ret) < 0)
		return -1;
	/* obj = this | Api.TypeOf(T); Synchronized_Enter(obj, site); */
	if (is_static) {
		pro[np++] = (struct il_instr){ .op = IL_LDTOKEN, .arg.token = type_tok };
		pro[np++] = (struct il_instr){ .op = IL_CALL, .arg.token = calls.type_of };
	} else {
		pro[np++].op = IL_LDARG_0;
	}
	pro[np++].op = IL_DUP;
	local_op(&pro[np++], 1, obj);
	pro[np++] = (struct il_instr){ .op = IL_LDC_I4, .arg.i = site };
	pro[np++] = (struct il_instr){ .op = IL_CALL, .arg.token = calls.enter };
	if (il_insert(b, 0, pro, np) < 0)
		return -1;
	return il_add_eh(b, &(struct il_eh){ .kind = IL_EH_FINALLY, .try_start = try_start, .try_end = fin,
					    .handler_start = fin, .handler_end = ret });
}
