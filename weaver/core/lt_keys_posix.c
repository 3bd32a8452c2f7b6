/* lt_keys_posix.c - key containers on Linux and macOS (see lt_keys.h):
 * Mono's key stores, the folders where its RSACryptoServiceProvider keeps
 * one file per container (Mono.Security.Cryptography.KeyPairPersistence):
 * <ApplicationData>/.mono/keypairs for the user, and with
 * CspProviderFlags.UseMachineKeyStore <CommonApplicationData>/.mono/keypairs
 * for the machine, where Mono's ApplicationData is $XDG_CONFIG_HOME when set
 * and not empty, else <home>/.config ($HOME, else the user's home folder in
 * /etc/passwd), and CommonApplicationData is /usr/share. */
#include "lt_keys.h"
#include "lt_error.h"
#include "lt_file.h"
#include "lt_mem.h"
#include "lt_mono_key.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The machine's store. */
#define MACHINE_STORE "/usr/share/.mono/keypairs"

/* a, b and c joined, in a new string (free()); NULL with LT_E_NOMEM. */
static char *joined(const char *a, const char *b, const char *c)
{
	size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
	char *s = lt_malloc(n);

	if (!s) {
		lt_nomem(NULL);
		return NULL;
	}
	snprintf(s, n, "%s%s%s", a, b, c);
	return s;
}

/* The home folder of the calling user in /etc/passwd (passwd(5): name:password:UID:GID:GECOS:
 * directory:shell) into dir[0..size), "" when the file has no line for its UID or none that fits:
 * what getpwuid gives for a local user, read without the name service switch, which a static
 * binary cannot load from another glibc (macOS keeps users elsewhere, but always sets $HOME). */
static void passwd_home(char *dir, size_t size)
{
	char line[4096], uid[24], *field[7];
	FILE *f = fopen("/etc/passwd", "r");

	dir[0] = '\0';
	if (!f)
		return;
	snprintf(uid, sizeof uid, "%lu", (unsigned long)getuid());
	while (fgets(line, sizeof line, f)) {
		size_t n = 0, len = strlen(line);
		char *p = line;
		int c;

		if (len && line[len - 1] != '\n' && !feof(f)) { /* longer than any real entry: skipped */
			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			continue;
		}
		line[strcspn(line, "\n")] = '\0';
		while (n < 7 && p) {
			field[n++] = p;
			if ((p = strchr(p, ':')))
				*p++ = '\0';
		}
		if (n == 7 && strcmp(field[2], uid) == 0 && *field[5] && strlen(field[5]) < size) {
			memcpy(dir, field[5], strlen(field[5]) + 1);
			break;
		}
	}
	fclose(f);
}

/* The user's store into *out (free()), NULL when this user has no home
 * folder.  -1 with LT_E_NOMEM. */
static int user_store(char **out)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char dir[4096];

	*out = NULL;
	if (xdg && *xdg)
		return (*out = joined(xdg, "/.mono/keypairs", "")) ? 0 : -1;
	if (!home || !*home) {
		passwd_home(dir, sizeof dir);
		home = *dir ? dir : NULL;
	}
	if (!home)
		return 0;
	return (*out = joined(home, "/.config/.mono/keypairs", "")) ? 0 : -1;
}

/* The key pair of the file at path into *blob (lt_mono_key_parse); errors
 * name the file. */
static int read_file(const char *path, uint8_t **blob, size_t *len)
{
	uint8_t *text;
	size_t size;
	int rc;

	if (lt_file_read(path, &text, &size) < 0)
		return -1;
	rc = lt_mono_key_parse(text, size, blob, len);
	free(text);
	return rc < 0 ? lt_error_prefix("%s: ", path) : 0;
}

int lt_keys_container_read(const char *name, uint8_t **blob, size_t *len)
{
	char file[LT_MONO_KEY_NAME_SIZE], *user = NULL, *paths[2] = { NULL, NULL };
	int n = 0, rc = -1;

	*blob = NULL;
	*len = 0;
	if (lt_mono_key_file_name(name, file) < 0 || user_store(&user) < 0)
		goto done;
	if ((user && !(paths[n++] = joined(user, "/", file))) || !(paths[n++] = joined(MACHINE_STORE, "/", file)))
		goto done;
	for (int i = 0; i < n; i++)
		if (lt_file_exists(paths[i])) {
			rc = read_file(paths[i], blob, len);
			goto done;
		}
	lt_error_set(LT_E_KEY_CONTAINER, "no key container '%s' in Mono's key stores: no %s%s%s", name, paths[0],
		     n > 1 ? " nor " : "", n > 1 ? paths[1] : "");
done:
	free(user);
	free(paths[0]);
	free(paths[1]);
	return rc;
}
