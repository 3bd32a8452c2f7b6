/* weave_refs.c - the framework types and members of the stub type, resolved in the target's framework. */
#include "weave_refs.h"
#include "md_find.h"
#include "lt_error.h"
#include "lt_hash.h"
#include "lt_mem.h"
#include "lt_set.h"
#include "sig.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>


int wref_public_key_token(const uint8_t *key, size_t len, uint8_t out[8])
{
	uint8_t digest[LT_HASH_MAX];

	/* II.6.3: the token is the low 8 bytes of the key's SHA-1, reversed. */
	if (lt_hash_buf(LT_HASH_SHA1, key, len, digest) < 0)
		return -1;
	for (unsigned k = 0; k < 8; k++)
		out[k] = digest[20 - 1 - k];
	return 0;
}

/* Clocks of a core library that has no Stopwatch: a static int64() method
 * of its own that another type of the assembly may call, and its ticks per
 * second.  Mono's mscorlib keeps Stopwatch in System.dll (which it cannot
 * reference); its internal DateTime.GetSystemTimeAsFileTime() reads the
 * wall clock in 100 ns ticks (not monotonic: a clock step during a hold
 * skews that one report). */
static const struct clock_info {
	const char *ns, *type, *method;
	int64_t hz;
} corlib_clocks[] = {
	{ "System", "DateTime", "GetSystemTimeAsFileTime", 10000000 },
};
static const uint8_t clock_sig[3] = { SIG_CONV_DEFAULT, 0, SIG_I8 };

/* II.23.1.10 MemberAccessMask: Assembly, FamORAssem and Public members may
 * be used by another type of the same assembly. */
#define MEMBER_ACCESS_MASK 0x0007
enum { ACCESS_ASSEMBLY = 3, ACCESS_FAMORASSEM = 5, ACCESS_PUBLIC = 6 };

/* The public key tokens of the ECMA key (mscorlib, System) and of
 * Microsoft's .NET key (System.Console, System.Runtime...). */
static const uint8_t ecma_token[8] = { 0xB7, 0x7A, 0x5C, 0x56, 0x19, 0x34, 0xE0, 0x89 };
static const uint8_t msft_token[8] = { 0xB0, 0x3F, 0x5F, 0x7F, 0x11, 0xD5, 0x0A, 0x3A };

/* Where a framework puts a type that is not in its base assembly: the
 * assembly defining (or forwarding) it, and one used instead when the target
 * already references it (an older facade that still forwards it). */
struct home {
	const char *ns, *name;
	const char *home;
	const char *legacy;
};

static const struct home mscorlib_homes[] = {
	{ "System.Diagnostics", "Stopwatch", "System", NULL },
	{ "System.Collections.Generic", "Queue`1", "System", NULL },
	{ "System.Collections.Generic", "Stack`1", "System", NULL },
	{ "System.Collections.Generic", "LinkedList`1", "System", NULL },
	{ "System.Collections.Generic", "SortedDictionary`2", "System", NULL },
	{ "System.Collections.Generic", "HashSet`1", "System.Core", NULL },
};

/* .NET's reference assemblies (ref/net10.0; the runtime's implementation
 * assembly of each name forwards the type): the types LockTime's stubs and
 * run-time use, each in System.Runtime (home NULL) or in the assembly named.
 * A type not listed is an error without --reference: placing it in
 * System.Runtime by guess would fail only when the program runs. */
