/* fuzz_pe_fields.h - a structure-aware mutation of an assembly's headers (fuzz_pe_fields.c). */
#ifndef FUZZ_PE_FIELDS_H
#define FUZZ_PE_FIELDS_H

#include <stddef.h>
#include <stdint.h>

/* Set one header field of the image data[0..size) in place: seed picks the
 * field among those found by walking the MS-DOS, COFF and optional headers,
 * the data directories, the section table, the CLI header, the metadata root
 * and stream headers and the #~ header (II.24-25, walked only as far as the
 * bytes allow), and the value (0, all ones, the file size +-1, the old value
 * +-1, doubled, with its top or another bit flipped...).  Returns 1, or 0
 * when no field lies in the file (data unchanged). */
int fuzz_pe_fields(uint8_t *data, size_t size, unsigned seed);

#endif
