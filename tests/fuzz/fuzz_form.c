/* Request bodies: application/x-www-form-urlencoded forms from browsers
 * and JSON bodies of the API (server/http.c). */
#include "fuzz.h"

#include <jansson.h>

#include "../../server/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_request req = {0};
	struct http_response res = {0};
	json_t *value;

	req.method = "POST";
	req.path = "/fuzz";
	req.body = fuzz_string(data, size);
	req.body_len = size;
	value = http_form_body(&res, &req);
	if ((value == NULL) == (res.status == 0))
		abort(); /* a form, or a 400, never both or neither */
	json_decref(value);
	http_response_clear(&res);
	value = http_json_body(&res, &req);
	json_decref(value);
	http_response_clear(&res);
	free(req.body);
	return 0;
}