static const struct home runtime_homes[] = {
	{ "System", "Action", NULL, NULL },
	{ "System", "Action`1", NULL, NULL },
	{ "System", "Action`2", NULL, NULL },
	{ "System", "Action`3", NULL, NULL },
	{ "System", "Action`5", NULL, NULL },
	{ "System", "AppDomain", NULL, NULL },
	{ "System", "ArgumentException", NULL, NULL },
	{ "System", "EventHandler`1", NULL, NULL },
	{ "System.Runtime.ExceptionServices", "FirstChanceExceptionEventArgs", NULL, NULL },
	{ "System", "ArgumentNullException", NULL, NULL },
	{ "System", "ArgumentOutOfRangeException", NULL, NULL },
	{ "System", "Array", NULL, NULL },
	{ "System", "Attribute", NULL, NULL },
	{ "System", "AttributeTargets", NULL, NULL },
	{ "System", "AttributeUsageAttribute", NULL, NULL },
	{ "System", "Boolean", NULL, NULL },
	{ "System", "Byte", NULL, NULL },
	{ "System", "Char", NULL, NULL },
	{ "System.Collections.Generic", "ICollection`1", NULL, NULL },
	{ "System.Collections.Generic", "IComparer`1", NULL, NULL },
	{ "System.Collections.Generic", "IEnumerable`1", NULL, NULL },
	{ "System.Collections.Generic", "IEnumerator`1", NULL, NULL },
	{ "System.Collections.Generic", "IEqualityComparer`1", NULL, NULL },
	{ "System.Collections.Generic", "IList`1", NULL, NULL },
	{ "System.Collections.Generic", "KeyValuePair`2", NULL, NULL },
	{ "System.Collections", "ICollection", NULL, NULL },
	{ "System.Collections", "IDictionary", NULL, NULL },
	{ "System.Collections", "IEnumerable", NULL, NULL },
	{ "System.Collections", "IEnumerator", NULL, NULL },
	{ "System", "Comparison`1", NULL, NULL },
	{ "System", "DateTime", NULL, NULL },
	{ "System", "Decimal", NULL, NULL },
	{ "System", "Delegate", NULL, NULL },
	{ "System.Diagnostics", "DebuggerHiddenAttribute", NULL, NULL },
	{ "System.Diagnostics", "DebuggerNonUserCodeAttribute", NULL, NULL },
	{ "System", "Double", NULL, NULL },
	{ "System", "Enum", NULL, NULL },
	{ "System", "EventArgs", NULL, NULL },
	{ "System", "EventHandler", NULL, NULL },
	{ "System", "Exception", NULL, NULL },
	{ "System", "FormatException", NULL, NULL },
	{ "System", "Func`1", NULL, NULL },
	{ "System", "Func`2", NULL, NULL },
	{ "System", "Func`3", NULL, NULL },
	{ "System", "GC", NULL, NULL },
	{ "System.Globalization", "CultureInfo", NULL, NULL },
	{ "System.Globalization", "NumberStyles", NULL, NULL },
	{ "System", "Guid", NULL, NULL },
	{ "System", "IDisposable", NULL, NULL },
	{ "System", "IFormatProvider", NULL, NULL },
	{ "System.IO", "Directory", NULL, NULL },
	{ "System.IO", "FileAccess", NULL, NULL },
	{ "System.IO", "FileMode", NULL, NULL },
	{ "System.IO", "FileShare", NULL, NULL },
	{ "System.IO", "FileStream", NULL, NULL },
	{ "Microsoft.Win32.SafeHandles", "SafeFileHandle", NULL, NULL },
	{ "System.IO", "IOException", NULL, NULL },
	{ "System.IO", "Path", NULL, NULL },
	{ "System.IO", "SeekOrigin", NULL, NULL },
	{ "System.IO", "Stream", NULL, NULL },
	{ "System.IO", "StreamWriter", NULL, NULL },
	{ "System.IO", "TextWriter", NULL, NULL },
	{ "System", "Int16", NULL, NULL },
	{ "System", "Int32", NULL, NULL },
	{ "System", "Int64", NULL, NULL },
	{ "System", "IntPtr", NULL, NULL },
	{ "System", "InvalidOperationException", NULL, NULL },
	{ "System", "Math", NULL, NULL },
	{ "System", "MulticastDelegate", NULL, NULL },
	{ "System", "NotSupportedException", NULL, NULL },
	{ "System", "Nullable`1", NULL, NULL },
	{ "System", "Object", NULL, NULL },
	{ "System.Reflection", "Assembly", NULL, NULL },
	{ "System.Reflection", "BindingFlags", NULL, NULL },
	{ "System.Reflection", "ConstructorInfo", NULL, NULL },
	{ "System.Reflection", "FieldInfo", NULL, NULL },
	{ "System.Reflection", "MemberInfo", NULL, NULL },
	{ "System.Reflection", "MethodBase", NULL, NULL },
	{ "System.Reflection", "MethodInfo", NULL, NULL },
	{ "System.Reflection", "ParameterInfo", NULL, NULL },
	{ "System.Reflection", "PropertyInfo", NULL, NULL },
	{ "System.Runtime.CompilerServices", "ConditionalWeakTable`2", NULL, NULL },
	{ "System.Runtime.CompilerServices", "CompilerGeneratedAttribute", NULL, NULL },
	{ "System.Diagnostics.CodeAnalysis", "DynamicDependencyAttribute", NULL, NULL },
	{ "System.Diagnostics.CodeAnalysis", "UnconditionalSuppressMessageAttribute", NULL, NULL },
	{ "System.Runtime.CompilerServices", "IsVolatile", NULL, NULL },
	{ "System.Runtime.CompilerServices", "RuntimeHelpers", NULL, NULL },
	{ "System", "RuntimeFieldHandle", NULL, NULL },
	{ "System", "RuntimeMethodHandle", NULL, NULL },
	{ "System", "RuntimeTypeHandle", NULL, NULL },
	{ "System", "SByte", NULL, NULL },
	{ "System", "Single", NULL, NULL },
	{ "System", "String", NULL, NULL },
	{ "System", "StringComparer", NULL, NULL },
	{ "System", "StringComparison", NULL, NULL },
	{ "System.Text", "Encoding", NULL, NULL },
	{ "System.Threading.Tasks", "Task", NULL, NULL },
	{ "System.Threading.Tasks", "Task`1", NULL, NULL },
	{ "System.Threading.Tasks", "TaskContinuationOptions", NULL, NULL },
	{ "System.Threading.Tasks", "TaskStatus", NULL, NULL },
	{ "System.Text", "StringBuilder", NULL, NULL },
	{ "System", "ThreadStaticAttribute", NULL, NULL },
	{ "System", "TimeSpan", NULL, NULL },
	{ "System", "Type", NULL, NULL },
	{ "System", "UInt16", NULL, NULL },
	{ "System", "UInt32", NULL, NULL },
	{ "System", "UInt64", NULL, NULL },
	{ "System", "UIntPtr", NULL, NULL },
	{ "System", "UnhandledExceptionEventArgs", NULL, NULL },
	{ "System", "UnhandledExceptionEventHandler", NULL, NULL },
	{ "System", "ValueType", NULL, NULL },
	{ "System", "Void", NULL, NULL },
	{ "System", "WeakReference", NULL, NULL },
	{ "System", "Console", "System.Console", NULL },
	{ "System.Threading", "Monitor", "System.Threading", NULL },
	{ "System.Threading", "Interlocked", "System.Threading", NULL },
	{ "System.Threading", "Volatile", "System.Threading", NULL },
	{ "System.Threading", "ExecutionContext", "System.Threading", NULL },
	{ "System.Threading", "AsyncFlowControl", "System.Threading", NULL },
	{ "System.Threading", "SemaphoreSlim", "System.Threading", NULL },
	{ "System.Threading", "Thread", "System.Threading.Thread", NULL },
	{ "System.Threading", "ThreadStart", "System.Threading.Thread", NULL },
	{ "System.Collections.Generic", "Dictionary`2", "System.Collections", NULL },
	{ "System.Collections.Generic", "List`1", "System.Collections", NULL },
	{ "System.Collections.Generic", "Queue`1", "System.Collections", NULL },
	{ "System.Collections.Generic", "Stack`1", "System.Collections", NULL },
	{ "System.Collections.Generic", "HashSet`1", "System.Collections", NULL },
	{ "System.Collections.Generic", "Comparer`1", "System.Collections", NULL },
	{ "System.Collections.Generic", "EqualityComparer`1", "System.Collections", NULL },
	{ "System.Collections.Concurrent", "ConcurrentDictionary`2", "System.Collections.Concurrent", NULL },
	{ "System.Text", "UTF8Encoding", "System.Text.Encoding.Extensions", NULL },
	{ "System.Diagnostics", "Stopwatch", NULL, "System.Runtime.Extensions" },
	{ "System.Diagnostics", "StackTrace", "System.Diagnostics.StackTrace", NULL },
	{ "System.Diagnostics", "StackFrame", "System.Diagnostics.StackTrace", NULL },
	{ "System", "Environment", NULL, "System.Runtime.Extensions" },
	{ "System.IO", "File", NULL, "System.IO.FileSystem" },
	{ "System.IO", "FileInfo", NULL, "System.IO.FileSystem" },
	{ "System.IO", "FileSystemInfo", NULL, "System.IO.FileSystem" },
	{ "System.IO", "FileAttributes", NULL, "System.IO.FileSystem.Primitives" },
	{ "System.Runtime.InteropServices", "PosixSignalRegistration", "System.Runtime.InteropServices", NULL },
	{ "System.Runtime.InteropServices", "PosixSignal", "System.Runtime.InteropServices", NULL },
	{ "System.Runtime.InteropServices", "PosixSignalContext", "System.Runtime.InteropServices", NULL },
	{ "System.Runtime.Loader", "AssemblyLoadContext", "System.Runtime.Loader", NULL },
};

