/* lt_file.c - the host-independent part of the file layer (see lt_file.h):
 * atomic replacement from its stage and commit steps, the temporaries' names,
 * the lock's wait. */
#include "lt_file.h"
#include "lt_file_int.h"

#include <stdlib.h>
#include <string.h>

int lt_file_write_atomic(const char *path, const uint8_t *data, size_t size)
{
	struct lt_iov whole = { data, size };

	return lt_file_write_atomic_v(path, &whole, 1);
}

int lt_file_write_atomic_v(const char *path, const struct lt_iov *parts, size_t nparts)
{
	struct lt_file_staged staged = LT_FILE_STAGED_INIT;
	int rc = lt_file_stage_v(&staged, path, parts, nparts) < 0 || lt_file_commit(&staged) < 0 ? -1 : 0;

	if (rc == 0)
		lt_file_sync_folder(staged.path);
	lt_file_discard(&staged);
	return rc;
}

void lt_file_discard(struct lt_file_staged *s)
{
	if (s->tmp)
		lt_file_remove(s->tmp);
	free(s->tmp);
	free(s->path);
	s->tmp = NULL;
	s->path = NULL;
}

int lt_file_is_temp_of(const char *name, const char *base, size_t base_len)
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

int lt_file_poll(int (*try_once)(void *ctx), void *ctx)
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
