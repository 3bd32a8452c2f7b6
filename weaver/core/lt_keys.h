/* lt_keys.h - strong-name key pairs kept in the platform's key containers
 * (what a compiler's -keycontainer:NAME and MSBuild's KeyContainerName
 * sign with), part of the portability layer: lt_keys_posix.c (Linux, macOS:
 * Mono's key stores) or lt_keys_win.c (Windows: CryptoAPI), one of them
 * chosen by the build, as for lt_file.h. */
#ifndef LT_KEYS_H
#define LT_KEYS_H

#include <stddef.h>
#include <stdint.h>

/* The key pair of the key container `name` (UTF-8) as a CryptoAPI
 * PRIVATEKEYBLOB - the .snk format, for lt_rsa_from_snk - into *blob
 * (free()) of *len bytes, looked up in the user's store, then the
 * machine's:
 *   POSIX    Mono's stores, the files lt_mono_key.h names: the user's in
 *            $XDG_CONFIG_HOME/.mono/keypairs (else ~/.config/.mono/keypairs,
 *            ~ being $HOME or the password database's home), the machine's
 *            in /usr/share/.mono/keypairs;
 *   Windows  the container of the default PROV_RSA_FULL provider, the
 *            user's then the machine's (CRYPT_MACHINE_KEYSET), its
 *            signature key (AT_SIGNATURE) else its exchange key, exported
 *            with CryptExportKey (the key must have been imported
 *            exportable).
 * Returns 0, or -1 with LT_E_KEY_CONTAINER (no such container: the message
 * names it and where it was looked for), LT_E_KEY (the container's key
 * cannot be read or exported), LT_E_IO (a file that cannot be read) or
 * LT_E_NOMEM. */
int lt_keys_container_read(const char *name, uint8_t **blob, size_t *len);

#endif
