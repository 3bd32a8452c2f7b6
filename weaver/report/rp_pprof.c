/* rp_pprof.c - a report as a gzipped pprof profile (profile.proto, our own subset in rp_profile.proto),
 * encoded with protobuf-c, compressed with zlib. */
#include "rp_output.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "rp_profile.pb-c.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Distinct strings, each given the index of its first appearance (an open-addressing hash). */
struct intern {
	char **text;     /* by index; text[0] = "" for the string table */
	size_t n;
	size_t *slots;   /* index + 1, 0 for empty */
	size_t n_slots;  /* a power of two, more than twice n */
};

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

/* The index of s (owned by the caller, kept by pointer) in t, added when new; -1 with LT_E_NOMEM. */
static int64_t intern(struct intern *t, char *s)
{
	size_t i = (size_t)fnv(s) & (t->n_slots - 1);
	for (; t->slots[i]; i = (i + 1) & (t->n_slots - 1))
		if (!strcmp(t->text[t->slots[i] - 1], s))
			return (int64_t)t->slots[i] - 1;
	t->text[t->n] = s;
	t->slots[i] = ++t->n;
	return (int64_t)t->n - 1;
}

static int intern_init(struct intern *t, size_t most)
{
	t->n = 0;
	t->n_slots = 16;
	while (t->n_slots < 2 * most + 2)
		t->n_slots *= 2;
	t->text = lt_calloc(most + 1, sizeof *t->text);
	t->slots = lt_calloc(t->n_slots, sizeof *t->slots);
	return t->text && t->slots ? 0 : lt_nomem(NULL);
}

static void intern_free(struct intern *t)
{
	free(t->text);
	free(t->slots);
}

/* gzip of in[0..n) appended to out. */
static int gzip(const uint8_t *in, size_t n, struct lt_buf *out)
{
	z_stream z;
	int rc;
	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return lt_error_set(LT_E_NOMEM, "zlib: cannot start compressing");
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	do {
		if (lt_buf_reserve(out, 64 * 1024)) {
			deflateEnd(&z);
			return -1;
		}
		z.next_out = out->data + out->len;
		z.avail_out = (uInt)(out->cap - out->len);
		rc = deflate(&z, Z_FINISH);
		out->len = out->cap - z.avail_out;
	} while (rc == Z_OK || rc == Z_BUF_ERROR);
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : lt_error_set(LT_E_NOMEM, "zlib: compression failed");
}

/* Everything the profile points into, freed together: n samples over m frames in all. */
struct parts {
	Rp__ValueType types[3], period;
	Rp__ValueType *type_ptrs[3];
	Rp__Sample *samples, **sample_ptrs;
	Rp__Location *locations, **location_ptrs;   /* one per frame of every sample */
	Rp__Line *lines, **line_ptrs;
	Rp__Function *functions, **function_ptrs;
	uint64_t *location_ids;
	int64_t *values;
	char **keys; /* "method\nfile" per frame, for the functions */
	size_t n_samples, n_frames;  /* used so far */
};

static int alloc_parts(struct parts *p, size_t n, size_t m)
{
	n = n ? n : 1;
	m = m ? m : 1;
	p->samples = lt_calloc(n, sizeof *p->samples);
	p->sample_ptrs = lt_calloc(n, sizeof *p->sample_ptrs);
	p->locations = lt_calloc(m, sizeof *p->locations);
	p->location_ptrs = lt_calloc(m, sizeof *p->location_ptrs);
	p->lines = lt_calloc(m, sizeof *p->lines);
	p->line_ptrs = lt_calloc(m, sizeof *p->line_ptrs);
	p->functions = lt_calloc(m, sizeof *p->functions);
	p->function_ptrs = lt_calloc(m, sizeof *p->function_ptrs);
	p->location_ids = lt_calloc(m, sizeof *p->location_ids);
	p->values = lt_calloc(3 * n, sizeof *p->values);
	p->keys = lt_calloc(m, sizeof *p->keys);
	if (!p->samples || !p->sample_ptrs || !p->locations || !p->location_ptrs || !p->lines || !p->line_ptrs ||
	    !p->functions || !p->function_ptrs || !p->location_ids || !p->values || !p->keys)
		return lt_nomem(NULL);
	return 0;
}

static void free_parts(struct parts *p)
{
	if (p->keys)
		for (size_t i = 0; i < p->n_frames; i++)
			free(p->keys[i]);
	free(p->keys);
	free(p->samples);
	free(p->sample_ptrs);
	free(p->locations);
	free(p->location_ptrs);
	free(p->lines);
	free(p->line_ptrs);
	free(p->functions);
	free(p->function_ptrs);
	free(p->location_ids);
	free(p->values);
}

static char fixed[][16] = { "", "contentions", "count", "delay", "nanoseconds", "hold" };

/* A Location for one frame (method in file at line; file NULL: none), its Function made when new. */
static int add_frame(struct parts *p, struct intern *strs, struct intern *funcs, const char *method, const char *file, int64_t line)
{
	size_t k = p->n_frames;
	size_t lm = strlen(method), lf = file ? strlen(file) : 0;
	int64_t fi;
	if (!(p->keys[k] = lt_malloc(lm + lf + 2)))
		return lt_nomem(NULL);
	p->n_frames++;
	memcpy(p->keys[k], method, lm);
	p->keys[k][lm] = '\n';
	memcpy(p->keys[k] + lm + 1, file ? file : "", lf + 1);
	fi = intern(funcs, p->keys[k]);
	if ((size_t)fi + 1 == funcs->n) { /* a new function */
		Rp__Function *f = &p->functions[fi];
		rp__function__init(f);
		f->id = (uint64_t)fi + 1;
		/* No system_name: pprof takes a name equal to it for an undemangled C++ one and cuts it at a
		 * parenthesis ("Program::Main (lambda at Program.cs:9)" would show as "Program::Main"). */
		f->name = intern(strs, (char *)method);
		f->filename = file ? intern(strs, (char *)file) : 0;
		p->function_ptrs[fi] = f;
	}
	Rp__Line *ln = &p->lines[k];
	rp__line__init(ln);
	ln->function_id = (uint64_t)fi + 1;
	ln->line = line;
	p->line_ptrs[k] = ln;
	Rp__Location *loc = &p->locations[k];
	rp__location__init(loc);
	loc->id = k + 1;
	loc->n_line = 1;
	loc->line = &p->line_ptrs[k];
	p->location_ptrs[k] = loc;
	p->location_ids[k] = k + 1;
	return 0;
}

