/* md_schema.c - the ECMA-335 table and coded-index schema (II.22, II.24.2.6), column widths, an image's
 * table sizes, and coded indexes decoded and encoded. */
#include "md_image.h"
#include "lt_error.h"

#define N MD_NO_TABLE

/* II.24.2.6 coded indexes; HasCustomDebugInformation from PortablePdb-Metadata.md. */
const struct md_coded_schema md_coded[MD_CI_COUNT] = {
	[MD_CI_TYPEDEFORREF] = { "TypeDefOrRef", 2, 3, { MD_TYPEDEF, MD_TYPEREF, MD_TYPESPEC } },
	[MD_CI_HASCONSTANT] = { "HasConstant", 2, 3, { MD_FIELD, MD_PARAM, MD_PROPERTY } },
	[MD_CI_HASCUSTOMATTRIBUTE] = { "HasCustomAttribute", 5, 22,
		{ MD_METHODDEF, MD_FIELD, MD_TYPEREF, MD_TYPEDEF, MD_PARAM, MD_INTERFACEIMPL, MD_MEMBERREF,
		  MD_MODULE, MD_DECLSECURITY, MD_PROPERTY, MD_EVENT, MD_STANDALONESIG, MD_MODULEREF,
		  MD_TYPESPEC, MD_ASSEMBLY, MD_ASSEMBLYREF, MD_FILE, MD_EXPORTEDTYPE, MD_MANIFESTRESOURCE,
		  MD_GENERICPARAM, MD_GENERICPARAMCONSTRAINT, MD_METHODSPEC } },
	[MD_CI_HASFIELDMARSHAL] = { "HasFieldMarshal", 1, 2, { MD_FIELD, MD_PARAM } },
	[MD_CI_HASDECLSECURITY] = { "HasDeclSecurity", 2, 3, { MD_TYPEDEF, MD_METHODDEF, MD_ASSEMBLY } },
	[MD_CI_MEMBERREFPARENT] = { "MemberRefParent", 3, 5,
		{ MD_TYPEDEF, MD_TYPEREF, MD_MODULEREF, MD_METHODDEF, MD_TYPESPEC } },
	[MD_CI_HASSEMANTICS] = { "HasSemantics", 1, 2, { MD_EVENT, MD_PROPERTY } },
	[MD_CI_METHODDEFORREF] = { "MethodDefOrRef", 1, 2, { MD_METHODDEF, MD_MEMBERREF } },
	[MD_CI_MEMBERFORWARDED] = { "MemberForwarded", 1, 2, { MD_FIELD, MD_METHODDEF } },
	[MD_CI_IMPLEMENTATION] = { "Implementation", 2, 3, { MD_FILE, MD_ASSEMBLYREF, MD_EXPORTEDTYPE } },
	/* Tags 0, 1 and 4 are "not used" (II.24.2.6). */
	[MD_CI_CUSTOMATTRIBUTETYPE] = { "CustomAttributeType", 3, 5, { N, N, MD_METHODDEF, MD_MEMBERREF, N } },
	[MD_CI_RESOLUTIONSCOPE] = { "ResolutionScope", 2, 4,
		{ MD_MODULE, MD_MODULEREF, MD_ASSEMBLYREF, MD_TYPEREF } },
	[MD_CI_TYPEORMETHODDEF] = { "TypeOrMethodDef", 1, 2, { MD_TYPEDEF, MD_METHODDEF } },
	[MD_CI_HASCUSTOMDEBUGINFORMATION] = { "HasCustomDebugInformation", 5, 27,
		{ MD_METHODDEF, MD_FIELD, MD_TYPEREF, MD_TYPEDEF, MD_PARAM, MD_INTERFACEIMPL, MD_MEMBERREF,
		  MD_MODULE, MD_DECLSECURITY, MD_PROPERTY, MD_EVENT, MD_STANDALONESIG, MD_MODULEREF,
		  MD_TYPESPEC, MD_ASSEMBLY, MD_ASSEMBLYREF, MD_FILE, MD_EXPORTEDTYPE, MD_MANIFESTRESOURCE,
		  MD_GENERICPARAM, MD_GENERICPARAMCONSTRAINT, MD_METHODSPEC, MD_DOCUMENT, MD_LOCALSCOPE,
		  MD_LOCALVARIABLE, MD_LOCALCONSTANT, MD_IMPORTSCOPE } },
};

#undef N

