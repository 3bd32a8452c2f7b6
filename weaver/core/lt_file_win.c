/* lt_file_win.c - the file layer on Windows (see lt_file.h): UTF-8 paths
 * converted to UTF-16 at each call of the wide-character API, "\" and "/"
 * separators and drive letters, binary standard streams, MoveFileExW for the
 * atomic replace, LockFileEx for the weave lock, the file index for the
 * same-file check.  Built with mingw-w64 (the Makefile's win-x64 binary). */
#include "lt_file.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "lt_file_int.h"

#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <shellapi.h>

const char *lt_win_error(unsigned long code)
{
	static char text[256];
	DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code,
				 MAKELANGID(LANG_ENGLISH, SUBLANG_DEFAULT), text, sizeof text, NULL);

	while (n > 0 && (text[n - 1] == '\r' || text[n - 1] == '\n' || text[n - 1] == '.'))
		text[--n] = '\0';
	if (n == 0)
		snprintf(text, sizeof text, "Windows error %lu", (unsigned long)code);
	return text;
}

wchar_t *lt_win_wide(const char *utf8)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, -1, NULL, 0);
	wchar_t *w;

	if (n <= 0) {
		lt_error_set(LT_E_IO, "%s: not UTF-8", utf8);
		return NULL;
	}
	if (!(w = lt_malloc((size_t)n * sizeof *w))) {
		lt_nomem(NULL);
		return NULL;
	}
	MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, -1, w, n);
	return w;
}

/* UTF-16 to a new UTF-8 string (free()), or NULL (LT_E_NOMEM set). */
static char *narrow(const wchar_t *w)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
	char *s = n > 0 ? lt_malloc((size_t)n) : NULL;

	if (!s) {
		lt_nomem(NULL);
		return NULL;
	}
	WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL);
	return s;
}

/* CreateFileW of a UTF-8 path; INVALID_HANDLE_VALUE with GetLastError set
 * (ERROR_INVALID_NAME when the path is not UTF-8, ERROR_OUTOFMEMORY). */
static HANDLE open_path(const char *path, DWORD access, DWORD share, DWORD disposition, DWORD flags)
{
	wchar_t *w = lt_win_wide(path);
	HANDLE h;

	if (!w) {
		SetLastError(lt_error_last()->code == LT_E_NOMEM ? ERROR_OUTOFMEMORY : ERROR_INVALID_NAME);
		return INVALID_HANDLE_VALUE;
	}
	h = CreateFileW(w, access, share, NULL, disposition, flags, NULL);
	free(w);
	return h;
}

#define SHARE_ALL (FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)

void lt_file_start(int *argc, char ***argv)
{
	int n, i;
	wchar_t **w;
	char **utf8;

	_setmode(_fileno(stdin), _O_BINARY);
	_setmode(_fileno(stdout), _O_BINARY);
	_setmode(_fileno(stderr), _O_BINARY);
	/* main's argv is in the ANSI code page, which cannot hold every path. */
	if (!(w = CommandLineToArgvW(GetCommandLineW(), &n)))
		return;
	if ((utf8 = lt_calloc((size_t)n + 1, sizeof *utf8)) != NULL) {
		for (i = 0; i < n && (utf8[i] = narrow(w[i])) != NULL; i++)
			;
		if (i == n) {
			*argc = n;
			*argv = utf8;
		}
	}
	LocalFree(w);
}

int lt_path_is_sep(char c)
{
	return c == '/' || c == '\\';
}

size_t lt_path_dir_len(const char *path)
{
	size_t i = strlen(path), drive = path[0] && path[1] == ':' ? 2 : 0;

	while (i > drive && !lt_path_is_sep(path[i - 1]))
		i--;
	return i;
}

int lt_file_exists(const char *path)
{
	wchar_t *w = lt_win_wide(path);
	int yes = w && GetFileAttributesW(w) != INVALID_FILE_ATTRIBUTES;

	free(w);
	return yes;
}

/* The volume serial number and file index of path, followed if a link. */
static int file_id(const char *path, BY_HANDLE_FILE_INFORMATION *info)
{
	HANDLE h = open_path(path, 0, SHARE_ALL, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS);
	int ok;

	if (h == INVALID_HANDLE_VALUE)
		return 0;
	ok = GetFileInformationByHandle(h, info) != 0;
	CloseHandle(h);
	return ok;
}

int lt_file_same(const char *a, const char *b)
{
	BY_HANDLE_FILE_INFORMATION ia, ib;

	return file_id(a, &ia) && file_id(b, &ib) && ia.dwVolumeSerialNumber == ib.dwVolumeSerialNumber &&
	       ia.nFileIndexHigh == ib.nFileIndexHigh && ia.nFileIndexLow == ib.nFileIndexLow;
}

