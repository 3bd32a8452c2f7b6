/* test_il.c - unit tests of CIL method bodies: opcode table, decode/encode round trips, edits, branch forms, EH, maxstack, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "il_body.h"
#include "lt_cursor.h"
#include "lt_error.h"

/* ---- A small assembler: bytes, labels and branch fixups ---- */

struct as {
	uint8_t b[8192];
	size_t n;
	size_t lab[16];
	struct { size_t at, base; int lab, wide; } fix[64];
	int nfix;
};

static void emit(struct as *a, const uint8_t *p, size_t n)
{
	memcpy(a->b + a->n, p, n);
	a->n += n;
}
#define E(a, ...) do { const uint8_t x_[] = { __VA_ARGS__ }; emit(a, x_, sizeof x_); } while (0)

static void e32(struct as *a, uint32_t v) { lt_put32(a->b + a->n, v); a->n += 4; }
static void e64(struct as *a, uint64_t v) { e32(a, (uint32_t)v); e32(a, (uint32_t)(v >> 32)); }
static void label(struct as *a, int l) { a->lab[l] = a->n; }
static void nops(struct as *a, int k) { while (k--) E(a, 0x00); }

static void fixup(struct as *a, size_t at, size_t base, int l, int wide)
{
	a->fix[a->nfix].at = at;
	a->fix[a->nfix].base = base;
	a->fix[a->nfix].lab = l;
	a->fix[a->nfix++].wide = wide;
}

/* A branch: one-byte opcode, then an int8 (wide = 0) or int32 offset to label l. */
static void br(struct as *a, uint8_t op, int l, int wide)
{
	E(a, op);
	fixup(a, a->n, a->n + (wide ? 4 : 1), l, wide);
	a->n += wide ? 4 : 1;
}

static void sw(struct as *a, int n, const int *labs)
{
	E(a, 0x45);
	e32(a, (uint32_t)n);
	size_t base = a->n + 4 * (size_t)n;
	for (int k = 0; k < n; k++) {
		fixup(a, a->n, base, labs[k], 1);
		a->n += 4;
	}
}

static void resolve_fixups(struct as *a)
{
	for (int k = 0; k < a->nfix; k++) {
		long d = (long)a->lab[a->fix[k].lab] - (long)a->fix[k].base;
		if (a->fix[k].wide) {
			lt_put32(a->b + a->fix[k].at, (uint32_t)d);
		} else {
			assert_true(d >= -128 && d <= 127);
			a->b[a->fix[k].at] = (uint8_t)d;
		}
	}
}

/* A clause in labels (fs: filter start label). */
struct clause { uint32_t flags; int ts, te, hs, he, fs; uint32_t token; };

static size_t put_tiny(struct as *a, uint8_t *out)
{
	resolve_fixups(a);
	assert_true(a->n < 64);
	out[0] = (uint8_t)(a->n << 2 | 2);
	memcpy(out + 1, a->b, a->n);
	return 1 + a->n;
}

/* EH section(s) at pos: one section, or one per clause when split (MoreSects). */
static size_t put_sections(const struct as *a, const struct clause *c, int nc, int fat, int split, uint8_t *out, size_t pos)
{
	for (int k = 0; k < nc;) {
		int m = split ? 1 : nc;
		uint32_t size = 4 + (uint32_t)m * (fat ? 24 : 12);
		int more = k + m < nc;
		while (pos % 4)
			out[pos++] = 0;
		lt_put32(out + pos, 0x01 | (fat ? 0x40 : 0) | (more ? 0x80 : 0) | size << 8);
		pos += 4;
		for (int j = k; j < k + m; j++) {
			uint32_t ts = (uint32_t)a->lab[c[j].ts], hs = (uint32_t)a->lab[c[j].hs];
			uint32_t tl = (uint32_t)a->lab[c[j].te] - ts, hl = (uint32_t)a->lab[c[j].he] - hs;
			uint32_t last = c[j].flags == 1 ? (uint32_t)a->lab[c[j].fs] : c[j].token;
			if (fat) {
				uint32_t v[6] = { c[j].flags, ts, tl, hs, hl, last };
				for (int i = 0; i < 6; i++, pos += 4)
					lt_put32(out + pos, v[i]);
			} else {
				lt_put16(out + pos, (uint16_t)c[j].flags);
				lt_put16(out + pos + 2, (uint16_t)ts);
				out[pos + 4] = (uint8_t)tl;
				lt_put16(out + pos + 5, (uint16_t)hs);
				out[pos + 7] = (uint8_t)hl;
				lt_put32(out + pos + 8, last);
				pos += 12;
			}
		}
		k += m;
	}
	return pos;
}

static size_t put_fat(struct as *a, int init_locals, uint16_t maxstack, uint32_t locals,
		      const struct clause *c, int nc, int fat_eh, int split, uint8_t *out)
{
	resolve_fixups(a);
	lt_put16(out, (uint16_t)(0x3003 | (nc ? 0x8 : 0) | (init_locals ? 0x10 : 0)));
	lt_put16(out + 2, maxstack);
	lt_put32(out + 4, (uint32_t)a->n);
	lt_put32(out + 8, locals);
	memcpy(out + 12, a->b, a->n);
	return nc ? put_sections(a, c, nc, fat_eh, split, out, 12 + a->n) : 12 + a->n;
}

