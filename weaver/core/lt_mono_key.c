/* lt_mono_key.c - Mono's key container files (see lt_mono_key.h): the file
 * name from the container name (MD5), the XML read with Mini-XML, the
 * numbers with Mbed TLS's base64 (mbedtls/base64.h). */
#include "lt_mono_key.h"
#include "lt_error.h"
#include "lt_hash.h"
#include "lt_mem.h"

#include <mbedtls/base64.h>
#include <mxml.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest file read: a 16384-bit key pair takes about 11 000 bytes. */
#define MAX_TEXT 65536
/* BLOBHEADER (bType, bVersion, reserved, aiKeyAlg) + RSAPUBKEY (magic, bitlen, pubexp): wincrypt.h. */
#define BLOB_HEADER 20
#define PRIVATEKEYBLOB 0x07
#define CUR_BLOB_VERSION 0x02
#define CALG_RSA_SIGN 0x00002400u
#define MAGIC_RSA2 0x32415352u /* "RSA2" */

int lt_mono_key_file_name(const char *container, char out[LT_MONO_KEY_NAME_SIZE])
{
	/* System.Guid(byte[]): Data1 (4 bytes), Data2 and Data3 (2 each) little-endian, then 8 bytes as they are. */
	static const uint8_t order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
	uint8_t md5[LT_HASH_MAX];
	char *p = out;

	if (lt_hash_buf(LT_HASH_MD5, container, strlen(container), md5) < 0)
		return -1;
	memcpy(p, "[1][", 4);
	p += 4;
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		snprintf(p, 3, "%02x", md5[order[i]]);
		p += 2;
	}
	memcpy(p, "][-1].xml", sizeof "][-1].xml");
	return 0;
}

/* Mini-XML reports parse errors through one global callback: the last message. */
static char mxml_message[256];

static void on_mxml_error(const char *msg)
{
	snprintf(mxml_message, sizeof mxml_message, "%s", msg);
}

/* The child element of parent named name, or NULL. */
static mxml_node_t *element(mxml_node_t *parent, const char *name)
{
	return parent ? mxmlFindElement(parent, parent, name, NULL, NULL, MXML_DESCEND_FIRST) : NULL;
}

/* The number in <name> under rsa: base64 of big-endian bytes, decoded into
 * a new buffer *out (free()) of *len bytes without its leading zero bytes
 * (*len is 0 for the number 0).  -1 with LT_E_KEY or LT_E_NOMEM. */