int lt_file_remove(const char *path)
{
	wchar_t *w = lt_win_wide(path);
	int rc = w && DeleteFileW(w) ? 0 : -1;

	free(w);
	return rc;
}

int lt_file_mkdir(const char *path)
{
	wchar_t *w = lt_win_wide(path);
	DWORD e;

	if (!w)
		return -1;
	e = CreateDirectoryW(w, NULL) ? ERROR_SUCCESS : GetLastError();
	free(w);
	if (e != ERROR_SUCCESS && e != ERROR_ALREADY_EXISTS)
		return lt_error_set(LT_E_IO, "cannot make folder %s: %s", path, lt_win_error(e));
	return 0;
}

uint64_t lt_file_clock_ms(void)
{
	return GetTickCount64();
}

void lt_file_nap(unsigned ms)
{
	Sleep(ms);
}

int lt_file_read(const char *path, uint8_t **out, size_t *size)
{
	HANDLE h = open_path(path, GENERIC_READ, SHARE_ALL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL);
	LARGE_INTEGER len;
	uint8_t *data;
	size_t got = 0;

	if (h == INVALID_HANDLE_VALUE)
		return lt_error_set(LT_E_IO, "cannot open: %s", lt_win_error(GetLastError()));
	if (GetFileType(h) != FILE_TYPE_DISK || !GetFileSizeEx(h, &len)) {
		CloseHandle(h);
		return lt_error_set(LT_E_IO, "not a regular file");
	}
	if ((uint64_t)len.QuadPart > LT_FILE_MAX) {
		CloseHandle(h);
		return lt_error_set(LT_E_LIMIT, "file is %lld bytes; the limit is %zu", (long long)len.QuadPart,
				    LT_FILE_MAX);
	}
	if (!(data = lt_malloc(len.QuadPart ? (size_t)len.QuadPart : 1))) {
		CloseHandle(h);
		return lt_nomem(NULL);
	}
	while (got < (size_t)len.QuadPart) {
		DWORD n;
		if (!ReadFile(h, data + got, (DWORD)((size_t)len.QuadPart - got), &n, NULL) || n == 0) {
			DWORD e = GetLastError();
			free(data);
			CloseHandle(h);
			return lt_error_set(LT_E_IO, "read failed: %s", lt_win_error(e));
		}
		got += n;
	}
	CloseHandle(h);
	*out = data;
	*size = got;
	return 0;
}

/* Write all of p[0..n), or n zero bytes when p is NULL. */
static int write_all(HANDLE h, const uint8_t *p, size_t n)
{
	static const uint8_t zeros[4096];

	while (n) {
		DWORD chunk = (DWORD)(p ? (n < 0x40000000 ? n : 0x40000000) : n < sizeof zeros ? n : sizeof zeros), w;
		if (!WriteFile(h, p ? p : zeros, chunk, &w, NULL) || w == 0)
			return -1;
		if (p)
			p += w;
		n -= w;
	}
	return 0;
}

/* The file a replacement of path writes (malloc'ed): path, or the file a
 * symbolic link (a reparse point) there points at.  Refuses a folder or a
 * device (NUL, CON, a pipe): only regular files are replaced. */
static int replace_target(const char *path, char **out)
{
	wchar_t *w = lt_win_wide(path), final[32768];
	DWORD attrs;
	HANDLE h;
	int regular;

	if (!w)
		return -1;
	attrs = GetFileAttributesW(w);
	free(w);
	if (attrs == INVALID_FILE_ATTRIBUTES) { /* a new file (or a folder that is missing: the stage says) */
		if (!(*out = lt_strdup(path)))
			return lt_nomem(NULL);
		return 0;
	}
	if (attrs & FILE_ATTRIBUTE_DIRECTORY)
		return lt_error_set(LT_E_IO, "%s is not a regular file: it is not replaced", path);
	h = open_path(path, 0, SHARE_ALL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL);
	if (h == INVALID_HANDLE_VALUE)
		return lt_error_set(LT_E_IO, "cannot open %s: %s", path, lt_win_error(GetLastError()));
	regular = GetFileType(h) == FILE_TYPE_DISK;
	if (regular && (attrs & FILE_ATTRIBUTE_REPARSE_POINT)) {
		DWORD n = GetFinalPathNameByHandleW(h, final, sizeof final / sizeof *final, FILE_NAME_NORMALIZED);
		CloseHandle(h);
		if (n == 0 || n >= sizeof final / sizeof *final)
			return lt_error_set(LT_E_IO, "cannot follow the link: %s", lt_win_error(GetLastError()));
		return (*out = narrow(final)) ? 0 : -1;
	}
	CloseHandle(h);
	if (!regular)
		return lt_error_set(LT_E_IO, "%s is not a regular file: it is not replaced", path);
	if (!(*out = lt_strdup(path)))
		return lt_nomem(NULL);
	return 0;
}

