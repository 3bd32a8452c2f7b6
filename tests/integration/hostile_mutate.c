/* hostile_mutate.c - broken copies of real assemblies for tests/integration/hostile.sh.
 *
 *   hostile_mutate OUTDIR KIND COUNT SEED FILE...
 *
 * Writes COUNT files OUTDIR/KIND-NNNNN, each made from the FILEs (taken in
 * turn) by KIND, and prints "NAME<TAB>what was done" for each:
 *   trunc   the first n bytes, n uniform in 0..size-1, half of the time
 *           followed by zeros up to the original size (the PE headers then
 *           still hold, and the cut is met by the readers behind them);
 *   flip    1 to 8 bytes changed (a bit flipped, or a random, 0x00, 0xFF or
 *           0x80 byte), a third of them anywhere, a third in the PE headers
 *           (first 1 KiB), a third in the 64 KiB from the metadata root
 *           ("BSJB"), where most of what the reader checks lies;
 *   splice  the start of one file joined to the end of another (or the same)
 *           at random cuts, or a chunk of one (1 to 512 bytes) written over
 *           another at a random place.
 * The same SEED gives the same files.  Exits 0, 1 on an I/O error, 2 on usage. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mutate_file {
	const char *path, *name;
	uint8_t *data;
	size_t size;
	size_t bsjb; /* offset of the metadata root signature, or 0 */
};

static uint64_t mutate_state;

/* xorshift64*: a uniform number in 0..n-1 (n >= 1). */
static size_t mutate_rand(size_t n)
{
	mutate_state ^= mutate_state >> 12;
	mutate_state ^= mutate_state << 25;
	mutate_state ^= mutate_state >> 27;
	return (size_t)((mutate_state * 0x2545F4914F6CDD1Dull) >> 11) % n;
}

static int mutate_read(struct mutate_file *f)
{
	FILE *in = fopen(f->path, "rb");
	long n;
	size_t i;

	if (!in || fseek(in, 0, SEEK_END) != 0 || (n = ftell(in)) <= 0 || fseek(in, 0, SEEK_SET) != 0 ||
	    !(f->data = malloc((size_t)n)) || fread(f->data, 1, (size_t)n, in) != (size_t)n) {
		if (in)
			fclose(in);
		fprintf(stderr, "hostile_mutate: cannot read %s\n", f->path);
		return -1;
	}
	fclose(in);
	f->size = (size_t)n;
	f->name = strrchr(f->path, '/') ? strrchr(f->path, '/') + 1 : f->path;
	for (i = 0; i + 4 <= f->size; i++)
		if (!memcmp(f->data + i, "BSJB", 4)) {
			f->bsjb = i;
			break;
		}
	return 0;
}

/* A position to change in a file of `size` bytes whose metadata root is at bsjb. */
static size_t mutate_where(size_t size, size_t bsjb)
{
	size_t where = mutate_rand(3);

	if (where == 0)
		return mutate_rand(size < 1024 ? size : 1024);
	if (where == 1 && bsjb)
		return bsjb + mutate_rand(size - bsjb < 65536 ? size - bsjb : 65536);
	return mutate_rand(size);
}

/* Make mutant k into buf (room for the largest file twice); returns its size. */
static size_t mutate_one(const char *kind, const struct mutate_file *files, size_t nfiles, size_t k,
			 uint8_t *buf, char *what, size_t nwhat)
{
	const struct mutate_file *a = &files[k % nfiles], *b = &files[mutate_rand(nfiles)];
	size_t n, i, j, len, count;

	if (!strcmp(kind, "trunc")) {
		n = mutate_rand(a->size);
		memcpy(buf, a->data, n);
		if (mutate_rand(2)) {
			snprintf(what, nwhat, "%s truncated to %zu of %zu bytes", a->name, n, a->size);
			return n;
		}
		/* The headers stay valid, so the readers behind them see the cut. */
		memset(buf + n, 0, a->size - n);
		snprintf(what, nwhat, "%s zeroed from %zu of %zu bytes", a->name, n, a->size);
		return a->size;
	}
	if (!strcmp(kind, "flip")) {
		static const uint8_t values[] = { 0x00, 0xFF, 0x80 };
		int w = 0;
		memcpy(buf, a->data, a->size);
		count = 1 + mutate_rand(8);
		w = snprintf(what, nwhat, "%s with", a->name);
		for (n = 0; n < count; n++) {
			i = mutate_where(a->size, a->bsjb);
			switch (mutate_rand(3)) {
			case 0: buf[i] ^= (uint8_t)(1u << mutate_rand(8)); break;
			case 1: buf[i] = (uint8_t)mutate_rand(256); break;
			default: buf[i] = values[mutate_rand(sizeof values)]; break;
			}
			if (w > 0 && (size_t)w < nwhat)
				w += snprintf(what + w, nwhat - (size_t)w, " [0x%zx]=0x%02x", i, buf[i]);
		}
		return a->size;
	}
	/* splice */
	i = mutate_rand(a->size);
	j = mutate_rand(b->size);
	if (mutate_rand(2)) {
		memcpy(buf, a->data, i);
		memcpy(buf + i, b->data + j, b->size - j);
		snprintf(what, nwhat, "%s[0..0x%zx) + %s[0x%zx..)", a->name, i, b->name, j);
		return i + b->size - j;
	}
	len = 1 + mutate_rand(512);
	if (len > b->size - j)
		len = b->size - j;
	if (len > a->size - i)
		len = a->size - i;
	memcpy(buf, a->data, a->size);
	memcpy(buf + i, b->data + j, len);
	snprintf(what, nwhat, "%s with %zu bytes of %s from 0x%zx written at 0x%zx", a->name, len, b->name, j, i);
	return a->size;
}

int main(int argc, char **argv)
{
	struct mutate_file *files;
	size_t nfiles, count, k, max = 0;
	uint8_t *buf;
	char what[512], path[4096];
	int i;

	if (argc < 6 || (strcmp(argv[2], "trunc") && strcmp(argv[2], "flip") && strcmp(argv[2], "splice"))) {
		fprintf(stderr, "usage: hostile_mutate OUTDIR trunc|flip|splice COUNT SEED FILE...\n");
		return 2;
	}
	count = strtoul(argv[3], NULL, 10);
	mutate_state = strtoull(argv[4], NULL, 10) * 0x9E3779B97F4A7C15ull + 1;
	nfiles = (size_t)(argc - 5);
	files = calloc(nfiles, sizeof *files);
	if (!files)
		return 1;
	for (i = 5; i < argc; i++) {
		files[i - 5].path = argv[i];
		if (mutate_read(&files[i - 5]) < 0)
			return 1;
		if (files[i - 5].size > max)
			max = files[i - 5].size;
	}
	if (!(buf = malloc(2 * max)))
		return 1;
	for (k = 0; k < count; k++) {
		size_t n = mutate_one(argv[2], files, nfiles, k, buf, what, sizeof what);
		FILE *out;

		snprintf(path, sizeof path, "%s/%s-%05zu", argv[1], argv[2], k);
		out = fopen(path, "wb");
		if (!out || fwrite(buf, 1, n, out) != n || fclose(out) != 0) {
			fprintf(stderr, "hostile_mutate: cannot write %s\n", path);
			return 1;
		}
		printf("%s-%05zu\t%s\n", argv[2], k, what);
	}
	for (k = 0; k < nfiles; k++)
		free(files[k].data);
	free(files);
	free(buf);
	return 0;
}