/* Column constructors: fixed width, heap indexes, table index, coded index. */
#define U1(n) { n, MD_COL_FIXED, 1 }
#define U2(n) { n, MD_COL_FIXED, 2 }
#define U4(n) { n, MD_COL_FIXED, 4 }
#define STR(n) { n, MD_COL_STRING, 0 }
#define GUID(n) { n, MD_COL_GUID, 0 }
#define BLOB(n) { n, MD_COL_BLOB, 0 }
#define TAB(n, t) { n, MD_COL_TABLE, t }
#define CI(n, k) { n, MD_COL_CODED, MD_CI_##k }
/* A table: name, columns, then (for sorted tables) KEY(...) */
#define T(name, ...) { name, (uint8_t)(sizeof((struct md_col[]){ __VA_ARGS__ }) / sizeof(struct md_col)), \
		       { __VA_ARGS__ }, 0, { 0 }, 0 }
#define TS(name, nkeys, k0, k1, k2, desc, ...) \
		     { name, (uint8_t)(sizeof((struct md_col[]){ __VA_ARGS__ }) / sizeof(struct md_col)), \
		       { __VA_ARGS__ }, nkeys, { k0, k1, k2 }, desc }

/* II.22.2-22.39, in table-id order; sort keys from the "sorted" rules of II.22
 * and PortablePdb-Metadata.md. */