/* A sample of the frames added since `first` (leaf first) with values contentions, delay, hold. */
static void add_sample(struct parts *p, size_t first, int64_t contentions, int64_t delay, int64_t hold)
{
	size_t i = p->n_samples++;
	Rp__Sample *smp = &p->samples[i];
	rp__sample__init(smp);
	smp->n_location_id = p->n_frames - first;
	smp->location_id = &p->location_ids[first];
	p->values[3 * i] = contentions;
	p->values[3 * i + 1] = delay;
	p->values[3 * i + 2] = hold;
	smp->n_value = 3;
	smp->value = &p->values[3 * i];
	p->sample_ptrs[i] = smp;
}

/* Site s's samples: one per captured stack (a waiter's: its slow waits' count and delay; a holder's: its
 * slow holds' hold), then the rest of the site's contentions, delay and hold on the site's one frame. */
static int site_samples(struct parts *p, struct intern *strs, struct intern *funcs, const struct rp_site *s)
{
	int64_t contentions = s->contended, delay = s->wait.total, hold = s->hold.total;
	for (size_t k = 0; k < s->n_stacks; k++) {
		const struct rp_stack *st = &s->stacks[k];
		size_t first = p->n_frames;
		if (st->what != RP_STACK)
			continue;
		for (size_t f = 0; f < st->n_frames; f++)
			if (add_frame(p, strs, funcs, st->frames[f].method, st->frames[f].file, st->frames[f].line))
				return -1;
		if (st->role == RP_WAITER) {
			add_sample(p, first, st->count, st->wait_ns, 0);
			contentions -= st->count;
			delay -= st->wait_ns;
		} else {
			add_sample(p, first, 0, 0, st->hold_ns);
			hold -= st->hold_ns;
		}
	}
	size_t first = p->n_frames;
	if (add_frame(p, strs, funcs, s->method, s->file ? s->file : s->location, s->line))
		return -1;
	add_sample(p, first, contentions > 0 ? contentions : 0, delay > 0 ? delay : 0, hold > 0 ? hold : 0);
	return 0;
}

/* The profile of r into prof (pointing into p and the strings of r). */
static int build(const struct rp_report *r, Rp__Profile *prof, struct parts *p, struct intern *strs, struct intern *funcs)
{
	int64_t duration = 0;
	for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
		intern(strs, fixed[k]);
	for (int k = 0; k < 3; k++) {
		rp__value_type__init(&p->types[k]);
		p->type_ptrs[k] = &p->types[k];
	}
	p->types[0].type = 1, p->types[0].unit = 2; /* contentions/count */
	p->types[1].type = 3, p->types[1].unit = 4; /* delay/nanoseconds */
	p->types[2].type = 5, p->types[2].unit = 4; /* hold/nanoseconds */
	rp__value_type__init(&p->period);
	p->period = p->types[0];
	prof->n_sample_type = 3;
	prof->sample_type = p->type_ptrs;
	prof->period_type = &p->period;
	prof->period = 1;
	prof->default_sample_type = 3;
	for (size_t i = 0; i < r->n_sites; i++)
		if (site_samples(p, strs, funcs, &r->sites[i]))
			return -1;
	for (size_t i = 0; i < r->n_processes; i++)
		if (r->processes[i].duration_ns > duration)
			duration = r->processes[i].duration_ns;
	prof->duration_nanos = duration;
	prof->n_sample = p->n_samples;
	prof->sample = p->sample_ptrs;
	prof->n_location = p->n_frames;
	prof->location = p->location_ptrs;
	prof->n_function = funcs->n;
	prof->function = p->function_ptrs;
	prof->n_string_table = strs->n;
	prof->string_table = strs->text;
	return 0;
}

int rp_write_pprof(const struct rp_report *r, struct lt_buf *out)
{
	Rp__Profile prof = RP__PROFILE__INIT;
	struct parts p;
	struct intern strs = { 0 }, funcs = { 0 };
	uint8_t *packed = NULL;
	int rc = -1;

	size_t n = r->n_sites, m = r->n_sites;
	for (size_t i = 0; i < r->n_sites; i++)
		for (size_t k = 0; k < r->sites[i].n_stacks; k++)
			if (r->sites[i].stacks[k].what == RP_STACK) {
				n++;
				m += r->sites[i].stacks[k].n_frames;
			}
	memset(&p, 0, sizeof p);
	if (!alloc_parts(&p, n, m) && !intern_init(&strs, 2 * m + 8) &&
	    !intern_init(&funcs, m) && !build(r, &prof, &p, &strs, &funcs)) {
		size_t size = rp__profile__get_packed_size(&prof);
		if (!(packed = lt_malloc(size ? size : 1)))
			lt_nomem(NULL);
		else
			rc = gzip(packed, rp__profile__pack(&prof, packed), out);
	}
	free(packed);
	intern_free(&strs);
	intern_free(&funcs);
	free_parts(&p);
	return rc;
}
