/* test_pdb_map.c - unit tests of pdb_map.c (old -> new IL offset maps) and of the maps img_encode_body keeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "il_body.h"
#include "image.h"
#include "image_body.h"
#include "lt_error.h"
#include "pdb_map.h"

/* nop; ldc.i4.1; pop; nop; ret - offsets 0..4, a tiny header (II.25.4.2). */
static const uint8_t body5[] = { 5 << 2 | 2, 0x00, 0x17, 0x26, 0x00, 0x2A };

static void decode(struct il_body *b)
{
	assert_int_equal(il_decode(body5, sizeof body5, b), 0);
}

static void encode(struct il_body *b)
{
	struct lt_buf out = LT_BUF_INIT;

	assert_int_equal(il_encode(b, NULL, NULL, &out), 0);
	lt_buf_free(&out);
}

/* Insert ldc.i4.0; pop before index `at` (stack-neutral). */
static void insert_pair(struct il_body *b, uint32_t at)
{
	struct il_instr pair[2];

	memset(pair, 0, sizeof pair);
	pair[0].op = IL_LDC_I4_0;
	pair[1].op = IL_POP;
	assert_int_equal(il_insert(b, at, pair, 2), 0);
}

static void test_kept_inserted_end(void **state)
{
	struct il_body b;
	struct pdb_map *m;
	uint32_t out;

	(void)state;
	decode(&b);
	insert_pair(&b, 2); /* before pop at input offset 2 */
	encode(&b);
	assert_int_equal(pdb_map_from_body(&b, &m), 0);
	assert_int_equal(m->old_size, 5);
	assert_int_equal(m->new_size, b.code_size);
	assert_int_equal(m->n, b.n);
	assert_int_equal(m->nkept, 5);
	for (uint32_t i = 0; i < b.n; i++) {
		assert_int_equal(m->old_off[i], b.ins[i].orig_offset);
		assert_int_equal(m->new_off[i], b.ins[i].offset);
		if (b.ins[i].orig_offset == IL_NO_OFFSET)
			continue;
		assert_int_equal(pdb_map_offset(m, b.ins[i].orig_offset, &out), 0);
		assert_int_equal(out, b.ins[i].offset);
		assert_true(pdb_map_is_kept(m, b.ins[i].orig_offset));
	}
	/* The pop moved past the two inserted instructions. */
	assert_int_equal(pdb_map_offset(m, 2, &out), 0);
	assert_int_equal(out, 4);
	assert_int_equal(pdb_map_offset(m, 5, &out), 0);
	assert_int_equal(out, b.code_size);
	assert_false(pdb_map_is_kept(m, 5));
	pdb_map_free(m);
	pdb_map_free(NULL);
	il_body_free(&b);
}

static void test_past_the_code(void **state)
{
	struct il_body b;
	struct pdb_map *m;
	uint32_t out = 77;

	(void)state;
	decode(&b);
	encode(&b);
	assert_int_equal(pdb_map_from_body(&b, &m), 0);
	assert_int_equal(pdb_map_offset(m, 6, &out), -1);
	assert_int_equal(lt_error_last()->code, LT_E_PDB);
	assert_int_equal(out, 77);
	pdb_map_free(m);
	il_body_free(&b);
}

/* A removed instruction's offset maps to the next kept one; the last one's to the end. */
static void test_removed(void **state)
{
	struct il_body b;
	struct pdb_map *m;
	struct il_instr t;
	uint32_t out;

	(void)state;
	decode(&b);
	assert_int_equal(il_remove(&b, 3, 1), 0); /* the nop at 3 */
	encode(&b);
	assert_int_equal(pdb_map_from_body(&b, &m), 0);
	assert_false(pdb_map_is_kept(m, 3));
	assert_int_equal(pdb_map_offset(m, 3, &out), 0);
	assert_int_equal(out, b.ins[3].offset); /* the ret */
	pdb_map_free(m);
	il_body_free(&b);

	decode(&b);
	memset(&t, 0, sizeof t);
	t.op = IL_RET;
	assert_int_equal(il_insert(&b, 5, &t, 1), 0); /* a new ret after the old one */
	assert_int_equal(il_remove(&b, 4, 1), 0);     /* the old ret, the last input instruction */
	encode(&b);
	assert_int_equal(pdb_map_from_body(&b, &m), 0);
	assert_int_equal(pdb_map_offset(m, 4, &out), 0);
	assert_int_equal(out, b.code_size);
	pdb_map_free(m);
	il_body_free(&b);
}

/* Instructions moved around: the kept index is still by input offset. */
static void test_reordered(void **state)
{
	struct il_body b;
	struct pdb_map *m;
	struct il_instr t;
	uint32_t out;

	(void)state;
	decode(&b);
	t = b.ins[0]; /* swap the two nops' places: nop@3 first, nop@0 fourth */
	b.ins[0] = b.ins[3];
	b.ins[3] = t;
	encode(&b);
	assert_int_equal(pdb_map_from_body(&b, &m), 0);
	assert_int_equal(pdb_map_offset(m, 3, &out), 0);
	assert_int_equal(out, 0);
	assert_int_equal(pdb_map_offset(m, 0, &out), 0);
	assert_int_equal(out, 3);
	for (uint32_t k = 1; k < m->nkept; k++)
		assert_true(m->kept_old[k] > m->kept_old[k - 1]);
	pdb_map_free(m);
	il_body_free(&b);
}

