/* weave_helper_int.h - what the files building LockTime's helper type share: its state, rows and bodies. */
#ifndef WEAVE_HELPER_INT_H
#define WEAVE_HELPER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "il_body.h"
#include "weave_emit.h"
#include "weave_internal.h"
#include "weave_refs.h"

/* The helper's fields, in Field row order (docs/weaving.md). */
enum hfield { HF_DISABLED, HF_THRESHOLD, HF_OUTPUT, HF_GATE, HF_FRAMES, HF_TIMES, HF_DEPTH, HF_REPORTING, HF_COUNT };

/* The helper's fixed methods, in MethodDef row order. */
enum hmethod { HM_CCTOR, HM_PUSH, HM_GROW, HM_POP, HM_SHIFT, HM_REPORT, HM_REPORT_FAILED, HM_MS, HM_WRITE,
	       HM_COUNT };

/* Per-thread record layout: Frames holds FRAME_OBJS slots per held lock
 * (lock object, site method, site location), Times FRAME_TIMES (acquire
 * timestamp, wait ticks); both start with FRAMES_INITIAL frames. */
enum { FRAME_OBJS = 3, FRAME_TIMES = 2, FRAMES_INITIAL = 8 };

/* Largest threshold taken, baked or from LOCKTIME_THRESHOLD_MS: 10^12 ms (31
 * years) keeps ms * Frequency / 1000 inside int64 for a 1 GHz Stopwatch. */
#define HELPER_THRESHOLD_MS_MAX 1e12

/* A method whose body is encoded by weave_helper_end. */
struct hbody {
	uint32_t row;          /* MethodDef row */
	struct il_body body;
};

struct hwrapper {
	uint32_t callee;
	uint8_t callvirt;
	uint8_t kind;          /* enum weave_kind */
	uint32_t token;        /* the wrapper's MethodDef token */
};

/* A PopScope method: pops the innermost frame whose object is a Lock (isinst lock_token). */
struct hscope {
	uint32_t lock_token;
	uint32_t method;
};

struct weave_helper {
	struct img *img;
	struct wref refs;
	double threshold_ms;   /* baked defaults, used while begin emits the .cctor */
	const char *output;
	uint32_t typedef_row;
	uint32_t field[HF_COUNT];     /* Field tokens */
	uint32_t method[HM_COUNT];    /* MethodDef tokens */
	struct hbody *bodies;
	uint32_t nbodies;
	size_t bodies_cap;
	struct hwrapper *wrappers;
	uint32_t nwrappers;
	size_t wrappers_cap;
	struct hscope *scopes;
	uint32_t nscopes;
	size_t scopes_cap;
	uint32_t named[WEAVE_KIND_COUNT]; /* wrappers named per kind, for unique names */
	uint32_t sync_enter, sync_exit;   /* MethodDef tokens of the synchronized-method pair, 0 until used */
};

/* Method attributes (II.23.1.10). */
enum {
	HMA_PRIVATE = 0x0001, HMA_ASSEMBLY = 0x0003, HMA_STATIC = 0x0010, HMA_HIDEBYSIG = 0x0080,
	HMA_SPECIALNAME = 0x0800, HMA_RTSPECIALNAME = 0x1000
};

/* Method implementation attributes (II.23.1.11; AggressiveInlining is
 * System.Runtime.CompilerServices.MethodImplOptions' 0x0100). */
enum { MIA_AGGRESSIVE_INLINING = 0x0100 };

/* ---- weave_helper.c ---- */

/* Append a MethodDef row of the helper type: RVA 0 until written, IL
 * managed, `flags`, name, signature blob sig[0..len), ParamList one past the
 * last Param (no Param rows).  *out gets its token.
 * Returns 0, or -1 (LT_E_NOMEM, LT_E_LIMIT). */
int weave_helper_add_method(struct weave_helper *h, const char *name, uint16_t flags, const uint8_t *sig, size_t len,
		      uint32_t *out);

/* Finish e into the pending body of MethodDef `method` (encoded by
 * weave_helper_end), with the LocalVarSig blob locals[0..len) (NULL: no
 * locals; an identical StandAloneSig row is reused, else one is appended).
 * `returns_value`: the method's RetType is not VOID.  e is freed.
 * Returns 0, or -1 (em_finish's errors, LT_E_NOMEM, LT_E_LIMIT). */
int weave_helper_add_body(struct weave_helper *h, uint32_t method, struct em *e, const uint8_t *locals, size_t len,
		    int returns_value);

/* ldstr of the UTF-8 text s (img_string_token).  A failure (LT_E_NOMEM,
 * LT_E_LIMIT) is recorded and made sticky in e. */
void weave_helper_ldstr(struct weave_helper *h, struct em *e, const char *s);

/* ---- weave_helper_body.c ---- */

/* Append the fixed methods (HM_*) with their bodies: the .cctor reading the
 * environment, Push, Grow, Pop, Shift, Report, ReportNotAcquired, Ms,
 * Write.  Returns 0, or -1 (LT_E_NOMEM, LT_E_LIMIT, LT_E_ENCODE). */
int hbody_add_all(struct weave_helper *h);

/* The PopScope method for Lock type `lock_token` (TypeRef or TypeDef),
 * added on first use.  Returns 0 and *out, or -1 as hbody_add_all. */
int hbody_pop_scope(struct weave_helper *h, uint32_t lock_token, uint32_t *out);

/* Push the clock's ticks per second as a float64: Stopwatch.Frequency, or
 * the core library clock's constant (struct wref). */
void hbody_frequency_r8(struct weave_helper *h, struct em *e);

#endif