/* Test stack-effect callback: token 0x0A00ppqq pops qq items and pushes pp. */
static int effect_cb(void *ctx, uint32_t token, enum il_op op, int *pops, int *pushes)
{
	int *calls = ctx;
	(void)op;
	if (calls)
		(*calls)++;
	*pops = (int)(token & 0xFF);
	*pushes = (int)((token >> 8) & 0xFF);
	return 0;
}

static void decode_ok(const uint8_t *p, size_t n, struct il_body *b)
{
	if (il_decode(p, n, b) < 0)
		fail_msg("decode: %s", lt_error_last()->msg);
}

static void encode_ok(struct il_body *b, struct lt_buf *out)
{
	if (il_encode(b, effect_cb, NULL, out) < 0)
		fail_msg("encode: %s", lt_error_last()->msg);
}

/* Decode, check il_body_size, encode, expect the same bytes. */
static void round_trip(const uint8_t *p, size_t n, int returns_value)
{
	struct il_body b;
	struct lt_buf out = LT_BUF_INIT;
	uint32_t size;

	assert_int_equal(il_body_size(p, n, &size), 0);
	assert_int_equal(size, n);
	decode_ok(p, n, &b);
	b.returns_value = returns_value;
	encode_ok(&b, &out);
	assert_int_equal(out.len, n);
	assert_memory_equal(out.data, p, n);
	lt_buf_free(&out);
	il_body_free(&b);
}

static void expect_error(int rc, int code)
{
	assert_int_equal(rc, -1);
	assert_int_equal(lt_error_last()->code, code);
}

static void expect_decode_error(const uint8_t *p, size_t n, int code)
{
	struct il_body b;
	expect_error(il_decode(p, n, &b), code);
}

/* ---- Opcode table ---- */

static void test_opcode_table(void **state)
{
	for (int op = 0; op < IL_OP_COUNT; op++) {
		const struct il_opcode_info *info = il_op_info((enum il_op)op);
		enum il_op back;
		assert_non_null(info->name);
		if (op > 0)
			assert_true(info->code > il_op_info((enum il_op)(op - 1))->code);
		assert_int_equal(il_op_from_code(info->code, &back), 0);
		assert_int_equal(back, op);
		if (il_op_is_branch((enum il_op)op)) {
			const struct il_opcode_info *alt = il_op_info((enum il_op)info->alt);
			assert_int_equal(alt->alt, op);
			assert_int_not_equal(alt->operand, info->operand);
			assert_int_equal(alt->pops, info->pops);
		}
	}
	assert_int_equal(il_op_info(IL_CALLVIRT)->code, 0x6F);
	assert_int_equal(il_op_info(IL_READONLY)->code, 0xFE1E);
	assert_int_equal(il_op_code_size(IL_CEQ), 2);
	assert_int_equal(il_op_info(IL_CONSTRAINED)->flow, IL_FLOW_META);
}

static void test_opcode_unknown(void **state)
{
	const uint16_t unused[] = { 0x24, 0x77, 0xA6, 0xE1, 0xFE08, 0xFE1F, 0xFF };
	enum il_op op;
	for (size_t k = 0; k < sizeof unused / sizeof *unused; k++)
		expect_error(il_op_from_code(unused[k], &op), LT_E_BODY);
}

/* ---- Round trips ---- */

/* L0: try { try { nop leave L2 } L1: catch { pop leave L2 } L2: leave L4 }
 * L3: finally { endfinally } L4: (the caller goes on) */
static void asm_nested(struct as *a)
{
	label(a, 0); E(a, 0x00); br(a, 0xDE, 2, 0);
	label(a, 1); E(a, 0x26); br(a, 0xDE, 2, 0);
	label(a, 2); br(a, 0xDE, 4, 0);
	label(a, 3); E(a, 0xDC);
	label(a, 4);
}


static void test_rt_tiny(void **state)
{
	struct as a = { .n = 0 };
	uint8_t body[64];
	E(&a, 0x02, 0x03, 0x58, 0x2A); /* ldarg.0 ldarg.1 add ret */
	round_trip(body, put_tiny(&a, body), 1);
}

