#include "id.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

int id_parse(long long *out, const char *text)
{
	long long value = 0;
	size_t i, len;

	if (text == NULL || text[0] < '1' || text[0] > '9')
		return -EINVAL;
	len = strlen(text);
	if (len > ID_DIGITS_MAX || strspn(text, "0123456789") != len)
		return -EINVAL;
	for (i = 0; i < len; i++)
		value = value * 10 + (text[i] - '0');
	*out = value;
	return 0;
}

int id_parse_sha_prefix(char sha[41], const char *text)
{
	size_t i, len = text != NULL ? strlen(text) : 0;

	if (len < ID_SHA_PREFIX_MIN || len > 40)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (!isxdigit((unsigned char)text[i]))
			return -EINVAL;
		sha[i] = (char)tolower((unsigned char)text[i]);
	}
	sha[len] = '\0';
	return 0;
}