static const struct home corelib_homes[] = {
	{ "System", "Console", "System.Console", NULL },
};

/* A framework, told by the AssemblyRef named `base`: where each type lives. */
static const struct family {
	const char *base;
	const struct home *homes;     /* types outside base */
	size_t nhomes;
	const uint8_t *token;         /* token of new AssemblyRefs; NULL: base's */
	int listed_only;              /* a type not in homes is an error, not base's */
} families[] = {
	{ "mscorlib", mscorlib_homes, sizeof mscorlib_homes / sizeof mscorlib_homes[0], ecma_token, 0 },
	{ "netstandard", NULL, 0, NULL, 0 },
	{ "System.Runtime", runtime_homes, sizeof runtime_homes / sizeof runtime_homes[0], NULL, 1 },
	{ "System.Private.CoreLib", corelib_homes, sizeof corelib_homes / sizeof corelib_homes[0], msft_token, 0 },
};

/* An assembly to reference: what an AssemblyRef row copies (II.22.5). */
struct scope {
	const char *name;
	uint16_t ver[4];
	uint32_t flags;
	const char *culture;
	const uint8_t *key; /* public key, or its 8-byte token */
	uint32_t keylen;
	int full_key;
};

/* A reference assembly: only its metadata is read (it may be ReadyToRun or
 * mixed-mode, which img_load refuses; nothing of it is rewritten), and only
 * as far as a lookup needs it (enum ref_stage). */
struct ref_asm {
	struct pe_file pe;
	struct md_image md;
	const char *name;
	int pe_read;                   /* pe parsed */
	int stage;                     /* enum ref_stage read so far */
	struct lt_set types;           /* from REF_TYPES: its public top-level TypeDef rows, by name (ref_find_typedef) */
};

/* How much of a reference assembly is read: its name with its types, when
 * the context opens (every lookup needs them, in order: Assembly,
 * AssemblyRef, TypeDef, NestedClass, ExportedType, II.22); its members too
 * only when a member is looked for on one of its types (Field, MethodDef,
 * and TypeRef for their base types).  Its other tables (custom attributes,
 * parameters, member references...) are never read. */
enum ref_stage { REF_UNREAD, REF_TYPES, REF_MEMBERS };

#define TABLE_BIT(t) (1ull << (t))
static const uint64_t stage_tables[] = {
	[REF_UNREAD] = 0,
	[REF_TYPES] = TABLE_BIT(MD_ASSEMBLY) | TABLE_BIT(MD_ASSEMBLYREF) | TABLE_BIT(MD_TYPEDEF) |
		      TABLE_BIT(MD_NESTEDCLASS) | TABLE_BIT(MD_EXPORTEDTYPE),
	[REF_MEMBERS] = TABLE_BIT(MD_ASSEMBLY) | TABLE_BIT(MD_ASSEMBLYREF) | TABLE_BIT(MD_TYPEDEF) |
			TABLE_BIT(MD_NESTEDCLASS) | TABLE_BIT(MD_EXPORTEDTYPE) | TABLE_BIT(MD_FIELD) |
			TABLE_BIT(MD_METHODDEF) | TABLE_BIT(MD_TYPEREF),
};

struct wref_ctx {
	struct img *img;
	struct md_image *md;
	const struct weave_opts *opts;
	const char *own_name;          /* the target's Assembly name, "" for a module */
	int corlib;
	const struct family *family;   /* without opts->refs */
	uint32_t family_row;           /* the family's base AssemblyRef row */
	struct ref_asm *refs;          /* opts->nrefs, read as far as lookups need (ref_need) */
	size_t nrefs;
};

static int cell_string(const struct md_image *md, enum md_table_id t, uint32_t row, unsigned col, const char **out)
{
	return md_string(md, md_get(md, t, row, col), out);
}

static int cell_blob(const struct md_image *md, enum md_table_id t, uint32_t row, unsigned col,
		     const uint8_t **out, uint32_t *len)
{
	return md_blob(md, md_get(md, t, row, col), out, len);
}

/* Whether TypeDef or TypeRef row r (both: Name, then Namespace, II.22.37-38)
 * is ns.name: 1, 0, or -1 on malformed strings. */
static int type_named(const struct md_image *md, enum md_table_id t, uint32_t r, const char *ns, const char *name)
{
	const char *n, *s;

	_Static_assert((int)MD_TYPEDEF_NAME == (int)MD_TYPEREF_NAME && (int)MD_TYPEDEF_NAMESPACE == (int)MD_TYPEREF_NAMESPACE,
		       "TypeDef and TypeRef name columns");
	if (cell_string(md, t, r, MD_TYPEREF_NAME, &n) < 0 || cell_string(md, t, r, MD_TYPEREF_NAMESPACE, &s) < 0)
		return -1;
	return strcmp(n, name) == 0 && strcmp(s, ns) == 0;
}

/* A public top-level TypeDef ns.name (II.23.1.15: visibility Public):
 * 1 with *row, 0 when there is none, -1 on malformed strings. */
static int find_typedef(const struct md_image *md, const char *ns, const char *name, uint32_t *row)
{
	for (uint32_t r = 1; r <= md_rows(md, MD_TYPEDEF); r++) {
		int named;

		if ((md_get(md, MD_TYPEDEF, r, MD_TYPEDEF_FLAGS) & 0x7) != 0x1)
			continue;
		if ((named = type_named(md, MD_TYPEDEF, r, ns, name)) != 0) {
			*row = r;
			return named;
		}
	}
	return 0;
}