/* Every operand kind, switch, prefixes, long branch kept long, InitLocals. */
static size_t body_all_operands(uint8_t *body)
{
	struct as a = { .n = 0 };
	const int labs[] = { 1, 2, 1 };
	E(&a, 0x0E, 0x01, 0x10, 0x01);             /* ldarg.s 1; starg.s 1 */
	E(&a, 0x0F, 0x00, 0x26);                   /* ldarga.s 0; pop */
	E(&a, 0x11, 0x02, 0x13, 0x03);             /* ldloc.s 2; stloc.s 3 */
	E(&a, 0x12, 0x04, 0x26);                   /* ldloca.s 4; pop */
	E(&a, 0xFE, 0x09, 0x2C, 0x01, 0xFE, 0x0B, 0x2C, 0x01); /* ldarg 300; starg 300 */
	E(&a, 0xFE, 0x0C, 0x00, 0x01, 0xFE, 0x0E, 0x00, 0x01); /* ldloc 256; stloc 256 */
	E(&a, 0x1F, 0xFB);                         /* ldc.i4.s -5 */
	E(&a, 0x20); e32(&a, 0x12345678);          /* ldc.i4 */
	E(&a, 0x58);                               /* add */
	E(&a, 0x21); e64(&a, 0x1122334455667788u); /* ldc.i8 */
	E(&a, 0x22); e32(&a, 0x7FA00001);          /* ldc.r4 (a NaN payload) */
	E(&a, 0x23); e64(&a, 0xC002000000000000u); /* ldc.r8 -2.25 */
	E(&a, 0x26, 0x26, 0x26);                   /* pop x3 */
	sw(&a, 3, labs);                           /* switch (L1, L2, L1) */
	br(&a, 0x38, 3, 1);                        /* br L3 (long, in range of short) */
	label(&a, 1); E(&a, 0xFE, 0x13, 0x7E); e32(&a, 0x04000001); /* volatile. ldsfld */
	E(&a, 0x26);
	br(&a, 0x2B, 3, 0);                        /* br.s L3 */
	label(&a, 2); E(&a, 0x7F); e32(&a, 0x04000002);          /* ldsflda */
	E(&a, 0xFE, 0x12, 0x01, 0x4A, 0x26);       /* unaligned. 1 ldind.i4; pop */
	E(&a, 0x14, 0x16, 0xFE, 0x1E, 0x8F); e32(&a, 0x01000003); /* ldnull ldc.i4.0 readonly. ldelema */
	E(&a, 0x26);
	E(&a, 0x14, 0x16, 0xFE, 0x19, 0x02, 0x9A, 0x26); /* ldnull ldc.i4.0 no. 2 ldelem.ref; pop */
	E(&a, 0xFE, 0x06); e32(&a, 0x06000001);    /* ldftn */
	E(&a, 0x26);
	label(&a, 3); E(&a, 0x0F, 0x00, 0xFE, 0x16); e32(&a, 0x1B000001); /* ldarga.s 0; constrained. */
	E(&a, 0x6F); e32(&a, 0x0A000101);          /* callvirt (pops 1, pushes 1) */
	E(&a, 0xFE, 0x14, 0x28); e32(&a, 0x0A000101); /* tail. call */
	E(&a, 0x2A);                               /* ret */
	return put_fat(&a, 1, 8, 0x11000001, NULL, 0, 0, 0, body);
}

static void test_rt_fat_all_operands(void **state)
{
	static uint8_t body[512];
	round_trip(body, body_all_operands(body), 1);
}

/* The code cut at every length (header code size lowered): a cut inside an
 * instruction fails with LT_E_BODY; any cut decodes or fails with LT_E_BODY. */
static void test_code_cut_everywhere(void **state)
{
	static uint8_t body[512];
	struct il_body full, b;
	decode_ok(body, body_all_operands(body), &full);
	for (uint32_t k = 1, i = 0; k < full.code_size; k++) {
		int at_start;
		while (full.ins[i].orig_offset < k)
			i++;
		at_start = full.ins[i].orig_offset == k;
		lt_put32(body + 4, k);
		if (il_decode(body, 12 + k, &b) < 0)
			assert_int_equal(lt_error_last()->code, LT_E_BODY);
		else
			assert_true(at_start);
		il_body_free(&b);
	}
	il_body_free(&full);
}

static void test_rt_small_eh_kinds(void **state)
{
	struct as a = { .n = 0 };
	static uint8_t body[512];
	/* nested try/catch in try/finally; L4: try { leave L8 } L5: filter { pop ldc.i4.1
	 * endfilter } L6: { pop leave L8 } L8: try { leave L10 } L9: fault { endfinally } L10: ret */
	asm_nested(&a);
	br(&a, 0xDE, 8, 0);
	label(&a, 5); E(&a, 0x26, 0x17, 0xFE, 0x11);
	label(&a, 6); E(&a, 0x26); br(&a, 0xDE, 8, 0);
	label(&a, 8); br(&a, 0xDE, 10, 0);
	label(&a, 9); E(&a, 0xDC);
	label(&a, 10); E(&a, 0x2A);
	const struct clause c[] = {
		{ 0, 0, 1, 1, 2, 0, 0x01000002 },  /* catch */
		{ 2, 0, 3, 3, 4, 0, 0 },           /* finally */
		{ 1, 4, 5, 6, 8, 5, 0 },           /* filter */
		{ 4, 8, 9, 9, 10, 0, 0 },          /* fault */
	};
	round_trip(body, put_fat(&a, 0, 2, 0, c, 4, 0, 0, body), 0);
}

/* A try block longer than 255 bytes needs the fat EH form. */
static void test_rt_fat_eh(void **state)
{
	struct as a = { .n = 0 };
	static uint8_t body[1024];
	label(&a, 0); nops(&a, 300);
	br(&a, 0xDE, 2, 0);
	label(&a, 1); E(&a, 0xDC);
	label(&a, 2); E(&a, 0x2A);
	const struct clause c[] = { { 2, 0, 1, 1, 2, 0, 0 } };
	round_trip(body, put_fat(&a, 0, 8, 0, c, 1, 1, 0, body), 0);
}

/* A body under edit (b), its last encoding (out) and that decoded again (re). */
struct ed {
	struct il_body b, re;
	struct lt_buf out;
};

static void ed_open(struct ed *e, const uint8_t *p, size_t n)
{
	memset(e, 0, sizeof *e);
	decode_ok(p, n, &e->b);
}

static void ed_encode(struct ed *e)
{
	il_body_free(&e->re);
	e->out.len = 0;
	encode_ok(&e->b, &e->out);
	decode_ok(e->out.data, e->out.len, &e->re);
}

