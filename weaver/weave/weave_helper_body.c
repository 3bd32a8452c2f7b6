/* weave_helper_body.c - the IL of the helper's fixed methods: .cctor, the per-thread record, the report. */
#include "weave_helper_int.h"
#include "lt_mem.h"
#include "lt_error.h"
#include "sig.h"

#include <stdio.h>

/* NumberStyles.Float (leading/trailing white, leading sign, decimal point,
 * exponent): how LOCKTIME_THRESHOLD_MS is parsed. */
#define NUMBERSTYLES_FLOAT 0xA7

/* Locals of the frame searches (Pop, PopScope, Shift share the first four). */
enum { L_I, L_D, L_F, L_T, L_M, L_LOC, L_HOLD, L_WAIT, L_S };

static uint32_t fld(const struct weave_helper *h, enum hfield f) { return h->field[f]; }
static uint32_t ref(const struct weave_helper *h, enum wref_member m) { return h->refs.member[m]; }

/* Push array local `arr` and the index idx * width + k: ready for ldelem/stelem. */
static void slot(struct em *e, uint32_t arr, uint32_t idx, int32_t width, int32_t k)
{
	em_ldloc(e, arr);
	em_ldloc(e, idx);
	em_i4(e, width);
	em_op(e, IL_MUL);
	if (k) {
		em_i4(e, k);
		em_op(e, IL_ADD);
	}
}

/* Console.Error.WriteLine("LockTime: warning: " + name + "=" + <local 0> + rest):
 * the one line a LOCKTIME_* variable LockTime cannot take gets. */
static void emit_setting_warning(struct weave_helper *h, struct em *e, const char *name, const char *rest)
{
	char head[64];

	snprintf(head, sizeof head, "LockTime: warning: %s=", name);
	em_tok(e, IL_CALL, ref(h, WM_CONSOLE_ERROR));
	em_i4(e, 3);
	em_tok(e, IL_NEWARR, h->refs.type[WT_STRING]);
	for (int k = 0; k < 3; k++) {
		em_op(e, IL_DUP);
		em_i4(e, k);
		if (k == 1)
			em_ldloc(e, 0);
		else
			weave_helper_ldstr(h, e, k == 0 ? head : rest);
		em_op(e, IL_STELEM_REF);
	}
	em_tok(e, IL_CALL, ref(h, WM_STRING_CONCAT));
	em_tok(e, IL_CALLVIRT, ref(h, WM_WRITELINE));
}

/* Disabled = LOCKTIME_DISABLED (local 0) is 1, true, yes or on, in any case;
 * unset, empty, 0, false, no, off leave it false; anything else warns. */
static void emit_disabled(struct weave_helper *h, struct em *e)
{
	static const char *const words[2][4] = { { "1", "TRUE", "YES", "ON" }, { "0", "FALSE", "NO", "OFF" } };
	uint32_t yes = em_label(e), no = em_label(e), done = em_label(e);

	weave_helper_ldstr(h, e, "LOCKTIME_DISABLED");
	em_tok(e, IL_CALL, ref(h, WM_GETENV));
	em_stloc(e, 0);
	em_ldloc(e, 0);
	em_tok(e, IL_CALL, ref(h, WM_STRING_ISNULLOREMPTY));
	em_br(e, IL_BRTRUE, done);
	/* the upper-cased value stays on the stack through the comparisons */
	em_ldloc(e, 0);
	em_tok(e, IL_CALLVIRT, ref(h, WM_STRING_TOUPPER));
	for (int v = 0; v < 2; v++)
		for (int k = 0; k < 4; k++) {
			em_op(e, IL_DUP);
			weave_helper_ldstr(h, e, words[v][k]);
			em_tok(e, IL_CALL, ref(h, WM_STRING_EQUALS));
			em_br(e, IL_BRTRUE, v == 0 ? yes : no);
		}
	em_op(e, IL_POP);
	emit_setting_warning(h, e, "LOCKTIME_DISABLED", " is not 1, true, yes, on, 0, false, no or off: timing stays on");
	em_br(e, IL_BR, done);
	em_mark(e, yes);
	em_op(e, IL_POP);
	em_i4(e, 1);
	em_tok(e, IL_STSFLD, fld(h, HF_DISABLED));
	em_br(e, IL_BR, done);
	em_mark(e, no);
	em_op(e, IL_POP);
	em_mark(e, done);
}

