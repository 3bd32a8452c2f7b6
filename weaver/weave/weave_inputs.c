/* weave_inputs.c - the files around a weave: references read once, the PDB found beside an assembly, the pair written. */
#include "weave_inputs.h"
#include "lt_error.h"
#include "lt_keys.h"
#include "lt_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int weave_refs_read(struct weave_ref **out, const char *const *paths, size_t n)
{
	struct weave_ref *refs = lt_calloc(n ? n : 1, sizeof *refs);
	size_t i;

	*out = NULL;
	if (!refs)
		return lt_nomem(NULL);
	for (i = 0; i < n; i++) {
		if (!(refs[i].path = lt_strdup(paths[i]))) {
			weave_refs_free(refs, n);
			return lt_nomem(NULL);
		}
		if (lt_file_read(paths[i], &refs[i].data, &refs[i].size) < 0) {
			if (lt_error_last()->code == LT_E_NOMEM) {
				weave_refs_free(refs, n);
				return -1;
			}
			refs[i].data = NULL;
			refs[i].error = *lt_error_last();
			lt_error_clear();
		}
	}
	*out = refs;
	return 0;
}

int weave_key_read(const char *path, struct lt_rsa_key **out)
{
	uint8_t *data;
	size_t size;
	int rc;

	if (lt_file_read(path, &data, &size) < 0)
		return -1;
	rc = lt_rsa_from_snk(out, data, size);
	free(data);
	return rc;
}

int weave_key_find(const char *file, const char *container, struct lt_rsa_key **out, const char **from)
{
	uint8_t *blob;
	size_t len;
	int rc;

	*out = NULL;
	*from = container ? container : file;
	if (container) {
		if (lt_keys_container_read(container, &blob, &len) == 0) {
			rc = lt_rsa_from_snk(out, blob, len);
			free(blob);
			return rc < 0 ? lt_error_prefix("key container '%s': ", container) : 0;
		}
		/* csc: "If the compiler does not find the key container, it tries the file." */
		if (!file || lt_error_last()->code != LT_E_KEY_CONTAINER)
			return -1;
		lt_error_clear();
		*from = file;
	}
	return file ? weave_key_read(file, out) : 0;
}

void weave_refs_free(struct weave_ref *refs, size_t n)
{
	for (size_t i = 0; refs && i < n; i++) {
		free(refs[i].path);
		free(refs[i].data);
	}
	free(refs);
}

/* The folder part of `path` (through its last separator, lt_path_dir_len)
 * followed by `name`, in a new string (free()).  NULL when memory runs out
 * (LT_E_NOMEM recorded). */
static char *path_beside(const char *path, const char *name, size_t name_len)
{
	size_t dir_len = lt_path_dir_len(path);
	char *out = lt_malloc(dir_len + name_len + 1);

	if (!out) {
		lt_nomem(NULL);
		return NULL;
	}
	memcpy(out, path, dir_len);
	memcpy(out + dir_len, name, name_len);
	out[dir_len + name_len] = 0;
	return out;
}

/* The file name of an assembly's symbols: for ext ".pdb", the assembly's
 * file name without a .dll or .exe extension, then ".pdb" ("A.dll" ->
 * "A.pdb"); for any other ext (".mdb") the whole file name then ext
 * ("A.exe.mdb").  A new string (free()), or NULL with LT_E_NOMEM. */
static char *symbols_name(const char *assembly_path, const char *ext)
{
	const char *base = assembly_path + lt_path_dir_len(assembly_path), *dot;
	size_t len, elen = strlen(ext);
	char *name;

	dot = strrchr(base, '.');
	len = !strcmp(ext, ".pdb") && dot && (!strcasecmp(dot, ".dll") || !strcasecmp(dot, ".exe")) ? (size_t)(dot - base)
												       : strlen(base);
	if (!(name = lt_malloc(len + elen + 1))) {
		lt_nomem(NULL);
		return NULL;
	}
	memcpy(name, base, len);
	memcpy(name + len, ext, elen + 1);
	return name;
}

/* symbols_name(assembly_path, ext) in the assembly's folder: a new string
 * (free()), or NULL with LT_E_NOMEM. */