/* An ExportedType ns.name forwarded to an AssemblyRef (II.22.14): 1 with the
 * AssemblyRef row, 0 when there is none, -1 on malformed cells. */
static int find_forwarder(const struct md_image *md, const char *ns, const char *name, uint32_t *asmref)
{
	const char *n, *s;
	uint32_t impl;

	for (uint32_t r = 1; r <= md_rows(md, MD_EXPORTEDTYPE); r++) {
		if (cell_string(md, MD_EXPORTEDTYPE, r, MD_EXPORTEDTYPE_NAME, &n) < 0 ||
		    cell_string(md, MD_EXPORTEDTYPE, r, MD_EXPORTEDTYPE_NAMESPACE, &s) < 0 ||
		    md_coded_decode(MD_CI_IMPLEMENTATION, md_get(md, MD_EXPORTEDTYPE, r, MD_EXPORTEDTYPE_IMPLEMENTATION),
				    &impl) < 0)
			return -1;
		if (strcmp(n, name) || strcmp(s, ns) || md_token_table(impl) != MD_ASSEMBLYREF ||
		    md_token_row(impl) == 0 || md_token_row(impl) > md_rows(md, MD_ASSEMBLYREF))
			continue;
		*asmref = md_token_row(impl);
		return 1;
	}
	return 0;
}

/* The scope an AssemblyRef row describes (II.22.5: flag 0x0001 = full key). */
static int scope_of_assemblyref(const struct md_image *md, uint32_t row, struct scope *s)
{
	memset(s, 0, sizeof *s);
	for (unsigned k = 0; k < 4; k++)
		s->ver[k] = (uint16_t)md_get(md, MD_ASSEMBLYREF, row, MD_ASSEMBLYREF_MAJORVERSION + k);
	s->flags = md_get(md, MD_ASSEMBLYREF, row, MD_ASSEMBLYREF_FLAGS);
	s->full_key = s->flags & 0x0001;
	return cell_string(md, MD_ASSEMBLYREF, row, MD_ASSEMBLYREF_NAME, &s->name) < 0 ||
	       cell_string(md, MD_ASSEMBLYREF, row, MD_ASSEMBLYREF_CULTURE, &s->culture) < 0 ||
	       cell_blob(md, MD_ASSEMBLYREF, row, MD_ASSEMBLYREF_PUBLICKEYORTOKEN, &s->key, &s->keylen) < 0 ? -1 : 0;
}

/* The scope an assembly's own Assembly row describes (II.22.2). */
static int scope_of_assembly(const struct md_image *md, struct scope *s)
{
	memset(s, 0, sizeof *s);
	for (unsigned k = 0; k < 4; k++)
		s->ver[k] = (uint16_t)md_get(md, MD_ASSEMBLY, 1, MD_ASSEMBLY_MAJORVERSION + k);
	s->flags = md_get(md, MD_ASSEMBLY, 1, MD_ASSEMBLY_FLAGS);
	s->full_key = 1;
	return cell_string(md, MD_ASSEMBLY, 1, MD_ASSEMBLY_NAME, &s->name) < 0 ||
	       cell_string(md, MD_ASSEMBLY, 1, MD_ASSEMBLY_CULTURE, &s->culture) < 0 ||
	       cell_blob(md, MD_ASSEMBLY, 1, MD_ASSEMBLY_PUBLICKEY, &s->key, &s->keylen) < 0 ? -1 : 0;
}

/* The target's AssemblyRef for s: an existing one of the same name, else a
 * new row with s's version and culture and the token of s's key. */
static int assemblyref_for(struct wref_ctx *c, const struct scope *s, uint32_t *out_tok)
{
	uint32_t row, cells[MD_ASSEMBLYREF_COLS] = { 0 };
	uint8_t token[8];
	const uint8_t *key = s->key;
	uint32_t keylen = s->keylen;
	int found = md_find_assemblyref(c->md, s->name, &row);

	if (found < 0)
		return -1;
	if (!found) {
		if (s->full_key && keylen) {
			if (wref_public_key_token(key, keylen, token) < 0)
				return -1;
			key = token;
			keylen = sizeof token;
		}
		for (unsigned k = 0; k < 4; k++)
			cells[MD_ASSEMBLYREF_MAJORVERSION + k] = s->ver[k];
		cells[MD_ASSEMBLYREF_FLAGS] = s->flags & 0x0100; /* Retargetable; never PublicKey */
		if ((keylen && md_add_blob(c->md, key, keylen, &cells[MD_ASSEMBLYREF_PUBLICKEYORTOKEN]) < 0) ||
		    md_add_string(c->md, s->name, &cells[MD_ASSEMBLYREF_NAME]) < 0 ||
		    (s->culture[0] && md_add_string(c->md, s->culture, &cells[MD_ASSEMBLYREF_CULTURE]) < 0) ||
		    md_append_row(c->md, MD_ASSEMBLYREF, cells, &row) < 0)
			return -1;
	}
	*out_tok = md_token(MD_ASSEMBLYREF, row);
	return 0;
}

/* A type name looked for in a reference's index (types_eq). */
struct type_key {
	const struct md_image *md;
	const char *ns, *name;
};

static uint32_t type_hash(const char *ns, const char *name)
{
	return lt_set_hash(lt_set_hash(LT_SET_HASH_INIT, ns, strlen(ns) + 1), name, strlen(name));
}

static int types_eq(const void *ctx, uint32_t row)
{
	const struct type_key *k = ctx;

	return type_named(k->md, MD_TYPEDEF, row, k->ns, k->name) == 1;
}

/* Index r's public top-level TypeDefs (II.23.1.15 visibility Public) by
 * name, the first row of a name kept: find_typedef's answer for each. */
static int index_types(struct ref_asm *r)
{
	const struct md_image *md = &r->md;
	const char *ns, *name;

	if (lt_set_reserve(&r->types, md_rows(md, MD_TYPEDEF)) < 0)
		return -1;
	for (uint32_t row = 1; row <= md_rows(md, MD_TYPEDEF); row++) {
		struct type_key k = { md, NULL, NULL };
		uint32_t hash;

		if ((md_get(md, MD_TYPEDEF, row, MD_TYPEDEF_FLAGS) & 0x7) != 0x1)
			continue;
		if (cell_string(md, MD_TYPEDEF, row, MD_TYPEDEF_NAMESPACE, &ns) < 0 ||
		    cell_string(md, MD_TYPEDEF, row, MD_TYPEDEF_NAME, &name) < 0)
			return -1;
		k.ns = ns;
		k.name = name;
		hash = type_hash(ns, name);
		if (!lt_set_find(&r->types, hash, types_eq, &k) && lt_set_add(&r->types, hash, row) < 0)
			return -1;
	}
	return 0;
}

