/* lt_file.c - whole-file reads and atomic replacement (see lt_file.h). */
#include "lt_file.h"
#include "lt_error.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int lt_file_read(const char *path, uint8_t **out, size_t *size)
{
	struct stat st;
	uint8_t *data = NULL;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return lt_error_set(LT_E_IO, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return lt_error_set(LT_E_IO, "not a regular file");
	}
	if ((uint64_t)st.st_size > LT_FILE_MAX) {
		close(fd);
		return lt_error_set(LT_E_LIMIT, "file is %lld bytes; the limit is %zu",
				    (long long)st.st_size, LT_FILE_MAX);
	}
	data = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!data) {
		close(fd);
		return lt_error_set(LT_E_NOMEM, "out of memory");
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, data + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			free(data);
			close(fd);
			return lt_error_set(LT_E_IO, "read failed: %s", strerror(e));
		}
		got += (size_t)n;
	}
	close(fd);
	*out = data;
	*size = got;
	return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int lt_file_write_atomic(const char *path, const uint8_t *data, size_t size)
{
	char *tmp = NULL, *dircopy = NULL;
	struct stat st;
	int fd = -1, dfd, rc = -1;
	mode_t mode = 0644;

	if (stat(path, &st) == 0)
		mode = st.st_mode & 07777;
	if (asprintf(&tmp, "%s.locktime-XXXXXX", path) < 0)
		return lt_error_set(LT_E_NOMEM, "out of memory");
	fd = mkstemp(tmp);
	if (fd < 0) {
		lt_error_set(LT_E_IO, "cannot create a temporary file beside it: %s", strerror(errno));
		goto done;
	}
	if (write_all(fd, data, size) < 0 || fchmod(fd, mode) < 0 || fsync(fd) < 0) {
		lt_error_set(LT_E_IO, "cannot write %s: %s", tmp, strerror(errno));
		goto done;
	}
	if (close(fd) < 0) {
		fd = -1;
		lt_error_set(LT_E_IO, "cannot write %s: %s", tmp, strerror(errno));
		goto done;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		lt_error_set(LT_E_IO, "cannot replace the file: %s", strerror(errno));
		goto done;
	}
	/* The rename is durable only once the folder's entry is on disk. */
	dircopy = strdup(path);
	if (dircopy && (dfd = open(dirname(dircopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
	rc = 0;
done:
	if (fd >= 0)
		close(fd);
	if (rc < 0 && tmp)
		unlink(tmp);
	free(tmp);
	free(dircopy);
	return rc;
}
