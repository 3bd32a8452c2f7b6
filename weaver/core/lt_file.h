/* lt_file.h - whole-file reads and crash-safe replacement of files. */
#ifndef LT_FILE_H
#define LT_FILE_H

#include <stddef.h>
#include <stdint.h>

/* Largest input read: assemblies and packages past this are refused. */
#define LT_FILE_MAX ((size_t)1 << 30)

/* Read the whole file at `path` into a new buffer (*out, freed by the caller
 * with free()).  Returns 0, or -1 with LT_E_IO (cannot open/read, names the
 * path and errno text) or LT_E_LIMIT (larger than LT_FILE_MAX). */
int lt_file_read(const char *path, uint8_t **out, size_t *size);

/* Replace `path` with data[0..size) atomically: write a temporary file in the
 * same folder, fsync it, copy the old file's mode, rename it over `path`, and
 * fsync the folder.  A crash at any point leaves the old file or the new one;
 * on failure the temporary file is removed and `path` is untouched.
 * Returns 0, or -1 with LT_E_IO. */
int lt_file_write_atomic(const char *path, const uint8_t *data, size_t size);

#endif