/* .cctor: read the environment once (docs/weaving.md). Locals: 0 string s,
 * 1 float64 parsed, 2 float64 ms. */
static void emit_cctor(struct weave_helper *h, struct em *e)
{
	uint32_t keep_baked = em_label(e), bad_threshold = em_label(e), have_output = em_label(e), sink = em_label(e);
	uint32_t is_stdout = em_label(e);
	char rest[160];

	emit_disabled(h, e);

	/* ms = baked; an override parses with InvariantCulture and lies in [0, max] (NaN fails both tests) */
	em_r8(e, h->threshold_ms);
	em_stloc(e, 2);
	weave_helper_ldstr(h, e, "LOCKTIME_THRESHOLD_MS");
	em_tok(e, IL_CALL, ref(h, WM_GETENV));
	em_stloc(e, 0);
	em_ldloc(e, 0);
	em_tok(e, IL_CALL, ref(h, WM_STRING_ISNULLOREMPTY));
	em_br(e, IL_BRTRUE, keep_baked);
	em_ldloc(e, 0);
	em_i4(e, NUMBERSTYLES_FLOAT);
	em_tok(e, IL_CALL, ref(h, WM_INVARIANT));
	em_ldloca(e, 1);
	em_tok(e, IL_CALL, ref(h, WM_DOUBLE_TRYPARSE));
	em_br(e, IL_BRFALSE, bad_threshold);
	em_ldloc(e, 1);
	em_r8(e, 0.0);
	em_br(e, IL_BLT_UN, bad_threshold);
	em_ldloc(e, 1);
	em_r8(e, HELPER_THRESHOLD_MS_MAX);
	em_br(e, IL_BGT_UN, bad_threshold);
	em_ldloc(e, 1);
	em_stloc(e, 2);
	em_br(e, IL_BR, keep_baked);
	em_mark(e, bad_threshold);
	snprintf(rest, sizeof rest, " is not a number of milliseconds from 0 to %.0f: the threshold stays %g ms",
		 HELPER_THRESHOLD_MS_MAX, h->threshold_ms);
	emit_setting_warning(h, e, "LOCKTIME_THRESHOLD_MS", rest);
	em_mark(e, keep_baked);
	/* Threshold = (long)(ms * Stopwatch.Frequency / 1000.0) */
	em_ldloc(e, 2);
	hbody_frequency_r8(h, e);
	em_op(e, IL_MUL);
	em_r8(e, 1000.0);
	em_op(e, IL_DIV);
	em_op(e, IL_CONV_I8);
	em_tok(e, IL_STSFLD, fld(h, HF_THRESHOLD));

	/* Output = LOCKTIME_OUTPUT unless unset or empty - stdout and stderr in
	 * any case name the consoles - else the baked sink (the weaver wrote it so) */
	weave_helper_ldstr(h, e, "LOCKTIME_OUTPUT");
	em_tok(e, IL_CALL, ref(h, WM_GETENV));
	em_stloc(e, 0);
	em_ldloc(e, 0);
	em_tok(e, IL_CALL, ref(h, WM_STRING_ISNULLOREMPTY));
	em_br(e, IL_BRFALSE, have_output);
	weave_helper_ldstr(h, e, h->output);
	em_stloc(e, 0);
	em_br(e, IL_BR, sink);
	em_mark(e, have_output);
	em_ldloc(e, 0);
	em_tok(e, IL_CALLVIRT, ref(h, WM_STRING_TOUPPER));
	em_op(e, IL_DUP);
	weave_helper_ldstr(h, e, "STDOUT");
	em_tok(e, IL_CALL, ref(h, WM_STRING_EQUALS));
	em_br(e, IL_BRTRUE, is_stdout);
	weave_helper_ldstr(h, e, "STDERR");
	em_tok(e, IL_CALL, ref(h, WM_STRING_EQUALS));
	em_br(e, IL_BRFALSE, sink);
	weave_helper_ldstr(h, e, "stderr");
	em_stloc(e, 0);
	em_br(e, IL_BR, sink);
	em_mark(e, is_stdout);
	em_op(e, IL_POP);
	weave_helper_ldstr(h, e, "stdout");
	em_stloc(e, 0);
	em_mark(e, sink);
	em_ldloc(e, 0);
	em_tok(e, IL_STSFLD, fld(h, HF_OUTPUT));

	em_tok(e, IL_NEWOBJ, ref(h, WM_OBJECT_CTOR));
	em_tok(e, IL_STSFLD, fld(h, HF_GATE));
	em_op(e, IL_RET);
}