const struct md_table_schema md_schema[MD_TABLE_MAX] = {
	[MD_MODULE] = T("Module", U2("Generation"), STR("Name"), GUID("Mvid"), GUID("EncId"), GUID("EncBaseId")),
	[MD_TYPEREF] = T("TypeRef", CI("ResolutionScope", RESOLUTIONSCOPE), STR("TypeName"), STR("TypeNamespace")),
	[MD_TYPEDEF] = T("TypeDef", U4("Flags"), STR("TypeName"), STR("TypeNamespace"), CI("Extends", TYPEDEFORREF),
			 TAB("FieldList", MD_FIELD), TAB("MethodList", MD_METHODDEF)),
	[MD_FIELDPTR] = T("FieldPtr", TAB("Field", MD_FIELD)),
	[MD_FIELD] = T("Field", U2("Flags"), STR("Name"), BLOB("Signature")),
	[MD_METHODPTR] = T("MethodPtr", TAB("Method", MD_METHODDEF)),
	[MD_METHODDEF] = T("MethodDef", U4("RVA"), U2("ImplFlags"), U2("Flags"), STR("Name"), BLOB("Signature"),
			   TAB("ParamList", MD_PARAM)),
	[MD_PARAMPTR] = T("ParamPtr", TAB("Param", MD_PARAM)),
	[MD_PARAM] = T("Param", U2("Flags"), U2("Sequence"), STR("Name")),
	[MD_INTERFACEIMPL] = TS("InterfaceImpl", 1, MD_INTERFACEIMPL_CLASS, 0, 0, 0,
				TAB("Class", MD_TYPEDEF), CI("Interface", TYPEDEFORREF)),
	[MD_MEMBERREF] = T("MemberRef", CI("Class", MEMBERREFPARENT), STR("Name"), BLOB("Signature")),
	[MD_CONSTANT] = TS("Constant", 1, MD_CONSTANT_PARENT, 0, 0, 0,
			   U1("Type"), U1("Padding"), CI("Parent", HASCONSTANT), BLOB("Value")),
	[MD_CUSTOMATTRIBUTE] = TS("CustomAttribute", 1, MD_CUSTOMATTRIBUTE_PARENT, 0, 0, 0,
				  CI("Parent", HASCUSTOMATTRIBUTE), CI("Type", CUSTOMATTRIBUTETYPE), BLOB("Value")),
	[MD_FIELDMARSHAL] = TS("FieldMarshal", 1, MD_FIELDMARSHAL_PARENT, 0, 0, 0,
			       CI("Parent", HASFIELDMARSHAL), BLOB("NativeType")),
	[MD_DECLSECURITY] = TS("DeclSecurity", 1, MD_DECLSECURITY_PARENT, 0, 0, 0,
			       U2("Action"), CI("Parent", HASDECLSECURITY), BLOB("PermissionSet")),
	[MD_CLASSLAYOUT] = TS("ClassLayout", 1, MD_CLASSLAYOUT_PARENT, 0, 0, 0,
			      U2("PackingSize"), U4("ClassSize"), TAB("Parent", MD_TYPEDEF)),
	[MD_FIELDLAYOUT] = TS("FieldLayout", 1, MD_FIELDLAYOUT_FIELD, 0, 0, 0, U4("Offset"), TAB("Field", MD_FIELD)),
	[MD_STANDALONESIG] = T("StandAloneSig", BLOB("Signature")),
	[MD_EVENTMAP] = T("EventMap", TAB("Parent", MD_TYPEDEF), TAB("EventList", MD_EVENT)),
	[MD_EVENTPTR] = T("EventPtr", TAB("Event", MD_EVENT)),
	[MD_EVENT] = T("Event", U2("EventFlags"), STR("Name"), CI("EventType", TYPEDEFORREF)),
	[MD_PROPERTYMAP] = T("PropertyMap", TAB("Parent", MD_TYPEDEF), TAB("PropertyList", MD_PROPERTY)),
	[MD_PROPERTYPTR] = T("PropertyPtr", TAB("Property", MD_PROPERTY)),
	[MD_PROPERTY] = T("Property", U2("Flags"), STR("Name"), BLOB("Type")),
	[MD_METHODSEMANTICS] = TS("MethodSemantics", 1, MD_METHODSEMANTICS_ASSOCIATION, 0, 0, 0,
				  U2("Semantics"), TAB("Method", MD_METHODDEF), CI("Association", HASSEMANTICS)),
	[MD_METHODIMPL] = TS("MethodImpl", 1, MD_METHODIMPL_CLASS, 0, 0, 0, TAB("Class", MD_TYPEDEF),
			     CI("MethodBody", METHODDEFORREF), CI("MethodDeclaration", METHODDEFORREF)),
	[MD_MODULEREF] = T("ModuleRef", STR("Name")),
	[MD_TYPESPEC] = T("TypeSpec", BLOB("Signature")),
	[MD_IMPLMAP] = TS("ImplMap", 1, MD_IMPLMAP_MEMBERFORWARDED, 0, 0, 0, U2("MappingFlags"),
			  CI("MemberForwarded", MEMBERFORWARDED), STR("ImportName"), TAB("ImportScope", MD_MODULEREF)),
	[MD_FIELDRVA] = TS("FieldRVA", 1, MD_FIELDRVA_FIELD, 0, 0, 0, U4("RVA"), TAB("Field", MD_FIELD)),
	[MD_ENCLOG] = T("EncLog", U4("Token"), U4("FuncCode")),
	[MD_ENCMAP] = T("EncMap", U4("Token")),
	[MD_ASSEMBLY] = T("Assembly", U4("HashAlgId"), U2("MajorVersion"), U2("MinorVersion"), U2("BuildNumber"),
			  U2("RevisionNumber"), U4("Flags"), BLOB("PublicKey"), STR("Name"), STR("Culture")),
	[MD_ASSEMBLYPROCESSOR] = T("AssemblyProcessor", U4("Processor")),
	[MD_ASSEMBLYOS] = T("AssemblyOS", U4("OSPlatformID"), U4("OSMajorVersion"), U4("OSMinorVersion")),
	[MD_ASSEMBLYREF] = T("AssemblyRef", U2("MajorVersion"), U2("MinorVersion"), U2("BuildNumber"),
			     U2("RevisionNumber"), U4("Flags"), BLOB("PublicKeyOrToken"), STR("Name"),
			     STR("Culture"), BLOB("HashValue")),
	[MD_ASSEMBLYREFPROCESSOR] = T("AssemblyRefProcessor", U4("Processor"), TAB("AssemblyRef", MD_ASSEMBLYREF)),
	[MD_ASSEMBLYREFOS] = T("AssemblyRefOS", U4("OSPlatformId"), U4("OSMajorVersion"), U4("OSMinorVersion"),
			       TAB("AssemblyRef", MD_ASSEMBLYREF)),
	[MD_FILE] = T("File", U4("Flags"), STR("Name"), BLOB("HashValue")),
	[MD_EXPORTEDTYPE] = T("ExportedType", U4("Flags"), U4("TypeDefId"), STR("TypeName"), STR("TypeNamespace"),
			      CI("Implementation", IMPLEMENTATION)),
	[MD_MANIFESTRESOURCE] = T("ManifestResource", U4("Offset"), U4("Flags"), STR("Name"),
				  CI("Implementation", IMPLEMENTATION)),
	[MD_NESTEDCLASS] = TS("NestedClass", 1, MD_NESTEDCLASS_NESTEDCLASS, 0, 0, 0,
			      TAB("NestedClass", MD_TYPEDEF), TAB("EnclosingClass", MD_TYPEDEF)),
	[MD_GENERICPARAM] = TS("GenericParam", 2, MD_GENERICPARAM_OWNER, MD_GENERICPARAM_NUMBER, 0, 0,
			       U2("Number"), U2("Flags"), CI("Owner", TYPEORMETHODDEF), STR("Name")),
	[MD_METHODSPEC] = T("MethodSpec", CI("Method", METHODDEFORREF), BLOB("Instantiation")),
	[MD_GENERICPARAMCONSTRAINT] = TS("GenericParamConstraint", 1, MD_GENERICPARAMCONSTRAINT_OWNER, 0, 0, 0,
					 TAB("Owner", MD_GENERICPARAM), CI("Constraint", TYPEDEFORREF)),
	/* Portable PDB tables (PortablePdb-Metadata.md). */
	[MD_DOCUMENT] = T("Document", BLOB("Name"), GUID("HashAlgorithm"), BLOB("Hash"), GUID("Language")),
	[MD_METHODDEBUGINFORMATION] = T("MethodDebugInformation", TAB("Document", MD_DOCUMENT),
					BLOB("SequencePoints")),
	/* LocalScope: by Method, then StartOffset, then Length descending. */
	[MD_LOCALSCOPE] = TS("LocalScope", 3, MD_LOCALSCOPE_METHOD, MD_LOCALSCOPE_STARTOFFSET, MD_LOCALSCOPE_LENGTH,
			     0x4, TAB("Method", MD_METHODDEF), TAB("ImportScope", MD_IMPORTSCOPE),
			     TAB("VariableList", MD_LOCALVARIABLE), TAB("ConstantList", MD_LOCALCONSTANT),
			     U4("StartOffset"), U4("Length")),
	[MD_LOCALVARIABLE] = T("LocalVariable", U2("Attributes"), U2("Index"), STR("Name")),
	[MD_LOCALCONSTANT] = T("LocalConstant", STR("Name"), BLOB("Signature")),
	[MD_IMPORTSCOPE] = T("ImportScope", TAB("Parent", MD_IMPORTSCOPE), BLOB("Imports")),
	[MD_STATEMACHINEMETHOD] = TS("StateMachineMethod", 1, MD_STATEMACHINEMETHOD_MOVENEXTMETHOD, 0, 0, 0,
				     TAB("MoveNextMethod", MD_METHODDEF), TAB("KickoffMethod", MD_METHODDEF)),
	[MD_CUSTOMDEBUGINFORMATION] = TS("CustomDebugInformation", 1, MD_CUSTOMDEBUGINFORMATION_PARENT, 0, 0, 0,
					 CI("Parent", HASCUSTOMDEBUGINFORMATION), GUID("Kind"), BLOB("Value")),
};

