/* md_find.h - find-or-add of metadata rows by content: TypeRef, MemberRef,
 * TypeSpec, MethodSpec, AssemblyRef and StandAloneSig rows looked up through
 * one hashed index per table (lt_set), built on first use and kept up to date
 * with rows appended since (by these functions or md_append_row; a key cell
 * of a row must not be changed with md_set once the table was looked up).  With
 * md_add_string, md_add_blob and md_add_us (the heaps' own deduplicated
 * appends) they let a caller - the weaver, or a merger bringing another
 * assembly's references into this one - ask for a row and get the existing
 * one, or a new one, in time independent of the table's size. */
#ifndef MD_FIND_H
#define MD_FIND_H

#include <stdint.h>

#include "md_image.h"

/* A value of a key column: a cell (table or coded index, as stored), or
 * the bytes of a #Strings or #Blob entry (p[0..len), a string without NUL). */
struct md_val {
	uint32_t cell;
	const uint8_t *p;
	uint32_t len;
};

/* The key columns of each table md_find_row serves, in order:
 *  TypeRef:       ResolutionScope (cell), TypeNamespace, TypeName (strings)
 *  MemberRef:     Class (cell), Name (string), Signature (blob)
 *  TypeSpec:      Signature (blob)
 *  MethodSpec:    Method (cell), Instantiation (blob)
 *  AssemblyRef:   Name (string, ASCII case ignored: II.22.5 names compare so
 *                 for binding; the first row of a name stands for it)
 *  StandAloneSig: Signature (blob) */

/* The first row (1-based) of table t whose key columns equal key[]: 1 with
 * *row, 0 when there is none.  Rows whose key cannot be read (heap index out
 * of range) are never found.  Returns -1 with LT_E_NOMEM (LT_E_LIMIT) when
 * the index cannot grow. */
int md_find_row(struct md_image *md, enum md_table_id t, const struct md_val *key, uint32_t *row);

/* The first AssemblyRef row named `name` (II.22.5; case ignored): 1 with
 * *row, 0 when there is none, -1 as md_find_row. */
int md_find_assemblyref(struct md_image *md, const char *name, uint32_t *row);

/* Find-or-add: the token of the first row with this content, else of a new
 * row appended with it (its strings and blob added to the heaps, which
 * deduplicate too).  Each returns 0, or -1 with LT_E_METADATA (a token its
 * coded index cannot hold, II.24.2.6), LT_E_NOMEM, LT_E_LIMIT.
 *  md_typeref:      TypeRef ns.name in ResolutionScope `scope` (a Module,
 *                   ModuleRef, AssemblyRef or TypeRef token; II.22.38).
 *  md_memberref:    MemberRef `name` with signature sig[0..len) on Class
 *                   `parent` (a MemberRefParent token; II.22.25).
 *  md_typespec:     TypeSpec of signature sig[0..len) (II.22.39).
 *  md_methodspec:   MethodSpec of `method` (MethodDef or MemberRef token)
 *                   with instantiation blob sig[0..len) (II.22.29).
 *  md_standalonesig: StandAloneSig of signature sig[0..len) (II.22.36),
 *                   e.g. a LocalVarSig. */
int md_typeref(struct md_image *md, uint32_t scope, const char *ns, const char *name, uint32_t *out_tok);
int md_memberref(struct md_image *md, uint32_t parent, const char *name, const uint8_t *sig, uint32_t len,
		 uint32_t *out_tok);
int md_typespec(struct md_image *md, const uint8_t *sig, uint32_t len, uint32_t *out_tok);
int md_methodspec(struct md_image *md, uint32_t method, const uint8_t *sig, uint32_t len, uint32_t *out_tok);
int md_standalonesig(struct md_image *md, const uint8_t *sig, uint32_t len, uint32_t *out_tok);

/* Release the row indexes (md_free calls it).  NULL is a no-op. */
void md_find_free(struct md_image *md);

/* Release the heaps' lookups (md_heap_drop_lookup) and the row indexes
 * (md_find_free), each built again by the next append or find that needs
 * it: memory back once the appends are over, before md is written. */
void md_drop_lookups(struct md_image *md);

#endif
