/* test_mono_key.c - unit tests for lt_mono_key.c (Mono's key container files) and
 * lt_keys_posix.c (where Mono's key stores are). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <mbedtls/base64.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/rsa.h>

#include "lt_error.h"
#include "lt_hash.h"
#include "lt_keys.h"
#include "lt_mem.h"
#include "lt_mono_key.h"
#include "lt_rsa.h"

#define BITS 1024
#define FULL (BITS / 8)

static mbedtls_rsa_context ref; /* the key the files hold, made once */
static char dir[] = "/tmp/lt-mono-key-XXXXXX";

/* The XML-DSig element <name> of x: base64 of its big-endian bytes (n of them, or its own length with n 0),
 * with `lead` extra bytes 0x01 (or 0x00 when zero is set) before them, appended to out. */
static void element(char *out, size_t cap, const char *name, const mbedtls_mpi *x, size_t n, size_t lead, int zero)
{
	uint8_t be[2 * FULL];
	unsigned char b64[4 * FULL];
	size_t len = n ? n : mbedtls_mpi_size(x), olen;

	memset(be, zero ? 0 : 1, lead);
	assert_int_equal(mbedtls_mpi_write_binary(x, be + lead, len), 0);
	assert_int_equal(mbedtls_base64_encode(b64, sizeof b64, &olen, be, lead + len), 0);
	snprintf(out + strlen(out), cap - strlen(out), "<%s>%s</%s>", name, b64, name);
}

/* Mono's file for the reference key, as KeyPairPersistence writes it (a byte order mark, tabs, CRLF-free
 * lines), with element `skip` left out and `lead` bytes put before element `longer` (zero: zero bytes). */
static void mono_file(char *out, size_t cap, const char *skip, const char *longer, size_t lead, int zero)
{
	static const char *const names[] = { "Modulus", "Exponent", "P", "Q", "DP", "DQ", "InverseQ", "D" };
	mbedtls_mpi v[8];

	for (int i = 0; i < 8; i++)
		mbedtls_mpi_init(&v[i]);
	mbedtls_rsa_export(&ref, &v[0], &v[2], &v[3], &v[7], &v[1]);
	mbedtls_rsa_export_crt(&ref, &v[4], &v[5], &v[6]);
	snprintf(out, cap, "\xEF\xBB\xBF<KeyPair>\n\t<Properties>\n\t\t<Provider Type=\"1\" />\n\t\t<Container Name=\"x\" />\n"
			   "\t</Properties>\n\t<KeyValue>\n\t\t<RSAKeyValue>");
	for (int i = 0; i < 8; i++)
		if (!skip || strcmp(skip, names[i]))
			element(out, cap, names[i], &v[i], i == 0 || i == 7 ? FULL : i == 1 ? 0 : FULL / 2,
				longer && !strcmp(longer, names[i]) ? lead : 0, zero);
	snprintf(out + strlen(out), cap - strlen(out), "</RSAKeyValue>\n\t</KeyValue>\n</KeyPair>\n");
	for (int i = 0; i < 8; i++)
		mbedtls_mpi_free(&v[i]);
}

static int setup(void **state)
{
	mbedtls_entropy_context e;
	mbedtls_ctr_drbg_context d;
	int rc;

	(void)state;
	mbedtls_entropy_init(&e);
	mbedtls_ctr_drbg_init(&d);
	mbedtls_rsa_init(&ref, MBEDTLS_RSA_PKCS_V15, 0);
	rc = mbedtls_ctr_drbg_seed(&d, mbedtls_entropy_func, &e, NULL, 0) ||
	     mbedtls_rsa_gen_key(&ref, mbedtls_ctr_drbg_random, &d, BITS, 65537);
	mbedtls_ctr_drbg_free(&d);
	mbedtls_entropy_free(&e);
	return rc || !mkdtemp(dir) ? -1 : 0;
}

static int teardown(void **state)
{
	char rm[64];

	(void)state;
	mbedtls_rsa_free(&ref);
	snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
	return system(rm) == 0 ? 0 : -1;
}

/* The blob signs like the reference key: a SHA-1 digest signed through lt_rsa verifies with ref. */
static void signs_as_ref(const uint8_t *blob, size_t len)
{
	struct lt_rsa_key *key;
	uint8_t digest[20] = { 1, 2, 3 }, sig[FULL];

	assert_int_equal(lt_rsa_from_snk(&key, blob, len), 0);
	assert_int_equal(lt_rsa_size(key), FULL);
	assert_int_equal(lt_rsa_sign(key, LT_HASH_SHA1, digest, sig), 0);
	assert_int_equal(mbedtls_rsa_pkcs1_verify(&ref, NULL, NULL, MBEDTLS_RSA_PUBLIC, MBEDTLS_MD_SHA1, 20, digest, sig), 0);
	lt_rsa_free(key);
}