unsigned md_col_width(const struct md_sizes *s, const struct md_col *c)
{
	const struct md_coded_schema *k;
	unsigned i;

	switch (c->kind) {
	case MD_COL_FIXED:
		return c->arg;
	case MD_COL_STRING:
		return s->heap_sizes & MD_HEAP_STRINGS_WIDE ? 4 : 2;
	case MD_COL_GUID:
		return s->heap_sizes & MD_HEAP_GUID_WIDE ? 4 : 2;
	case MD_COL_BLOB:
		return s->heap_sizes & MD_HEAP_BLOB_WIDE ? 4 : 2;
	case MD_COL_TABLE:
		return s->rows[c->arg] > 0xFFFF ? 4 : 2;
	default: /* MD_COL_CODED: II.24.2.6, "rows < 2^(16 - n)" for every target */
		k = &md_coded[c->arg];
		for (i = 0; i < k->ntags; i++)
			if (k->tables[i] != MD_NO_TABLE && s->rows[k->tables[i]] >= (1u << (16 - k->tag_bits)))
				return 4;
		return 2;
	}
}

uint32_t md_row_size(const struct md_sizes *s, enum md_table_id t)
{
	const struct md_table_schema *ts = &md_schema[t];
	uint32_t n = 0;
	unsigned c;

	for (c = 0; c < ts->ncols; c++)
		n += md_col_width(s, &ts->cols[c]);
	return n;
}

void md_image_sizes(const struct md_image *md, uint8_t heap_sizes, struct md_sizes *out)
{
	unsigned t;

	for (t = 0; t < MD_TABLE_MAX; t++)
		out->rows[t] = md->has_pdb && t < MD_DOCUMENT ? md->type_system_rows[t] : md->tables[t].rows;
	out->heap_sizes = heap_sizes;
}

int md_coded_decode(enum md_coded_index k, uint32_t cell, uint32_t *out_token)
{
	const struct md_coded_schema *cs = &md_coded[k];
	uint32_t tag = cell & ((1u << cs->tag_bits) - 1);

	if (tag >= cs->ntags || cs->tables[tag] == MD_NO_TABLE)
		return lt_error_set(LT_E_METADATA, "%s: tag %u invalid (II.24.2.6)", cs->name, tag);
	*out_token = md_token((enum md_table_id)cs->tables[tag], cell >> cs->tag_bits);
	return 0;
}

int md_coded_encode(enum md_coded_index k, uint32_t token, uint32_t *out_cell)
{
	const struct md_coded_schema *cs = &md_coded[k];
	uint32_t tag;

	for (tag = 0; tag < cs->ntags; tag++)
		if (cs->tables[tag] == md_token_table(token)) {
			*out_cell = md_token_row(token) << cs->tag_bits | tag;
			return 0;
		}
	return lt_error_set(LT_E_METADATA, "%s: token 0x%08x names a table it cannot hold (II.24.2.6)", cs->name,
			    token);
}
