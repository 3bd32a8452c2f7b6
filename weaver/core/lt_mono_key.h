/* lt_mono_key.h - Mono's key containers as files: the name of a container's
 * file and the key pair it holds.  Mono keeps each container of its
 * RSACryptoServiceProvider (CspParameters.KeyContainerName), which `mcs
 * -keycontainer` signs with, as one XML file in a key store folder
 * (lt_keys_posix.c finds the folders).  Only the format lives here: no file
 * is opened, so any host can read one. */
#ifndef LT_MONO_KEY_H
#define LT_MONO_KEY_H

#include <stddef.h>
#include <stdint.h>

/* Size of a container's file name, with its NUL:
 * "[1][" + 36-character GUID + "][-1].xml". */
#define LT_MONO_KEY_NAME_SIZE 50

/* The file name of the key container `container` (UTF-8) into out:
 * "[<provider type>][<GUID>][<key number>].xml" as Mono's
 * KeyPairPersistence names it for the CspParameters its compilers use -
 * provider type 1 (PROV_RSA_FULL), key number -1 (none given) - where the
 * GUID is the MD5 digest of the name's UTF-8 bytes read as a System.Guid
 * (its first 4, then 2 and 2 bytes little-endian), in lower-case "D" form.
 * Returns 0, or -1 with LT_E_NOMEM. */
int lt_mono_key_file_name(const char *container, char out[LT_MONO_KEY_NAME_SIZE]);

/* The key pair of a container file text[0..len) - Mono's
 * <KeyPair><Properties/><KeyValue><RSAKeyValue> with the XML-DSig
 * RSAKeyValue's Modulus, Exponent, P, Q, DP, DQ, InverseQ and D, each the
 * base64 of a big-endian number (W3C XML Signature 4.4.2.2, with the private
 * parts .NET's RSA.ToXmlString adds) - as a CryptoAPI PRIVATEKEYBLOB, the
 * .snk format lt_rsa_from_snk reads (a UTF-8 byte order mark first is
 * skipped).  Returns 0 with *blob (free()) of *blob_len bytes, or -1 with
 * LT_E_KEY naming what is missing or malformed (the numbers are not checked
 * against each other here: lt_rsa_from_snk does), or LT_E_NOMEM. */
int lt_mono_key_parse(const uint8_t *text, size_t len, uint8_t **blob, size_t *blob_len);

#endif
