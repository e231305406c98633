/*
 * The command-line client's JSON output: jansson's text with every real
 * number rewritten as the shortest decimal that reads back as the same
 * double, so `--json` prints 998.08 where jansson's %.17g prints
 * 998.08000000000004.
 */
#ifndef STATBISECT_JSONOUT_H
#define STATBISECT_JSONOUT_H

#include <jansson.h>
#include <stdio.h>

/*
 * Writes `value` to `out` indented by two, keys sorted, then a newline.
 * Reals are written as Python's repr writes them: positional from 1e-4
 * up to 1e16, in exponent form outside, always with a '.' or an exponent.
 * Returns 0, or -1 when out of memory (nothing is written then).
 */
int jsonout_print(FILE *out, const json_t *value);

/*
 * The shortest text of `number` (finite) that strtod reads back as
 * `number`, as jsonout_print writes it, into `buf` of `size` >= 32.
 */
void jsonout_real(char *buf, size_t size, double number);

#endif
