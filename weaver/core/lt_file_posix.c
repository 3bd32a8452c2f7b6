/* lt_file_posix.c - the file layer on POSIX hosts, Linux and macOS (see lt_file.h). */
#include "lt_file.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "lt_file_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

void lt_file_start(int *argc, char ***argv)
{
#ifdef __GLIBC__
	/* A weave allocates and frees buffers the size of the input (file,
	 * tables, section).  glibc raises its mmap threshold each time such a
	 * block is freed, after which the next ones come from the heap and stay
	 * resident once freed; a fixed threshold keeps each large block in its
	 * own mapping, returned when freed (peak RSS on mscorlib.dll: -8%). */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

int lt_path_is_sep(char c)
{
	return c == '/';
}

size_t lt_path_dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? (size_t)(slash - path) + 1 : 0;
}

int lt_file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

int lt_file_same(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int lt_file_remove(const char *path)
{
	return unlink(path);
}

int lt_file_mkdir(const char *path)
{
	if (mkdir(path, 0777) < 0 && errno != EEXIST)
		return lt_error_set(LT_E_IO, "cannot make folder %s: %s", path, strerror(errno));
	return 0;
}

uint64_t lt_file_clock_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
}

void lt_file_nap(unsigned ms)
{
	struct timespec nap = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };

	nanosleep(&nap, NULL);
}

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
	data = lt_malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!data) {
		close(fd);
		return lt_nomem(NULL);
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

/* Pieces gathered by one writev call (IOV_MAX is 1024 on Linux and macOS). */
#define WRITE_IOVS 1024

/* Write parts[0..nparts) one after another (a NULL part: that many zero bytes) with
 * as few writev calls as WRITE_IOVS allows: a woven image is written as the runs
 * it is made of (7,195 for a library of 100,000 methods), and one write() each
 * took most of the weave's wall time on a busy machine. */
static int write_parts(int fd, const struct lt_iov *parts, size_t nparts)
{
	static const uint8_t zeros[4096];
	struct iovec v[WRITE_IOVS];
	size_t i = 0, done = 0; /* parts before i, and done bytes of parts[i], are written */

	for (;;) {
		size_t k = i, off = done, left;
		int n = 0;
		ssize_t w;

		while (k < nparts && n < WRITE_IOVS) {
			size_t take = parts[k].len - off;
			if (!parts[k].data && take > sizeof zeros)
				take = sizeof zeros; /* the same zeros again in the next piece */
			if (take)
				v[n++] = (struct iovec){ parts[k].data ? (void *)(parts[k].data + off) : (void *)zeros, take };
			off += take;
			if (off == parts[k].len) {
				k++;
				off = 0;
			}
		}
		if (n == 0)
			return 0;
		w = writev(fd, v, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		for (left = (size_t)w; left > 0 || (i < nparts && parts[i].len == done);) {
			size_t here = parts[i].len - done;
			if (left < here) {
				done += left;
				break;
			}
			left -= here;
			i++;
			done = 0;
		}
	}
}

/* The file a replacement of `path` writes (malloc'ed): path, or the file a
 * symbolic link there points at - the link stays a link.  Refuses what is
 * not a regular file (a device, a folder): renaming over it would replace
 * /dev/null, say, with a file.  *mode gets the file's permissions. */
static int replace_target(const char *path, char **out, mode_t *mode)
{
	struct stat st;
	char *target;

	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		if (!(target = realpath(path, NULL)))
			return lt_error_set(LT_E_IO, "cannot follow the link: %s", strerror(errno));
	} else if (!(target = lt_strdup(path))) {
		return lt_nomem(NULL);
	}
	*mode = 0644;
	if (stat(target, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			free(target);
			return lt_error_set(LT_E_IO, "%s is not a regular file: it is not replaced", path);
		}
		*mode = st.st_mode & 07777;
	}
	*out = target;
	return 0;
}

int lt_file_target(const char *path, char **out)
{
	mode_t mode;

	return replace_target(path, out, &mode);
}

int lt_file_stage_v(struct lt_file_staged *out, const char *path, const struct lt_iov *parts, size_t nparts)
{
	int fd;
	mode_t mode;

	if (replace_target(path, &out->path, &mode) < 0)
		return -1;
	if (asprintf(&out->tmp, "%s" LT_FILE_TEMP_SUFFIX "XXXXXX", out->path) < 0) {
		out->tmp = NULL;
		return lt_nomem(NULL);
	}
	fd = mkstemp(out->tmp);
	if (fd < 0) {
		lt_error_set(LT_E_IO, "cannot create a temporary file beside it: %s", strerror(errno));
		free(out->tmp);
		out->tmp = NULL;
		return -1;
	}
	if (write_parts(fd, parts, nparts) < 0 || fchmod(fd, mode) < 0 || fsync(fd) < 0) {
		lt_error_set(LT_E_IO, "cannot write %s: %s", out->tmp, strerror(errno));
		close(fd);
		return -1;
	}
	if (close(fd) < 0)
		return lt_error_set(LT_E_IO, "cannot write %s: %s", out->tmp, strerror(errno));
	return 0;
}

int lt_file_commit(struct lt_file_staged *s)
{
	if (rename(s->tmp, s->path) < 0)
		return lt_error_set(LT_E_IO, "cannot replace %s: %s", s->path, strerror(errno));
	free(s->tmp);
	s->tmp = NULL;
	return 0;
}

void lt_file_sync_folder(const char *path)
{
	char *dircopy = lt_strdup(path);
	int dfd;

	if (dircopy && (dfd = open(dirname(dircopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(dircopy);
}

int lt_file_each_temp(const char *path, int (*fn)(void *ctx, const char *temp), void *ctx)
{
	size_t dir_len = lt_path_dir_len(path), base_len = strlen(path + dir_len);
	const char *base = path + dir_len;
	char *dir = dir_len ? strndup(path, dir_len) : lt_strdup(".");
	struct dirent *e;
	DIR *d;
	int dfd, sum = 0;

	if (!dir || !(d = opendir(dir))) {
		free(dir);
		return 0;
	}
	dfd = dirfd(d);
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		char *full;
		if (!lt_file_is_temp_of(e->d_name, base, base_len) ||
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid() || !(full = lt_malloc(dir_len + strlen(e->d_name) + 1)))
			continue;
		memcpy(full, path, dir_len);
		strcpy(full + dir_len, e->d_name);
		sum += fn(ctx, full);
		free(full);
	}
	closedir(d);
	free(dir);
	return sum;
}

/* One try of an exclusive flock on *(int *)fd (lt_file_poll): 0, 1 busy, -1 failed (errno). */
static int try_flock(void *fd)
{
	if (flock(*(int *)fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	return errno == EWOULDBLOCK || errno == EINTR ? 1 : -1;
}

/* The lock file of path: its folder's canonical path (so that "a.dll",
 * "./a.dll" and "/abs/a.dll" share one lock), its name, LT_FILE_LOCK_SUFFIX. */
static int lock_path(const char *path, char **out)
{
	size_t dir_len = lt_path_dir_len(path);
	char *dir = dir_len ? strndup(path, dir_len) : lt_strdup("."), *real;
	int rc;

	if (!dir)
		return lt_nomem(NULL);
	real = realpath(dir, NULL);
	free(dir);
	if (!real)
		return lt_error_set(LT_E_IO, "cannot write %s: its folder: %s", path, strerror(errno));
	rc = asprintf(out, "%s/%s" LT_FILE_LOCK_SUFFIX, strcmp(real, "/") ? real : "", path + dir_len);
	free(real);
	if (rc < 0) {
		*out = NULL;
		return lt_nomem(NULL);
	}
	return 0;
}

int lt_file_take_lock(struct lt_file_lock *out, const char *path)
{
	struct stat held, named;

	out->fd = -1;
	if (lock_path(path, &out->path) < 0)
		return -1;
	for (;;) {
		int fd = open(out->path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0) {
			lt_error_set(LT_E_IO, "cannot create the lock file %s: %s", out->path, strerror(errno));
			break;
		}
		int waited = lt_file_poll(try_flock, &fd);
		if (waited != 0) {
			lt_error_set(LT_E_IO, "cannot lock %s: %s", out->path,
				     waited > 0 ? "another locktime process holds it" : strerror(errno));
			close(fd);
			break;
		}
		/* The holder before us removes the lock file as it lets go: a
		 * lock on a file no longer at the path excludes nobody. */
		if (fstat(fd, &held) == 0 && lstat(out->path, &named) == 0 && held.st_dev == named.st_dev &&
		    held.st_ino == named.st_ino) {
			out->fd = fd;
			return 0;
		}
		close(fd);
	}
	free(out->path);
	out->path = NULL;
	return -1;
}

void lt_file_unlock(struct lt_file_lock *lock)
{
	if (lock->fd < 0)
		return;
	/* Removed while held, so that no one can take a lock on it after us
	 * and believe it still guards the path (see lt_file_lock). */
	unlink(lock->path);
	close((int)lock->fd);
	free(lock->path);
	lock->fd = -1;
	lock->path = NULL;
}