/* find_typedef in reference assembly i (read to REF_TYPES), through its
 * index: 1 with *row, 0 when it has no such type. */
static int ref_find_typedef(const struct wref_ctx *c, size_t i, const char *ns, const char *name, uint32_t *row)
{
	struct type_key k = { &c->refs[i].md, ns, name };

	*row = lt_set_find(&c->refs[i].types, type_hash(ns, name), types_eq, &k);
	return *row != 0;
}

/* Reference assembly i read at least to `stage` (its file read before
 * weaving, weave_refs_read: the error of that read, if it failed, is raised
 * here).  Returns 0, or -1 with that error or the one of parsing it,
 * prefixed with its path. */
static int ref_need(struct wref_ctx *c, size_t i, enum ref_stage stage)
{
	const struct weave_ref *ref = &c->opts->refs[i];
	struct ref_asm *r = &c->refs[i];
	uint32_t off;

	if (r->stage >= (int)stage)
		return 0;
	if (!ref->data)
		return lt_error_set(ref->error.code, "reference %s: %s", ref->path, ref->error.msg);
	if (!r->pe_read) {
		if (pe_parse(&r->pe, ref->data, ref->size) < 0)
			return lt_error_prefix("reference %s: ", ref->path);
		r->pe_read = 1;
	}
	md_free(&r->md);
	r->name = NULL;
	if (pe_rva_to_offset(&r->pe, r->pe.cli.metadata.rva, r->pe.cli.metadata.size, &off, LT_E_METADATA,
			     "metadata") < 0 ||
	    md_read_tables(&r->md, ref->data + off, r->pe.cli.metadata.size, stage_tables[stage]) < 0)
		return lt_error_prefix("reference %s: ", ref->path);
	/* II.22.2: an assembly has one Assembly row; a module has none. */
	if (md_rows(&r->md, MD_ASSEMBLY) == 0)
		return lt_error_set(LT_E_WEAVE, "reference %s: a module without an Assembly row (II.22.2)", ref->path);
	if (cell_string(&r->md, MD_ASSEMBLY, 1, MD_ASSEMBLY_NAME, &r->name) < 0 ||
	    (r->stage == REF_UNREAD && index_types(r) < 0))
		return lt_error_prefix("reference %s: ", ref->path);
	r->stage = stage;
	return 0;
}

static void free_refs(struct wref_ctx *c)
{
	for (size_t i = 0; c->refs && i < c->nrefs; i++) {
		md_free(&c->refs[i].md);
		pe_free(&c->refs[i].pe);
		lt_set_free(&c->refs[i].types);
	}
	free(c->refs);
}

/* The scope of type t among the reference assemblies.  Passes, in order:
 * a TypeDef in an assembly the target references; a forwarder there (the
 * runtime follows it); a TypeDef anywhere; a forwarder anywhere, whose
 * own target is then the scope.  Returns 1 with *out_tok, 0 when none of
 * them has it, -1. */
static int scope_in_refs(struct wref_ctx *c, const char *ns, const char *name, uint32_t *out_tok)
{

	for (unsigned pass = 0; pass < 4; pass++) {
		int need_referenced = pass < 2, forwarder = pass & 1;
		for (size_t i = 0; i < c->nrefs; i++) {
			const struct md_image *rmd = &c->refs[i].md;
			uint32_t row, asmref = 0;
			struct scope s;
			int referenced, found;

			if ((referenced = md_find_assemblyref(c->md, c->refs[i].name, &row)) < 0)
				return -1;
			if ((need_referenced && !referenced) || strcasecmp(c->refs[i].name, c->own_name) == 0)
				continue;
			found = forwarder ? find_forwarder(rmd, ns, name, &asmref)
					  : ref_find_typedef(c, i, ns, name, &row);
			if (found < 0)
				return lt_error_prefix("reference %s: ", c->opts->refs[i].path);
			if (!found)
				continue;
			if (forwarder && !need_referenced ? scope_of_assemblyref(rmd, asmref, &s) < 0
							  : scope_of_assembly(rmd, &s) < 0)
				return lt_error_prefix("reference %s: ", c->opts->refs[i].path);
			return assemblyref_for(c, &s, out_tok) < 0 ? -1 : 1;
		}
	}
	return 0;
}

/* The AssemblyRef of a TypeRef ns.name the target has already (its compiler
 * knew where the type lives): 1 with *out_tok, 0 when none, -1. */
static int referenced_scope(const struct md_image *md, const char *ns, const char *name, uint32_t *out_tok)
{
	uint32_t scope;

	for (uint32_t r = 1; r <= md_rows(md, MD_TYPEREF); r++) {
		int named;

		if (md_coded_decode(MD_CI_RESOLUTIONSCOPE, md_get(md, MD_TYPEREF, r, MD_TYPEREF_RESOLUTIONSCOPE), &scope) < 0)
			return -1;
		if (md_token_table(scope) != MD_ASSEMBLYREF || md_token_row(scope) == 0 ||
		    md_token_row(scope) > md_rows(md, MD_ASSEMBLYREF))
			continue;
		if ((named = type_named(md, MD_TYPEREF, r, ns, name)) != 0) {
			*out_tok = scope;
			return named;
		}
	}
	return 0;
}

/* The scope of type ns.name in the target's framework (c->family): the one
 * of a TypeRef the target has, else where the family puts it. */
