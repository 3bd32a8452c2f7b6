/* image_text.h - the section that holds the CLI header, laid out again
 * (image_write.c): which of its input bytes are kept, where they go, and how
 * an input RVA inside it maps to the new section.  docs/image-layout.md. */
#ifndef IMAGE_TEXT_H
#define IMAGE_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "lt_buf.h"

/* A kept run of the input section: input RVA `old`, `len` bytes, placed at
 * offset `at` of the new section. */
struct text_span {
	uint32_t old, len, at;
};

struct text {
	uint32_t lo, hi;        /* the input section's RVA range */
	uint32_t drop_lo, drop_hi; /* input bytes known to be dropped (the metadata root) */
	struct lt_buf span_buf; /* owns spans */
	struct lt_buf ptr_buf;  /* owns ptrs */
	struct text_span *spans; /* sorted and disjoint after text_plan */
	size_t nspans;
	uint32_t *ptrs;         /* RVAs that must stay readable (text_point) */
	size_t nptrs;
	uint32_t kept_len;      /* bytes the kept spans take in the new section */
	uint32_t va;            /* the new section's RVA (set by the caller) */
};

/* Keep the input bytes [rva, rva+len) that lie inside the section (a
 * structure whose extent is known: a method body, the resources...).  RVAs
 * outside the section are ignored.  Returns 0, or -1 with LT_E_NOMEM. */
int text_keep(struct text *t, uint32_t rva, uint32_t len);

/* Note that something points at rva (a FieldRVA, the entry point, an import
 * name...) whose extent is not known: text_plan keeps the whole run of
 * unclaimed bytes around it.  RVAs outside the section are ignored.
 * Returns 0, or -1 with LT_E_NOMEM. */
int text_point(struct text *t, uint32_t rva);

/* Resolve the pointers to kept runs, merge the runs (gaps under 16 bytes
 * are kept with them), and place them in input order, each at an offset
 * congruent to its input RVA modulo 16 so that data alignment is kept.
 * Returns 0, or -1 with LT_E_LAYOUT when something points into the
 * dropped metadata root, or LT_E_NOMEM. */
int text_plan(struct text *t);

/* The new RVA of input RVA rva: itself outside the section, else its place
 * in the kept run that holds it (t->va must be set).  Returns 0, or -1 with
 * LT_E_LAYOUT naming `what` when rva was not kept. */
int text_map(const struct text *t, uint32_t rva, uint32_t *out, const char *what);

/* Free what t owns. */
void text_free(struct text *t);

#endif