int lt_file_target(const char *path, char **out)
{
	return replace_target(path, out);
}

/* Create a new temporary "<path>.locktime-XXXXXX" (6 random letters or
 * digits, as mkstemp puts) for writing: its handle, *tmp its name. */
static HANDLE create_temp(const char *path, char **tmp)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static uint64_t seed;
	size_t len = strlen(path) + sizeof LT_FILE_TEMP_SUFFIX - 1;
	HANDLE h = INVALID_HANDLE_VALUE;

	if (!(*tmp = lt_malloc(len + LT_FILE_TEMP_RANDOM + 1))) {
		SetLastError(ERROR_OUTOFMEMORY);
		return h;
	}
	sprintf(*tmp, "%s" LT_FILE_TEMP_SUFFIX, path);
	seed ^= ((uint64_t)GetCurrentProcessId() << 32) ^ GetTickCount64() ^ (uintptr_t)tmp;
	for (int attempt = 0; attempt < 100 && h == INVALID_HANDLE_VALUE; attempt++) {
		for (int i = 0; i < LT_FILE_TEMP_RANDOM; i++) {
			seed = seed * 6364136223846793005u + 1442695040888963407u; /* a 64-bit LCG step */
			(*tmp)[len + i] = alphabet[(seed >> 33) % (sizeof alphabet - 1)];
		}
		(*tmp)[len + LT_FILE_TEMP_RANDOM] = '\0';
		h = open_path(*tmp, GENERIC_WRITE, 0, CREATE_NEW, FILE_ATTRIBUTE_NORMAL);
		if (h == INVALID_HANDLE_VALUE && GetLastError() != ERROR_FILE_EXISTS)
			break;
	}
	return h;
}

int lt_file_stage_v(struct lt_file_staged *out, const char *path, const struct lt_iov *parts, size_t nparts)
{
	size_t i;
	HANDLE h;

	if (replace_target(path, &out->path) < 0)
		return -1;
	h = create_temp(out->path, &out->tmp);
	if (h == INVALID_HANDLE_VALUE) {
		lt_error_set(LT_E_IO, "cannot create a temporary file beside it: %s", lt_win_error(GetLastError()));
		free(out->tmp);
		out->tmp = NULL;
		return -1;
	}
	for (i = 0; i < nparts; i++)
		if (write_all(h, parts[i].data, parts[i].len) < 0)
			break;
	if (i < nparts || !FlushFileBuffers(h)) {
		lt_error_set(LT_E_IO, "cannot write %s: %s", out->tmp, lt_win_error(GetLastError()));
		CloseHandle(h);
		return -1;
	}
	if (!CloseHandle(h))
		return lt_error_set(LT_E_IO, "cannot write %s: %s", out->tmp, lt_win_error(GetLastError()));
	return 0;
}

int lt_file_commit(struct lt_file_staged *s)
{
	wchar_t *from = lt_win_wide(s->tmp), *to = lt_win_wide(s->path);
	DWORD e = ERROR_OUTOFMEMORY;

	/* A virus scanner or an indexer may hold the file for a moment: a few
	 * tries over about a second before giving up. */
	for (int attempt = 0; from && to && attempt < 10; attempt++) {
		if (MoveFileExW(from, to, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
			e = ERROR_SUCCESS;
			break;
		}
		e = GetLastError();
		if (e != ERROR_ACCESS_DENIED && e != ERROR_SHARING_VIOLATION)
			break;
		Sleep(100);
	}
	free(from);
	free(to);
	if (e != ERROR_SUCCESS)
		return lt_error_set(LT_E_IO, "cannot replace %s: %s", s->path, lt_win_error(e));
	free(s->tmp);
	s->tmp = NULL;
	return 0;
}

/* Windows has no flush of a folder: MOVEFILE_WRITE_THROUGH made the rename durable. */
void lt_file_sync_folder(const char *path)
{
}

int lt_file_each_temp(const char *path, int (*fn)(void *ctx, const char *temp), void *ctx)
{
	size_t dir_len = lt_path_dir_len(path), base_len = strlen(path + dir_len);
	char *pattern = lt_malloc(strlen(path) + sizeof LT_FILE_TEMP_SUFFIX + 1), *name;
	wchar_t *w = NULL;
	WIN32_FIND_DATAW e;
	HANDLE find;
	int sum = 0;

	if (pattern) {
		sprintf(pattern, "%s" LT_FILE_TEMP_SUFFIX "*", path);
		w = lt_win_wide(pattern);
	}
	find = w ? FindFirstFileW(w, &e) : INVALID_HANDLE_VALUE;
	free(w);
	if (find == INVALID_HANDLE_VALUE) {
		free(pattern);
		return 0;
	}
	do {
		char *full;
		if ((e.dwFileAttributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT)) ||
		    !(name = narrow(e.cFileName)))
			continue;
		if (lt_file_is_temp_of(name, path + dir_len, base_len) &&
		    (full = lt_malloc(dir_len + strlen(name) + 1)) != NULL) {
			memcpy(full, path, dir_len);
			strcpy(full + dir_len, name);
			sum += fn(ctx, full);
			free(full);
		}
		free(name);
	} while (FindNextFileW(find, &e));
	FindClose(find);
	free(pattern);
	return sum;
}

