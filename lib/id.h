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

/* The fewest hex digits that name a commit in a URL. */
#define ID_SHA_PREFIX_MIN 4

/*
 * Parses `text` as a commit named in a URL (/jobs/7/commits/1a2b3c/log):
 * ID_SHA_PREFIX_MIN to 40 hex digits, folded to lower case into `sha`.
 * Returns 0, or -EINVAL leaving `sha` unspecified (also for NULL).
 */
int id_parse_sha_prefix(char sha[41], const char *text);

#endif
