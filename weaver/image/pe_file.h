/* pe_file.h - the PE/COFF file that carries a .NET image (ECMA-335 II.25):
 * DOS and PE headers (PE32 and PE32+), sections, RVA mapping, data
 * directories, the CLI header (II.25.3.3) and the debug directory. */
#ifndef PE_FILE_H
#define PE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "lt_cursor.h"

/* Data directory indexes (PE/COFF "Optional Header Data Directories"). */
enum pe_dir_index {
	PE_DIR_EXPORT = 0,
	PE_DIR_IMPORT = 1,
	PE_DIR_RESOURCE = 2,
	PE_DIR_EXCEPTION = 3,
	PE_DIR_CERTIFICATE = 4, /* a file offset, not an RVA */
	PE_DIR_BASERELOC = 5,
	PE_DIR_DEBUG = 6,
	PE_DIR_IAT = 12,
	PE_DIR_CLI_HEADER = 14,
	PE_DIR_MAX = 16,
};

/* CLI header Flags (II.25.3.3.1). */
enum pe_cli_flags {
	PE_COMIMAGE_ILONLY = 0x1,
	PE_COMIMAGE_32BITREQUIRED = 0x2,
	PE_COMIMAGE_IL_LIBRARY = 0x4,
	PE_COMIMAGE_STRONGNAMESIGNED = 0x8,
	PE_COMIMAGE_NATIVE_ENTRYPOINT = 0x10,
	PE_COMIMAGE_TRACKDEBUGDATA = 0x10000,
	PE_COMIMAGE_32BITPREFERRED = 0x20000,
};

/* Debug directory entry types (PE-COFF.md in dotnet/runtime docs). */
enum pe_debug_type {
	PE_DEBUG_CODEVIEW = 2,
	PE_DEBUG_REPRODUCIBLE = 16,
	PE_DEBUG_EMBEDDED_PDB = 17,
	PE_DEBUG_PDBCHECKSUM = 19,
};

struct pe_dir {
	uint32_t rva;
	uint32_t size;
};

struct pe_section {
	char name[9];             /* NUL-terminated copy of the 8-byte name */
	uint32_t virtual_size;
	uint32_t virtual_address; /* RVA */
	uint32_t raw_size;        /* SizeOfRawData, bytes in the file */
	uint32_t raw_ptr;         /* PointerToRawData, file offset */
	uint32_t characteristics;
};

struct pe_debug_entry {
	uint32_t entry_offset;    /* file offset of this 28-byte entry */
	uint32_t timestamp;
	uint16_t major, minor;
	uint32_t type;            /* enum pe_debug_type */
	uint32_t size;            /* SizeOfData */
	uint32_t rva;             /* AddressOfRawData, 0 when not mapped */
	uint32_t file_offset;     /* PointerToRawData */
};

/* The CLI header (II.25.3.3), 72 bytes. */
struct pe_cli_header {
	uint32_t offset;          /* file offset of the header */
	uint16_t major_runtime, minor_runtime;
	struct pe_dir metadata;
	uint32_t flags;           /* enum pe_cli_flags */
	uint32_t entry_point;     /* token, or RVA with NATIVE_ENTRYPOINT */
	struct pe_dir resources, strong_name, code_manager, vtable_fixups, export_jumps, native_header;
};

/* A parsed PE file.  The file bytes are borrowed; offsets are file offsets. */
struct pe_file {
	const uint8_t *data;
	size_t size;
	uint32_t coff_offset;     /* offset of the COFF file header (after "PE\0\0") */
	uint16_t machine;
	uint16_t characteristics;
	uint32_t symbol_table;    /* PointerToSymbolTable, usually 0 */
	uint32_t opt_offset;      /* offset of the optional header */
	uint16_t opt_size;        /* SizeOfOptionalHeader */
	int pe32plus;             /* 1 for PE32+ (magic 0x20B), 0 for PE32 (0x10B) */
	uint32_t section_alignment, file_alignment;
	uint32_t size_of_image, size_of_headers, checksum;
	uint32_t ndirs;
	struct pe_dir dirs[PE_DIR_MAX];
	uint16_t nsections;
	uint32_t sections_offset; /* file offset of the section table */
	struct pe_section *sections; /* owned */
	struct pe_cli_header cli;
	uint32_t ndebug;
	struct pe_debug_entry *debug; /* owned */
};

/* Optional-header field offsets shared by PE32 and PE32+ (PE/COFF spec). */
enum pe_opt_field {
	PE_OPT_SIZE_OF_CODE = 4,
	PE_OPT_SIZE_OF_INIT_DATA = 8,
	PE_OPT_SECTION_ALIGNMENT = 32,
	PE_OPT_FILE_ALIGNMENT = 36,
	PE_OPT_SIZE_OF_IMAGE = 56,
	PE_OPT_SIZE_OF_HEADERS = 60,
	PE_OPT_CHECKSUM = 64,
};

/* Parse data[0..size) as a PE file with a CLI header.  data is borrowed and
 * must outlive *out.  Checks every header field it uses against the file:
 * section raw data inside the file and after the section table, alignments
 * powers of two, directories inside a section.
 * Returns 0, or -1 with LT_E_NOT_PE (not a PE file, malformed headers) or
 * LT_E_NOT_CLI (a valid PE file without a CLI header: native code). */
int pe_parse(struct pe_file *out, const uint8_t *data, size_t size);

/* Free what pe_parse allocated.  NULL is a no-op. */
void pe_free(struct pe_file *pe);

/* Map [rva, rva+len) to a file offset; the whole range must lie in one
 * section's raw data.  Returns 0, or -1 with `code` and a message naming
 * `what` when it does not. */
int pe_rva_to_offset(const struct pe_file *pe, uint32_t rva, uint32_t len, uint32_t *out,
		     int code, const char *what);

/* The addresses section s takes from its VirtualAddress, in bytes: its
 * VirtualSize, or its SizeOfRawData when that is longer (PE/COFF "Section
 * Table": the raw data is rounded up to FileAlignment, which SectionAlignment
 * is at least).  pe_parse has checked that no two sections' spans overlap. */
uint32_t pe_section_span(const struct pe_section *s);

/* A cursor over the bytes from `rva` to the end of its section's raw data,
 * for reading structures whose length is found while reading them (method
 * bodies).  Returns 0, or -1 with `code` when rva is not mapped. */
int pe_rva_cursor(const struct pe_file *pe, uint32_t rva, struct lt_cur *out, int code,
		  const char *what);

/* The PE checksum (the algorithm of IMAGEHLP CheckSumMappedFile): 16-bit
 * one's-complement sum of the file's little-endian 16-bit words with the
 * CheckSum field taken as 0, plus the file size.  Computed over a file given
 * in pieces: pe_checksum_init with the file offset of the CheckSum field,
 * pe_checksum_add for each piece in order (NULL data = len zero bytes; pieces
 * may have odd lengths), then pe_checksum_end. */
struct pe_checksum {
	uint64_t sum;
	uint64_t pos;       /* bytes added so far */
	uint32_t skip;      /* offset of the CheckSum field */
	uint8_t low;        /* first byte of a word split between pieces */
};

void pe_checksum_init(struct pe_checksum *c, uint32_t checksum_offset);
void pe_checksum_add(struct pe_checksum *c, const uint8_t *data, size_t len);
uint32_t pe_checksum_end(struct pe_checksum *c);

#endif
