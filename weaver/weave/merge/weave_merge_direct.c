/* weave_merge_direct.c - the bodies of the run-time's direct calls into .NET 6+ types that netstandard2.0 lacks:
 * the SIGTERM and SIGINT handlers' registrations (PosixSignalRegistration.Create) and the hook before ProcessExit
 * (AssemblyLoadContext.Default.Unloading), written only for a target whose framework is known to have them. */
#include "weave_merge_int.h"
#include "lt_buf.h"
#include "lt_error.h"
#include "md_find.h"
#include "sig.h"
#include "weave_emit.h"

#include <string.h>

enum { ELEM_VOID = 0x01, ELEM_CLASS = 0x12, ELEM_VALUETYPE = 0x11, ELEM_GENERICINST = 0x15, ELEM_I = 0x18,
       ELEM_OBJECT = 0x1C, CALLCONV_HASTHIS = 0x20 };

/* Appends `class Action`1<class arg>` (II.23.2.12) to b. */
static int put_action_of(struct lt_buf *b, uint32_t action, uint32_t arg)
{
	if (lt_buf_u8(b, ELEM_GENERICINST) < 0 || lt_buf_u8(b, ELEM_CLASS) < 0 || sig_token_encode(b, action) < 0 ||
	    lt_buf_u8(b, 1) < 0 || lt_buf_u8(b, ELEM_CLASS) < 0)
		return -1;
	return sig_token_encode(b, arg);
}

/* Emits `new Action<arg>(null, &handler)`: ldnull; ldftn handler; newobj Action`1<arg>::.ctor(object, native int)
 * (C#'s own form for a method whose parameter, object, is more general than the delegate's). */
static int emit_action(struct merge *m, uint32_t action, uint32_t arg, uint32_t handler, struct em *e)
{
	static const uint8_t ctor_sig[] = { CALLCONV_HASTHIS, 2, ELEM_VOID, ELEM_OBJECT, ELEM_I };
	struct lt_buf spec = LT_BUF_INIT;
	uint32_t type, ctor;
	int rc = put_action_of(&spec, action, arg) < 0 || md_typespec(m->md, spec.data, (uint32_t)spec.len, &type) < 0 ||
			 wref_member(m->refs, type, 0, ".ctor", ctor_sig, sizeof ctor_sig, &ctor) < 0
		 ? -1
		 : 0;

	lt_buf_free(&spec);
	if (rc == 0) {
		em_op(e, IL_LDNULL);
		em_tok(e, IL_LDFTN, handler);
		em_tok(e, IL_NEWOBJ, ctor);
	}
	return rc;
}

/* The merged method `name` of the template (a handler the body binds), or -1 with LT_E_WEAVE. */
static int merged(const struct weave_merge_map *map, const char *name, uint32_t *out)
{
	return weave_merge_find(map, name, out) ? 0 : lt_error_set(LT_E_WEAVE, "the run-time template has no %s", name);
}

/* The method `name` of `owner` whose signature sig holds (wref_member), sig then emptied (its failure sticky:
 * a put that failed before makes this fail). */
static int method_ref(struct merge *m, int put_failed, uint32_t owner, const char *name, struct lt_buf *sig, uint32_t *out)
{
	int rc = put_failed ? -1 : wref_member(m->refs, owner, 0, name, sig->data, (uint32_t)sig->len, out);

	sig->len = 0;
	return rc;
}

int merge_direct_signal(struct merge *m, const struct weave_merge_map *map, int posix_signal, const char *handler_name,
			struct em *e)
{
	const char *ns = "System.Runtime.InteropServices";
	struct lt_buf sig = LT_BUF_INIT;
	uint32_t registration, signal, context, action, handler, create;
	int known, rc;

	if ((known = wref_type_if_known(m->refs, ns, "PosixSignalRegistration", &registration)) <= 0)
		return known < 0 ? -1 : 1;
	if (wref_type(m->refs, ns, "PosixSignal", &signal) < 0 || wref_type(m->refs, ns, "PosixSignalContext", &context) < 0 ||
	    wref_type(m->refs, "System", "Action`1", &action) < 0 || merged(map, handler_name, &handler) < 0)
		return -1;
	/* static class PosixSignalRegistration Create(valuetype PosixSignal, class Action`1<class PosixSignalContext>) */
	rc = method_ref(m, lt_buf_u8(&sig, 0) < 0 || lt_buf_u8(&sig, 2) < 0 || lt_buf_u8(&sig, ELEM_CLASS) < 0 ||
				   sig_token_encode(&sig, registration) < 0 || lt_buf_u8(&sig, ELEM_VALUETYPE) < 0 ||
				   sig_token_encode(&sig, signal) < 0 || put_action_of(&sig, action, context) < 0,
			registration, "Create", &sig, &create);
	lt_buf_free(&sig);
	em_i4(e, posix_signal);
	if (rc < 0 || emit_action(m, action, context, handler, e) < 0)
		return -1;
	em_tok(e, IL_CALL, create);
	em_op(e, IL_RET);
	return 0;
}

int merge_direct_unloading(struct merge *m, const struct weave_merge_map *map, struct em *e)
{
	struct lt_buf sig = LT_BUF_INIT;
	uint32_t context, action, handler, get_default, add;
	int known, rc;

	if ((known = wref_type_if_known(m->refs, "System.Runtime.Loader", "AssemblyLoadContext", &context)) <= 0)
		return known < 0 ? -1 : 1;
	if (wref_type(m->refs, "System", "Action`1", &action) < 0 ||
	    merged(map, "LockTime.Runtime.ExitOrder::OnUnloading", &handler) < 0)
		return -1;
	/* static class AssemblyLoadContext get_Default(); instance void add_Unloading(class Action`1<class AssemblyLoadContext>) */
	rc = method_ref(m, lt_buf_u8(&sig, 0) < 0 || lt_buf_u8(&sig, 0) < 0 || lt_buf_u8(&sig, ELEM_CLASS) < 0 ||
				   sig_token_encode(&sig, context) < 0,
			context, "get_Default", &sig, &get_default) < 0 ||
			     method_ref(m, lt_buf_u8(&sig, CALLCONV_HASTHIS) < 0 || lt_buf_u8(&sig, 1) < 0 ||
						   lt_buf_u8(&sig, ELEM_VOID) < 0 || put_action_of(&sig, action, context) < 0,
					context, "add_Unloading", &sig, &add) < 0
		     ? -1
		     : 0;
	lt_buf_free(&sig);
	em_tok(e, IL_CALL, get_default);
	if (rc < 0 || emit_action(m, action, context, handler, e) < 0)
		return -1;
	em_tok(e, IL_CALLVIRT, add);
	em_op(e, IL_LDC_I4_1);
	em_op(e, IL_RET);
	return 0;
}
