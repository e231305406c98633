/* Metric output in all its formats: `name: value` lines, flat JSON,
 * Google Benchmark and hyperfine JSON (lib/metrics.c), and the monitors'
 * /usr/bin/time and perf-stat output (worker/monitor*.c). */
#include "fuzz.h"

#include "../../lib/metrics.h"
#include "../../worker/monitor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	enum metrics_format format;
	struct metrics *m = NULL;
	size_t counted = 0;

	if (metrics_parse_output(&m, text, size, NULL, &format) == 0) {
		for (size_t i = 0; i < m->count; i++)
			if (!metrics_name_valid(m->entries[i].name))
				abort();
		metrics_free(m);
	}
	m = NULL;
	if (metrics_parse(&m, text, size, "monitor.") == 0)
		metrics_free(m);
	m = NULL;
	if (metrics_parse_json(&m, text, size, "json.", NULL) == 0)
		metrics_free(m);
	if (metrics_new(&m) == 0) {
		monitor_parse_time(m, text, size);
		monitor_parse_perf_stat(m, text, size, &counted);
		metrics_free(m);
	}
	return 0;
}
