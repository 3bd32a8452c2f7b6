/* lt_file.c - the host-independent part of the file layer (see lt_file.h):
 * atomic replacement from its stage and commit steps; the lock, and the
 * cleaning of temporaries that follows it. */
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

/* lt_file_clean_temps' fn: 1 when temp is removed. */
static int remove_temp(void *ctx, const char *temp)
{
	(void)ctx;
	return lt_file_remove(temp) == 0;
}

int lt_file_clean_temps(const char *path)
{
	return lt_file_each_temp(path, remove_temp, NULL);
}

int lt_file_lock(struct lt_file_lock *out, const char *path)
{
	if (lt_file_take_lock(out, path) < 0)
		return -1;
	lt_file_clean_temps(path);
	return 0;
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

