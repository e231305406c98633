/* Ids and URLs from request paths, query values and repository URLs
 * (lib/id.c, lib/url.c), and text cleaning (lib/utf8.c). */
#include "fuzz.h"

#include "../../lib/id.h"
#include "../../lib/url.h"
#include "../../lib/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size), *out = NULL;
	long long id = 0;
	size_t len;

	if (id_parse(&id, text) == 0 && id <= 0)
		abort();
	if (url_redact(&out, text) == 0)
		free(out);
	len = url_unescape(text);
	if (len != strlen(text))
		abort();
	out = NULL;
	if (utf8_sanitize(&out, (const char *)data, size) == 0)
		free(out);
	out = NULL;
	if (utf8_from_encoding(&out, (const char *)data, size, "latin1") == 0)
		free(out);
	free(text);
	return 0;
}