/* Push(object lock, string method, string location, long acquiredAt, long
 * wait): record a frame.  Each [ThreadStatic] field is read once (every
 * access is a thread-local lookup); Grow allocates the arrays on the
 * thread's first lock and doubles them when full.
 * Locals: 0 int d, 1 object[] f, 2 long[] t. */
static void emit_push(struct weave_helper *h, struct em *e)
{
	uint32_t grow = em_label(e), room = em_label(e);

	em_tok(e, IL_LDSFLD, fld(h, HF_FRAMES));
	em_stloc(e, 1);
	em_tok(e, IL_LDSFLD, fld(h, HF_DEPTH));
	em_stloc(e, 0);
	/* if (f == null || (d + 1) * 3 > f.Length) { Grow(); f = Frames; } */
	em_ldloc(e, 1);
	em_br(e, IL_BRFALSE, grow);
	em_ldloc(e, 0);
	em_i4(e, 1);
	em_op(e, IL_ADD);
	em_i4(e, FRAME_OBJS);
	em_op(e, IL_MUL);
	em_ldloc(e, 1);
	em_op(e, IL_LDLEN);
	em_op(e, IL_CONV_I4);
	em_br(e, IL_BLE, room);
	em_mark(e, grow);
	em_tok(e, IL_CALL, h->method[HM_GROW]);
	em_tok(e, IL_LDSFLD, fld(h, HF_FRAMES));
	em_stloc(e, 1);
	em_mark(e, room);
	em_tok(e, IL_LDSFLD, fld(h, HF_TIMES));
	em_stloc(e, 2);
	for (int32_t k = 0; k < FRAME_OBJS; k++) { /* f[d*3+k] = arg k */
		slot(e, 1, 0, FRAME_OBJS, k);
		em_ldarg(e, (uint32_t)k);
		em_op(e, IL_STELEM_REF);
	}
	for (int32_t k = 0; k < FRAME_TIMES; k++) { /* t[d*2+k] = arg 3+k */
		slot(e, 2, 0, FRAME_TIMES, k);
		em_ldarg(e, (uint32_t)(FRAME_OBJS + k));
		em_op(e, IL_STELEM_I8);
	}
	em_ldloc(e, 0);
	em_i4(e, 1);
	em_op(e, IL_ADD);
	em_tok(e, IL_STSFLD, fld(h, HF_DEPTH));
	em_op(e, IL_RET);
}

/* Copy the static array `from` into local array `to` (local i counts). */
static void copy_array(struct weave_helper *h, struct em *e, enum hfield from, uint32_t to, uint32_t i,
		       enum il_op ldelem, enum il_op stelem)
{
	uint32_t loop = em_label(e), test = em_label(e);

	em_i4(e, 0);
	em_stloc(e, i);
	em_br(e, IL_BR, test);
	em_mark(e, loop);
	em_ldloc(e, to);
	em_ldloc(e, i);
	em_tok(e, IL_LDSFLD, fld(h, from));
	em_ldloc(e, i);
	em_op(e, ldelem);
	em_op(e, stelem);
	em_ldloc(e, i);
	em_i4(e, 1);
	em_op(e, IL_ADD);
	em_stloc(e, i);
	em_mark(e, test);
	em_ldloc(e, i);
	em_tok(e, IL_LDSFLD, fld(h, from));
	em_op(e, IL_LDLEN);
	em_op(e, IL_CONV_I4);
	em_br(e, IL_BLT, loop);
}

/* Grow(): allocate Frames and Times (FRAMES_INITIAL frames) when the
 * thread has none, else double them.  Locals: 0 object[] f, 1 long[] t, 2 int i. */
