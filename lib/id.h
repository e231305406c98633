/*
 * Row ids as they appear in URLs: /api/v1/jobs/42, /jobs/42/report,
 * ?page=3.
 */
#ifndef STATBISECT_ID_H
#define STATBISECT_ID_H

/* The longest id text id_parse takes: 18 digits never overflow. */
#define ID_DIGITS_MAX 18

/*
 * Parses `text` as an id: 1 to ID_DIGITS_MAX decimal digits, the first
 * not 0 (so "01", "+1", " 1", "1e3", "-1" and "" are no ids, and each id
 * has one spelling).  Returns 0 with *out set, or -EINVAL leaving *out as
 * it was (also when `text` is NULL).
 */
int id_parse(long long *out, const char *text);

#endif