static int scope_in_family(struct wref_ctx *c, const char *ns, const char *name, uint32_t *out_tok)
{
	const struct family *f = c->family;
	const char *home = f->base;
	uint32_t row;
	struct scope s;
	int found;
	size_t i;

	if ((found = referenced_scope(c->md, ns, name, out_tok)) != 0)
		return found < 0 ? -1 : 0;
	for (i = 0; i < f->nhomes; i++) {
		const struct home *h = &f->homes[i];

		if (strcmp(h->ns, ns) || strcmp(h->name, name))
			continue;
		if (h->home)
			home = h->home;
		if (h->legacy) {
			if ((found = md_find_assemblyref(c->md, h->legacy, &row)) < 0)
				return -1;
			if (found)
				home = h->legacy;
		}
		break;
	}
	if (i == f->nhomes && f->listed_only)
		return lt_error_set(LT_E_WEAVE, "%s.%s: %sLockTime does not know which %s assembly holds it "
				    "(pass the reference assemblies that define it: --reference)", ns, name,
				    c->nrefs ? "none of the reference assemblies given defines or forwards it, and " : "", f->base);
	if (strcasecmp(home, c->own_name) == 0)
		return lt_error_set(LT_E_WEAVE, "the target is %s but does not define %s.%s publicly", home, ns, name);
	if (scope_of_assemblyref(c->md, c->family_row, &s) < 0)
		return -1;
	s.name = home;
	if (f->token && strcasecmp(home, f->base) != 0) {
		s.key = f->token;
		s.keylen = 8;
		s.full_key = 0;
	}
	return assemblyref_for(c, &s, out_tok);
}

int wref_type(struct wref_ctx *c, const char *ns, const char *name, uint32_t *out)
{
	uint32_t row, scope = 0;
	int found = find_typedef(c->md, ns, name, &row);

	if (found < 0)
		return -1;
	if (found) {
		*out = md_token(MD_TYPEDEF, row);
		return 0;
	}
	if (c->corlib)
		return lt_error_set(LT_E_WEAVE, "the target is a core library (it defines System.Object) without %s.%s",
				    ns, name);
	/* The reference assemblies add to the framework: a type none of them has
	 * is where the framework puts it. */
	if ((found = c->nrefs ? scope_in_refs(c, ns, name, &scope) : 0) < 0)
		return -1;
	if (!found && !c->family)
		return lt_error_set(LT_E_WEAVE, "%s.%s: none of the %zu reference assemblies given (--reference) defines "
				    "or forwards it, and the target references no framework LockTime knows (mscorlib, "
				    "netstandard, System.Runtime, System.Private.CoreLib) to find it in", ns, name, c->nrefs);
	if (!found && scope_in_family(c, ns, name, &scope) < 0)
		return -1;
	return md_typeref(c->md, scope, ns, name, out);
}

/* Whether the framework's table of types (`runtime_homes`) lists ns.name. */
static int family_lists(const struct family *f, const char *ns, const char *name)
{
	for (size_t i = 0; f && f->listed_only && i < f->nhomes; i++)
		if (strcmp(f->homes[i].ns, ns) == 0 && strcmp(f->homes[i].name, name) == 0)
			return 1;
	return 0;
}

int wref_type_if_known(struct wref_ctx *c, const char *ns, const char *name, uint32_t *out)
{
	uint32_t row, scope = 0;
	int found = find_typedef(c->md, ns, name, &row);

	if (found)
		return found < 0 ? -1 : wref_type(c, ns, name, out) < 0 ? -1 : 1;
	if (c->corlib)
		return 0;
	if ((found = c->nrefs ? scope_in_refs(c, ns, name, &scope) : 0) != 0)
		return found < 0 ? -1 : md_typeref(c->md, scope, ns, name, out) < 0 ? -1 : 1;
	if (!family_lists(c->family, ns, name))
		return 0;
	return wref_type(c, ns, name, out) < 0 ? -1 : 1;
}

/* The framework of the target, from its AssemblyRefs. */
static int find_family(struct wref_ctx *c)
{
	for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
		int found = md_find_assemblyref(c->md, families[i].base, &c->family_row);
		if (found < 0)
			return -1;
		if (found) {
			c->family = &families[i];
			return 0;
		}
	}
	return lt_error_set(LT_E_WEAVE, "cannot tell the target's framework: it references none of mscorlib, "
			    "netstandard, System.Runtime, System.Private.CoreLib (pass --reference)");
}

/* The row of TypeDef `type_row`'s Field or MethodDef list (II.22.37: the
 * list runs to the next TypeDef's list) named `name` with signature
 * sig[0..len): 1 with *row, 0 when none, -1 on malformed cells. */
static int find_in_typedef(const struct md_image *md, enum md_table_id table, uint32_t type_row, const char *name,
			   const uint8_t *sig, uint32_t len, uint32_t *row)
{
	unsigned list = table == MD_FIELD ? MD_TYPEDEF_FIELDLIST : MD_TYPEDEF_METHODLIST;
	unsigned name_col = table == MD_FIELD ? MD_FIELD_NAME : MD_METHODDEF_NAME;
	unsigned sig_col = table == MD_FIELD ? MD_FIELD_SIGNATURE : MD_METHODDEF_SIGNATURE;
	uint32_t first = md_get(md, MD_TYPEDEF, type_row, list);
	uint32_t end = type_row < md_rows(md, MD_TYPEDEF) ? md_get(md, MD_TYPEDEF, type_row + 1, list)
							  : md_rows(md, table) + 1;
	const uint8_t *p;
	const char *n;
	uint32_t plen;

	for (uint32_t r = first; r < end && r <= md_rows(md, table); r++) {
		if (cell_string(md, table, r, name_col, &n) < 0 || cell_blob(md, table, r, sig_col, &p, &plen) < 0)
			return -1;
		if (strcmp(n, name) == 0 && plen == len && memcmp(p, sig, len) == 0) {
			*row = r;
			return 1;
		}
	}
	return 0;
}

int wref_clock(struct wref_ctx *c, uint32_t *method, int64_t *hz)
{
	for (size_t i = 0; i < sizeof corlib_clocks / sizeof corlib_clocks[0]; i++) {
		const struct clock_info *k = &corlib_clocks[i];
		uint32_t type, row, access;
		int found = find_typedef(c->md, k->ns, k->type, &type);

		if (found > 0)
			found = find_in_typedef(c->md, MD_METHODDEF, type, k->method, clock_sig, sizeof clock_sig, &row);
		if (found < 0)
			return -1;
		if (!found)
			continue;
		access = md_get(c->md, MD_METHODDEF, row, MD_METHODDEF_FLAGS) & MEMBER_ACCESS_MASK;
		if (access != ACCESS_ASSEMBLY && access != ACCESS_FAMORASSEM && access != ACCESS_PUBLIC)
			continue;
		*method = md_token(MD_METHODDEF, row);
		*hz = k->hz;
		return 0;
	}
	return lt_error_set(LT_E_WEAVE, "the target is a core library without System.Diagnostics.Stopwatch and "
			    "without a clock LockTime knows (System.DateTime.GetSystemTimeAsFileTime)");
}

