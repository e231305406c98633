#include "secret.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>

int secret_hex(char *out, size_t bytes)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[SECRET_BYTES_MAX];
	size_t i;

	if (bytes == 0 || bytes > SECRET_BYTES_MAX) {
		if (out != NULL)
			out[0] = '\0';
		return -EINVAL;
	}
	if (getrandom(raw, bytes, 0) != (ssize_t)bytes) {
		out[0] = '\0';
		return -EIO;
	}
	for (i = 0; i < bytes; i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 15];
	}
	out[2 * bytes] = '\0';
	return 0;
}

bool secret_equal(const char *a, const char *b)
{
	size_t la, lb, i;
	unsigned char diff;

	if (a == NULL || b == NULL)
		return false;
	la = strlen(a);
	lb = strlen(b);
	diff = la != lb;
	for (i = 0; i < la && i < lb; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}
