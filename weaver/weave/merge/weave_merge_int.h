/* weave_merge_int.h - what the files of the merger share: its state, template names and token re-mapping. */
#ifndef WEAVE_MERGE_INT_H
#define WEAVE_MERGE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "weave_merge.h"
#include "weave_refs.h"

/* Who owns and encloses what in a template (II.22.37 lists, II.22.32
 * NestedClass), each table read once: names without a scan per member. */
struct merge_index {
	const struct md_image *tm;
	uint32_t *enclosing;   /* [TypeDef row]: the enclosing row the first NestedClass row naming it gives, 0 none */
	uint32_t *owner[2];    /* [0][Field row], [1][MethodDef row]: the last TypeDef row whose list starts at or
				* before it, 0 none */
};

/* The index of template tm (which must outlive it) into *out.  Returns 0
 * (release with merge_index_close), or -1 with LT_E_NOMEM. */
int merge_index_open(const struct md_image *tm, struct merge_index *out);

/* Release what merge_index_open put in x.  NULL is a no-op. */
void merge_index_close(struct merge_index *x);

/* weave_merge_check over an indexed template. */
long merge_check(const struct merge_index *x, void (*report)(void *ctx, const char *what), void *ctx);

/* A template prepared once (weave_template_open). */
struct weave_template {
	const struct img *img;
	struct merge_index x;
	uint32_t nfields, nmethods;
	char **names;        /* [0, nfields): Field rows 1.., then MethodDef rows: "Namespace.Type::Name" (owned) */
	struct merge_named {
		const char *name; /* names[i] */
		uint32_t i;
	} *sorted;           /* every name in strcmp order, equal names by index */
	uint32_t *trim_ctors, ntrim_ctors; /* the MethodDef rows merge_framework_attribute names, in row order */
	/* MethodDef row r's body: its bytes (in img), body_len[r - 1] of them, and the body offsets of its
	 * tokens patch[patch_first[r - 1] .. patch_first[r]) in the order il_decode meets them. */
	const uint8_t **body;
	uint32_t *body_len, *patch_first, *patch;
};

/* The first place in t->sorted whose name is not before `name` (strcmp; nfields + nmethods: none):
 * the members of that name, if any, follow it, in row order. */
size_t merge_first_named(const struct weave_template *t, const char *name);

/* One merge of a template into a target. */
struct merge {
	struct img *img;             /* the target */
	struct md_image *md;
	const struct weave_template *t;
	const struct md_image *tm;
	struct wref_ctx *refs;
	/* Rows the target had before the merge: template TypeDef t (t >= 2) is
	 * target row type_base + t - 1, template Field f is field_base + f,
	 * MethodDef, Param and Property likewise (<Module> owns none of them). */
	uint32_t type_base, field_base, method_base, param_base, property_base;
	/* Target tokens of the template's TypeRef, MemberRef, TypeSpec,
	 * MethodSpec and StandAloneSig rows, found on first use (0: not yet). */
	uint32_t *map[MD_TABLE_MAX];
	/* The attributes for the trimmer (merge_plan_trim), owned: trim_ctor[r]
	 * the target constructor a use of template MethodDef r gets when r is
	 * such an attribute's (0: the use is left out); trim_named[t] 1 when
	 * template TypeDef t is merged under its own full name. */
	uint32_t *trim_ctor;
	uint8_t *trim_named;
};

/* The name of template TypeDef `row` as "Namespace.Outer+Inner" into
 * buf[0..size) like snprintf.  Returns 0, or -1 with LT_E_METADATA (a bad
 * #Strings index, nesting deeper than 64: a cycle). */
int merge_type_name(const struct merge_index *x, uint32_t row, char *buf, size_t size);

/* The name of template Field or MethodDef `row` of `table`,
 * "Namespace.Type::Name", into buf[0..size) like snprintf.  Returns 0, or -1
 * as merge_type_name. */
int merge_member_name(const struct merge_index *x, enum md_table_id table, uint32_t row, char *buf, size_t size);