static char *beside_named(const char *assembly_path, const char *ext)
{
	char *name = symbols_name(assembly_path, ext), *path = name ? path_beside(assembly_path, name, strlen(name)) : NULL;

	free(name);
	return path;
}

/* The file `name` in the assembly's folder: 1 with *data, *size and *path
 * when it exists and reads, 0 when it does not, -1 when memory runs out. */
static int read_beside(const char *assembly_path, const char *name, uint8_t **data, size_t *size, char **path)
{
	if (!(*path = path_beside(assembly_path, name, strlen(name))))
		return -1;
	if (!lt_file_exists(*path) || lt_file_read(*path, data, size) < 0) {
		free(*path);
		*path = NULL;
		return 0;
	}
	return 1;
}

/* <assembly name without .dll/.exe>.pdb, or <assembly path>.mdb, as read_beside. */
static int read_named(const char *assembly_path, int mdb, uint8_t **data, size_t *size, char **path)
{
	char *name = symbols_name(assembly_path, mdb ? ".mdb" : ".pdb");
	int rc;

	if (!name)
		return -1;
	rc = read_beside(assembly_path, name, data, size, path);
	free(name);
	return rc;
}

/* weave_pdb_find past the embedded PDB: the files beside the assembly. */
static int find_file(struct pdb_found *out, const struct img *img, const char *assembly_path)
{
	uint8_t *data = NULL;
	size_t size = 0;
	char *path = NULL;
	int rc;

	if (out->codeview >= 0) {
		rc = *out->cv_name ? read_beside(assembly_path, out->cv_name, &data, &size, &path) : 0;
		if (rc == 0)
			rc = read_named(assembly_path, 0, &data, &size, &path);
		if (rc != 0)
			return rc < 0 ? -1 : pdb_found_file(out, data, size, path);
	} else if ((rc = read_named(assembly_path, 0, &data, &size, &path)) != 0) {
		free(data);
		return rc < 0 ? -1 : pdb_found_stale(out, path, "%s: the assembly has no CodeView debug entry naming it", path);
	}
	if ((rc = read_named(assembly_path, 1, &data, &size, &path)) != 0)
		return rc < 0 ? -1 : pdb_found_mdb(out, data, size, path, img);
	return 0;
}

int weave_pdb_find(struct pdb_found *out, const struct img *img, const char *assembly_path)
{
	if (pdb_find_embedded(out, img) < 0)
		return -1;
	if (out->embedded >= 0 || !assembly_path)
		return 0;
	if (find_file(out, img, assembly_path) < 0) {
		pdb_found_free(out);
		return -1;
	}
	return 0;
}

/* Where the rewritten PDB file goes: next to the output assembly, with the
 * input PDB's name - unless that is the input's PDB itself (an output
 * written with -o beside the input, which keeps its symbols): then
 * <output name>.pdb, and *cv_name gets that name for the CodeView entry. */
static int target_path(struct pdb_update *out, const struct pdb_found *f, const char *in_path, const char *out_path,
		       char **cv_name)
{
	const char *name = f->path + lt_path_dir_len(f->path);

	*cv_name = NULL;
	if (!(out->path = path_beside(out_path, name, strlen(name))))
		return -1;
	if (!strcmp(in_path, out_path) || lt_file_same(in_path, out_path) || !lt_file_same(out->path, f->path))
		return 0;
	free(out->path);
	out->path = NULL;
	if (!(*cv_name = symbols_name(out_path, ".pdb")) ||
	    !(out->path = path_beside(out_path, *cv_name, strlen(*cv_name))))
		return -1;
	if (lt_file_same(out->path, f->path))
		return lt_error_set(LT_E_PDB, "the output's PDB %s would replace the input's", out->path);
	return 0;
}

int weave_pdb_update(struct pdb_update *u, struct img *img, struct pdb_found *f, const char *in_path,
		     const char *out_path)
{
	char *cv_name = NULL;
	int rc = 0;

	memset(u, 0, sizeof *u);
	if (f->source == PDB_FILE && target_path(u, f, in_path, out_path, &cv_name) < 0) {
		free(u->path);
		u->path = NULL;
		if (lt_error_last()->code == LT_E_NOMEM)
			rc = -1;
		else /* not rewritten: pdb_update gives the assembly a new PDB id */
			pdb_found_stale(f, f->path, "%.120s: %.170s", f->path, lt_error_last()->msg);
	} else if (f->source == PDB_MDB && !(u->path = beside_named(out_path, ".mdb"))) {
		rc = -1; /* Mono looks for <assembly path>.mdb */
	}
	if (rc == 0)
		rc = pdb_update(u, img, f, cv_name);
	free(cv_name);
	if (rc < 0)
		pdb_update_free(u);
	return rc;
}

