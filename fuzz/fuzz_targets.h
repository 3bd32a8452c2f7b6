/* fuzz_targets.h - the entry points the fuzzers and the regression test call on untrusted bytes.
 *
 * Each target takes one whole input in memory (never a file), runs a reader
 * (and what the weaver does with what it read), and returns 0 when the input
 * was accepted or -1 when it was refused with an error recorded
 * (lt_error_last()->code is an LT_E_* code).  A crash, a hang, a sanitizer
 * report, or a -1 with no error recorded is a bug: the target abort()s on the
 * last, and on a broken invariant it checks (named in its comment), so that
 * libFuzzer reports it.  fuzz_main.c wraps one target for libFuzzer;
 * tests/unit/test_fuzz.c feeds every file of fuzz/regress/<name>/ to it.
 */
#ifndef FUZZ_TARGETS_H
#define FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

/* An assembly: img_load (PE, CLI header, metadata root, heaps, tables,
 * II.24-25), img_is_reference_assembly, then every MethodDef body decoded
 * (II.25.4) and encoded again with stack effects from the signatures. */
int fuzz_image(const uint8_t *data, size_t size);

/* One signature blob (II.23.2): data[0] % 8 picks the production and
 * data[1..size) is the blob: 0 MethodDefSig/MethodRefSig, 1 PropertySig,
 * 2 FieldSig, 3 TypeSpec, 4 LocalVarSig, 5 MethodSpec, 6 the stack effect of
 * a call, 7 sig_locals_append (data[1] bytes after data[2] are the old
 * LocalVarSig, the rest are data[2] new types).  Invariants: a decoded blob
 * encodes, decoding that encoding gives the same encoding again, and
 * sig_locals_append writes a LocalVarSig with old + new locals. */
int fuzz_sig(const uint8_t *data, size_t size);

/* An assembly woven in memory as `locktime weave` does: img_load,
 * weave_job_run (site finding, stub type, rewriting, source lines from an
 * embedded PDB, the embedded PDB rewritten), img_write.
 * Invariant: what img_write lays out loads again, and a woven output is
 * "already woven". */
int fuzz_weave(const uint8_t *data, size_t size);

/* An assembly laid out again with nothing edited: img_load, img_write,
 * img_load of the output.  Invariant: the output loads, and what the writer
 * was not asked to change is unchanged - every table cell but the RVAs it
 * moves, every heap, every method body that parses. */
int fuzz_roundtrip(const uint8_t *data, size_t size);

/* A portable PDB: md_read (metadata root, #Pdb stream, PDB tables), then the
 * sequence points of every MethodDebugInformation row walked by wlines_point
 * (and named by wlines_format)
 * and decoded by pdb_seq_decode (PortablePdb-Metadata.md), then md_write.
 * Invariants: decoded sequence points encode and decode to the same points;
 * what md_write writes reads again. */
int fuzz_pdb(const uint8_t *data, size_t size);

/* A Mono .mdb: mdb_read (header, offset table, sources, compile units,
 * methods, line tables), wlines_point and wlines_format on every method,
 * then mdb_write with every line table encoded again.  Invariants: each
 * decoded line table encodes and decodes to the same points; what mdb_write
 * writes reads again with as many points per method. */
int fuzz_mdb(const uint8_t *data, size_t size);

/* A NuGet package (a zip archive): nupkg_open (zip structure, entry names and
 * sizes, the .nuspec) with small limits (256 entries, 1 MiB each, 4 MiB in
 * all), every entry inflated with nupkg_read (assemblies also loaded with
 * img_load), then the archive written with nupkg_write.  Invariant: what
 * nupkg_write writes opens again. */
int fuzz_nupkg(const uint8_t *data, size_t size);

/* A LockTime report (JSON, docs/report-format.md): rp_add_json, the same text added a second time
 * (rp_merge), then every output: HTML, pprof, text and check at 0 ms with its deadlocks.  Invariants: a
 * text accepted once adds up onto itself to the same sites and deadlocks (or stops at a limit); every
 * writer succeeds on what the reader accepted. */
int fuzz_report(const uint8_t *data, size_t size);

/* A Mono key container file (lt_mono_key.h): lt_mono_key_parse, then
 * lt_rsa_from_snk on the PRIVATEKEYBLOB it made.  Invariant: an accepted
 * file gives a PRIVATEKEYBLOB ("RSA2") of the size its bit length has. */
int fuzz_monokey(const uint8_t *data, size_t size);

/* The targets by name, for the regression test: { "image", fuzz_image }... */
struct fuzz_target {
	const char *name;
	int (*run)(const uint8_t *data, size_t size);
};
extern const struct fuzz_target fuzz_targets[];
extern const size_t fuzz_ntargets;

#endif
