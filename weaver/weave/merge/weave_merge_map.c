/* weave_merge_map.c - the map a merge gives back: the target tokens of the template's members, by name. */
#include "weave_merge_int.h"

#include <string.h>

size_t merge_first_named(const struct weave_template *t, const char *name)
{
	size_t lo = 0, hi = (size_t)t->nfields + t->nmethods;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(t->sorted[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int weave_merge_find(const struct weave_merge_map *m, const char *name, uint32_t *out)
{
	const struct weave_template *t = m->tmpl;
	size_t at = merge_first_named(t, name);
	uint32_t i;

	if (at == (size_t)t->nfields + t->nmethods || strcmp(t->sorted[at].name, name) != 0)
		return 0;
	i = t->sorted[at].i;
	*out = i < t->nfields ? md_token(MD_FIELD, m->field_base + i + 1)
			      : md_token(MD_METHODDEF, m->method_base + (i - t->nfields) + 1);
	return 1;
}
