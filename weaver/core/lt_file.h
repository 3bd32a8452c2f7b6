/* lt_file.h - whole-file reads, crash-safe replacement of files, and the rest of
 * what the weaver asks of the operating system: the one portability layer.
 * lt_file.c holds what every host shares; lt_file_posix.c (Linux, macOS) or
 * lt_file_win.c (Windows: UTF-8 paths through the wide-character API) the rest,
 * one of them chosen by the build. Paths are UTF-8 byte strings everywhere. */
#ifndef LT_FILE_H
#define LT_FILE_H

#include <stddef.h>
#include <stdint.h>

/* Prepare the process at the start of main: stdin, stdout and stderr in
 * binary mode (no "\n" to "\r\n" on Windows), *argv in UTF-8 (on Windows
 * rebuilt from the UTF-16 command line; the strings live as long as the
 * process), and on glibc a fixed mmap threshold (see lt_file_posix.c). */
void lt_file_start(int *argc, char ***argv);

/* Whether c separates the parts of a path: '/' (and '\\' on Windows). */
int lt_path_is_sep(char c);

/* Length of the folder part of path, up to and with its last separator (on
 * Windows also a drive's "C:"): path + lt_path_dir_len(path) is its last part. */
size_t lt_path_dir_len(const char *path);

/* Whether something exists at path (1) or not (0). */
int lt_file_exists(const char *path);

/* Whether paths a and b name one existing file (device and inode; on Windows
 * volume serial number and file index): 1 or 0. */
int lt_file_same(const char *a, const char *b);

/* The file a replacement of path writes, malloc'd into *out: path, or the
 * file a symbolic link (on Windows a reparse point) there names, so that
 * what lies beside the file (its symbols, its lock) is looked for beside
 * the file itself.  Returns 0, or -1 with LT_E_IO (a link that cannot be
 * followed; a folder or device, which is never replaced) or LT_E_NOMEM. */
int lt_file_target(const char *path, char **out);

/* Remove the file at path: 0, or -1 (nothing reported). */
int lt_file_remove(const char *path);

/* Make the folder path unless it exists: 0, or -1 with LT_E_IO naming it. */
int lt_file_mkdir(const char *path);

/* Largest input read: assemblies and packages past this are refused. */
#define LT_FILE_MAX ((size_t)1 << 30)

/* Read the whole file at `path` into a new buffer (*out, freed by the caller
 * with free()).  Returns 0, or -1 with LT_E_IO (cannot open/read, names the
 * path and errno text) or LT_E_LIMIT (larger than LT_FILE_MAX). */
int lt_file_read(const char *path, uint8_t **out, size_t *size);

/* Replace `path` with data[0..size) atomically: write a temporary file in the
 * same folder, fsync it, copy the old file's mode, rename it over `path`, and
 * fsync the folder (for a symbolic link: over the file it points at; a
 * device or folder is refused, see lt_file_stage_v).  A crash at any point leaves the old file or the new one;
 * on failure the temporary file is removed and `path` is untouched.
 * Returns 0, or -1 with LT_E_IO. */
int lt_file_write_atomic(const char *path, const uint8_t *data, size_t size);

/* One piece of a file written by lt_file_write_atomic_v: data[0..len), or
 * len zero bytes when data is NULL. */
struct lt_iov {
	const uint8_t *data;
	size_t len;
};

/* lt_file_write_atomic of the pieces parts[0..nparts) one after another: a
 * file made of runs of other buffers is written without being joined in
 * memory first.  Returns 0, or -1 with LT_E_IO. */
int lt_file_write_atomic_v(const char *path, const struct lt_iov *parts, size_t nparts);