static void ed_close(struct ed *e)
{
	il_body_free(&e->b);
	il_body_free(&e->re);
	lt_buf_free(&e->out);
}

/* Two sections chained with MoreSects decode to the clauses of both and are
 * written back as one section. */
static void test_multi_section(void **state)
{
	struct as a = { .n = 0 };
	static uint8_t body[512];
	struct ed e;
	uint32_t size;
	asm_nested(&a);
	E(&a, 0x2A);
	const struct clause c[] = { { 0, 0, 1, 1, 2, 0, 0x01000002 }, { 2, 0, 3, 3, 4, 0, 0 } };
	size_t n = put_fat(&a, 0, 1, 0, c, 2, 0, 1, body);
	assert_int_equal(il_body_size(body, n, &size), 0);
	assert_int_equal(size, n);
	ed_open(&e, body, n);
	assert_int_equal(e.b.neh, 2);
	ed_encode(&e);
	assert_true(e.out.len < n); /* one section header instead of two */
	assert_int_equal(e.re.neh, 2);
	for (uint32_t k = 0; k < 2; k++) {
		assert_int_equal(e.re.eh[k].kind, e.b.eh[k].kind);
		assert_int_equal(e.re.eh[k].try_end, e.b.eh[k].try_end);
		assert_int_equal(e.re.eh[k].handler_end, e.b.eh[k].handler_end);
	}
	ed_close(&e);
}

/* ---- Branch forms ---- */

static size_t body_short_branch(uint8_t *body)
{
	struct as a = { .n = 0 };
	br(&a, 0x2B, 1, 0); /* br.s L1 over 100 nops */
	nops(&a, 100);
	label(&a, 1); E(&a, 0x2A);
	return put_fat(&a, 0, 8, 0x11000001, NULL, 0, 0, 0, body);
}

static void test_branch_widen_and_shrink(void **state)
{
	static uint8_t body[256];
	size_t n = body_short_branch(body);
	struct il_instr nop[40] = { { .op = IL_NOP } };
	struct ed e;
	ed_open(&e, body, n);
	assert_int_equal(il_insert(&e.b, 1, nop, 40), 0);
	ed_encode(&e);
	assert_int_equal(e.b.ins[0].op, IL_BR_S);
	assert_int_equal(e.b.ins[0].emit_op, IL_BR);
	assert_int_equal(e.re.ins[0].op, IL_BR);
	assert_int_equal(e.re.ins[e.re.ins[0].arg.target].op, IL_RET);
	assert_int_equal(e.re.code_size, e.b.code_size);
	/* Remove them again: the branch shrinks back, the bytes are the input's. */
	assert_int_equal(il_remove(&e.b, 1, 40), 0);
	ed_encode(&e);
	assert_int_equal(e.b.ins[0].emit_op, IL_BR_S);
	assert_int_equal(e.out.len, n);
	assert_memory_equal(e.out.data, body, n);
	ed_close(&e);
}

/* A backward short branch widened by code inserted between; an inserted long
 * branch within range is written short. */
static void test_branch_backward_and_new(void **state)
{
	struct as a = { .n = 0 };
	static uint8_t body[256];
	struct il_instr ins[130] = { { .op = IL_BR } };
	struct ed e;
	label(&a, 0); E(&a, 0x00);
	br(&a, 0x2B, 0, 0); /* br.s L0 (loop) */
	ed_open(&e, body, put_fat(&a, 0, 8, 0x11000001, NULL, 0, 0, 0, body));
	ins[0].arg.target = e.b.next_id + 1; /* to the next inserted nop */
	assert_int_equal(il_insert(&e.b, 1, ins, 130), 0);
	ed_encode(&e);
	assert_int_equal(e.b.ins[1].emit_op, IL_BR_S);
	assert_int_equal(e.b.ins[e.b.n - 1].emit_op, IL_BR);
	assert_int_equal(e.re.ins[e.re.n - 1].arg.target, 0);
	assert_int_equal(e.re.ins[1].op, IL_BR_S);
	assert_int_equal(e.re.ins[1].arg.target, 2);
	ed_close(&e);
}

/* ---- Clause boundaries and insertion ---- */

/* try { nop leave.s L } catch { pop leave.s L } L: ret */
static size_t body_try_catch(uint8_t *body)
{
	struct as a = { .n = 0 };
	label(&a, 0); E(&a, 0x00); br(&a, 0xDE, 2, 0);
	label(&a, 1); E(&a, 0x26); br(&a, 0xDE, 2, 0);
	label(&a, 2); E(&a, 0x2A);
	const struct clause c[] = { { 0, 0, 1, 1, 2, 0, 0x01000002 } };
	return put_fat(&a, 0, 1, 0, c, 1, 0, 0, body);
}

/* Insert one nop before the catch handler's first instruction (which the
 * clause's TryEnd names): kept, the nop is inside the try block; with TryEnd
 * retargeted to it, outside (between the try block and the handler). */
