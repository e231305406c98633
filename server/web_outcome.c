/* A tested commit's outcome (what its build and runs did) in the words of
 * the job page. */
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "web.h"

json_t *web_outcome_label(json_t *outcome)
{
	const char *status =
	    json_string_value(json_object_get(outcome, "status"));
	json_t *names = json_object_get(outcome, "metrics_seen"), *v;
	json_t *signal = json_object_get(outcome, "signal");
	struct strbuf b = STRBUF_INIT;
	json_t *label;
	char *text;
	size_t i;

	if (status == NULL)
		return json_null();
	if (strcmp(status, "build_failed") == 0) {
		strbuf_append(&b, "build failed");
	} else if (strcmp(status, "crashed") == 0) {
		if (json_integer_value(signal) > 0)
			strbuf_printf(&b, "run crashed (signal %lld)",
				      (long long)json_integer_value(signal));
		else
			strbuf_printf(
			    &b, "run crashed (exit status %lld)",
			    (long long)json_integer_value(
				json_object_get(outcome, "exit_code")));
	} else if (strcmp(status, "timed_out") == 0) {
		strbuf_append(&b, "run timed out");
	} else if (strcmp(status, "no_kpi") == 0) {
		strbuf_append(&b, "printed no KPI");
		json_array_foreach(names, i, v)
		{
			if (i == 20) {
				strbuf_printf(&b, " and %zu more",
					      json_array_size(names) - i);
				break;
			}
			strbuf_printf(&b, "%s%s",
				      i == 0 ? "; it printed " : ", ",
				      json_string_value(v));
		}
	} else {
		strbuf_append(&b, status);
	}
	if (strbuf_finish(&text, NULL, &b) < 0)
		return json_null();
	label = json_string(text);
	free(text);
	return label;
}
