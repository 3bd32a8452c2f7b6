/* test_find.c - unit tests of the lookups and batch edits that keep a weave linear: lt_set,
 * lt_grow, find-or-add of metadata rows (md_find.c), il_apply and il_eh_sort. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "il_body.h"
#include "il_eh_sort.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "lt_set.h"
#include "md_find.h"

/* ---- lt_set ---- */

/* Keys are the ids' values mod 7: many ids share a key and a hash. */
static int same_mod7(const void *ctx, uint32_t id)
{
	return id % 7 == *(const uint32_t *)ctx % 7;
}

static void test_set_first_added_wins(void **state)
{
	struct lt_set s = LT_SET_INIT;
	uint32_t key;

	(void)state;
	for (key = 0; key < 7; key++)
		assert_int_equal(lt_set_find(&s, key, same_mod7, &key), 0);
	/* 1000 ids, added only when no equal key is there: the first of each key stays. */
	for (uint32_t id = 1; id <= 1000; id++) {
		key = id;
		if (!lt_set_find(&s, lt_set_hash(LT_SET_HASH_INIT, &(uint32_t){ id % 7 }, 4), same_mod7, &key))
			assert_int_equal(lt_set_add(&s, lt_set_hash(LT_SET_HASH_INIT, &(uint32_t){ id % 7 }, 4), id), 0);
	}
	assert_int_equal(s.used, 7);
	for (key = 0; key < 7; key++)
		assert_int_equal(lt_set_find(&s, lt_set_hash(LT_SET_HASH_INIT, &key, 4), same_mod7, &key), key ? key : 7);
	lt_set_free(&s);
	lt_set_free(NULL);
	assert_null(s.slots);
}

static int equal_id(const void *ctx, uint32_t id)
{
	return id == *(const uint32_t *)ctx;
}

/* Growing keeps every id findable (ids all of one hash probe the longest). */
static void test_set_grows(void **state)
{
	struct lt_set s = LT_SET_INIT;

	(void)state;
	for (uint32_t id = 1; id <= 5000; id++)
		assert_int_equal(lt_set_add(&s, id % 3 ? id : 42, id), 0);
	assert_true(s.cap >= 2 * s.used);
	for (uint32_t id = 1; id <= 5000; id++)
		assert_int_equal(lt_set_find(&s, id % 3 ? id : 42, equal_id, &id), id);
	lt_set_free(&s);
}

/* ---- lt_grow ---- */

static void test_grow(void **state)
{
	uint32_t *v = NULL;
	size_t cap = 0;

	(void)state;
	for (uint32_t i = 0; i < 1000; i++) {
		assert_int_equal(lt_grow(&v, &cap, i + 1, sizeof *v), 0);
		v[i] = i;
	}
	assert_true(cap >= 1000);
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(v[i], i);
	/* A request past twice the capacity gets just what it asks for (a writer that knows its
	 * size reserves once). */
	assert_int_equal(cap, 1024);
	assert_int_equal(lt_grow(&v, &cap, 5000, sizeof *v), 0);
	assert_int_equal(cap, 5000);
	/* A byte count past the address space: refused, the array kept. */
	assert_int_equal(lt_grow(&v, &cap, SIZE_MAX / 2, 16), -1);
	assert_int_equal(lt_error_last()->code, LT_E_NOMEM);
	assert_non_null(strstr(lt_error_last()->msg, "out of memory (array past the address space)"));
	assert_int_equal(v[999], 999);
	free(v);
}

/* ---- md_find ---- */

static uint32_t assemblyref(struct md_image *md, const char *name)
{
	uint32_t cells[MD_ASSEMBLYREF_COLS] = { 0 }, row;

	assert_int_equal(md_add_string(md, name, &cells[MD_ASSEMBLYREF_NAME]), 0);
	assert_int_equal(md_append_row(md, MD_ASSEMBLYREF, cells, &row), 0);
	return row;
}

