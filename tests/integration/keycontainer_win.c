/* keycontainer_win.c - fills and empties CryptoAPI key containers for tests/integration/strongname.sh,
 * as `sn -i` and `sn -d` do on Windows (run under wine there):
 *   keycontainer_win import KEY.snk NAME [machine] [unexportable]
 *       a new container NAME holding the .snk's key pair, in the user's (or the machine's) key set,
 *       exportable (or not: CryptImportKey without CRYPT_EXPORTABLE)
 *   keycontainer_win delete NAME [machine]   remove the container
 * Built with x86_64-w64-mingw32-gcc ... -ladvapi32. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <wincrypt.h>

/* Whether word is among argv[from..argc). */
static int has(int argc, char **argv, int from, const char *word)
{
	for (int i = from; i < argc; i++)
		if (!strcmp(argv[i], word))
			return 1;
	return 0;
}

static int failed(const char *what)
{
	fprintf(stderr, "keycontainer_win: %s failed: error 0x%08lx\n", what, (unsigned long)GetLastError());
	return 1;
}

int main(int argc, char **argv)
{
	HCRYPTPROV prov;
	HCRYPTKEY key;
	DWORD flags;
	BYTE blob[16384];
	size_t n;
	FILE *f;

	if (argc < 3 || (strcmp(argv[1], "import") && strcmp(argv[1], "delete"))) {
		fprintf(stderr, "usage: keycontainer_win import KEY.snk NAME [machine] [unexportable] | delete NAME [machine]\n");
		return 2;
	}
	if (!strcmp(argv[1], "delete")) {
		flags = CRYPT_DELETEKEYSET | (has(argc, argv, 3, "machine") ? CRYPT_MACHINE_KEYSET : 0);
		return CryptAcquireContextA(&prov, argv[2], NULL, PROV_RSA_FULL, flags) ? 0 : failed("CryptAcquireContext");
	}
	if (argc < 4 || !(f = fopen(argv[2], "rb")))
		return failed("reading the key file");
	n = fread(blob, 1, sizeof blob, f);
	fclose(f);
	flags = CRYPT_NEWKEYSET | (has(argc, argv, 4, "machine") ? CRYPT_MACHINE_KEYSET : 0);
	if (!CryptAcquireContextA(&prov, argv[3], NULL, PROV_RSA_FULL, flags))
		return failed("CryptAcquireContext");
	if (!CryptImportKey(prov, blob, (DWORD)n, 0, has(argc, argv, 4, "unexportable") ? 0 : CRYPT_EXPORTABLE, &key))
		return failed("CryptImportKey");
	CryptDestroyKey(key);
	CryptReleaseContext(prov, 0);
	return 0;
}