static void emit_grow(struct weave_helper *h, struct em *e)
{
	static const struct { enum hfield field; enum wref_type elem; enum il_op ld, st; int32_t width; } arrays[2] = {
		{ HF_FRAMES, WT_OBJECT, IL_LDELEM_REF, IL_STELEM_REF, FRAME_OBJS },
		{ HF_TIMES, WT_INT64, IL_LDELEM_I8, IL_STELEM_I8, FRAME_TIMES },
	};
	uint32_t have = em_label(e);

	em_tok(e, IL_LDSFLD, fld(h, HF_FRAMES));
	em_br(e, IL_BRTRUE, have);
	for (uint32_t a = 0; a < 2; a++) {
		em_i4(e, FRAMES_INITIAL * arrays[a].width);
		em_tok(e, IL_NEWARR, h->refs.type[arrays[a].elem]);
		em_tok(e, IL_STSFLD, fld(h, arrays[a].field));
	}
	em_op(e, IL_RET);
	em_mark(e, have);
	for (uint32_t a = 0; a < 2; a++) {
		em_tok(e, IL_LDSFLD, fld(h, arrays[a].field));
		em_op(e, IL_LDLEN);
		em_op(e, IL_CONV_I4);
		em_i4(e, 2);
		em_op(e, IL_MUL);
		em_tok(e, IL_NEWARR, h->refs.type[arrays[a].elem]);
		em_stloc(e, a);
		copy_array(h, e, arrays[a].field, a, 2, arrays[a].ld, arrays[a].st);
	}
	for (uint32_t a = 0; a < 2; a++) {
		em_ldloc(e, a);
		em_tok(e, IL_STSFLD, fld(h, arrays[a].field));
	}
	em_op(e, IL_RET);
}

/* Set L_I to the innermost frame whose object matches, else go to `none`.
 * lock_token 0: the object is arg 0 (by reference); else: the object is
 * an instance of lock_token (isinst, III.4.6). */
static void emit_find(struct weave_helper *h, struct em *e, uint32_t lock_token, uint32_t none)
{
	uint32_t next = em_label(e);

	em_tok(e, IL_LDSFLD, fld(h, HF_FRAMES));
	em_stloc(e, L_F);
	em_ldloc(e, L_F);
	em_br(e, IL_BRFALSE, none);
	em_tok(e, IL_LDSFLD, fld(h, HF_TIMES));
	em_stloc(e, L_T);
	em_tok(e, IL_LDSFLD, fld(h, HF_DEPTH));
	em_stloc(e, L_D);
	em_ldloc(e, L_D);
	em_stloc(e, L_I);
	em_mark(e, next);
	em_ldloc(e, L_I);
	em_i4(e, 1);
	em_op(e, IL_SUB);
	em_stloc(e, L_I);
	em_ldloc(e, L_I);
	em_i4(e, 0);
	em_br(e, IL_BLT, none);
	slot(e, L_F, L_I, FRAME_OBJS, 0);
	em_op(e, IL_LDELEM_REF);
	if (lock_token) {
		em_tok(e, IL_ISINST, lock_token);
		em_br(e, IL_BRFALSE, next);
	} else {
		em_ldarg(e, 0);
		em_br(e, IL_BNE_UN, next);
	}
}

/* for (s = i * width; s < d * width; s++) arr[s] = arr[s + width];
 * moves the frames above frame i down by one (d is the new depth). */
static void shift_down(struct em *e, uint32_t arr, int32_t width, enum il_op ldelem, enum il_op stelem)
{
	uint32_t loop = em_label(e), test = em_label(e);

	em_ldloc(e, L_I);
	em_i4(e, width);
	em_op(e, IL_MUL);
	em_stloc(e, L_S);
	em_br(e, IL_BR, test);
	em_mark(e, loop);
	em_ldloc(e, arr);
	em_ldloc(e, L_S);
	em_ldloc(e, arr);
	em_ldloc(e, L_S);
	em_i4(e, width);
	em_op(e, IL_ADD);
	em_op(e, ldelem);
	em_op(e, stelem);
	em_ldloc(e, L_S);
	em_i4(e, 1);
	em_op(e, IL_ADD);
	em_stloc(e, L_S);
	em_mark(e, test);
	em_ldloc(e, L_S);
	em_ldloc(e, L_D);
	em_i4(e, width);
	em_op(e, IL_MUL);
	em_br(e, IL_BLT, loop);
}

/* Pop(object lock) / PopScope(): remove the innermost frame of the lock (for
 * PopScope, of a System.Threading.Lock), shifting the frames above it down
 * and clearing the freed slots, then report when hold or wait reached the
 * threshold.  No frame: nothing happens. */