static void test_find_assemblyref(void **state)
{
	struct md_image md;
	uint32_t row;

	(void)state;
	md_init(&md, "v4.0.30319");
	assert_int_equal(md_find_assemblyref(&md, "mscorlib", &row), 0);
	assert_int_equal(assemblyref(&md, "mscorlib"), 1);
	assert_int_equal(assemblyref(&md, "System.Runtime"), 2);
	/* Rows appended after the first lookup are found; names compare without ASCII case; the
	 * first row of a name stands for it. */
	assert_int_equal(assemblyref(&md, "MSCORLIB"), 3);
	assert_int_equal(md_find_assemblyref(&md, "MsCorLib", &row), 1);
	assert_int_equal(row, 1);
	assert_int_equal(md_find_assemblyref(&md, "system.runtime", &row), 1);
	assert_int_equal(row, 2);
	assert_int_equal(md_find_assemblyref(&md, "System.Runtim", &row), 0);
	md_free(&md);
}

static void test_find_or_add_refs(void **state)
{
	static const uint8_t sig[] = { 0x00, 0x01, 0x01, 0x1C }, other[] = { 0x00, 0x00, 0x01 };
	uint32_t scope = md_token(MD_ASSEMBLYREF, 1), a, b, c, m1, m2, m3, cells[MD_TYPEREF_COLS];
	struct md_image md;

	(void)state;
	md_init(&md, "v4.0.30319");
	assemblyref(&md, "mscorlib");
	assert_int_equal(md_typeref(&md, scope, "System.Threading", "Monitor", &a), 0);
	assert_int_equal(md_typeref(&md, scope, "System.Threading", "Monitor", &b), 0);
	assert_int_equal(md_typeref(&md, scope, "System", "Monitor", &c), 0);
	assert_int_equal(a, md_token(MD_TYPEREF, 1));
	assert_int_equal(b, a);
	assert_int_equal(c, md_token(MD_TYPEREF, 2));
	/* A row added behind the lookup's back, equal to row 2: row 2 stays the one found. */
	memcpy(cells, &md.tables[MD_TYPEREF].cells[MD_TYPEREF_COLS], sizeof cells);
	assert_int_equal(md_append_row(&md, MD_TYPEREF, cells, &b), 0);
	assert_int_equal(md_typeref(&md, scope, "System", "Monitor", &b), 0);
	assert_int_equal(b, c);
	/* MemberRefs differ by parent, name and signature bytes. */
	assert_int_equal(md_memberref(&md, a, "Enter", sig, sizeof sig, &m1), 0);
	assert_int_equal(md_memberref(&md, a, "Enter", other, sizeof other, &m2), 0);
	assert_int_equal(md_memberref(&md, c, "Enter", sig, sizeof sig, &m3), 0);
	assert_int_equal(md_rows(&md, MD_MEMBERREF), 3);
	assert_int_equal(md_memberref(&md, a, "Enter", other, sizeof other, &b), 0);
	assert_int_equal(b, m2);
	assert_int_not_equal(m1, m3);
	/* TypeSpec, StandAloneSig, MethodSpec: by their blobs (and method). */
	assert_int_equal(md_typespec(&md, sig, sizeof sig, &a), 0);
	assert_int_equal(md_typespec(&md, sig, sizeof sig, &b), 0);
	assert_int_equal(b, a);
	assert_int_equal(md_standalonesig(&md, other, sizeof other, &a), 0);
	assert_int_equal(md_standalonesig(&md, sig, sizeof sig, &b), 0);
	assert_int_equal(md_token_row(b), 2);
	assert_int_equal(md_methodspec(&md, m1, sig, sizeof sig, &a), 0);
	assert_int_equal(md_methodspec(&md, m2, sig, sizeof sig, &b), 0);
	assert_int_equal(md_methodspec(&md, m1, sig, sizeof sig, &c), 0);
	assert_int_equal(md_rows(&md, MD_METHODSPEC), 2);
	assert_int_equal(c, a);
	/* A token the coded index cannot hold (II.24.2.6). */
	assert_int_equal(md_typeref(&md, md_token(MD_FIELD, 1), "", "X", &a), -1);
	assert_int_equal(lt_error_last()->code, LT_E_METADATA);
	md_free(&md);
}

