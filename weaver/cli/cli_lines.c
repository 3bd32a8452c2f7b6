/* cli_lines.c - text files of one item a line: the reference list (-r @FILE)
 * and the response file that holds a whole command line (locktime @FILE). */
#include "cli.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "lt_file.h"

#include <stdlib.h>
#include <string.h>

int cli_read_lines(const char *path, char ***lines, size_t *n)
{
	uint8_t *data;
	size_t size, count = 0, i;
	char *text, *p, **out;

	if (lt_file_read(path, &data, &size) < 0)
		return -1;
	if (memchr(data, '\0', size)) {
		free(data);
		return lt_error_set(LT_E_USAGE, "%s: not a text file (a NUL byte)", path);
	}
	if (!(text = lt_realloc(data, size + 1))) {
		free(data);
		return lt_nomem("%s: %zu bytes", path, size + 1);
	}
	text[size] = '\0';
	for (i = 0; i < size; i++)
		count += text[i] == '\n';
	count += size && text[size - 1] != '\n';
	/* One block: the pointers, then the text they point into. */
	if (!(out = lt_malloc((count + 1) * sizeof *out + size + 1))) {
		free(text);
		return lt_nomem("%s: %zu lines", path, count);
	}
	p = memcpy((char *)(out + count + 1), text, size + 1);
	free(text);
	if (size >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	for (i = 0; i < count; i++) {
		char *end = strchr(p, '\n'), *next = end ? end + 1 : p + strlen(p);
		if (!end)
			end = next;
		if (end > p && end[-1] == '\r')
			end--;
		*end = '\0';
		out[i] = p;
		p = next;
	}
	out[count] = NULL;
	*lines = out;
	*n = count;
	return 0;
}
