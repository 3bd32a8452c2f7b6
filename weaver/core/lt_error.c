/* lt_error.c - recording of the last error (see lt_error.h). */
#include "lt_error.h"

#include <stdio.h>
#include <string.h>

static struct lt_error last_error;

int lt_error_set(int code, const char *fmt, ...)
{
	va_list ap;

	last_error.code = code;
	va_start(ap, fmt);
	vsnprintf(last_error.msg, sizeof last_error.msg, fmt, ap);
	va_end(ap);
	return -1;
}

int lt_error_prefix(const char *fmt, ...)
{
	char prefix[256], old[sizeof last_error.msg];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	memcpy(old, last_error.msg, sizeof old);
	/* The message is cut at the buffer's end; the prefix is never lost. */
	if (snprintf(last_error.msg, sizeof last_error.msg, "%s%s", prefix, old) < 0)
		last_error.msg[0] = '\0';
	return -1;
}

const struct lt_error *lt_error_last(void)
{
	return &last_error;
}

void lt_error_clear(void)
{
	last_error.code = LT_E_NONE;
	last_error.msg[0] = '\0';
}
