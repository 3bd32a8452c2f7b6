/* lt_file_int.h - what lt_file.c shares with the host's half of the file layer
 * (lt_file_posix.c or lt_file_win.c), the temporaries' names and the lock's
 * wait that both halves use (inline: the host half calls no other file back), and lt_file_win.c with the other
 * Windows half of the portability layer (lt_keys_win.c). Not for other files. */
#ifndef LT_FILE_INT_H
#define LT_FILE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lt_file.h"

/* The suffix of lt_file_write_atomic's temporaries, before the 6 random
 * letters or digits; the suffix of lock files. */
#define LT_FILE_TEMP_SUFFIX ".locktime-"
#define LT_FILE_TEMP_RANDOM 6
#define LT_FILE_LOCK_SUFFIX ".locktime.lock"

/* Whether name is base[0..base_len) + LT_FILE_TEMP_SUFFIX + LT_FILE_TEMP_RANDOM
 * letters or digits: a temporary of the file named base (lt_file_clean_temps). */
static inline int lt_file_is_temp_of(const char *name, const char *base, size_t base_len)
{
	size_t suffix = sizeof LT_FILE_TEMP_SUFFIX - 1, i;
	const char *r = name + base_len + suffix;

	if (strncmp(name, base, base_len) != 0 || strncmp(name + base_len, LT_FILE_TEMP_SUFFIX, suffix) != 0 ||
	    strlen(r) != LT_FILE_TEMP_RANDOM)
		return 0;
	for (i = 0; i < LT_FILE_TEMP_RANDOM; i++)
		if (!((r[i] >= 'a' && r[i] <= 'z') || (r[i] >= 'A' && r[i] <= 'Z') || (r[i] >= '0' && r[i] <= '9')))
			return 0;
	return 1;
}

/* lt_file_lock without the cleaning of temporaries after it (lt_file.c does
 * that): the host's lock of `path`, as lt_file_lock says. */
int lt_file_take_lock(struct lt_file_lock *out, const char *path);

/* The host's monotonic clock in milliseconds, and a sleep of ms milliseconds
 * (lt_file_posix.c, lt_file_win.c). */
uint64_t lt_file_clock_ms(void);
void lt_file_nap(unsigned ms);

/* Call try_once(ctx) until it returns 0 (got it) or -1 (failed: -1), sleeping
 * between calls that return 1 (busy): 10 ms, doubling to 200 ms, for up to
 * LT_FILE_LOCK_WAIT seconds (then 1: timed out).  The lock waits. */
static inline int lt_file_poll(int (*try_once)(void *ctx), void *ctx)
{
	uint64_t start = lt_file_clock_ms();
	unsigned nap = 10;

	for (;;) {
		int rc = try_once(ctx);
		if (rc <= 0)
			return rc;
		if (lt_file_clock_ms() - start >= (uint64_t)LT_FILE_LOCK_WAIT * 1000)
			return 1;
		lt_file_nap(nap);
		nap = nap >= 100 ? 200 : nap * 2;
	}
}

#ifdef _WIN32
#include <wchar.h>

/* A Win32 error code as text (a static buffer: valid until the next call;
 * lt_file_win.c). */
const char *lt_win_error(unsigned long code);

/* A UTF-8 string (a path, a container name) to a new UTF-16 string
 * (free()), or NULL with LT_E_IO (not UTF-8) or LT_E_NOMEM set
 * (lt_file_win.c). */
wchar_t *lt_win_wide(const char *utf8);
#endif

#endif