static void test_insert_at_try_end(void **state)
{
	static uint8_t body[128];
	size_t n = body_try_catch(body);
	struct il_instr nop = { .op = IL_NOP };
	for (int retarget = 0; retarget < 2; retarget++) {
		struct ed e;
		uint32_t at, id;
		ed_open(&e, body, n);
		assert_int_equal(il_index_of(&e.b, e.b.eh[0].try_end, &at), 0);
		id = e.b.next_id;
		assert_int_equal(il_insert(&e.b, at, &nop, 1), 0);
		if (retarget)
			assert_int_equal(il_retarget(&e.b, e.b.eh[0].try_end, id, IL_RT_TRY_END), 1);
		ed_encode(&e);
		assert_int_equal(il_index_of(&e.re, e.re.eh[0].try_end, &at), 0);
		assert_int_equal(e.re.ins[at].orig_offset, retarget ? 3 : 4); /* after nop leave.s (nop) */
		assert_int_equal(il_index_of(&e.re, e.re.eh[0].handler_start, &at), 0);
		assert_int_equal(e.re.ins[at].orig_offset, 4);
		ed_close(&e);
	}
}

/* try { leave L } finally { endfinally } L: ret; insert ldc.i4.0 pop before L:
 * inside the handler (HandlerEnd kept), or after it with the leave running it. */
static void test_insert_at_handler_end(void **state)
{
	struct as a = { .n = 0 };
	static uint8_t body[128];
	struct il_instr two[2] = { { .op = IL_LDC_I4_0 }, { .op = IL_POP } };
	label(&a, 0); br(&a, 0xDE, 2, 0);
	label(&a, 1); E(&a, 0xDC);
	label(&a, 2); E(&a, 0x2A);
	const struct clause c[] = { { 2, 0, 1, 1, 2, 0, 0 } };
	size_t n = put_fat(&a, 0, 1, 0, c, 1, 0, 0, body);
	for (int retarget = 0; retarget < 2; retarget++) {
		struct ed e;
		uint32_t ret_id, first, at;
		ed_open(&e, body, n);
		ret_id = e.b.eh[0].handler_end;
		first = e.b.next_id;
		assert_int_equal(il_insert(&e.b, 2, two, 2), 0);
		if (retarget) {
			assert_int_equal(il_retarget(&e.b, ret_id, first, IL_RT_HANDLER_END), 1);
			assert_int_equal(il_retarget(&e.b, ret_id, first, IL_RT_BRANCH), 1);
		}
		ed_encode(&e);
		assert_int_equal(il_index_of(&e.re, e.re.eh[0].handler_end, &at), 0);
		assert_int_equal(e.re.ins[at].op, retarget ? IL_LDC_I4_0 : IL_RET);
		assert_int_equal(e.re.ins[e.re.ins[0].arg.target].op, retarget ? IL_LDC_I4_0 : IL_RET);
		ed_close(&e);
	}
}

static void test_map_offset(void **state)
{
	static uint8_t body[256];
	struct il_instr nop[200] = { { .op = IL_NOP } };
	struct ed e;
	uint32_t m;
	ed_open(&e, body, body_short_branch(body));
	uint32_t old_ret = e.b.ins[e.b.n - 1].orig_offset, old_end = e.b.code_size;
	assert_int_equal(il_insert(&e.b, 1, nop, 200), 0);
	ed_encode(&e);
	assert_int_equal(il_map_offset(&e.b, 0, &m), 0);
	assert_int_equal(m, 0);
	assert_int_equal(il_map_offset(&e.b, old_ret, &m), 0);
	assert_int_equal(m, e.b.ins[e.b.n - 1].offset);
	assert_int_equal(m, old_ret + 200 + 3); /* 200 nops, br.s became br */
	assert_int_equal(il_map_offset(&e.b, old_end, &m), 0);
	assert_int_equal(m, e.b.code_size);
	expect_error(il_map_offset(&e.b, 1, &m), LT_E_BODY); /* inside br.s */
	ed_close(&e);
}

/* ---- Header form ---- */

/* nop ret, tiny; then 63 bytes (tiny), 64 bytes (fat), a locals token (fat). */
static void test_tiny_to_fat(void **state)
{
	struct as a = { .n = 0 };
	uint8_t body[64];
	struct il_instr nop[62] = { { .op = IL_NOP } };
	E(&a, 0x00, 0x2A);
	size_t n = put_tiny(&a, body);
	for (int grow = 0; grow < 4; grow++) {
		struct ed e;
		ed_open(&e, body, n);
		if (grow == 1 || grow == 2)
			assert_int_equal(il_insert(&e.b, 0, nop, grow == 1 ? 61 : 62), 0);
		if (grow == 3)
			e.b.local_var_sig_tok = 0x11000002;
		ed_encode(&e);
		assert_int_equal(e.out.data[0] & 3, grow < 2 ? 2 : 3);
		assert_int_equal(e.b.fat, grow >= 2);
		ed_close(&e);
	}
}

/* Adding a try/finally around a tiny body's code makes it fat with EH. */
static void test_add_eh(void **state)
{
	struct as a = { .n = 0 };
	uint8_t body[64];
	struct ed e;
	E(&a, 0x00, 0x2A);
	ed_open(&e, body, put_tiny(&a, body));
	/* nop; leave.s RET; endfinally; RET: ret */
	uint32_t first = e.b.next_id;
	struct il_instr add[2] = { { .op = IL_LEAVE_S, .arg.target = 1 }, { .op = IL_ENDFINALLY } };
	assert_int_equal(il_insert(&e.b, 1, add, 2), 0);
	struct il_eh c = { .kind = IL_EH_FINALLY, .try_start = 0, .try_end = first + 1,
			   .handler_start = first + 1, .handler_end = 1 };
	assert_int_equal(il_add_eh(&e.b, &c), 0);
	ed_encode(&e);
	assert_int_equal(e.out.data[0] & 3, 3);
	assert_int_equal(e.out.data[0] & 0x8, 0x8);
	assert_int_equal(e.re.neh, 1);
	assert_int_equal(e.re.eh[0].kind, IL_EH_FINALLY);
	assert_int_equal(e.re.ins[e.re.eh[0].handler_start].op, IL_ENDFINALLY);
	assert_int_equal(e.re.eh[0].handler_end, 3);
	ed_close(&e);
}

