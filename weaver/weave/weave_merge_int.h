/* weave_merge_int.h - what the files of the merger share: its state, template names and token re-mapping. */
#ifndef WEAVE_MERGE_INT_H
#define WEAVE_MERGE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "weave_merge.h"
#include "weave_refs.h"

/* The embedded resource the trimmer reads attributes from (its data formats,
 * "Custom Attributes Annotations"; it may only name its own assembly). */
#define MERGE_LINK_ATTRIBUTES "ILLink.LinkAttributes.xml"

/* A template UnconditionalSuppressMessage the target framework lacks: left
 * out of the metadata, carried in MERGE_LINK_ATTRIBUTES instead. */
struct merge_dropped {
	uint32_t parent; /* the target TypeDef or MethodDef token it was on */
	uint32_t ca_row; /* its template CustomAttribute row */
};

/* One merge of a template into a target. */
struct merge {
	struct img *img;             /* the target */
	struct md_image *md;
	const struct img *tmpl;
	const struct md_image *tm;
	struct wref_ctx *refs;
	/* Rows the target had before the merge: template TypeDef t (t >= 2) is
	 * target row type_base + t - 1, template Field f is field_base + f,
	 * MethodDef, Param and Property likewise (<Module> owns none of them). */
	uint32_t type_base, field_base, method_base, param_base, property_base;
	/* Target tokens of the template's TypeRef, MemberRef, TypeSpec,
	 * MethodSpec and StandAloneSig rows, found on first use (0: not yet). */
	uint32_t *map[MD_TABLE_MAX];
	struct merge_dropped *dropped; /* owned: merge_note_dropped */
	size_t ndropped, dropped_cap;
};

/* The name of template TypeDef `row` as "Namespace.Outer+Inner" into
 * buf[0..size) like snprintf.  Returns 0, or -1 with LT_E_METADATA (a bad
 * #Strings index, nesting deeper than 64: a cycle). */
int merge_type_name(const struct md_image *tm, uint32_t row, char *buf, size_t size);

/* The name of template Field or MethodDef `row` of `table`,
 * "Namespace.Type::Name", into buf[0..size) like snprintf.  Returns 0, or -1
 * as merge_type_name. */
int merge_member_name(const struct md_image *tm, enum md_table_id table, uint32_t row, char *buf, size_t size);

/* What the merger does with a template custom attribute (merge_attribute_name). */
enum {
	MERGE_ATTRIBUTE_REFUSED = 0,   /* outside the subset */
	MERGE_ATTRIBUTE_COPIED = 1,    /* a framework attribute the merged code carries as it is */
	MERGE_ATTRIBUTE_FRAMEWORK = 2, /* one the template declares (merge_framework_attribute): the target framework's own, or none */
};

/* The attribute type of template CustomAttribute row `ca_row` as
 * "Namespace.Name" into buf[0..size) ("?" when its constructor is neither a
 * MemberRef on a TypeRef nor a framework attribute's): MERGE_ATTRIBUTE_COPIED
 * or _FRAMEWORK when the merger copies it (weave_merge_check's lists),
 * MERGE_ATTRIBUTE_REFUSED when not, -1 with LT_E_METADATA. */
int merge_attribute_name(const struct md_image *tm, uint32_t ca_row, char *buf, size_t size);

/* Whether template MethodDef `ctor_row` is the constructor of an attribute the
 * template declares for the trimmer (weave_merge_check's framework_attributes,
 * a constructor of strings only, II.23.2.1): 1 with its type's namespace and
 * name (#Strings of the template) and its signature, 0 when not (*ns and
 * *name then those of the class it is of, or ""), -1 with LT_E_METADATA. */
int merge_framework_attribute(const struct md_image *tm, uint32_t ctor_row, const char **ns, const char **name,
			      const uint8_t **sig, uint32_t *siglen);

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

/* Note that template CustomAttribute row `ca_row`, an UnconditionalSuppressMessage
 * the target framework lacks, was on target token `parent` (a TypeDef or a
 * MethodDef).  Returns 0, or -1 with LT_E_NOMEM. */
int merge_note_dropped(struct merge *m, uint32_t parent, uint32_t ca_row);

/* The noted suppressions (merge_note_dropped) as the target's embedded
 * MERGE_LINK_ATTRIBUTES, so that the trimmer (ILLink) still sees them: one
 * <attribute> per suppression on the merged type (by its merged name; a
 * nested one inside its enclosing type's element) or method (by name), its
 * arguments and named string arguments as written (II.23.3); added with
 * img_add_resource, written with Mini-XML.  A target that has a resource of
 * that name keeps it untouched: *kept gets the number of suppressions not
 * carried (the caller warns), else 0.  Returns 0, or -1 with LT_E_METADATA
 * (a malformed template blob, the target's resources), LT_E_NOMEM, LT_E_LIMIT. */
int merge_link_attributes(struct merge *m, int *kept);

#endif