/* The TypeDef nested in TypeDef `outer` of md named `name` (II.22.32): 1 with *row, 0, -1. */
static int find_nested(const struct md_image *md, uint32_t outer, const char *name, uint32_t *row)
{
	const char *n;

	for (uint32_t r = 1; r <= md_rows(md, MD_NESTEDCLASS); r++) {
		uint32_t nested = md_get(md, MD_NESTEDCLASS, r, MD_NESTEDCLASS_NESTEDCLASS);

		if (md_get(md, MD_NESTEDCLASS, r, MD_NESTEDCLASS_ENCLOSINGCLASS) != outer || nested == 0 ||
		    nested > md_rows(md, MD_TYPEDEF))
			continue;
		if (cell_string(md, MD_TYPEDEF, nested, MD_TYPEDEF_NAME, &n) < 0)
			return -1;
		if (strcmp(n, name) == 0) {
			*row = nested;
			return 1;
		}
	}
	return 0;
}

/* Deepest nesting of a type, and longest chain of base types, followed in reference assemblies. */
#define REF_MAX_CHAIN 16

/* The names of TypeRef `row` of md, outermost first (II.22.38: a nested
 * TypeRef is scoped to its enclosing one), *ns the outermost's namespace:
 * 1 with *n names, 0 for a chain too long or scoped elsewhere, -1. */
static int typeref_chain(const struct md_image *md, uint32_t row, const char **ns, const char *names[REF_MAX_CHAIN],
			 unsigned *n)
{
	const char *rev[REF_MAX_CHAIN];
	unsigned k = 0;
	uint32_t scope;

	for (;;) {
		if (k == REF_MAX_CHAIN || row == 0 || row > md_rows(md, MD_TYPEREF))
			return 0;
		if (cell_string(md, MD_TYPEREF, row, MD_TYPEREF_NAME, &rev[k++]) < 0 ||
		    md_coded_decode(MD_CI_RESOLUTIONSCOPE, md_get(md, MD_TYPEREF, row, MD_TYPEREF_RESOLUTIONSCOPE), &scope) < 0)
			return -1;
		if (md_token_table(scope) != MD_TYPEREF)
			break;
		row = md_token_row(scope);
	}
	if (cell_string(md, MD_TYPEREF, row, MD_TYPEREF_NAMESPACE, ns) < 0)
		return -1;
	for (unsigned i = 0; i < k; i++)
		names[i] = rev[k - 1 - i];
	*n = k;
	return 1;
}

/* The TypeDef named by a chain in some reference assembly: 1 with *ref and *row, 0. */
static int ref_typedef(const struct wref_ctx *c, const char *ns, const char *const *names, unsigned n, size_t *ref,
		       uint32_t *row)
{
	for (size_t i = 0; i < c->nrefs; i++) {
		int found = ref_find_typedef(c, i, ns, names[0], row);

		for (unsigned k = 1; found > 0 && k < n; k++)
			found = find_nested(&c->refs[i].md, *row, names[k], row);
		if (found) {
			*ref = i;
			return found;
		}
	}
	return 0;
}

/* Whether TypeDef `type` of reference assembly `ref`, or a base of it, has
 * the field, or the method with nparams parameters and has_this, `name`
 * (II.22.37 lists, Extends): 1, 0 when none does, 2 when a base is outside
 * the reference assemblies (unknown), -1. */
static int ref_has_member(struct wref_ctx *c, size_t ref, uint32_t type, int field, const char *name,
			  uint32_t nparams, int has_this)
{
	for (unsigned depth = 0; depth < REF_MAX_CHAIN; depth++) {
		const struct md_image *md = &c->refs[ref].md;

		if (ref_need(c, ref, REF_MEMBERS) < 0)
			return -1;
		enum md_table_id table = field ? MD_FIELD : MD_METHODDEF;
		unsigned list = field ? MD_TYPEDEF_FIELDLIST : MD_TYPEDEF_METHODLIST;
		uint32_t end = type < md_rows(md, MD_TYPEDEF) ? md_get(md, MD_TYPEDEF, type + 1, list) : md_rows(md, table) + 1;
		uint32_t base, np;
		unsigned chain_n;
		const char *n, *ns, *chain[REF_MAX_CHAIN];
		const uint8_t *p;
		uint32_t plen;
		int ht, ret, found;

		for (uint32_t r = md_get(md, MD_TYPEDEF, type, list); r < end && r <= md_rows(md, table); r++) {
			if (cell_string(md, table, r, field ? MD_FIELD_NAME : MD_METHODDEF_NAME, &n) < 0)
				return -1;
			if (strcmp(n, name) != 0)
				continue;
			if (field)
				return 1;
			if (cell_blob(md, table, r, MD_METHODDEF_SIGNATURE, &p, &plen) < 0 ||
			    sig_method_stack_effect(p, plen, &np, &ht, &ret) < 0)
				return -1;
			if (np == nparams && !ht == !has_this)
				return 1;
		}
		if (md_get(md, MD_TYPEDEF, type, MD_TYPEDEF_EXTENDS) == 0)
			return 0;
		if (md_coded_decode(MD_CI_TYPEDEFORREF, md_get(md, MD_TYPEDEF, type, MD_TYPEDEF_EXTENDS), &base) < 0)
			return -1;
		if (md_token_table(base) == MD_TYPEDEF) {
			type = md_token_row(base);
			continue;
		}
		if (md_token_table(base) != MD_TYPEREF)
			return 2; /* a generic base (TypeSpec) */
		if ((found = typeref_chain(md, md_token_row(base), &ns, chain, &chain_n)) <= 0 ||
		    (found = ref_typedef(c, ns, chain, chain_n, &ref, &type)) <= 0)
			return found < 0 ? -1 : 2;
	}
	return 2;
}

/* With reference assemblies: whether the member named exists on the type
 * (a TypeRef, or the generic type of a TypeSpec) of the target that
 * `owner` is, by name and parameter count: 1, 0 (missing: an error), 2
 * (not told: the type is defined in none of them), -1. */