/* ---- maxstack ---- */

static uint32_t max_stack_of(const uint8_t *p, size_t n, int returns_value)
{
	struct il_body b;
	uint32_t m;
	decode_ok(p, n, &b);
	b.returns_value = returns_value;
	if (il_max_stack(&b, effect_cb, NULL, &m) < 0)
		fail_msg("max stack: %s", lt_error_last()->msg);
	il_body_free(&b);
	return m;
}

static void test_max_stack_handlers(void **state)
{
	struct as a = { .n = 0 };
	static uint8_t body[256];
	/* try { ldc.i4.1 pop leave L } catch { ldc.i4.1 ldc.i4.2 add pop pop leave L }: 3 in the handler */
	label(&a, 0); E(&a, 0x17, 0x26); br(&a, 0xDE, 2, 0);
	label(&a, 1); E(&a, 0x17, 0x18, 0x58, 0x26, 0x26); br(&a, 0xDE, 2, 0);
	label(&a, 2); E(&a, 0x2A);
	const struct clause cc[] = { { 0, 0, 1, 1, 2, 0, 0x01000002 } };
	assert_int_equal(max_stack_of(body, put_fat(&a, 0, 1, 0, cc, 1, 0, 0, body), 0), 3);

	/* try { leave L } filter { ldc.i4.1 cgt.un endfilter } { pop leave L }: 2 in the filter */
	memset(&a, 0, sizeof a);
	label(&a, 0); br(&a, 0xDE, 3, 0);
	label(&a, 1); E(&a, 0x17, 0xFE, 0x03, 0xFE, 0x11);
	label(&a, 2); E(&a, 0x26); br(&a, 0xDE, 3, 0);
	label(&a, 3); E(&a, 0x2A);
	const struct clause cf[] = { { 1, 0, 1, 2, 3, 1, 0 } };
	assert_int_equal(max_stack_of(body, put_fat(&a, 0, 1, 0, cf, 1, 0, 0, body), 0), 2);

	/* try { leave L } finally { ldc.i4.1 pop endfinally } L: ldc.i4.1 ret: 1 */
	memset(&a, 0, sizeof a);
	label(&a, 0); br(&a, 0xDE, 2, 0);
	label(&a, 1); E(&a, 0x17, 0x26, 0xDC);
	label(&a, 2); E(&a, 0x17, 0x2A);
	const struct clause cl[] = { { 2, 0, 1, 1, 2, 0, 0 } };
	assert_int_equal(max_stack_of(body, put_fat(&a, 0, 1, 0, cl, 1, 0, 0, body), 1), 1);
}

/* Calls ask the callback; maxstack written is never lower than the input's. */
static void test_max_stack_calls_and_input(void **state)
{
	struct as a = { .n = 0 };
	static uint8_t body[128];
	struct ed e;
	int calls = 0;
	uint32_t m;
	/* ldc.i4.1 ldc.i4.2 ldc.i4.3 call(pops 3, pushes 1) newobj(pops 0, pushes 1) pop ret */
	E(&a, 0x17, 0x18, 0x19, 0x28); e32(&a, 0x0A000103);
	E(&a, 0x73); e32(&a, 0x0A000100);
	E(&a, 0x26, 0x2A);
	ed_open(&e, body, put_fat(&a, 0, 50, 0, NULL, 0, 0, 0, body));
	e.b.returns_value = 1;
	assert_int_equal(il_max_stack(&e.b, effect_cb, &calls, &m), 0);
	assert_int_equal(m, 3);
	assert_int_equal(calls, 2);
	ed_encode(&e);
	assert_int_equal(e.b.max_stack, 50);
	assert_int_equal(e.re.max_stack, 50);
	/* Without a callback, a call cannot be counted. */
	expect_error(il_max_stack(&e.b, NULL, NULL, &m), LT_E_ENCODE);
	ed_close(&e);
}

/* Nine ldnull then nine pop in a tiny body: max stack 9 needs a fat header. */
static void test_max_stack_grows_fat(void **state)
{
	struct as a = { .n = 0 };
	uint8_t body[64];
	struct ed e;
	struct il_instr push[9], pop[9];
	E(&a, 0x2A);
	ed_open(&e, body, put_tiny(&a, body));
	for (int k = 0; k < 9; k++) {
		push[k] = (struct il_instr){ .op = IL_LDNULL };
		pop[k] = (struct il_instr){ .op = IL_POP };
	}
	assert_int_equal(il_insert(&e.b, 0, push, 9), 0);
	assert_int_equal(il_insert(&e.b, 9, pop, 9), 0);
	ed_encode(&e);
	assert_int_equal(e.b.fat, 1);
	assert_int_equal(e.re.max_stack, 9);
	ed_close(&e);
}

