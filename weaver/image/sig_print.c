/* sig_print.c - ilasm-like text of decoded signatures (II.23.2), for messages and tests. */
#include "lt_error.h"
#include "sig.h"

#include <stdarg.h>
#include <stdio.h>

/* Text built into buf[0..size), counting the full length like snprintf. */
struct text {
	char *buf;
	size_t size;
	size_t len;
};

static void put(struct text *o, const char *fmt, ...) LT_PRINTF(2, 3);

static void put(struct text *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	if (o->len < o->size)
		n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
	else
		n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

/* ilasm names of the element types that are a single byte (II.23.1.16). */
static const char *const simple_names[] = {
	[SIG_VOID] = "void", [SIG_BOOLEAN] = "bool", [SIG_CHAR] = "char",
	[SIG_I1] = "int8", [SIG_U1] = "uint8", [SIG_I2] = "int16", [SIG_U2] = "uint16",
	[SIG_I4] = "int32", [SIG_U4] = "uint32", [SIG_I8] = "int64", [SIG_U8] = "uint64",
	[SIG_R4] = "float32", [SIG_R8] = "float64", [SIG_STRING] = "string",
	[SIG_TYPEDBYREF] = "typedref", [SIG_I] = "native int", [SIG_U] = "native uint",
	[SIG_OBJECT] = "object",
};

static void print_method(struct text *o, const struct sig_method *m);

/* ilasm's bounds: "lo...hi" with both, "lo..." with a lower bound, "n" with a size. */
static void print_shape(struct text *o, const struct sig_array_shape *s)
{
	put(o, "[");
	for (uint32_t i = 0; i < s->rank; i++) {
		int has_size = i < s->nsizes, has_lo = i < s->nlobounds;
		if (i)
			put(o, ",");
		if (has_lo && has_size)
			put(o, "%d...%lld", s->lobounds[i], (long long)s->lobounds[i] + s->sizes[i] - 1);
		else if (has_lo)
			put(o, "%d...", s->lobounds[i]);
		else if (has_size)
			put(o, "%u", s->sizes[i]);
	}
	put(o, "]");
}

static void print_type(struct text *o, const struct sig_type *t)
{
	if (!t) {
		put(o, "?");
		return;
	}
	if (t->elem < sizeof simple_names / sizeof simple_names[0] && simple_names[t->elem]) {
		put(o, "%s", simple_names[t->elem]);
		return;
	}
	switch (t->elem) {
	case SIG_CLASS: case SIG_VALUETYPE:
		put(o, "%s [tok 0x%08X]", t->elem == SIG_CLASS ? "class" : "valuetype", t->token);
		break;
	case SIG_GENERICINST:
		put(o, "%s [tok 0x%08X]<", t->inst == SIG_CLASS ? "class" : "valuetype", t->token);
		for (uint32_t i = 0; i < t->nargs; i++) {
			put(o, "%s", i ? ", " : "");
			print_type(o, t->args[i]);
		}
		put(o, ">");
		break;
	case SIG_VAR: case SIG_MVAR:
		put(o, "%s%u", t->elem == SIG_VAR ? "!" : "!!", t->number);
		break;
	case SIG_SZARRAY: case SIG_PTR: case SIG_BYREF: case SIG_PINNED:
		print_type(o, t->inner);
		put(o, "%s", t->elem == SIG_SZARRAY ? "[]" : t->elem == SIG_PTR ? "*" : t->elem == SIG_BYREF ? "&" : " pinned");
		break;
	case SIG_ARRAY:
		print_type(o, t->inner);
		if (t->shape)
			print_shape(o, t->shape);
		break;
	case SIG_CMOD_REQD: case SIG_CMOD_OPT:
		print_type(o, t->inner);
		put(o, " %s([tok 0x%08X])", t->elem == SIG_CMOD_REQD ? "modreq" : "modopt", t->token);
		break;
	case SIG_FNPTR:
		put(o, "method ");
		if (t->method)
			print_method(o, t->method);
		break;
	default:
		put(o, "<0x%02X>", t->elem);
		break;
	}
}

/* Prefixes for the calling convention (low 4 bits), ilasm's words. */
static const char *const conv_names[16] = {
	[SIG_CONV_C] = "unmanaged cdecl ", [SIG_CONV_STDCALL] = "unmanaged stdcall ",
	[SIG_CONV_THISCALL] = "unmanaged thiscall ", [SIG_CONV_FASTCALL] = "unmanaged fastcall ",
	[SIG_CONV_VARARG] = "vararg ", [SIG_CONV_PROPERTY] = "property ", [SIG_CONV_UNMANAGED] = "unmanaged ",
};

static void print_method(struct text *o, const struct sig_method *m)
{
	const char *conv = conv_names[m->conv & SIG_CONV_MASK];

	put(o, "%s%s%s", m->conv & SIG_HASTHIS ? "instance " : "", m->conv & SIG_EXPLICITTHIS ? "explicit " : "",
	    conv ? conv : "");
	print_type(o, m->ret);
	put(o, " ");
	if (m->conv & SIG_GENERIC)
		put(o, "<%u>", m->gen_count);
	put(o, "(");
	for (uint32_t i = 0; i < m->nparams; i++) {
		put(o, "%s%s", i ? ", " : "", i == m->sentinel ? "..., " : "");
		print_type(o, m->params[i]);
	}
	put(o, ")");
}

size_t sig_type_print(const struct sig_type *t, char *buf, size_t size)
{
	struct text o = { buf, size, 0 };
	if (size)
		buf[0] = '\0';
	print_type(&o, t);
	return o.len;
}

size_t sig_method_print(const struct sig_method *m, char *buf, size_t size)
{
	struct text o = { buf, size, 0 };
	if (size)
		buf[0] = '\0';
	print_method(&o, m);
	return o.len;
}