static void test_parse(void **state)
{
	char text[8192];
	uint8_t *blob;
	size_t len;

	(void)state;
	mono_file(text, sizeof text, NULL, NULL, 0, 0);
	assert_int_equal(lt_mono_key_parse((const uint8_t *)text, strlen(text), &blob, &len), 0);
	assert_int_equal(len, 20 + FULL + 5 * (FULL / 2) + FULL);
	/* PRIVATEKEYBLOB, CUR_BLOB_VERSION, CALG_RSA_SIGN, "RSA2", bitlen, pubexp (wincrypt.h) */
	assert_memory_equal(blob, "\x07\x02\x00\x00\x00\x24\x00\x00RSA2\x00\x04\x00\x00\x01\x00\x01\x00", 20);
	signs_as_ref(blob, len);
	free(blob);

	/* Leading zero bytes are no part of a number (a P written one byte longer). */
	mono_file(text, sizeof text, NULL, "P", 1, 1);
	assert_int_equal(lt_mono_key_parse((const uint8_t *)text, strlen(text), &blob, &len), 0);
	signs_as_ref(blob, len);
	free(blob);
}

/* Every allocation of the parse made to fail in turn (lt_mem_fail_at; Mini-XML's own aside): LT_E_NOMEM
 * and no blob, and ASan sees nothing leak. */
static void test_nomem(void **state)
{
	char text[8192];
	uint8_t *blob;
	size_t len;
	long n;

	(void)state;
	mono_file(text, sizeof text, NULL, NULL, 0, 0);
	lt_mem_fail_at(-1);
	assert_int_equal(lt_mono_key_parse((const uint8_t *)text, strlen(text), &blob, &len), 0);
	free(blob);
	n = lt_mem_fail_at(-1);
	assert_true(n >= 9); /* the text, eight numbers, the blob */
	for (long k = 0; k < n; k++) {
		lt_error_clear();
		lt_mem_fail_at(k);
		assert_int_equal(lt_mono_key_parse((const uint8_t *)text, strlen(text), &blob, &len), -1);
		lt_mem_fail_at(-1);
		assert_null(blob);
		assert_int_equal(lt_error_last()->code, LT_E_NOMEM);
	}
}

/* text is refused with LT_E_KEY and a message containing what. */
static void refused(const char *text, const char *what)
{
	uint8_t *blob = (uint8_t *)"";
	size_t len = 1;

	lt_error_clear();
	assert_int_equal(lt_mono_key_parse((const uint8_t *)text, strlen(text), &blob, &len), -1);
	assert_null(blob);
	assert_int_equal(lt_error_last()->code, LT_E_KEY);
	if (!strstr(lt_error_last()->msg, what))
		fail_msg("message \"%s\" lacks \"%s\"", lt_error_last()->msg, what);
}

static void test_refused(void **state)
{
	char text[8192];

	(void)state;
	mono_file(text, sizeof text, "D", NULL, 0, 0);
	refused(text, "<RSAKeyValue> has no <D>");
	mono_file(text, sizeof text, "InverseQ", NULL, 0, 0);
	refused(text, "<RSAKeyValue> has no <InverseQ>");
	mono_file(text, sizeof text, NULL, "Q", 2, 0);
	refused(text, "<Q>: 66 bytes, longer than a 1024-bit key's");
	mono_file(text, sizeof text, NULL, "Exponent", 2, 0);
	refused(text, "<Exponent>: 5 bytes, not a public exponent");
	refused("<KeyPair><KeyValue><RSAKeyValue><Exponent>AQAB</Exponent><Modulus>!!!!</Modulus></RSAKeyValue></KeyValue></KeyPair>",
		"<Modulus>: not base64");
	refused("<KeyPair><KeyValue><RSAKeyValue><Exponent>AQAB</Exponent><Modulus>AQAB</Modulus></RSAKeyValue></KeyValue></KeyPair>",
		"<Modulus>: 3 bytes, not an RSA key LockTime signs with");
	refused("<KeyPair><KeyValue><DSAKeyValue/></KeyValue></KeyPair>", "no <KeyPair><KeyValue><RSAKeyValue>");
	refused("<RSAKeyValue/>", "no <KeyPair><KeyValue><RSAKeyValue>");
	refused("<KeyPair><KeyValue>", "malformed XML");
	refused("", "malformed XML");
}