/* The lock file of path: its folder's full path (so that "a.dll", ".\a.dll"
 * and "C:\abs\a.dll" share one lock; Windows compares names without case),
 * its name, LT_FILE_LOCK_SUFFIX.  The folder must exist. */
static int lock_path(const char *path, char **out)
{
	size_t dir_len = lt_path_dir_len(path);
	char *dir = lt_malloc(dir_len + 2), *full = NULL;
	wchar_t *w = NULL, buf[32768];
	DWORD n = 0, attrs = INVALID_FILE_ATTRIBUTES;

	if (!dir)
		return lt_nomem(NULL);
	memcpy(dir, path, dir_len);
	strcpy(dir + dir_len, ".");
	if ((w = lt_win_wide(dir)) != NULL && (n = GetFullPathNameW(w, sizeof buf / sizeof *buf, buf, NULL)) > 0 &&
	    n < sizeof buf / sizeof *buf)
		attrs = GetFileAttributesW(buf);
	free(w);
	free(dir);
	if (attrs == INVALID_FILE_ATTRIBUTES || !(attrs & FILE_ATTRIBUTE_DIRECTORY))
		return lt_error_set(LT_E_IO, "cannot write %s: its folder: %s", path,
				    attrs == INVALID_FILE_ATTRIBUTES ? lt_win_error(GetLastError()) : "not a folder");
	if (!(full = narrow(buf)))
		return -1;
	n = (DWORD)strlen(full);
	*out = lt_malloc(n + 1 + strlen(path + dir_len) + sizeof LT_FILE_LOCK_SUFFIX);
	if (*out)
		sprintf(*out, "%s%s%s" LT_FILE_LOCK_SUFFIX, full, n && lt_path_is_sep(full[n - 1]) ? "" : "\\",
			path + dir_len);
	free(full);
	return *out ? 0 : lt_nomem(NULL);
}

struct lock_try {
	const char *path;
	HANDLE h;
	DWORD error;
};

/* One try (lt_file_poll) to open the lock file and lock its first byte:
 * 0 held, 1 busy (locked by another, or being removed), -1 failed. */
static int try_lock(void *ctx)
{
	struct lock_try *t = ctx;
	OVERLAPPED at = { 0 };

	if (t->h == INVALID_HANDLE_VALUE) {
		/* No FILE_SHARE_DELETE: the file cannot be removed while we have it open. */
		t->h = open_path(t->path, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE,
				 OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL);
		if (t->h == INVALID_HANDLE_VALUE) {
			t->error = GetLastError();
			return t->error == ERROR_SHARING_VIOLATION || t->error == ERROR_ACCESS_DENIED ? 1 : -1;
		}
	}
	if (LockFileEx(t->h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &at))
		return 0;
	t->error = GetLastError();
	return t->error == ERROR_LOCK_VIOLATION ? 1 : -1;
}

int lt_file_take_lock(struct lt_file_lock *out, const char *path)
{
	struct lock_try t = { NULL, INVALID_HANDLE_VALUE, 0 };
	int waited;

	out->fd = -1;
	if (lock_path(path, &out->path) < 0)
		return -1;
	t.path = out->path;
	waited = lt_file_poll(try_lock, &t);
	if (waited == 0) {
		out->fd = (intptr_t)t.h;
		return 0;
	}
	if (t.h == INVALID_HANDLE_VALUE && waited < 0)
		lt_error_set(LT_E_IO, "cannot create the lock file %s: %s", out->path, lt_win_error(t.error));
	else
		lt_error_set(LT_E_IO, "cannot lock %s: %s", out->path,
			     waited > 0 ? "another locktime process holds it" : lt_win_error(t.error));
	if (t.h != INVALID_HANDLE_VALUE)
		CloseHandle(t.h);
	free(out->path);
	out->path = NULL;
	return -1;
}

void lt_file_unlock(struct lt_file_lock *lock)
{
	OVERLAPPED at = { 0 };

	if (lock->fd == -1)
		return;
	UnlockFileEx((HANDLE)lock->fd, 0, 1, 0, &at);
	CloseHandle((HANDLE)lock->fd);
	/* Fails while another process has it open (it removes it in turn). */
	lt_file_remove(lock->path);
	free(lock->path);
	lock->fd = -1;
	lock->path = NULL;
}
