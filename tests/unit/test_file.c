/* test_file.c - lt_file: whole-file reads, atomic replacement, the per-file lock of parallel
 * weaves, and the removal of temporaries that a killed run left. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lt_error.h"
#include "lt_file.h"

/* A scratch folder per test, removed after it. */
static int setup(void **state)
{
	char *dir = strdup("/tmp/lt-file-test.XXXXXX");

	if (!dir || !mkdtemp(dir))
		return -1;
	*state = dir;
	return 0;
}

static int teardown(void **state)
{
	char cmd[256];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", (char *)*state);
	free(*state);
	return system(cmd) == 0 ? 0 : -1;
}

static char *join(const char *dir, const char *name)
{
	char *p = NULL;

	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

static void put(const char *dir, const char *name, const char *text)
{
	char *p = join(dir, name);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

static int exists(const char *dir, const char *name)
{
	char *p = join(dir, name);
	int rc = access(p, F_OK) == 0;

	free(p);
	return rc;
}

static void test_read_missing(void **state)
{
	char *p = join(*state, "missing.dll");
	uint8_t *data;
	size_t size;

	assert_int_equal(lt_file_read(p, &data, &size), -1);
	assert_int_equal(lt_error_last()->code, LT_E_IO);
	free(p);
}

static void test_read_folder(void **state)
{
	uint8_t *data;
	size_t size;

	assert_int_equal(lt_file_read(*state, &data, &size), -1);
	assert_int_equal(lt_error_last()->code, LT_E_IO);
	assert_non_null(strstr(lt_error_last()->msg, "not a regular file"));
}

/* The new bytes replace the old ones, the mode is kept, no temporary stays. */
static void test_write_atomic(void **state)
{
	char *p = join(*state, "a.dll");
	uint8_t *data;
	size_t size;
	struct stat st;

	put(*state, "a.dll", "old");
	assert_int_equal(chmod(p, 0750), 0);
	assert_int_equal(lt_file_write_atomic(p, (const uint8_t *)"new bytes", 9), 0);
	assert_int_equal(lt_file_read(p, &data, &size), 0);
	assert_int_equal(size, 9);
	assert_memory_equal(data, "new bytes", 9);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	assert_int_equal(lt_file_clean_temps(p), 0);
	free(data);
	free(p);
}

/* Pieces are written in order; a NULL piece is that many zero bytes (more
 * than one zero block, to cover the chunked write). */
static void test_write_atomic_pieces(void **state)
{
	char *p = join(*state, "a.dll");
	const struct lt_iov parts[] = { { (const uint8_t *)"ab", 2 }, { NULL, 5000 }, { (const uint8_t *)"c", 1 } };
	uint8_t *data;
	size_t size, i;

	assert_int_equal(lt_file_write_atomic_v(p, parts, 3), 0);
	assert_int_equal(lt_file_read(p, &data, &size), 0);
	assert_int_equal(size, 5003);
	assert_memory_equal(data, "ab", 2);
	for (i = 2; i < 5002; i++)
		assert_int_equal(data[i], 0);
	assert_int_equal(data[5002], 'c');
	free(data);
	free(p);
}

/* More pieces than one writev call gathers (1024): 3,000 of them - a byte, an
 * empty piece, a zero run of up to 9,000 bytes - land in order. */
static void test_write_atomic_many_pieces(void **state)
{
	char *p = join(*state, "a.dll");
	static uint8_t counting[256];
	struct lt_iov parts[3000];
	uint8_t *data;
	size_t size, at = 0, want = 0;

	for (size_t k = 0; k < 256; k++)
		counting[k] = (uint8_t)k;
	for (size_t k = 0; k < 3000; k++) {
		size_t len = k % 3 == 0 ? 1 : k % 3 == 1 ? 0 : k * 3;
		parts[k] = (struct lt_iov){ k % 3 == 2 ? NULL : counting + k % 256, len };
		want += len;
	}
	assert_int_equal(lt_file_write_atomic_v(p, parts, 3000), 0);
	assert_int_equal(lt_file_read(p, &data, &size), 0);
	assert_int_equal(size, want);
	for (size_t k = 0; k < 3000; k++)
		for (size_t b = 0; b < parts[k].len; b++, at++)
			assert_int_equal(data[at], parts[k].data ? parts[k].data[b] : 0);
	free(data);
	free(p);
}

/* Through a symbolic link the file it points at is replaced and the link
 * stays; a FIFO (like a device) is refused and left as it is. */
static void test_write_atomic_link_and_fifo(void **state)
{
	char *target = join(*state, "target.dll"), *link = join(*state, "link.dll"), *fifo = join(*state, "fifo");
	uint8_t *data;
	size_t size;
	struct stat st;

	put(*state, "target.dll", "old");
	assert_int_equal(symlink("target.dll", link), 0);
	assert_int_equal(lt_file_write_atomic(link, (const uint8_t *)"new", 3), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(lt_file_read(target, &data, &size), 0);
	assert_int_equal(size, 3);
	assert_memory_equal(data, "new", 3);
	free(data);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(lt_file_write_atomic(fifo, (const uint8_t *)"x", 1), -1);
	assert_int_equal(lt_error_last()->code, LT_E_IO);
	assert_non_null(strstr(lt_error_last()->msg, "not a regular file"));
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(lt_file_clean_temps(fifo), 0);
	unlink(link);
	unlink(fifo);
	free(target);
	free(link);
	free(fifo);
}

static void test_write_atomic_no_folder(void **state)
{
	char *p = join(*state, "missing/a.dll");

	assert_int_equal(lt_file_write_atomic(p, (const uint8_t *)"x", 1), -1);
	assert_int_equal(lt_error_last()->code, LT_E_IO);
	free(p);
}

/* The lock file exists while the lock is held and is gone after. */
static void test_lock_file_lifetime(void **state)
{
	struct lt_file_lock lock = LT_FILE_LOCK_INIT;
	char *p = join(*state, "a.dll");

	assert_int_equal(lt_file_lock(&lock, p), 0);
	assert_true(exists(*state, "a.dll.locktime.lock"));
	assert_false(exists(*state, "a.dll")); /* the file itself is not created */
	lt_file_unlock(&lock);
	assert_false(exists(*state, "a.dll.locktime.lock"));
	assert_int_equal(lock.fd, -1);
	lt_file_unlock(&lock); /* not held: a no-op */
	free(p);
}

static void test_lock_no_folder(void **state)
{
	struct lt_file_lock lock = LT_FILE_LOCK_INIT;
	char *p = join(*state, "missing/a.dll");

	assert_int_equal(lt_file_lock(&lock, p), -1);
	assert_int_equal(lt_error_last()->code, LT_E_IO);
	assert_non_null(strstr(lt_error_last()->msg, p)); /* names the file, not only "it" */
	assert_int_equal(lock.fd, -1);
	assert_null(lock.path);
	free(p);
}

/* A child process that takes the lock of `path`, says so with one byte on
 * the pipe it makes in ready[], then runs hold(held lock, arg) and exits 0
 * (1 when it cannot lock).  Returns its pid once it holds the lock. */
static pid_t fork_holder(const char *path, int ready[2], void (*hold)(struct lt_file_lock *, void *), void *arg)
{
	pid_t child;
	char c;

	assert_int_equal(pipe(ready), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct lt_file_lock held = LT_FILE_LOCK_INIT;
		if (lt_file_lock(&held, path) < 0 || write(ready[1], "x", 1) != 1)
			_exit(1);
		hold(&held, arg);
		_exit(0);
	}
	assert_int_equal(read(ready[0], &c, 1), 1);
	return child;
}

/* Holder of test_lock_excludes: marks that it is done (file "released" in
 * folder dir) just before letting go. */
static void release_later(struct lt_file_lock *held, void *dir)
{
	usleep(300 * 1000);
	put(dir, "released", "");
	lt_file_unlock(held);
}

/* Holder of test_lock_after_kill: holds until killed. */
static void hold_until_killed(struct lt_file_lock *held, void *arg)
{
	(void)held, (void)arg;
	pause();
}

/* Two spellings of one path share one lock: the second waits for the first. */
static void test_lock_excludes(void **state)
{
	struct lt_file_lock lock = LT_FILE_LOCK_INIT;
	char *p = join(*state, "a.dll"), *other = join(*state, "./a.dll");
	int status, ready[2];
	pid_t child = fork_holder(other, ready, release_later, *state);

	assert_int_equal(lt_file_lock(&lock, p), 0);
	assert_true(exists(*state, "released"));
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The holder before us removed its lock file: ours is a new one, at the path. */
	assert_true(exists(*state, "a.dll.locktime.lock"));
	lt_file_unlock(&lock);
	close(ready[0]);
	close(ready[1]);
	free(p);
	free(other);
}

/* A holder killed with SIGKILL leaves its lock file; the next run takes the
 * lock at once (the kernel released it) and removes the file after. */
static void test_lock_after_kill(void **state)
{
	struct lt_file_lock lock = LT_FILE_LOCK_INIT;
	char *p = join(*state, "a.dll");
	int status, ready[2];
	pid_t child = fork_holder(p, ready, hold_until_killed, NULL);

	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(exists(*state, "a.dll.locktime.lock"));
	assert_int_equal(lt_file_lock(&lock, p), 0);
	lt_file_unlock(&lock);
	assert_false(exists(*state, "a.dll.locktime.lock"));
	close(ready[0]);
	close(ready[1]);
	free(p);
}

/* Only "<name>.locktime-" and 6 letters or digits, regular files, are
 * temporaries of <name>; taking the lock removes them. */
static void test_clean_temps(void **state)
{
	static const char *const kept[] = {
		"a.dll", "a.dll.locktime-AbC12", "a.dll.locktime-AbC1234", "a.dll.locktime-AbC-12",
		"b.dll.locktime-AbC123", "xa.dll.locktime-AbC123", "a.dll.pdb",
	};
	struct lt_file_lock lock = LT_FILE_LOCK_INIT;
	char *p = join(*state, "a.dll"), *sub = join(*state, "a.dll.locktime-Dir123");
	size_t i;

	for (i = 0; i < sizeof kept / sizeof *kept; i++)
		put(*state, kept[i], "x");
	put(*state, "a.dll.locktime-AbC123", "partial");
	put(*state, "a.dll.locktime-zz9ZZ9", "partial");
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(lt_file_lock(&lock, p), 0);
	assert_false(exists(*state, "a.dll.locktime-AbC123"));
	assert_false(exists(*state, "a.dll.locktime-zz9ZZ9"));
	for (i = 0; i < sizeof kept / sizeof *kept; i++)
		assert_true(exists(*state, kept[i]));
	assert_true(exists(*state, "a.dll.locktime-Dir123"));
	put(*state, "a.dll.locktime-q1w2e3", "partial");
	assert_int_equal(lt_file_clean_temps(p), 1);
	lt_file_unlock(&lock);
	free(sub);
	free(p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_folder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_atomic_many_pieces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_atomic_pieces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_atomic_link_and_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_atomic_no_folder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_file_lifetime, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_no_folder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_excludes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_after_kill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clean_temps, setup, teardown),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