static int member_in_refs(struct wref_ctx *c, uint32_t owner, int field, const char *name, const uint8_t *sig,
			  uint32_t len)
{
	const char *ns, *chain[REF_MAX_CHAIN];
	unsigned n;
	uint32_t nparams = 0, row;
	int has_this = 0, ret, found;
	size_t ref;

	if (md_token_table(owner) == MD_TYPESPEC) {
		struct sig_type *t = NULL;
		const uint8_t *p;
		uint32_t plen;

		if (md_token_row(owner) == 0 || md_token_row(owner) > md_rows(c->md, MD_TYPESPEC) ||
		    cell_blob(c->md, MD_TYPESPEC, md_token_row(owner), MD_TYPESPEC_SIGNATURE, &p, &plen) < 0 ||
		    sig_typespec_decode(p, plen, &t) < 0)
			return -1;
		owner = t->elem == SIG_GENERICINST ? t->token : 0;
		sig_type_free(t);
	}
	if (md_token_table(owner) != MD_TYPEREF)
		return 2;
	if (!field && sig_method_stack_effect(sig, len, &nparams, &has_this, &ret) < 0)
		return -1;
	if ((found = typeref_chain(c->md, md_token_row(owner), &ns, chain, &n)) <= 0 ||
	    (found = ref_typedef(c, ns, chain, n, &ref, &row)) <= 0)
		return found < 0 ? -1 : 2;
	return ref_has_member(c, ref, row, field, name, nparams, has_this);
}

int wref_member(struct wref_ctx *c, uint32_t owner, int field, const char *name, const uint8_t *sig, uint32_t len,
		uint32_t *out)
{
	enum md_table_id table = field ? MD_FIELD : MD_METHODDEF;
	uint32_t row;
	int found;

	if (md_token_table(owner) != MD_TYPEDEF) {
		if (c->nrefs && (found = member_in_refs(c, owner, field, name, sig, len)) <= 0)
			return found < 0 ? -1 : lt_error_set(LT_E_WEAVE, "the reference assemblies define the type "
							     "but no %s %s with that many parameters",
							     field ? "field" : "method", name);
		return md_memberref(c->md, owner, name, sig, len, out);
	}
	found = find_in_typedef(c->md, table, md_token_row(owner), name, sig, len, &row);
	if (found < 0)
		return -1;
	if (!found)
		return lt_error_set(LT_E_WEAVE, "the target defines the type but no %s %s with the signature needed",
				    field ? "field" : "method", name);
	*out = md_token(table, row);
	return 0;
}

int wref_nested(struct wref_ctx *c, uint32_t outer, const char *name, uint32_t *out)
{
	uint32_t row;
	unsigned vis;
	int found;

	if (md_token_table(outer) != MD_TYPEDEF)
		return md_typeref(c->md, outer, "", name, out);
	if ((found = find_nested(c->md, md_token_row(outer), name, &row)) < 0)
		return -1;
	/* II.23.1.15: a nested type other code of the assembly may use: NestedPublic,
	 * NestedAssembly or NestedFamORAssem. */
	vis = found ? md_get(c->md, MD_TYPEDEF, row, MD_TYPEDEF_FLAGS) & 0x7 : 0;
	if (vis != 2 && vis != 5 && vis != 7)
		return lt_error_set(LT_E_WEAVE, "the target's TypeDef row %u has no nested type %s it may use",
				    md_token_row(outer), name);
	*out = md_token(MD_TYPEDEF, row);
	return 0;
}

int wref_is_type(const struct md_image *md, uint32_t token, const char *ns, const char *name)
{
	enum md_table_id t = md_token_table(token);
	uint32_t r = md_token_row(token);

	if ((t != MD_TYPEREF && t != MD_TYPEDEF) || r == 0 || r > md_rows(md, t))
		return 0;
	return type_named(md, t, r, ns, name);
}

int wref_method(struct md_image *md, uint32_t owner, const char *name, const uint8_t *sig, uint32_t len,
		uint32_t *out)
{
	uint32_t row;
	int found;

	if (md_token_table(owner) == MD_TYPEREF)
		return md_memberref(md, owner, name, sig, len, out) < 0 ? -1 : 1;
	if (md_token_table(owner) != MD_TYPEDEF || md_token_row(owner) == 0 ||
	    md_token_row(owner) > md_rows(md, MD_TYPEDEF))
		return 0;
	found = find_in_typedef(md, MD_METHODDEF, md_token_row(owner), name, sig, len, &row);
	if (found > 0)
		*out = md_token(MD_METHODDEF, row);
	return found;
}

int wref_open(struct img *img, const struct weave_opts *opts, struct wref_ctx **out)
{
	struct wref_ctx *c = lt_calloc(1, sizeof *c);
	uint32_t row;
	int found;

	if (!c)
		return lt_nomem(NULL);
	*c = (struct wref_ctx){ .img = img, .md = &img->md, .opts = opts, .own_name = "" };
	*out = c;
	if (md_rows(c->md, MD_ASSEMBLY) &&
	    cell_string(c->md, MD_ASSEMBLY, 1, MD_ASSEMBLY_NAME, &c->own_name) < 0)
		goto fail;
	if ((found = find_typedef(c->md, "System", "Object", &row)) < 0)
		goto fail;
	c->corlib = found;
	/* Every lookup needs each reference's name and types (the first, in
	 * order, that...): those are read now; their members when needed. */
	if (c->opts->nrefs) {
		if (!(c->refs = lt_calloc(c->opts->nrefs, sizeof *c->refs))) {
			lt_nomem(NULL);
			goto fail;
		}
		c->nrefs = c->opts->nrefs;
		for (size_t i = 0; i < c->nrefs; i++)
			if (ref_need(c, i, REF_TYPES) < 0)
				goto fail;
	}
	/* With reference assemblies, a target of no framework LockTime knows
	 * resolves in them alone (wref_type). */
	if (!c->corlib && find_family(c) < 0) {
		if (!c->opts->nrefs || lt_error_last()->code != LT_E_WEAVE)
			goto fail;
		lt_error_clear();
	}
	return 0;
fail:
	wref_close(c);
	*out = NULL;
	return -1;
}

void wref_close(struct wref_ctx *c)
{
	if (!c)
		return;
	free_refs(c);
	free(c);
}

int wref_is_corlib(const struct wref_ctx *c)
{
	return c->corlib;
}