/* What the merger does with a template custom attribute (merge_attribute_name). */
enum {
	MERGE_ATTRIBUTE_REFUSED = 0,   /* outside the subset */
	MERGE_ATTRIBUTE_COPIED = 1,    /* a framework attribute the merged code carries as it is */
	MERGE_ATTRIBUTE_FRAMEWORK = 2, /* one the template declares for the trimmer (merge_plan_trim says where it goes) */
};

/* The attribute type of template CustomAttribute row `ca_row` as
 * "Namespace.Name" into buf[0..size) ("?" when its constructor is neither a
 * MemberRef on a TypeRef nor a framework attribute's): MERGE_ATTRIBUTE_COPIED
 * or _FRAMEWORK when the merger copies it (weave_merge_check's lists),
 * MERGE_ATTRIBUTE_REFUSED when not, -1 with LT_E_METADATA. */
int merge_attribute_name(const struct merge_index *x, uint32_t ca_row, char *buf, size_t size);

/* Whether template MethodDef `ctor_row` is the constructor of an attribute the
 * template declares for the trimmer (weave_merge_trim_attribute, a
 * constructor of strings only, II.23.2.1): 1 + its weave_merge_trim_attribute
 * index, with its type's namespace and name (#Strings of the template), its
 * TypeDef row *type and its signature; 0 when not (*ns and *name then those
 * of the class it is of, or ""), -1 with LT_E_METADATA. */
int merge_framework_attribute(const struct merge_index *x, uint32_t ctor_row, const char **ns, const char **name,
			      uint32_t *type, const uint8_t **sig, uint32_t *siglen);

/* The target token for template token `tok`: TypeDef, Field, MethodDef
 * (copied rows), TypeRef, MemberRef, TypeSpec, MethodSpec, StandAloneSig
 * (resolved or re-encoded on first use), or a #US string (0x70, added).
 * Returns 0, or -1 with LT_E_WEAVE (a type or member the target's
 * framework lacks, a table the merger does not copy), LT_E_METADATA,
 * LT_E_SIGNATURE, LT_E_NOMEM, LT_E_LIMIT. */
int merge_token(struct merge *m, uint32_t tok, uint32_t *out);

/* Template #Blob signature `blob` re-encoded with target tokens (sig_remap)
 * and added to the target's #Blob: *out its index.  typespec: a TypeSpec
 * blob (II.23.2.14).  Returns 0, or -1 as merge_token. */
int merge_sig(struct merge *m, uint32_t blob, int typespec, uint32_t *out);

/* The bodies of WEAVE_SUBST_SIGTERM, WEAVE_SUBST_SIGINT and WEAVE_SUBST_UNLOADING (weave_merge_direct.c), their ret
 * included, into e: 0, 1 when the target's framework is not known to have the types (nothing added: the template's
 * body is copied), or -1 with the error of wref_type, wref_member (LT_E_WEAVE, LT_E_METADATA, LT_E_NOMEM, LT_E_LIMIT).
 * merge_direct_signal: return PosixSignalRegistration.Create(posix_signal, the merged handler_name), posix_signal a
 * PosixSignal value (SIGINT -2, SIGTERM -4: negative, the same on every platform). */
struct em;
int merge_direct_signal(struct merge *m, const struct weave_merge_map *map, int posix_signal, const char *handler_name,
			struct em *e);
int merge_direct_unloading(struct merge *m, const struct weave_merge_map *map, struct em *e);

/* Where the uses of the template's attributes for the trimmer go in the
 * target (m->trim_ctor, m->trim_named), decided before any row is copied:
 * for each such attribute (merge_framework_attribute), the target's own
 * top-level TypeDef of that full name when it has a constructor of the
 * template's signature and a property of each name and type the template's
 * class has (else the uses are left out and bit i of *unfit set, i the
 * attribute's weave_merge_trim_attribute index); else the target
 * framework's (wref_type_if_known); else, for a .NETStandard target
 * (weave_target_framework: a library trimmed in the app that uses it), the
 * template's class under its own full name; else left out.  Returns 0, or
 * -1 with LT_E_WEAVE (the framework's attribute without the constructor),
 * LT_E_METADATA, LT_E_NOMEM, LT_E_LIMIT. */
int merge_plan_trim(struct merge *m, unsigned *unfit);

#endif
