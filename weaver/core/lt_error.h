/* lt_error.h - the one error convention of LockTime.
 *
 * Every fallible function returns 0 on success or -1 on failure.  The function
 * that detects a failure records it once with lt_error_set(): a diagnostic code
 * (the NN of "LT0NN") and a message that says where ("TypeDef row 7: Extends
 * tag 3 invalid (II.24.2.6)").  Callers pass -1 up unchanged; the command line
 * turns the record into an MSBuild canonical diagnostic at the edge:
 *     <file>: error LT0NN: <message>
 */
#ifndef LT_ERROR_H
#define LT_ERROR_H

#include <stdarg.h>

/* printf-style checking of a function's format (argument fmt) and its
 * arguments (from first): mingw-w64's printf is C99's (__USE_MINGW_ANSI_STDIO),
 * which its compiler calls gnu_printf, while "printf" there means msvcrt's. */
#ifdef __MINGW32__
#define LT_PRINTF(fmt, first) __attribute__((format(gnu_printf, fmt, first)))
#else
#define LT_PRINTF(fmt, first) __attribute__((format(printf, fmt, first)))
#endif

/* Diagnostic codes.  docs/diagnostics.md lists each with its meaning. */
enum lt_code {
	LT_E_NONE = 0,
	LT_E_IO = 1,          /* a file could not be read or written */
	LT_E_NOT_PE = 2,      /* not a PE image, or its PE headers are malformed */
	LT_E_NOT_CLI = 3,     /* a PE image without a CLI header: not .NET */
	LT_E_METADATA = 4,    /* malformed metadata root, stream, heap or table */
	LT_E_BODY = 5,        /* malformed IL method body or EH section */
	LT_E_SIGNATURE = 6,   /* malformed signature blob */
	LT_E_MIXED_MODE = 7,  /* mixed-mode (C++/CLI) image: refused */
	LT_E_READY_TO_RUN = 8,/* ReadyToRun image: refused */
	LT_E_REF_ASSEMBLY = 9,/* reference assembly: refused */
	LT_E_LIMIT = 10,      /* a size or count beyond the sane limits */
	LT_E_LAYOUT = 11,     /* the image cannot be laid out again */
	LT_E_USAGE = 12,      /* bad command line */
	LT_E_NOMEM = 13,      /* out of memory */
	LT_E_ENCODE = 14,     /* an edit cannot be encoded (branch range, sizes) */
	LT_E_WEAVE = 15,      /* a lock site cannot be woven */
	LT_E_PACKAGE = 16,    /* malformed or hostile .nupkg */
	LT_E_PDB = 17,        /* malformed debug symbols */
	LT_E_STRONG_NAME = 18,/* warning: a strong-name signature no longer matches */
	LT_E_REPORT = 19,     /* malformed LockTime report (JSON) */
	LT_E_KEY = 20,        /* a strong-name key cannot be read, does not sign, or is not the assembly's */
	LT_E_KEY_CONTAINER = 21, /* no key container of that name in the platform's key stores */
	LT_E_FILTERED = 22,   /* warning: lock sites were found and all left alone by the filters */
	LT_E_SAME_FILE = 23,  /* warning: a report given again (another path to it too): read once */
	/* 24: retired (LT024 was a warning of the embedded ILLink.LinkAttributes.xml, no longer written) */
	LT_E_TRIM_ATTRIBUTE = 25, /* warning: the assembly's own class of an attribute for the trimmer does not
				   * fit the run-time's uses of it: they are left out */
	LT_E_INTERNAL = 26,   /* a defect of the weaver caught before it wrote: the woven image does not read back */
};

/* The last recorded error.  code is an lt_code; msg is NUL-terminated. */
struct lt_error {
	int code;
	char msg[512];
};

/* Record an error, replacing any earlier one.  Always returns -1 so that a
 * failure site reads `return lt_error_set(LT_E_METADATA, "...", ...);`. */
int lt_error_set(int code, const char *fmt, ...)
	LT_PRINTF(2, 3);

/* Prefix the recorded message with context ("MethodDef row 12: ") and
 * return -1.  Used by callers that know more about where a failure happened. */
int lt_error_prefix(const char *fmt, ...) LT_PRINTF(1, 2);

/* The last recorded error; code is LT_E_NONE when nothing failed. */
const struct lt_error *lt_error_last(void);

/* Forget the recorded error. */
void lt_error_clear(void);

#endif
