/* weave.h - the lock weaving passes: find every lock acquisition site in an
 * assembly and time its wait and hold (see docs/weaving.md). */
#ifndef WEAVE_H
#define WEAVE_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "pdb_find.h"
#include "weave_opts.h"

enum weave_outcome {
	WEAVE_WOVEN = 0,           /* sites were found and timed */
	WEAVE_NO_LOCKS = 1,        /* nothing to weave: leave the file as it is */
	WEAVE_ALREADY_WOVEN = 2,   /* the assembly carries LockTime's stub type */
	WEAVE_FILTERED_OUT = 3,    /* sites were found, all left alone by weave_sites_filter
				    * (the patterns, LockTimeIgnoreAttribute): the file as it is */
};

/* Whether img carries LockTime's stub TypeDef (woven already): 1, 0, or
 * -1 (malformed TypeDef rows; LT_E_METADATA). */
int weave_is_woven(const struct img *img);

/* Find every site of `img` and call `fn` for each, in MethodDef then IL
 * order; for an assembly LockTime has woven, the sites it timed (with the
 * method and location it baked in, `woven` 1, offsets of the woven bodies).
 * Returns the number of sites, or -1 (malformed input; LT_E_BODY,
 * LT_E_METADATA, LT_E_SIGNATURE). */
long weave_list(const struct img *img, void (*fn)(void *ctx, const struct weave_site *s), void *ctx);

/* weave_list with each site's location filled ("<file>:<line>", else "")
 * from the assembly's portable PDB `pdb` (see wlines_init; NULL: no debug
 * info, as weave_list), the source files it names read with read_source
 * (as lt_file_read; NULL: none) for the line of a C# 13 lock. */
long weave_list_pdb(const struct img *img, const struct pdb_found *pdb,
		    int (*read_source)(const char *path, uint8_t **data, size_t *size),
		    void (*fn)(void *ctx, const struct weave_site *s), void *ctx);

/* Weave every site of `img` in memory: add the stub type, rewrite the
 * bodies.  *outcome says what happened; the caller writes the image only for
 * WEAVE_WOVEN.  *nsites gets the acquisition sites timed (WEAVE_WOVEN), or
 * found and all left alone (WEAVE_FILTERED_OUT).  Time and memory are linear in the size of the assembly (a
 * hostile one is bounded by its bodies' size limits, IL_MAX_CODE and
 * IL_MAX_CLAUSES).  *trim_unfit (may be NULL; WEAVE_WOVEN) gets the
 * attributes for the trimmer whose uses in the run-time were left out because
 * the target's own class of that name does not fit them (weave_merge_map's
 * trim_unfit), 0 when none.  Returns 0, or -1
 * (LT_E_WEAVE, LT_E_LIMIT, and the reading errors above). */
int weave_image(struct img *img, const struct weave_opts *opts, enum weave_outcome *outcome,
		long *nsites, unsigned *trim_unfit);

/* A --lines value as the run-time takes it (Settings.cs ParseLines): "all" in
 * any case gives "all", a number of lines a second from 0 to 1e6 (digits, a
 * point, an exponent: 5, 0.5, 1e3) gives s itself; anything else NULL. */
const char *weave_lines_value(const char *s);

#endif
