/* lt_keys_win.c - key containers on Windows (see lt_keys.h): CryptoAPI's
 * (wincrypt.h), as `sn -i` fills them and MSBuild's ResolveKeySource does
 * for a .pfx key (a VS_KEY_<hash> container): CryptAcquireContextW of the
 * named container of the default PROV_RSA_FULL provider, in the user's key
 * set then the machine's, its key pair exported as a PRIVATEKEYBLOB - the
 * bytes of an .snk file.  Built with mingw-w64, linked with advapi32. */
#include "lt_keys.h"
#include "lt_error.h"
#include "lt_file_int.h"
#include "lt_mem.h"

#include <stdlib.h>
#include <windows.h>
#include <wincrypt.h>

/* The key pair of the open container prov into *blob: the signature key,
 * else the exchange key. */
static int export_pair(HCRYPTPROV prov, const char *name, const char *store, uint8_t **blob, size_t *len)
{
	HCRYPTKEY key = 0;
	DWORD n = 0, e;
	uint8_t *b;

	if (!CryptGetUserKey(prov, AT_SIGNATURE, &key) && !CryptGetUserKey(prov, AT_KEYEXCHANGE, &key))
		return lt_error_set(LT_E_KEY, "key container '%s' (%s key set) holds no key pair: %s", name, store,
				    lt_win_error(GetLastError()));
	if (!CryptExportKey(key, 0, PRIVATEKEYBLOB, 0, NULL, &n) || n == 0) {
		e = GetLastError();
		CryptDestroyKey(key);
		return lt_error_set(LT_E_KEY, "the key pair of container '%s' (%s key set) cannot be exported%s: %s", name,
				    store, e == (DWORD)NTE_BAD_KEY_STATE ? " (it was imported without CRYPT_EXPORTABLE)" : "",
				    lt_win_error(e));
	}
	if (!(b = lt_malloc(n))) {
		CryptDestroyKey(key);
		return lt_nomem(NULL);
	}
	if (!CryptExportKey(key, 0, PRIVATEKEYBLOB, 0, b, &n)) {
		e = GetLastError();
		free(b);
		CryptDestroyKey(key);
		return lt_error_set(LT_E_KEY, "the key pair of container '%s' cannot be exported: %s", name, lt_win_error(e));
	}
	CryptDestroyKey(key);
	*blob = b;
	*len = n;
	return 0;
}

int lt_keys_container_read(const char *name, uint8_t **blob, size_t *len)
{
	static const struct {
		DWORD flags;
		const char *store;
	} sets[] = { { 0, "user" }, { CRYPT_MACHINE_KEYSET, "machine" } };
	wchar_t *w = lt_win_wide(name);
	HCRYPTPROV prov;
	DWORD e;
	int rc;

	*blob = NULL;
	*len = 0;
	if (!w)
		return -1;
	for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
		if (!CryptAcquireContextW(&prov, w, NULL, PROV_RSA_FULL, sets[i].flags | CRYPT_SILENT)) {
			e = GetLastError();
			if (e == (DWORD)NTE_BAD_KEYSET)
				continue; /* not in this key set */
			free(w);
			return lt_error_set(LT_E_KEY_CONTAINER, "key container '%s' (%s key set) cannot be opened: %s", name,
					    sets[i].store, lt_win_error(e));
		}
		rc = export_pair(prov, name, sets[i].store, blob, len);
		CryptReleaseContext(prov, 0);
		free(w);
		return rc;
	}
	free(w);
	return lt_error_set(LT_E_KEY_CONTAINER,
			    "no key container '%s' in CryptoAPI's key sets (PROV_RSA_FULL): neither the user's nor the machine's",
			    name);
}