static void emit_pop(struct weave_helper *h, struct em *e, uint32_t lock_token)
{
	uint32_t done = em_label(e), names = em_label(e), removed = em_label(e);

	emit_find(h, e, lock_token, done);
	em_tok(e, IL_CALL, ref(h, WM_GETTIMESTAMP));
	slot(e, L_T, L_I, FRAME_TIMES, 0);
	em_op(e, IL_LDELEM_I8);
	em_op(e, IL_SUB);
	em_stloc(e, L_HOLD);
	slot(e, L_T, L_I, FRAME_TIMES, 1);
	em_op(e, IL_LDELEM_I8);
	em_stloc(e, L_WAIT);
	/* The site's strings are read only for a report (L_M stays null otherwise). */
	em_ldloc(e, L_HOLD);
	em_tok(e, IL_LDSFLD, fld(h, HF_THRESHOLD));
	em_br(e, IL_BGE, names);
	em_ldloc(e, L_WAIT);
	em_tok(e, IL_LDSFLD, fld(h, HF_THRESHOLD));
	em_br(e, IL_BLT, removed);
	em_mark(e, names);
	slot(e, L_F, L_I, FRAME_OBJS, 1);
	em_op(e, IL_LDELEM_REF);
	em_tok(e, IL_CASTCLASS, h->refs.type[WT_STRING]);
	em_stloc(e, L_M);
	slot(e, L_F, L_I, FRAME_OBJS, 2);
	em_op(e, IL_LDELEM_REF);
	em_tok(e, IL_CASTCLASS, h->refs.type[WT_STRING]);
	em_stloc(e, L_LOC);
	em_mark(e, removed);
	em_ldloc(e, L_D);
	em_i4(e, 1);
	em_op(e, IL_SUB);
	em_stloc(e, L_D);
	shift_down(e, L_F, FRAME_OBJS, IL_LDELEM_REF, IL_STELEM_REF);
	shift_down(e, L_T, FRAME_TIMES, IL_LDELEM_I8, IL_STELEM_I8);
	for (int32_t k = 0; k < FRAME_OBJS; k++) {
		slot(e, L_F, L_D, FRAME_OBJS, k);
		em_op(e, IL_LDNULL);
		em_op(e, IL_STELEM_REF);
	}
	em_ldloc(e, L_D);
	em_tok(e, IL_STSFLD, fld(h, HF_DEPTH));
	em_ldloc(e, L_M);
	em_br(e, IL_BRFALSE, done);
	em_ldloc(e, L_M);
	em_ldloc(e, L_LOC);
	em_ldloc(e, L_HOLD);
	em_ldloc(e, L_WAIT);
	em_tok(e, IL_CALL, h->method[HM_REPORT]);
	em_mark(e, done);
	em_op(e, IL_RET);
}

static void emit_pop_object(struct weave_helper *h, struct em *e) { emit_pop(h, e, 0); }

/* Shift(object lock, long ticks): the innermost frame of the lock was
 * acquired `ticks` later (time spent in Monitor.Wait is not holding). */
static void emit_shift(struct weave_helper *h, struct em *e)
{
	uint32_t done = em_label(e);

	emit_find(h, e, 0, done);
	slot(e, L_T, L_I, FRAME_TIMES, 0);
	slot(e, L_T, L_I, FRAME_TIMES, 0);
	em_op(e, IL_LDELEM_I8);
	em_ldarg(e, 1);
	em_op(e, IL_ADD);
	em_op(e, IL_STELEM_I8);
	em_mark(e, done);
	em_op(e, IL_RET);
}

/* One piece of a report line: literal text, or argument `arg` (as
 * milliseconds through Ms when `ms`). */
struct piece {
	const char *text;
	uint8_t arg;
	uint8_t ms;
};

/* Report(string method, string location, long hold, long wait). */
static const struct piece held_line[] = {
	{ "LockTime: ", 0, 0 }, { NULL, 0, 0 }, { " held ", 0, 0 }, { NULL, 2, 1 },
	{ " ms, waited ", 0, 0 }, { NULL, 3, 1 }, { " ms at ", 0, 0 }, { NULL, 1, 0 },
};
/* ReportNotAcquired(string method, string location, long wait). */
static const struct piece failed_line[] = {
	{ "LockTime: ", 0, 0 }, { NULL, 0, 0 }, { " waited ", 0, 0 }, { NULL, 2, 1 },
	{ " ms, not acquired at ", 0, 0 }, { NULL, 1, 0 },
};