/* lt_file_write_atomic_v in two steps, to replace several files together
 * (an assembly and its PDB): stage each, then commit them one right after
 * the other, so that a kill leaves them all old, or all new but in the
 * moment between two renames.  Use:
 *   lt_file_stage_v   write the pieces to a temporary file beside `path`
 *                     (path's mode, fsync'ed) - beside the file a symbolic
 *                     link there points at, which is what gets replaced;
 *                     -1 with LT_E_IO (also when path is a device, a
 *                     folder or anything but a regular file), LT_E_NOMEM;
 *   lt_file_commit    rename it over `path`; -1 with LT_E_IO (it stays);
 *   lt_file_sync_folder  fsync the folder, making renames there durable
 *                     (of the staged path: a link's target's folder);
 *   lt_file_discard   remove the temporary unless committed, and free
 *                     (always call it; the zeroed struct is a no-op). */
struct lt_file_staged {
	char *path; /* owned: the file replaced (a symbolic link resolved) */
	char *tmp;  /* owned; NULL once committed */
};

#define LT_FILE_STAGED_INIT { NULL, NULL }

int lt_file_stage_v(struct lt_file_staged *out, const char *path, const struct lt_iov *parts, size_t nparts);
int lt_file_commit(struct lt_file_staged *s);
void lt_file_sync_folder(const char *path);
void lt_file_discard(struct lt_file_staged *s);

/* A lock that serializes the processes rewriting one file (parallel builds
 * weaving the same assembly): an exclusive lock on the lock file
 * "<path>.locktime.lock" beside it.  A lock file rather than the file itself,
 * since lt_file_write_atomic replaces the file's inode, and the file may not
 * exist yet.  POSIX: flock(2); the holder removes the lock file when it lets
 * go, and a process that got the lock on a lock file already removed (or
 * replaced) starts again.  Windows, where an open file cannot be removed:
 * LockFileEx; every process opens the lock file without FILE_SHARE_DELETE,
 * and the holder removes it after closing it, which fails (and leaves it for
 * the next holder to remove) while another process has it open - so the file
 * at the name is the one every holder locked.  Either way at most one process
 * holds the lock of a path at a time. */
struct lt_file_lock {
	intptr_t fd; /* the lock file (a descriptor; a HANDLE on Windows), -1 when no lock is held */
	char *path; /* its path (owned) */
};

#define LT_FILE_LOCK_INIT { -1, NULL }

/* Longest wait for another process's lock of the same file, in seconds. */
#define LT_FILE_LOCK_WAIT 300

/* Take the lock of `path` (the file need not exist; its folder must),
 * waiting up to LT_FILE_LOCK_WAIT seconds for another holder, then remove
 * the temporary files that killed runs left beside it (lt_file_clean_temps).
 * The lock file is named after the folder's canonical path, so "a.dll",
 * "./a.dll" and "/abs/a.dll" share one lock.
 * Returns 0 with *out held (release with lt_file_unlock), or -1 with LT_E_IO
 * (no such folder, the lock file cannot be created, or the wait timed out)
 * or LT_E_NOMEM; *out then holds nothing. */
int lt_file_lock(struct lt_file_lock *out, const char *path);

/* Release the lock and remove its lock file.  A lock not held (LT_FILE_LOCK_INIT,
 * or after a failed lt_file_lock) is a no-op. */
void lt_file_unlock(struct lt_file_lock *lock);

/* Remove the temporaries "<path>.locktime-XXXXXX" that a killed
 * lt_file_write_atomic of `path` left: regular files owned by this user,
 * whose name is the path's last part, ".locktime-" and the 6 letters or
 * digits that mkstemp(3) (or lt_file_win.c) puts; on Windows, which has no
 * owner check here, any such file.  The caller holds the lock that every writer of `path`
 * takes (lt_file_lock), so no live process is writing one of them.
 * Removal failures are ignored: a stray temporary is harmless to the build.
 * Returns the number of files removed. */
int lt_file_clean_temps(const char *path);

/* Call fn(ctx, temp) for each temporary of `path` that lt_file_clean_temps
 * would remove (the same files, the same caller's lock), temp its path; fn
 * removes it or puts it somewhere (a PDB staged by a run killed between the
 * renames of an assembly and its PDB, weave_inputs.h).  Returns the sum of
 * what fn returned. */
int lt_file_each_temp(const char *path, int (*fn)(void *ctx, const char *temp), void *ctx);

#endif
