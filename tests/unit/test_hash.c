/* test_hash.c - lt_hash: the FIPS 180-4 example digests ("abc" and the two-block
 * message of the FIPS 180-2 appendices, a million 'a'), incremental updates in odd pieces, and the
 * PdbChecksum algorithm names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "lt_error.h"
#include "lt_hash.h"

/* The digest as lower-case hex into hex[2 * size + 1]. */
static void to_hex(const uint8_t *d, size_t size, char *hex)
{
	for (size_t k = 0; k < size; k++)
		sprintf(hex + 2 * k, "%02x", d[k]);
}

static void check(enum lt_hash_alg alg, const char *msg, const char *want)
{
	uint8_t d[LT_HASH_MAX];
	char hex[2 * LT_HASH_MAX + 1];

	assert_int_equal(lt_hash_buf(alg, msg, strlen(msg), d), 0);
	assert_int_equal(2 * lt_hash_size(alg), strlen(want));
	to_hex(d, lt_hash_size(alg), hex);
	assert_string_equal(hex, want);
}

/* FIPS 180-2, appendices A.1, B.1, C.1 and D.1: the one-block message "abc". */
static void test_abc(void **state)
{
	(void)state;
	check(LT_HASH_SHA1, "abc", "a9993e364706816aba3e25717850c26c9cd0d89d");
	check(LT_HASH_SHA256, "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	check(LT_HASH_SHA384, "abc",
	      "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7");
	check(LT_HASH_SHA512, "abc",
	      "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd"
	      "454d4423643ce80e2a9ac94fa54ca49f");
}

/* The same digest whatever the pieces: the FIPS 180-2 A.2 two-block message fed
 * one byte, then 7, then the rest; and nothing at all (the empty-message digest). */
static void test_pieces(void **state)
{
	static const char msg[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	uint8_t whole[LT_HASH_MAX], piecewise[LT_HASH_MAX], empty[LT_HASH_MAX];
	char hex[2 * LT_HASH_MAX + 1];
	struct lt_hash *h;

	(void)state;
	check(LT_HASH_SHA1, msg, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
	assert_int_equal(lt_hash_buf(LT_HASH_SHA256, msg, sizeof msg - 1, whole), 0);
	assert_int_equal(lt_hash_new(&h, LT_HASH_SHA256), 0);
	assert_int_equal(lt_hash_update(h, msg, 1), 0);
	assert_int_equal(lt_hash_update(h, msg + 1, 7), 0);
	assert_int_equal(lt_hash_update(h, NULL, 0), 0);
	assert_int_equal(lt_hash_update(h, msg + 8, sizeof msg - 9), 0);
	assert_int_equal(lt_hash_final(h, piecewise), 0);
	lt_hash_free(h);
	assert_memory_equal(whole, piecewise, 32);
	assert_int_equal(lt_hash_buf(LT_HASH_SHA256, NULL, 0, empty), 0);
	to_hex(empty, 32, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	lt_hash_free(NULL);
}

/* FIPS 180-2 B.3: a million 'a' (15,625 blocks), fed whole and in pieces of 1 to 200
 * bytes that end inside, at and across block boundaries. */
static void test_million(void **state)
{
	static char a[1000000];
	uint8_t whole[LT_HASH_MAX], pieces[LT_HASH_MAX];
	char hex[2 * LT_HASH_MAX + 1];
	struct lt_hash *h;
	size_t at = 0, step = 1;

	(void)state;
	memset(a, 'a', sizeof a);
	assert_int_equal(lt_hash_buf(LT_HASH_SHA256, a, sizeof a, whole), 0);
	to_hex(whole, 32, hex);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	assert_int_equal(lt_hash_new(&h, LT_HASH_SHA256), 0);
	for (; at < sizeof a; at += step, step = step % 200 + 1)
		assert_int_equal(lt_hash_update(h, a + at, at + step <= sizeof a ? step : sizeof a - at), 0);
	assert_int_equal(lt_hash_final(h, pieces), 0);
	lt_hash_free(h);
	assert_memory_equal(whole, pieces, 32);
}

/* PdbChecksum names (PE-COFF.md): SHA256/384/512 only, exact case; others fail naming the name. */
static void test_names(void **state)
{
	enum lt_hash_alg a;

	(void)state;
	assert_int_equal(lt_hash_by_name("SHA256", &a), 0);
	assert_int_equal(a, LT_HASH_SHA256);
	assert_int_equal(lt_hash_by_name("SHA384", &a), 0);
	assert_int_equal(a, LT_HASH_SHA384);
	assert_int_equal(lt_hash_by_name("SHA512", &a), 0);
	assert_int_equal(a, LT_HASH_SHA512);
	assert_int_equal(lt_hash_by_name("SHA1", &a), -1);
	assert_int_equal(lt_error_last()->code, LT_E_PDB);
	assert_non_null(strstr(lt_error_last()->msg, "unknown hash algorithm \"SHA1\""));
	assert_int_equal(lt_hash_by_name("sha256", &a), -1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abc),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_million),
		cmocka_unit_test(test_names),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
