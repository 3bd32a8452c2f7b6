/* test_rsa.c - unit tests for lt_rsa.c: .snk key blobs and PKCS#1 v1.5 signatures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/rsa.h>

#include "lt_error.h"
#include "lt_rsa.h"

#define BITS 1024
#define FULL (BITS / 8)
#define HALF (BITS / 16)
#define SNK_LEN (20 + FULL + 5 * HALF + FULL)

static mbedtls_rsa_context ref; /* the key the blobs hold, made once */
static uint8_t snk[SNK_LEN];
static uint8_t pub[12 + 20 + FULL]; /* the strong-name public key blob of the same key */

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

/* A number of the reference key, little-endian, into n bytes at p. */
static void put_le(const mbedtls_mpi *x, uint8_t *p, size_t n)
{
	uint8_t be[FULL];
	assert_int_equal(mbedtls_mpi_write_binary(x, be, n), 0);
	for (size_t i = 0; i < n; i++)
		p[i] = be[n - 1 - i];
}

/* A fresh 1024-bit key as `sn -k` would write it (PRIVATEKEYBLOB), and its public key blob. */
static int setup(void **state)
{
	mbedtls_entropy_context e;
	mbedtls_ctr_drbg_context d;
	mbedtls_mpi n, p, q, dd, dp, dq, qp;
	uint8_t *at = snk + 20;

	(void)state;
	mbedtls_entropy_init(&e);
	mbedtls_ctr_drbg_init(&d);
	mbedtls_rsa_init(&ref, MBEDTLS_RSA_PKCS_V15, 0);
	if (mbedtls_ctr_drbg_seed(&d, mbedtls_entropy_func, &e, NULL, 0) || mbedtls_rsa_gen_key(&ref, mbedtls_ctr_drbg_random, &d, BITS, 65537))
		return -1;
	mbedtls_mpi_init(&n), mbedtls_mpi_init(&p), mbedtls_mpi_init(&q), mbedtls_mpi_init(&dd);
	mbedtls_mpi_init(&dp), mbedtls_mpi_init(&dq), mbedtls_mpi_init(&qp);
	mbedtls_rsa_export(&ref, &n, &p, &q, &dd, NULL);
	mbedtls_rsa_export_crt(&ref, &dp, &dq, &qp);
	snk[0] = 0x07, snk[1] = 0x02, put32(snk + 4, 0x2400), put32(snk + 8, 0x32415352), put32(snk + 12, BITS), put32(snk + 16, 65537);
	put_le(&n, at, FULL), put_le(&p, at + FULL, HALF), put_le(&q, at + FULL + HALF, HALF);
	put_le(&dp, at + FULL + 2 * HALF, HALF), put_le(&dq, at + FULL + 3 * HALF, HALF), put_le(&qp, at + FULL + 4 * HALF, HALF);
	put_le(&dd, at + FULL + 5 * HALF, FULL);
	put32(pub, 0x2400), put32(pub + 4, 0x8004), put32(pub + 8, 20 + FULL);
	memcpy(pub + 12, snk, 20);
	pub[12] = 0x06, put32(pub + 12 + 8, 0x31415352);
	memcpy(pub + 32, at, FULL);
	mbedtls_mpi_free(&n), mbedtls_mpi_free(&p), mbedtls_mpi_free(&q), mbedtls_mpi_free(&dd);
	mbedtls_mpi_free(&dp), mbedtls_mpi_free(&dq), mbedtls_mpi_free(&qp);
	mbedtls_ctr_drbg_free(&d);
	mbedtls_entropy_free(&e);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	mbedtls_rsa_free(&ref);
	return 0;
}

/* The signature verifies under the reference key, for SHA-1 and SHA-256 digests. */
static void test_sign_verifies(void **state)
{
	struct lt_rsa_key *k;
	uint8_t digest[32], sig[FULL];

	(void)state;
	assert_int_equal(lt_rsa_from_snk(&k, snk, sizeof snk), 0);
	assert_int_equal(lt_rsa_size(k), FULL);
	memset(digest, 0x5a, sizeof digest);
	assert_int_equal(lt_rsa_sign(k, LT_HASH_SHA1, digest, sig), 0);
	assert_int_equal(mbedtls_rsa_pkcs1_verify(&ref, NULL, NULL, MBEDTLS_RSA_PUBLIC, MBEDTLS_MD_SHA1, 20, digest, sig), 0);
	assert_int_equal(lt_rsa_sign(k, LT_HASH_SHA256, digest, sig), 0);
	assert_int_equal(mbedtls_rsa_pkcs1_verify(&ref, NULL, NULL, MBEDTLS_RSA_PUBLIC, MBEDTLS_MD_SHA256, 32, digest, sig), 0);
	lt_rsa_free(k);
	lt_rsa_free(NULL);
}

/* matches: its own public key blob, not a changed modulus or exponent, not a short blob. */
static void test_matches(void **state)
{
	struct lt_rsa_key *k;
	uint8_t other[sizeof pub];

	(void)state;
	assert_int_equal(lt_rsa_from_snk(&k, snk, sizeof snk), 0);
	assert_int_equal(lt_rsa_matches(k, pub, sizeof pub), 1);
	assert_int_equal(lt_rsa_matches(k, pub, sizeof pub - 1), 0);
	memcpy(other, pub, sizeof pub);
	other[40] ^= 1;
	assert_int_equal(lt_rsa_matches(k, other, sizeof other), 0);
	memcpy(other, pub, sizeof pub);
	other[28] ^= 2; /* pubexp */
	assert_int_equal(lt_rsa_matches(k, other, sizeof other), 0);
	lt_rsa_free(k);
}

static void refused(const uint8_t *blob, size_t len, const char *what)
{
	struct lt_rsa_key *k = (struct lt_rsa_key *)1;

	assert_int_equal(lt_rsa_from_snk(&k, blob, len), -1);
	assert_null(k);
	assert_int_equal(lt_error_last()->code, LT_E_KEY);
	if (!strstr(lt_error_last()->msg, what))
		fail_msg("'%s' does not say '%s'", lt_error_last()->msg, what);
}

/* Every malformed blob is LT_E_KEY naming what is wrong. */
static void test_refused(void **state)
{
	uint8_t bad[SNK_LEN];

	(void)state;
	refused(pub, sizeof pub, "public key only");
	refused(snk, 19, "too short");
	for (size_t len = 20; len < sizeof snk; len += 37)
		refused(snk, len, "PRIVATEKEYBLOB has");
	memcpy(bad, snk, sizeof bad);
	bad[0] = 0x06;
	refused(bad, sizeof bad, "PUBLICKEYBLOB");
	memcpy(bad, snk, sizeof bad);
	bad[8] = 'X';
	refused(bad, sizeof bad, "not an RSA PRIVATEKEYBLOB");
	memcpy(bad, snk, sizeof bad);
	put32(bad + 12, 100);
	refused(bad, sizeof bad, "100 bits");
	memcpy(bad, snk, sizeof bad);
	bad[20 + FULL + 3] ^= 0x10; /* prime1 */
	refused(bad, sizeof bad, "not consistent");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sign_verifies),
		cmocka_unit_test(test_matches),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
