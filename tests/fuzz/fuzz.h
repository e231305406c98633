/*
 * What the fuzz targets share: each tests/fuzz/fuzz_NAME.c defines
 * LLVMFuzzerTestOneInput() for libFuzzer (clang -fsanitize=fuzzer) over
 * one family of parsers that take outside input, and must neither crash
 * nor leak nor trip AddressSanitizer or UndefinedBehaviorSanitizer on
 * any input.  tests/fuzz/README.md says how they are run.
 */
#ifndef STATBISECT_FUZZ_H
#define STATBISECT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of the input (which may hold NULs). */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (text == NULL)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	return text;
}

/*
 * Splits the input at NUL bytes into at most `count` NUL-terminated
 * fields of `text` (a fuzz_string() copy); missing fields are "".
 */
static inline void fuzz_fields(char *text, size_t size, const char **fields,
			       size_t count)
{
	size_t field = 0, pos = 0;

	for (size_t i = 0; i < count; i++)
		fields[i] = "";
	while (field < count && pos <= size) {
		fields[field++] = text + pos;
		pos += strlen(text + pos) + 1;
	}
}

#endif