void hbody_frequency_r8(struct weave_helper *h, struct em *e)
{
	if (h->refs.clock_hz) {
		em_r8(e, (double)h->refs.clock_hz);
	} else {
		em_tok(e, IL_LDSFLD, ref(h, WM_FREQUENCY));
		em_op(e, IL_CONV_R8);
	}
}

/* if (Reporting || Output == null) return; Reporting = true;
 * try { Write(String.Concat(new string[] { pieces })); } finally { Reporting = false; }
 * Reporting (per thread) drops the reports of locks that writing a report
 * takes itself - they would report again, without end, when the woven
 * assembly is the framework (Console's writer is a Synchronized method);
 * Output is null while the .cctor runs (its own calls may take locks). */
static void emit_line(struct weave_helper *h, struct em *e, const struct piece *p, int32_t n)
{
	uint32_t out = em_label(e), try_start = em_label(e), handler = em_label(e);

	em_tok(e, IL_LDSFLD, fld(h, HF_REPORTING));
	em_br(e, IL_BRTRUE, out);
	em_tok(e, IL_LDSFLD, fld(h, HF_OUTPUT));
	em_br(e, IL_BRFALSE, out);
	em_i4(e, 1);
	em_tok(e, IL_STSFLD, fld(h, HF_REPORTING));
	em_mark(e, try_start);
	em_i4(e, n);
	em_tok(e, IL_NEWARR, h->refs.type[WT_STRING]);
	for (int32_t k = 0; k < n; k++) {
		em_op(e, IL_DUP);
		em_i4(e, k);
		if (p[k].text) {
			weave_helper_ldstr(h, e, p[k].text);
		} else {
			em_ldarg(e, p[k].arg);
			if (p[k].ms)
				em_tok(e, IL_CALL, h->method[HM_MS]);
		}
		em_op(e, IL_STELEM_REF);
	}
	em_tok(e, IL_CALL, ref(h, WM_STRING_CONCAT));
	em_tok(e, IL_CALL, h->method[HM_WRITE]);
	em_br(e, IL_LEAVE, out);
	em_mark(e, handler);
	em_i4(e, 0);
	em_tok(e, IL_STSFLD, fld(h, HF_REPORTING));
	em_op(e, IL_ENDFINALLY);
	em_mark(e, out);
	em_op(e, IL_RET);
	em_eh(e, &(struct em_eh){ IL_EH_FINALLY, try_start, handler, handler, out, 0 });
}

static void emit_report(struct weave_helper *h, struct em *e)
{
	emit_line(h, e, held_line, sizeof held_line / sizeof held_line[0]);
}

static void emit_report_failed(struct weave_helper *h, struct em *e)
{
	emit_line(h, e, failed_line, sizeof failed_line / sizeof failed_line[0]);
}

/* Ms(long ticks): (ticks * 1000.0 / Stopwatch.Frequency).ToString("F3",
 * InvariantCulture).  Local: 0 float64. */
static void emit_ms(struct weave_helper *h, struct em *e)
{
	em_ldarg(e, 0);
	em_op(e, IL_CONV_R8);
	em_r8(e, 1000.0);
	em_op(e, IL_MUL);
	hbody_frequency_r8(h, e);
	em_op(e, IL_DIV);
	em_stloc(e, 0);
	em_ldloca(e, 0);
	weave_helper_ldstr(h, e, "F3");
	em_tok(e, IL_CALL, ref(h, WM_INVARIANT));
	em_tok(e, IL_CALL, ref(h, WM_DOUBLE_TOSTRING));
	em_op(e, IL_RET);
}

/* Write(string line): "stderr" / "stdout" through Console, else append to
 * the file under lock(Gate); any exception is swallowed so that timing
 * never breaks the program.  Local: 0 bool taken. */
