/* weave.h - the lock weaving passes: find every lock acquisition site in an
 * assembly and time its wait and hold (see docs/weaving.md). */
#ifndef WEAVE_H
#define WEAVE_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "lt_error.h"
#include "pdb_find.h"

/* What a lock site acquires or releases (docs/weaving.md lists the IL shapes). */
enum weave_kind {
	WEAVE_MONITOR_ENTER,        /* Monitor.Enter(object) */
	WEAVE_MONITOR_ENTER_TAKEN,  /* Monitor.Enter(object, ref bool) */
	WEAVE_MONITOR_TRYENTER,     /* the six Monitor.TryEnter overloads */
	WEAVE_LOCK_ENTER,           /* System.Threading.Lock.Enter() */
	WEAVE_LOCK_TRYENTER,        /* Lock.TryEnter(), (int), (TimeSpan) */
	WEAVE_LOCK_ENTERSCOPE,      /* Lock.EnterScope() (C# 13 lock on a Lock) */
	WEAVE_SYNCHRONIZED,         /* [MethodImpl(Synchronized)] method body */
	WEAVE_MONITOR_EXIT,         /* releases and waits: not acquisition sites */
	WEAVE_LOCK_EXIT,
	WEAVE_SCOPE_DISPOSE,
	WEAVE_MONITOR_WAIT,
	WEAVE_KIND_COUNT
};

/* Short name of a kind, as `locktime list` prints it ("Monitor.Enter"). */
const char *weave_kind_name(enum weave_kind k);

/* 1 for the kinds that acquire a lock (listed as sites), 0 otherwise. */
int weave_kind_acquires(enum weave_kind k);

/* A reference assembly, read once before weaving (weave_refs_read). */
struct weave_ref {
	char *path;                /* as given, for messages (owned) */
	uint8_t *data;             /* its bytes (owned), NULL when it could not be read */
	size_t size;
	struct lt_error error;     /* data NULL: why, raised when a weave needs the reference */
};

struct weave_opts {
	double threshold_ms;       /* report threshold baked in (default 1; 0 = every lock) */
	const char *output;        /* default sink baked in: "stderr", "stdout" or a path */
	const struct weave_ref *refs; /* reference assemblies to resolve framework types (borrowed) */
	size_t nrefs;
	const struct pdb_found *pdb;  /* the input's debug symbols, for source lines (NULL: none) */
};

/* One acquisition site, as `locktime list` shows it. */
struct weave_site {
	char method[512];          /* user-facing <Namespace.Type>::<Method> */
	uint32_t methoddef;        /* MethodDef row holding the call */
	uint32_t il_offset;        /* offset of the call in the input body */
	enum weave_kind kind;
	char location[300];        /* "<file>:<line>" from debug info, else "" */
};

enum weave_outcome {
	WEAVE_WOVEN = 0,           /* sites were found and timed */
	WEAVE_NO_LOCKS = 1,        /* nothing to weave: leave the file as it is */
	WEAVE_ALREADY_WOVEN = 2,   /* the assembly carries LockTime's helper type */
};

/* Whether img carries LockTime's helper TypeDef (woven already): 1, 0, or
 * -1 (malformed TypeDef rows; LT_E_METADATA). */
int weave_is_woven(const struct img *img);

/* Find every site of `img` and call `fn` for each, in MethodDef then IL
 * order.  Returns the number of sites, or -1 (malformed input; LT_E_BODY,
 * LT_E_METADATA, LT_E_SIGNATURE). */
long weave_list(const struct img *img, void (*fn)(void *ctx, const struct weave_site *s), void *ctx);

/* weave_list with each site's location filled ("<file>:<line>", else "")
 * from the assembly's portable PDB `pdb` (see wlines_init; NULL: no debug
 * info, as weave_list). */
long weave_list_pdb(const struct img *img, const struct pdb_found *pdb,
		    void (*fn)(void *ctx, const struct weave_site *s), void *ctx);

/* Weave every site of `img` in memory: add the helper type, rewrite the
 * bodies.  *outcome says what happened; the caller writes the image only for
 * WEAVE_WOVEN.  Time and memory are linear in the size of the assembly (a
 * hostile one is bounded by its bodies' size limits, IL_MAX_CODE and
 * IL_MAX_CLAUSES).  Returns 0, or -1 (LT_E_WEAVE, LT_E_LIMIT, and the
 * reading errors above). */
int weave_image(struct img *img, const struct weave_opts *opts, enum weave_outcome *outcome,
		long *nsites);

#endif
