/* weave_merge_map.c - the map a merge gives back: the target tokens of the template's members, by name. */
#include "weave_merge.h"

#include <stdlib.h>
#include <string.h>

int weave_merge_find(const struct weave_merge_map *m, const char *name, uint32_t *out)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->names[i], name) == 0) {
			*out = m->tokens[i];
			return 1;
		}
	return 0;
}

void weave_merge_map_free(struct weave_merge_map *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->names[i]);
	free(m->names);
	free(m->tokens);
	memset(m, 0, sizeof *m);
}