/* The names Mono 6.8's RSACryptoServiceProvider gave the files of these containers (seen in its store). */
static void test_file_name(void **state)
{
	char name[LT_MONO_KEY_NAME_SIZE];

	(void)state;
	assert_int_equal(lt_mono_key_file_name("LockTimeTest", name), 0);
	assert_string_equal(name, "[1][0bd8c609-8563-0d15-6512-790707961547][-1].xml");
	assert_int_equal(lt_mono_key_file_name("Cl\xC3\xA9 de test", name), 0);
	assert_string_equal(name, "[1][e9bf3eaf-c3be-35e5-0e52-1ab7d4ca0ff8][-1].xml");
}

/* Write the reference key's file for container `name` into folder store (made with its parents). */
static void store_file(const char *store, const char *name)
{
	char path[512], file[LT_MONO_KEY_NAME_SIZE], text[8192];
	FILE *f;

	for (char *p = strcpy(path, store) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0700);
		*p = '/';
	}
	mkdir(store, 0700);
	assert_int_equal(lt_mono_key_file_name(name, file), 0);
	snprintf(path, sizeof path, "%s/%s", store, file);
	mono_file(text, sizeof text, NULL, NULL, 0, 0);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static void test_stores(void **state)
{
	char xdg[128], home[128], store[512];
	uint8_t *blob;
	size_t len;

	(void)state;
	snprintf(xdg, sizeof xdg, "%s/xdg", dir);
	snprintf(home, sizeof home, "%s/home", dir);
	snprintf(store, sizeof store, "%s/.config/.mono/keypairs", home);
	store_file(store, "InHome");
	snprintf(store, sizeof store, "%s/.mono/keypairs", xdg);
	store_file(store, "InXdg");

	/* $HOME/.config when XDG_CONFIG_HOME is unset or empty; XDG_CONFIG_HOME's when set. */
	setenv("HOME", home, 1);
	setenv("XDG_CONFIG_HOME", "", 1);
	assert_int_equal(lt_keys_container_read("InHome", &blob, &len), 0);
	signs_as_ref(blob, len);
	free(blob);
	setenv("XDG_CONFIG_HOME", xdg, 1);
	assert_int_equal(lt_keys_container_read("InXdg", &blob, &len), 0);
	signs_as_ref(blob, len);
	free(blob);

	/* No HOME: the user's home folder in /etc/passwd, as getpwuid gives it for a local user. */
	{
		struct passwd *pw = getpwuid(getuid());
		char want[600];

		unsetenv("HOME");
		setenv("XDG_CONFIG_HOME", "", 1);
		assert_int_equal(lt_keys_container_read("NotThere", &blob, &len), -1);
		if (pw && pw->pw_dir && *pw->pw_dir) {
			snprintf(want, sizeof want, "no key container 'NotThere' in Mono's key stores: no %s/.config/.mono/keypairs/[1][",
				 pw->pw_dir);
			assert_true(strstr(lt_error_last()->msg, want) == lt_error_last()->msg);
		}
		setenv("HOME", home, 1);
		setenv("XDG_CONFIG_HOME", xdg, 1);
	}

	/* Not in the store looked at: the error names the container and both stores' files. */
	assert_int_equal(lt_keys_container_read("InHome", &blob, &len), -1);
	assert_null(blob);
	assert_int_equal(lt_error_last()->code, LT_E_KEY_CONTAINER);
	snprintf(store, sizeof store, "no key container 'InHome' in Mono's key stores: no %s/.mono/keypairs/[1][", xdg);
	assert_true(strstr(lt_error_last()->msg, store) == lt_error_last()->msg);
	assert_non_null(strstr(lt_error_last()->msg, "][-1].xml nor /usr/share/.mono/keypairs/[1]["));

	/* A malformed file: LT_E_KEY, naming it. */
	snprintf(store, sizeof store, "%s/.mono/keypairs/[1][0bd8c609-8563-0d15-6512-790707961547][-1].xml", xdg);
	FILE *f = fopen(store, "w");
	assert_non_null(f);
	fputs("<KeyPair/>", f);
	fclose(f);
	assert_int_equal(lt_keys_container_read("LockTimeTest", &blob, &len), -1);
	assert_int_equal(lt_error_last()->code, LT_E_KEY);
	assert_true(strstr(lt_error_last()->msg, store) == lt_error_last()->msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_nomem),
		cmocka_unit_test(test_file_name),
		cmocka_unit_test(test_stores),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