int weave_write_pair(const struct pdb_update *u, const char *asm_path, const struct lt_iov *asm_parts,
		     size_t nparts, const uint8_t *orig, size_t orig_len)
{
	struct lt_file_staged staged_asm = LT_FILE_STAGED_INIT, staged_pdb = LT_FILE_STAGED_INIT;
	const struct lt_iov pdb = { u->data.data, u->data.len };
	struct lt_error failure;
	int rc = -1;

	/* Both files are written before either is replaced: a failure, or a
	 * kill before the two renames, leaves the old pair; a kill between them
	 * the woven assembly and its staged PDB, which the next run puts in
	 * place (weave_clean_pdb_temps). */
	if (lt_file_stage_v(&staged_asm, asm_path, asm_parts, nparts) < 0 ||
	    (u->path && lt_file_stage_v(&staged_pdb, u->path, &pdb, 1) < 0) || lt_file_commit(&staged_asm) < 0)
		goto done;
	if (u->path && lt_file_commit(&staged_pdb) < 0) {
		/* The PDB still describes the input: take the assembly back to it. */
		failure = *lt_error_last();
		if (orig)
			lt_file_write_atomic(asm_path, orig, orig_len);
		else
			lt_file_remove(asm_path);
		lt_error_set(failure.code, "%s", failure.msg);
		goto done;
	}
	lt_file_sync_folder(staged_asm.path);
	if (u->path)
		lt_file_sync_folder(staged_pdb.path);
	rc = 0;
done:
	lt_file_discard(&staged_asm);
	lt_file_discard(&staged_pdb);
	return rc;
}

/* What settle_pdb_temp settles: the PDB path whose temporaries they are, and the woven assembly at out (or NULL). */
struct pdb_temps {
	const char *pdb;
	const struct img *woven;
};

/* weave_clean_pdb_temps' fn for the .pdb temporaries (ctx a struct
 * pdb_temps): the woven assembly's own PDB is renamed to the PDB path, any
 * other removed.  Returns 1 when temp is gone. */
static int settle_pdb_temp(void *ctx, const char *temp)
{
	const struct pdb_temps *t = ctx;
	const struct img *woven = t->woven;
	struct lt_file_staged staged = LT_FILE_STAGED_INIT;
	struct pdb_found f;
	uint8_t *data;
	size_t size;
	char *path;
	int own = 0;

	if (woven && pdb_find_embedded(&f, woven) == 0) {
		/* pdb_found_file takes the bytes and the path, also when it fails. */
		if (f.embedded < 0 && f.codeview >= 0 && lt_file_read(temp, &data, &size) == 0) {
			if ((path = lt_strdup(temp)) != NULL)
				own = pdb_found_file(&f, data, size, path) == 0 && f.source == PDB_FILE;
			else
				free(data);
		}
		pdb_found_free(&f);
		lt_error_clear(); /* an unreadable or foreign temporary is removed, not a failure of the weave */
	}
	if (own && (staged.tmp = lt_strdup(temp)) != NULL && (staged.path = lt_strdup(t->pdb)) != NULL) {
		if (lt_file_commit(&staged) == 0)
			lt_file_sync_folder(staged.path);
		lt_file_discard(&staged); /* removes the temporary when the rename failed */
		lt_error_clear();
		return 1;
	}
	lt_file_discard(&staged);
	return lt_file_remove(temp) == 0;
}

void weave_clean_pdb_temps(const char *out, const struct img *woven)
{
	char *path = beside_named(out, ".pdb");
	struct pdb_temps t = { path, woven };

	if (path)
		lt_file_each_temp(path, settle_pdb_temp, &t);
	free(path);
	if ((path = beside_named(out, ".mdb")) != NULL)
		lt_file_clean_temps(path);
	free(path);
}