static void test_find_unserved_table(void **state)
{
	const struct md_val key[1] = { { 1, NULL, 0 } };
	struct md_image md;
	uint32_t row;

	(void)state;
	md_init(&md, "v4.0.30319");
	assert_int_equal(md_find_row(&md, MD_FIELD, key, &row), -1);
	assert_non_null(strstr(lt_error_last()->msg, "not looked up by content"));
	md_free(&md);
}

/* ---- il_eh_sort ---- */

static int within(uint32_t s, uint32_t e, uint32_t os, uint32_t oe) { return os <= s && e <= oe; }

/* The rule as I.12.4.2.5 states it, pair by pair: the oracle. */
static int must_precede(const struct il_span *a, const struct il_span *c)
{
	return (within(a->ts, a->te, c->ts, c->te) && (a->ts != c->ts || a->te != c->te)) ||
	       within(a->ts, a->te, c->hs, c->he) || within(a->ts, a->te, c->fs, c->hs);
}

/* The first clause of the input that no clause left must precede, else the first left. */
static void oracle(const struct il_span *sp, uint32_t n, uint32_t *order)
{
	uint8_t taken[64] = { 0 };

	for (uint32_t k = 0; k < n; k++) {
		uint32_t pick = n, first = n;
		for (uint32_t c = 0; c < n && pick == n; c++) {
			int free_ = 1;
			if (taken[c])
				continue;
			first = first == n ? c : first;
			for (uint32_t a = 0; a < n && free_; a++)
				free_ = taken[a] || a == c || !must_precede(&sp[a], &sp[c]);
			if (free_)
				pick = c;
		}
		pick = pick == n ? first : pick;
		taken[pick] = 1;
		order[k] = pick;
	}
}

static uint32_t lcg(uint32_t *x)
{
	*x = *x * 1103515245u + 12345u;
	return *x >> 16;
}

/* Properly nested clauses (lock statements in a row, nested, try/catch/finally pairs on one
 * try, catches whose try is another's handler), shuffled; and clauses overlapping anyhow. */
static void test_eh_sort_matches_rule(void **state)
{
	uint32_t seed = 7;

	(void)state;
	for (int round = 0; round < 400; round++) {
		struct il_span sp[40];
		uint32_t n = 2 + lcg(&seed) % 38, got[40], want[40];
		int tangled = round % 4 == 3;

		for (uint32_t k = 0; k < n; k++) {
			if (tangled) {
				uint32_t s = lcg(&seed) % 50, h = s + 1 + lcg(&seed) % 20;
				sp[k] = (struct il_span){ s, s + 1 + lcg(&seed) % 10, h, h + 1 + lcg(&seed) % 10, h };
			} else if (k && lcg(&seed) % 3 == 0) {
				/* inside an earlier clause's try or handler, or the same try */
				const struct il_span *o = &sp[lcg(&seed) % k];
				uint32_t in_handler = lcg(&seed) % 3, s = in_handler == 1 ? o->hs : o->ts,
					 e = in_handler == 1 ? o->he : o->te, len = e - s;
				if (in_handler == 2 || len < 4)
					sp[k] = (struct il_span){ o->ts, o->te, o->te + 100 * k, o->te + 100 * k + 5,
								  o->te + 100 * k };
				else
					sp[k] = (struct il_span){ s + 1, s + 2, s + 2, s + 3, s + 2 };
			} else {
				uint32_t s = 10000 * k;
				sp[k] = (struct il_span){ s, s + 5000, s + 5000, s + 5010, s + 5000 };
			}
		}
		for (uint32_t k = n; k > 1; k--) { /* shuffle */
			uint32_t j = lcg(&seed) % k;
			struct il_span t = sp[k - 1];
			sp[k - 1] = sp[j];
			sp[j] = t;
		}
		assert_int_equal(il_eh_sort(sp, n, got), 0);
		oracle(sp, n, want);
		assert_memory_equal(got, want, n * sizeof *got);
	}
}

/* ---- il_apply ---- */