static int number(mxml_node_t *rsa, const char *name, uint8_t **out, size_t *len)
{
	mxml_node_t *el = element(rsa, name);
	const char *text = el ? mxmlGetOpaque(el) : NULL;
	size_t n, skip = 0;
	uint8_t *buf;

	*out = NULL;
	if (!text)
		return lt_error_set(LT_E_KEY, "<RSAKeyValue> has no <%s>: not a key pair", name);
	while (*text == ' ' || *text == '\t' || *text == '\r' || *text == '\n')
		text++;
	n = strlen(text);
	while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t' || text[n - 1] == '\r' || text[n - 1] == '\n'))
		n--;
	if (!(buf = lt_malloc(n / 4 * 3 + 3)))
		return lt_nomem(NULL);
	if (n == 0 || mbedtls_base64_decode(buf, n / 4 * 3 + 3, len, (const unsigned char *)text, n) != 0) {
		free(buf);
		return lt_error_set(LT_E_KEY, "<%s>: not base64", name);
	}
	while (skip < *len && buf[skip] == 0)
		skip++;
	*len -= skip;
	memmove(buf, buf + skip, *len);
	*out = buf;
	return 0;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* The PRIVATEKEYBLOB of the numbers under <RSAKeyValue> rsa into *blob. */
static int to_blob(mxml_node_t *rsa, uint8_t **blob, size_t *blob_len)
{
	/* The blob's numbers in their order (after the header), little-endian, each of the modulus's
	 * size (full) or half of it. */
	static const struct {
		const char *name;
		int full;
	} parts[] = {
		{ "Modulus", 1 }, { "P", 0 }, { "Q", 0 }, { "DP", 0 }, { "DQ", 0 }, { "InverseQ", 0 }, { "D", 1 },
	};
	uint8_t *v, *b = NULL, *p = NULL;
	size_t n, full = 0, size = 0;
	uint32_t exponent = 0;
	int rc = -1;

	if (number(rsa, "Exponent", &v, &n) < 0)
		return -1;
	if (n == 0 || n > 4) {
		free(v);
		return lt_error_set(LT_E_KEY, "<Exponent>: %zu bytes, not a public exponent", n);
	}
	for (size_t i = 0; i < n; i++)
		exponent = exponent << 8 | v[i];
	free(v);
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		if (number(rsa, parts[i].name, &v, &n) < 0)
			goto done;
		if (i == 0) { /* the modulus: its size gives the others' */
			full = n;
			if (n == 0 || n % 2 || n > 16384 / 8) {
				free(v);
				lt_error_set(LT_E_KEY, "<Modulus>: %zu bytes, not an RSA key LockTime signs with", n);
				goto done;
			}
			size = BLOB_HEADER + full + 5 * (full / 2) + full;
			if (!(b = lt_calloc(1, size))) {
				free(v);
				lt_nomem(NULL);
				goto done;
			}
			b[0] = PRIVATEKEYBLOB;
			b[1] = CUR_BLOB_VERSION;
			put_le32(b + 4, CALG_RSA_SIGN);
			put_le32(b + 8, MAGIC_RSA2);
			put_le32(b + 12, (uint32_t)(full * 8));
			put_le32(b + 16, exponent);
			p = b + BLOB_HEADER;
		}
		if (n > (parts[i].full ? full : full / 2)) {
			free(v);
			lt_error_set(LT_E_KEY, "<%s>: %zu bytes, longer than a %zu-bit key's", parts[i].name, n, full * 8);
			goto done;
		}
		for (size_t j = 0; j < n; j++) /* big-endian to the blob's little-endian */
			p[j] = v[n - 1 - j];
		p += parts[i].full ? full : full / 2;
		free(v);
	}
	*blob = b;
	*blob_len = size;
	b = NULL;
	rc = 0;
done:
	free(b);
	return rc;
}

int lt_mono_key_parse(const uint8_t *text, size_t len, uint8_t **blob, size_t *blob_len)
{
	mxml_node_t *doc, *pair, *rsa;
	char *s;
	int rc = -1;

	*blob = NULL;
	*blob_len = 0;
	if (len >= 3 && text[0] == 0xEF && text[1] == 0xBB && text[2] == 0xBF) { /* UTF-8 byte order mark */
		text += 3;
		len -= 3;
	}
	if (len > MAX_TEXT)
		return lt_error_set(LT_E_KEY, "%zu bytes: too large for a key pair file", len);
	s = lt_malloc(len + 1);
	/* A parent of our own: an <?xml ...?> declaration, if any, is a node beside <KeyPair>. */
	if (!s || !(doc = mxmlNewElement(MXML_NO_PARENT, "file"))) {
		free(s);
		return lt_nomem(NULL);
	}
	memcpy(s, text, len);
	s[len] = '\0';
	mxml_message[0] = '\0';
	mxmlSetErrorCallback(on_mxml_error);
	if (!mxmlLoadString(doc, s, MXML_OPAQUE_CALLBACK))
		lt_error_set(LT_E_KEY, "malformed XML: %s", mxml_message[0] ? mxml_message : "no element");
	else if (!(pair = mxmlFindElement(doc, doc, "KeyPair", NULL, NULL, MXML_DESCEND)) ||
		 !(rsa = element(element(pair, "KeyValue"), "RSAKeyValue")))
		lt_error_set(LT_E_KEY, "not a Mono key pair: no <KeyPair><KeyValue><RSAKeyValue>");
	else
		rc = to_blob(rsa, blob, blob_len);
	mxmlDelete(doc);
	free(s);
	return rc;
}