static void test_bad_bodies(void **state)
{
	struct il_body b;
	struct pdb_map *m = NULL;

	(void)state;
	decode(&b);
	encode(&b);
	b.ins[1].orig_offset = 0; /* two instructions claim offset 0 */
	assert_int_equal(pdb_map_from_body(&b, &m), -1);
	assert_int_equal(lt_error_last()->code, LT_E_BODY);
	b.ins[1].orig_offset = 9; /* past orig_code_size */
	assert_int_equal(pdb_map_from_body(&b, &m), -1);
	assert_int_equal(lt_error_last()->code, LT_E_BODY);
	assert_null(m);
	il_body_free(&b);
}

/* Two rewrites in a row: the second decoded the first's output. */
static void test_compose(void **state)
{
	struct il_body b, c;
	struct pdb_map *m1, *m2, *both, *bad = NULL;
	struct lt_buf first = LT_BUF_INIT;
	uint32_t out, mid;

	(void)state;
	decode(&b);
	insert_pair(&b, 2);
	assert_int_equal(il_encode(&b, NULL, NULL, &first), 0);
	assert_int_equal(pdb_map_from_body(&b, &m1), 0);
	assert_int_equal(il_decode(first.data, first.len, &c), 0);
	insert_pair(&c, 0);
	encode(&c);
	assert_int_equal(pdb_map_from_body(&c, &m2), 0);
	assert_int_equal(pdb_map_compose(m1, m2, &both), 0);
	assert_int_equal(both->old_size, 5);
	assert_int_equal(both->new_size, c.code_size);
	assert_int_equal(both->nkept, 5);
	for (uint32_t old = 0; old <= 5; old++) {
		assert_int_equal(pdb_map_offset(m1, old, &mid), 0);
		assert_int_equal(pdb_map_offset(m2, mid, &out), 0);
		assert_int_equal(pdb_map_offset(both, old, &mid), 0);
		assert_int_equal(mid, out);
	}
	/* Both inserted pairs are inserted code of the result. */
	assert_int_equal(both->n - both->nkept, 4);
	/* Sizes that do not chain. */
	assert_int_equal(pdb_map_compose(m2, m1, &bad), -1);
	assert_int_equal(lt_error_last()->code, LT_E_BODY);
	assert_null(bad);
	pdb_map_free(both);
	pdb_map_free(m1);
	pdb_map_free(m2);
	lt_buf_free(&first);
	il_body_free(&b);
	il_body_free(&c);
}

/* A minimal image with n MethodDef rows and no file, for the body map bookkeeping. */
static struct img *empty_image(uint32_t n)
{
	struct img *img = calloc(1, sizeof *img);
	uint32_t cells[MD_METHODDEF_COLS] = { 0 }, row;

	assert_non_null(img);
	md_init(&img->md, "v4.0.30319");
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(md_append_row(&img->md, MD_METHODDEF, cells, &row), 0);
	return img;
}

/* img_encode_body keeps a map, chains a second one, and a body set as bytes has none. */
static void test_image_keeps_maps(void **state)
{
	struct img *img = empty_image(2);
	struct il_body b;
	const uint8_t *p;
	size_t len;
	uint32_t out;

	(void)state;
	decode(&b);
	insert_pair(&b, 2);
	assert_int_equal(img_encode_body(img, 1, &b), 0);
	il_body_free(&b);
	assert_non_null(img->bodies[0].map);
	assert_int_equal(pdb_map_offset(img->bodies[0].map, 2, &out), 0);
	assert_int_equal(out, 4);

	/* Again, on the body just written: the map still starts at the input. */
	assert_int_equal(img_method_body(img, 1, &p, &len), 0);
	assert_int_equal(il_decode(p, len, &b), 0);
	insert_pair(&b, 0);
	assert_int_equal(img_encode_body(img, 1, &b), 0);
	il_body_free(&b);
	assert_int_equal(img->bodies[0].map->old_size, 5);
	assert_int_equal(pdb_map_offset(img->bodies[0].map, 2, &out), 0);
	assert_int_equal(out, 6);

	/* Bytes set directly: no map, and none after re-encoding them. */
	assert_int_equal(img_set_method_body(img, 2, body5, sizeof body5), 0);
	assert_null(img->bodies[1].map);
	decode(&b);
	assert_int_equal(img_encode_body(img, 2, &b), 0);
	il_body_free(&b);
	assert_null(img->bodies[1].map);
	assert_int_equal(img_set_method_body(img, 1, body5, sizeof body5), 0);
	assert_null(img->bodies[0].map);

	/* No map can be made (two instructions claim offset 0): the body is still set, without one. */
	img_free(img);
	img = empty_image(1);
	decode(&b);
	b.ins[1].orig_offset = 0;
	assert_int_equal(img_encode_body(img, 1, &b), 0);
	il_body_free(&b);
	assert_non_null(img->bodies[0].data);
	assert_null(img->bodies[0].map);
	img_free(img);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kept_inserted_end),
		cmocka_unit_test(test_past_the_code),
		cmocka_unit_test(test_removed),
		cmocka_unit_test(test_reordered),
		cmocka_unit_test(test_bad_bodies),
		cmocka_unit_test(test_compose),
		cmocka_unit_test(test_image_keeps_maps),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