/* nop; tail.; call; br -> tail.; call; ret - a clause try [nop, call) handler [call 2, ret). */
static void small_body(struct il_body *b)
{
	struct il_instr ins[6];
	struct il_eh eh = { IL_EH_FINALLY, 0, 2, 4, 5, 0, 0 };
	static const enum il_op ops[6] = { IL_NOP, IL_TAIL, IL_CALL, IL_BR, IL_CALL, IL_RET };

	memset(b, 0, sizeof *b);
	memset(ins, 0, sizeof ins);
	for (int i = 0; i < 6; i++)
		ins[i].op = ops[i];
	assert_int_equal(il_insert(b, 0, ins, 6), 0);
	b->ins[3].arg.target = 1;
	assert_int_equal(il_add_eh(b, &eh), 0);
}

static void test_apply_equals_steps(void **state)
{
	struct il_instr strs[3];
	struct il_body steps, batch;
	uint32_t first;
	const struct il_edit edits[3] = {
		{ .at = 1, .drop = 1 },
		{ .at = 2, .ins = strs, .n = 2, .retarget = IL_RT_BRANCH },
		{ .at = 4, .ins = strs + 2, .n = 1, .retarget = IL_RT_BRANCH | IL_RT_HANDLER_START },
	};

	(void)state;
	memset(strs, 0, sizeof strs);
	strs[0].op = strs[1].op = strs[2].op = IL_LDSTR;
	small_body(&steps);
	small_body(&batch);
	/* The edits one after another, as the weave made them before. */
	il_retarget(&steps, 1, 2, IL_RT_ALL);
	assert_int_equal(il_remove(&steps, 1, 1), 0);
	first = steps.next_id;
	assert_int_equal(il_insert(&steps, 1, strs, 2), 0);
	il_retarget(&steps, 2, first, IL_RT_BRANCH);
	first = steps.next_id;
	assert_int_equal(il_insert(&steps, 5, strs + 2, 1), 0);
	il_retarget(&steps, 4, first, IL_RT_BRANCH | IL_RT_HANDLER_START);

	assert_int_equal(il_apply(&batch, edits, 3), 0);
	assert_int_equal(batch.n, steps.n);
	assert_int_equal(batch.next_id, steps.next_id);
	for (uint32_t i = 0; i < batch.n; i++) {
		assert_int_equal(batch.ins[i].op, steps.ins[i].op);
		assert_int_equal(batch.ins[i].id, steps.ins[i].id);
		if (batch.ins[i].op == IL_BR)
			assert_int_equal(batch.ins[i].arg.target, steps.ins[i].arg.target);
	}
	assert_memory_equal(batch.eh, steps.eh, sizeof *batch.eh);
	/* the branch to the dropped tail. runs the ldstr pair now */
	assert_int_equal(batch.ins[4].arg.target, batch.ins[1].id);
	il_body_free(&steps);
	il_body_free(&batch);
}

static void test_apply_errors(void **state)
{
	struct il_instr bad = { .op = IL_OP_COUNT };
	struct il_body b;
	const struct il_edit out_of_order[2] = { { .at = 3, .drop = 1 }, { .at = 2, .drop = 1 } };
	const struct il_edit drop_end[1] = { { .at = 6, .drop = 1 } };
	const struct il_edit bad_op[1] = { { .at = 0, .ins = &bad, .n = 1 } };

	(void)state;
	small_body(&b);
	assert_int_equal(il_apply(&b, out_of_order, 2), -1);
	assert_int_equal(lt_error_last()->code, LT_E_ENCODE);
	assert_non_null(strstr(lt_error_last()->msg, "out of order"));
	assert_int_equal(il_apply(&b, drop_end, 1), -1);
	assert_non_null(strstr(lt_error_last()->msg, "past 6 instructions"));
	assert_int_equal(il_apply(&b, bad_op, 1), -1);
	assert_non_null(strstr(lt_error_last()->msg, "is not an opcode"));
	assert_int_equal(b.n, 6); /* unchanged */
	assert_int_equal(il_apply(&b, NULL, 0), 0);
	il_body_free(&b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_first_added_wins),
		cmocka_unit_test(test_set_grows),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_find_assemblyref),
		cmocka_unit_test(test_find_or_add_refs),
		cmocka_unit_test(test_find_unserved_table),
		cmocka_unit_test(test_eh_sort_matches_rule),
		cmocka_unit_test(test_apply_equals_steps),
		cmocka_unit_test(test_apply_errors),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
