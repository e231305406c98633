#include "cause.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void cause_set(char **cause, const char *fmt, ...)
{
	va_list ap;

	if (cause == NULL)
		return;
	free(*cause);
	va_start(ap, fmt);
	if (vasprintf(cause, fmt, ap) < 0)
		*cause = NULL;
	va_end(ap);
}