static void emit_write(struct weave_helper *h, struct em *e)
{
	static const struct { const char *name; enum wref_member writer; } consoles[2] = {
		{ "stderr", WM_CONSOLE_ERROR }, { "stdout", WM_CONSOLE_OUT },
	};
	uint32_t try_start = em_label(e), catch_start = em_label(e), end = em_label(e);
	uint32_t file_try = em_label(e), file_finally = em_label(e), not_taken = em_label(e);

	em_mark(e, try_start);
	for (int k = 0; k < 2; k++) {
		uint32_t next = em_label(e);
		em_tok(e, IL_LDSFLD, fld(h, HF_OUTPUT));
		weave_helper_ldstr(h, e, consoles[k].name);
		em_tok(e, IL_CALL, ref(h, WM_STRING_EQUALS));
		em_br(e, IL_BRFALSE, next);
		em_tok(e, IL_CALL, ref(h, consoles[k].writer));
		em_ldarg(e, 0);
		em_tok(e, IL_CALLVIRT, ref(h, WM_WRITELINE));
		em_br(e, IL_LEAVE, end);
		em_mark(e, next);
	}
	em_i4(e, 0);
	em_stloc(e, 0);
	em_mark(e, file_try);
	em_tok(e, IL_LDSFLD, fld(h, HF_GATE));
	em_ldloca(e, 0);
	em_tok(e, IL_CALL, ref(h, WM_MONITOR_ENTER));
	em_tok(e, IL_LDSFLD, fld(h, HF_OUTPUT));
	em_i4(e, 2);
	em_tok(e, IL_NEWARR, h->refs.type[WT_STRING]);
	em_op(e, IL_DUP);
	em_i4(e, 0);
	em_ldarg(e, 0);
	em_op(e, IL_STELEM_REF);
	em_op(e, IL_DUP);
	em_i4(e, 1);
	weave_helper_ldstr(h, e, "\n");
	em_op(e, IL_STELEM_REF);
	em_tok(e, IL_CALL, ref(h, WM_STRING_CONCAT));
	em_tok(e, IL_CALL, ref(h, WM_APPENDALLTEXT));
	em_br(e, IL_LEAVE, end);
	em_mark(e, file_finally);
	em_ldloc(e, 0);
	em_br(e, IL_BRFALSE, not_taken);
	em_tok(e, IL_LDSFLD, fld(h, HF_GATE));
	em_tok(e, IL_CALL, ref(h, WM_MONITOR_EXIT));
	em_mark(e, not_taken);
	em_op(e, IL_ENDFINALLY);
	em_mark(e, catch_start);
	em_op(e, IL_POP);
	em_br(e, IL_LEAVE, end);
	em_mark(e, end);
	em_op(e, IL_RET);
	/* II.25.4.6 / I.12.4.2.5: the inner try/finally nests in the try of the catch. */
	em_eh(e, &(struct em_eh){ IL_EH_FINALLY, file_try, file_finally, file_finally, catch_start, 0 });
	em_eh(e, &(struct em_eh){ IL_EH_CATCH, try_start, catch_start, catch_start, end, h->refs.type[WT_OBJECT] });
}

/* Method signatures and LocalVarSigs use primitive types only (II.23.2.1, II.23.2.6). */
#define BYTES(...) { __VA_ARGS__ }, sizeof((uint8_t[]){ __VA_ARGS__ })
#define NO_LOCALS { 0 }, 0
#define PRIVATE_STATIC (HMA_PRIVATE | HMA_STATIC | HMA_HIDEBYSIG)
#define FRAME_LOCALS SIG_I4, SIG_I4, SIG_SZARRAY, SIG_OBJECT, SIG_SZARRAY, SIG_I8 /* L_I, L_D, L_F, L_T */

