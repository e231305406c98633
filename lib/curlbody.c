#include "curlbody.h"

#include <stdlib.h>
#include <string.h>

size_t curlbody_write(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct curlbody *body = arg;
	size_t n = size * nmemb;
	char *grown;

	if (n > body->max || body->len > body->max - n) {
		body->too_large = true;
		return 0;
	}
	grown = realloc(body->data, body->len + n + 1);
	if (grown == NULL)
		return 0;
	memcpy(grown + body->len, ptr, n);
	body->data = grown;
	body->len += n;
	body->data[body->len] = '\0';
	return n;
}

void curlbody_clear(struct curlbody *body)
{
	if (body == NULL)
		return;
	free(body->data);
	body->data = NULL;
	body->len = 0;
	body->too_large = false;
}