static void expect_stack_error(const uint8_t *code, size_t n, int code_expected)
{
	struct as a = { .n = 0 };
	uint8_t body[64];
	struct il_body b;
	uint32_t m;
	emit(&a, code, n);
	decode_ok(body, put_tiny(&a, body), &b);
	expect_error(il_max_stack(&b, effect_cb, NULL, &m), code_expected);
	il_body_free(&b);
}

static void test_stack_underflow(void **state)
{
	expect_stack_error((const uint8_t[]){ 0x17, 0x58, 0x2A }, 3, LT_E_BODY); /* ldc.i4.1 add */
}

static void test_stack_join_mismatch(void **state)
{
	/* ldarg.0 brtrue.s L; ldc.i4.1; L: ret -- depths 1 and 0 meet at L */
	expect_stack_error((const uint8_t[]){ 0x02, 0x2D, 0x01, 0x17, 0x2A }, 5, LT_E_BODY);
}

static void test_stack_falls_off_end(void **state)
{
	expect_stack_error((const uint8_t[]){ 0x00, 0x00 }, 2, LT_E_BODY);
}

/* ---- EH order ---- */

/* Clauses given outer first are written inner first (I.12.4.2.5). */
static void test_eh_inner_first(void **state)
{
	struct as a = { .n = 0 };
	static uint8_t body[256];
	struct ed e;
	asm_nested(&a);
	E(&a, 0x2A);
	const struct clause c[] = { { 2, 0, 3, 3, 4, 0, 0 }, { 0, 0, 1, 1, 2, 0, 0x01000002 } };
	ed_open(&e, body, put_fat(&a, 0, 1, 0, c, 2, 0, 0, body));
	assert_int_equal(e.b.eh[0].kind, IL_EH_FINALLY);
	ed_encode(&e);
	assert_int_equal(e.re.eh[0].kind, IL_EH_CATCH);
	assert_int_equal(e.re.eh[1].kind, IL_EH_FINALLY);
	ed_close(&e);
}

/* ---- Encoding errors ---- */

static void test_encode_removed_target(void **state)
{
	static uint8_t body[256];
	struct ed e;
	ed_open(&e, body, body_short_branch(body));
	assert_int_equal(il_remove(&e.b, e.b.n - 1, 1), 0); /* the br.s target */
	expect_error(il_encode(&e.b, effect_cb, NULL, &e.out), LT_E_ENCODE);
	expect_error(il_remove(&e.b, e.b.n, 1), LT_E_ENCODE);
	ed_close(&e);
}

static void test_encode_bad_clause(void **state)
{
	static uint8_t body[128];
	struct ed e;
	ed_open(&e, body, body_try_catch(body));
	e.b.eh[0].try_end = e.b.eh[0].try_start; /* empty try block */
	expect_error(il_encode(&e.b, effect_cb, NULL, &e.out), LT_E_ENCODE);
	ed_close(&e);
}

/* ---- Malformed bodies: one test per failure path ---- */

/* Raw bytes; or (bytes NULL) the try/catch body with byte `at` set to `value`,
 * `at` counted from the fat header (hdr) or from the EH section (!hdr), and
 * cut to `cut` bytes when cut > 0.  size_too: il_body_size fails as well. */
struct bad {
	const char *name;
	const uint8_t *bytes;
	size_t len;
	int hdr, at, value;
	size_t cut;
	int code, size_too;
};

#define RAW(...) (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ })
static struct bad bad_cases[] = {
	{ "bad: header kind 1", RAW(0x01, 0x2A), 0, -1, 0, 0, LT_E_BODY, 1 },
	{ "bad: header kind 0", RAW(0x00, 0x2A), 0, -1, 0, 0, LT_E_BODY, 1 },
	{ "bad: empty input", (const uint8_t[]){ 0 }, 0, 0, -1, 0, 0, LT_E_BODY, 1 },
	{ "bad: truncated fat header", NULL, 0, 1, -1, 0, 5, LT_E_BODY, 1 },
	{ "bad: fat header of 4 dwords", NULL, 0, 1, 1, 0x40, 0, LT_E_BODY, 1 },
	{ "bad: fat header unknown flag", NULL, 0, 1, 0, 0x0F, 0, LT_E_BODY, 1 },
	{ "bad: code size 0", RAW(0x02), 0, -1, 0, 0, LT_E_BODY, 1 },
	{ "bad: code size past the end", RAW(0x0E, 0x00, 0x00), 0, -1, 0, 0, LT_E_BODY, 1 },
	{ "bad: code size over the limit", RAW(0x03, 0x30, 8, 0, 0x01, 0, 0, 0x01, 0, 0, 0, 0),
	  0, -1, 0, 0, LT_E_LIMIT, 1 },
	{ "bad: opcode 0x24", RAW(0x0A, 0x24, 0x2A), 0, -1, 0, 0, LT_E_BODY, 0 },
	{ "bad: opcode 0xFE08", RAW(0x0A, 0xFE, 0x08), 0, -1, 0, 0, LT_E_BODY, 0 },
	{ "bad: truncated ldc.i4", RAW(0x0A, 0x20, 0x01), 0, -1, 0, 0, LT_E_BODY, 0 },
	{ "bad: lone 0xFE", RAW(0x06, 0xFE), 0, -1, 0, 0, LT_E_BODY, 0 },
	{ "bad: truncated switch table", RAW(0x16, 0x45, 0x02, 0, 0, 0, 0), 0, -1, 0, 0, LT_E_BODY, 0 },
	{ "bad: branch into an operand", RAW(0x1E, 0x20, 0, 0, 0, 0, 0x2B, 0xFC), 0, -1, 0, 0, LT_E_BODY, 0 },
	{ "bad: switch target inside itself", RAW(0x2A, 0x16, 0x45, 1, 0, 0, 0, 0xFD, 0xFF, 0xFF, 0xFF, 0x2A),
	  0, -1, 0, 0, LT_E_BODY, 0 },
	{ "bad: branch to the end", RAW(0x0A, 0x2B, 0x00), 0, -1, 0, 0, LT_E_BODY, 0 },
	{ "bad: branch before the start", RAW(0x0A, 0x2B, 0x80), 0, -1, 0, 0, LT_E_BODY, 0 },
	{ "bad: EH handler past the code", NULL, 0, 0, 4 + 7, 0x40, 0, LT_E_BODY, 0 },
	{ "bad: EH try end inside an instruction", NULL, 0, 0, 4 + 4, 2, 0, LT_E_BODY, 0 },
	{ "bad: EH empty try block", NULL, 0, 0, 4 + 4, 0, 0, LT_E_BODY, 0 },
	{ "bad: EH clause flags 3", NULL, 0, 0, 4, 3, 0, LT_E_BODY, 0 },
	{ "bad: EH DataSize not 4 + 12n", NULL, 0, 0, 1, 15, 0, LT_E_BODY, 1 },
	{ "bad: section not an EH table", NULL, 0, 0, 0, 0x02, 0, LT_E_BODY, 1 },
};