static const struct method_info {
	const char *name;
	uint16_t flags;
	uint8_t sig[8];
	uint8_t siglen;
	uint8_t locals[16];
	uint8_t localslen;
	void (*emit)(struct weave_helper *h, struct em *e);
} methods[HM_COUNT] = {
	[HM_CCTOR] = { ".cctor", PRIVATE_STATIC | HMA_SPECIALNAME | HMA_RTSPECIALNAME,
		       BYTES(SIG_CONV_DEFAULT, 0, SIG_VOID),
		       BYTES(SIG_CONV_LOCAL_SIG, 3, SIG_STRING, SIG_R8, SIG_R8), emit_cctor },
	[HM_PUSH] = { "Push", PRIVATE_STATIC,
		      BYTES(SIG_CONV_DEFAULT, 5, SIG_VOID, SIG_OBJECT, SIG_STRING, SIG_STRING, SIG_I8, SIG_I8),
		      BYTES(SIG_CONV_LOCAL_SIG, 3, SIG_I4, SIG_SZARRAY, SIG_OBJECT, SIG_SZARRAY, SIG_I8), emit_push },
	[HM_GROW] = { "Grow", PRIVATE_STATIC, BYTES(SIG_CONV_DEFAULT, 0, SIG_VOID),
		      BYTES(SIG_CONV_LOCAL_SIG, 3, SIG_SZARRAY, SIG_OBJECT, SIG_SZARRAY, SIG_I8, SIG_I4), emit_grow },
	[HM_POP] = { "Pop", PRIVATE_STATIC, BYTES(SIG_CONV_DEFAULT, 1, SIG_VOID, SIG_OBJECT),
		     BYTES(SIG_CONV_LOCAL_SIG, 9, FRAME_LOCALS, SIG_STRING, SIG_STRING, SIG_I8, SIG_I8, SIG_I4),
		     emit_pop_object },
	[HM_SHIFT] = { "Shift", PRIVATE_STATIC, BYTES(SIG_CONV_DEFAULT, 2, SIG_VOID, SIG_OBJECT, SIG_I8),
		       BYTES(SIG_CONV_LOCAL_SIG, 4, FRAME_LOCALS), emit_shift },
	[HM_REPORT] = { "Report", PRIVATE_STATIC,
			BYTES(SIG_CONV_DEFAULT, 4, SIG_VOID, SIG_STRING, SIG_STRING, SIG_I8, SIG_I8), NO_LOCALS,
			emit_report },
	[HM_REPORT_FAILED] = { "ReportNotAcquired", PRIVATE_STATIC,
			       BYTES(SIG_CONV_DEFAULT, 3, SIG_VOID, SIG_STRING, SIG_STRING, SIG_I8), NO_LOCALS,
			       emit_report_failed },
	[HM_MS] = { "Ms", PRIVATE_STATIC, BYTES(SIG_CONV_DEFAULT, 1, SIG_STRING, SIG_I8),
		    BYTES(SIG_CONV_LOCAL_SIG, 1, SIG_R8), emit_ms },
	[HM_WRITE] = { "Write", PRIVATE_STATIC, BYTES(SIG_CONV_DEFAULT, 1, SIG_VOID, SIG_STRING),
		       BYTES(SIG_CONV_LOCAL_SIG, 1, SIG_BOOLEAN), emit_write },
};

/* PopScope's signature and locals: Pop's without the parameter. */
static const uint8_t pop_scope_sig[] = { SIG_CONV_DEFAULT, 0, SIG_VOID };

int hbody_add_all(struct weave_helper *h)
{
	/* Rows first: bodies call each other by token. */
	for (unsigned m = 0; m < HM_COUNT; m++)
		if (weave_helper_add_method(h, methods[m].name, methods[m].flags, methods[m].sig, methods[m].siglen,
				      &h->method[m]) < 0)
			return -1;
	for (unsigned m = 0; m < HM_COUNT; m++) {
		const struct method_info *mi = &methods[m];
		struct em e;

		em_init(&e);
		mi->emit(h, &e);
		/* sig[2] is RetType (II.23.2.1: conv, ParamCount, RetType) */
		if (weave_helper_add_body(h, h->method[m], &e, mi->localslen ? mi->locals : NULL, mi->localslen,
				    mi->sig[2] != SIG_VOID) < 0)
			return lt_error_prefix("%s::%s: ", WEAVE_HELPER_TYPE, mi->name);
	}
	return 0;
}

int hbody_pop_scope(struct weave_helper *h, uint32_t lock_token, uint32_t *out)
{
	const struct method_info *pop = &methods[HM_POP];
	char name[32];
	struct em e;
	uint32_t tok;

	for (uint32_t i = 0; i < h->nscopes; i++) {
		if (h->scopes[i].lock_token == lock_token) {
			*out = h->scopes[i].method;
			return 0;
		}
	}
	if (h->nscopes)
		snprintf(name, sizeof name, "PopScope_%u", h->nscopes + 1);
	else
		snprintf(name, sizeof name, "PopScope");
	if (lt_grow(&h->scopes, &h->scopes_cap, h->nscopes + 1, sizeof *h->scopes) < 0 ||
	    weave_helper_add_method(h, name, PRIVATE_STATIC, pop_scope_sig, sizeof pop_scope_sig, &tok) < 0)
		return -1;
	em_init(&e);
	emit_pop(h, &e, lock_token);
	if (weave_helper_add_body(h, tok, &e, pop->locals, pop->localslen, 0) < 0)
		return -1;
	h->scopes[h->nscopes++] = (struct hscope){ lock_token, tok };
	*out = tok;
	return 0;
}
