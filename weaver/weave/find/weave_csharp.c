/* weave_csharp.c - the `lock` keyword in C# source text, skipping comments, strings and character literals. */
#include "weave_pass.h"

#include <string.h>

/* A place in the text: byte index, and the PDB's 1-based line and column
 * (columns count characters: UTF-8 continuation bytes add none). */
struct cs_pos {
	size_t i;
	uint32_t line, column;
};

struct cs_text {
	const uint8_t *s;
	size_t len;
};

/* Move one byte on.  "\r\n", "\r" and "\n" each end a line (C# 6.4.2). */
static void step(const struct cs_text *t, struct cs_pos *p)
{
	uint8_t c = t->s[p->i++];

	if (c == '\n' || (c == '\r' && (p->i >= t->len || t->s[p->i] != '\n'))) {
		p->line++;
		p->column = 1;
	} else if ((c & 0xC0) != 0x80 && c != '\r') {
		p->column++;
	}
}

static int at(const struct cs_text *t, const struct cs_pos *p, size_t ahead, char c)
{
	return p->i + ahead < t->len && t->s[p->i + ahead] == (uint8_t)c;
}

static int is_ident(uint8_t c)
{
	return c == '_' || c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Past a comment starting at p (C# 6.3.3): 1, or 0 when none starts there. */
static int skip_comment(const struct cs_text *t, struct cs_pos *p)
{
	if (at(t, p, 0, '/') && at(t, p, 1, '/')) {
		while (p->i < t->len && t->s[p->i] != '\n' && t->s[p->i] != '\r')
			step(t, p);
		return 1;
	}
	if (at(t, p, 0, '/') && at(t, p, 1, '*')) {
		step(t, p);
		step(t, p);
		while (p->i < t->len && !(at(t, p, 0, '*') && at(t, p, 1, '/')))
			step(t, p);
		if (p->i < t->len) {
			step(t, p);
			step(t, p);
		}
		return 1;
	}
	return 0;
}

/* Past a string or character literal whose opening quote is at p (C#
 * 6.4.5.5-6: regular with \ escapes, verbatim @"..." with "" for a quote,
 * raw with three or more quotes).  Interpolation holes are read as text. */
static void skip_literal(const struct cs_text *t, struct cs_pos *p, int verbatim)
{
	uint8_t quote = t->s[p->i];
	size_t run = 0;

	do {
		step(t, p);
		run++;
	} while (quote == '"' && !verbatim && at(t, p, 0, '"'));
	if (run >= 3) { /* raw: ends at as many quotes */
		for (size_t seen = 0; p->i < t->len && seen < run;) {
			seen = t->s[p->i] == '"' ? seen + 1 : 0;
			step(t, p);
		}
		return;
	}
	if (run == 2) /* "" : empty */
		return;
	while (p->i < t->len) {
		uint8_t c = t->s[p->i];
		if (!verbatim && (c == '\n' || c == '\r'))
			return;
		step(t, p);
		if (c == '\\' && !verbatim && p->i < t->len)
			step(t, p);
		else if (c == quote && verbatim && at(t, p, 0, '"'))
			step(t, p);
		else if (c == quote)
			return;
	}
}

static int before(const struct cs_pos *p, uint32_t line, uint32_t column)
{
	return p->line < line || (p->line == line && p->column < column);
}

/* Whether '(' follows p, past white space and comments. */
static int paren_follows(const struct cs_text *t, struct cs_pos p)
{
	while (p.i < t->len) {
		if (skip_comment(t, &p))
			continue;
		if (t->s[p.i] != ' ' && t->s[p.i] != '\t' && t->s[p.i] != '\n' && t->s[p.i] != '\r')
			return t->s[p.i] == '(';
		step(t, &p);
	}
	return 0;
}

int weave_csharp_last_lock(const uint8_t *text, size_t len, uint32_t from_line, uint32_t from_column,
			   uint32_t to_line, uint32_t to_column, uint32_t *line, uint32_t *column)
{
	const struct cs_text t = { text, len };
	struct cs_pos p = { 0, 1, 1 }, word;
	int found = 0;
	uint8_t prev = 0;

	while (p.i < len && before(&p, from_line, from_column))
		step(&t, &p);
	while (p.i < len && before(&p, to_line, to_column)) {
		uint8_t c = text[p.i];
		if (skip_comment(&t, &p))
			continue;
		if (c == '"' || c == '\'') {
			skip_literal(&t, &p, prev == '@');
			prev = c;
			continue;
		}
		if (!is_ident(c)) {
			if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
				prev = c;
			step(&t, &p);
			continue;
		}
		word = p;
		while (p.i < len && is_ident(text[p.i]))
			step(&t, &p);
		/* `lock` itself, not `x.lock`-like member access nor the identifier @lock. */
		if (p.i - word.i == 4 && memcmp(text + word.i, "lock", 4) == 0 && prev != '.' && prev != '@' &&
		    paren_follows(&t, p)) {
			*line = word.line;
			*column = word.column;
			found = 1;
		}
		prev = 'a';
	}
	return found;
}