static void test_malformed(void **state)
{
	const struct bad *c = *state;
	static uint8_t body[128];
	struct il_body b;
	size_t n = c->len;
	uint32_t size;

	if (c->bytes) {
		memcpy(body, c->bytes, n);
	} else {
		n = body_try_catch(body);
		size_t sect = (12 + body[4] + 3) & ~(size_t)3;
		if (c->at >= 0)
			body[(c->hdr ? 0 : sect) + (size_t)c->at] = (uint8_t)c->value;
		if (c->cut)
			n = c->cut;
	}
	expect_error(il_decode(body, n, &b), c->code);
	if (c->size_too)
		expect_error(il_body_size(body, n, &size), c->code);
	else
		assert_int_equal(il_body_size(body, n, &size), 0);
}

/* A cut anywhere in the EH section. */
static void test_eh_truncated_section(void **state)
{
	static uint8_t body[128];
	size_t n = body_try_catch(body);
	uint32_t size;
	for (size_t cut = 12 + body[4]; cut < n; cut++) {
		expect_decode_error(body, cut, LT_E_BODY);
		expect_error(il_body_size(body, cut, &size), LT_E_BODY);
	}
}

static void test_edit_errors(void **state)
{
	static uint8_t body[128];
	size_t n = body_try_catch(body);
	struct il_body b;
	struct il_instr bad = { .op = IL_OP_COUNT };
	uint32_t at;
	decode_ok(body, n, &b);
	expect_error(il_insert(&b, b.n + 1, &bad, 0), LT_E_ENCODE);
	expect_error(il_insert(&b, 0, &bad, 1), LT_E_ENCODE);
	expect_error(il_index_of(&b, 999, &at), LT_E_ENCODE);
	il_body_free(&b);
	il_body_free(NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opcode_table),
		cmocka_unit_test(test_opcode_unknown),
		cmocka_unit_test(test_rt_tiny),
		cmocka_unit_test(test_rt_fat_all_operands),
		cmocka_unit_test(test_code_cut_everywhere),
		cmocka_unit_test(test_rt_small_eh_kinds),
		cmocka_unit_test(test_rt_fat_eh),
		cmocka_unit_test(test_multi_section),
		cmocka_unit_test(test_branch_widen_and_shrink),
		cmocka_unit_test(test_branch_backward_and_new),
		cmocka_unit_test(test_insert_at_try_end),
		cmocka_unit_test(test_insert_at_handler_end),
		cmocka_unit_test(test_map_offset),
		cmocka_unit_test(test_tiny_to_fat),
		cmocka_unit_test(test_add_eh),
		cmocka_unit_test(test_max_stack_handlers),
		cmocka_unit_test(test_max_stack_calls_and_input),
		cmocka_unit_test(test_max_stack_grows_fat),
		cmocka_unit_test(test_stack_underflow),
		cmocka_unit_test(test_stack_join_mismatch),
		cmocka_unit_test(test_stack_falls_off_end),
		cmocka_unit_test(test_eh_inner_first),
		cmocka_unit_test(test_encode_removed_target),
		cmocka_unit_test(test_encode_bad_clause),
		cmocka_unit_test(test_eh_truncated_section),
		cmocka_unit_test(test_edit_errors),
	};
	size_t nfixed = sizeof tests / sizeof *tests, nbad = sizeof bad_cases / sizeof *bad_cases;
	struct CMUnitTest all[sizeof tests / sizeof *tests + sizeof bad_cases / sizeof *bad_cases];

	memcpy(all, tests, sizeof tests);
	for (size_t k = 0; k < nbad; k++)
		all[nfixed + k] = (struct CMUnitTest){ bad_cases[k].name, test_malformed, NULL, NULL, &bad_cases[k] };
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return _cmocka_run_group_tests("il", all, nfixed + nbad, NULL, NULL);
}
