/*
 * Shortest round-trip decimals in the client's JSON output (jsonout.h).
 */
#include "jsonout.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void jsonout_real(char *buf, size_t size, double number)
{
	int digits, exponent;
	char probe[40];

	for (digits = 1; digits < 17; digits++) {
		snprintf(probe, sizeof(probe), "%.*e", digits - 1, number);
		if (strtod(probe, NULL) == number)
			break;
	}
	snprintf(probe, sizeof(probe), "%.*e", digits - 1, number);
	exponent = atoi(strchr(probe, 'e') + 1);
	if (exponent < -4 || exponent >= 16) {
		snprintf(buf, size, "%s", probe);
		return;
	}
	snprintf(buf, size, "%.*f",
		 digits - 1 - exponent > 0 ? digits - 1 - exponent : 0,
		 number);
	if (strchr(buf, '.') == NULL)
		strncat(buf, ".0", size - strlen(buf) - 1);
}

/* Length of the number token at `text`: [-+0-9.eE]. */
static size_t number_length(const char *text)
{
	return strspn(text, "-+0123456789.eE");
}

int jsonout_print(FILE *out, const json_t *value)
{
	char *text = json_dumps(value, JSON_INDENT(2) | JSON_SORT_KEYS |
					   JSON_REAL_PRECISION(17));
	bool in_string = false;
	char real[40];
	size_t i, n;

	if (text == NULL)
		return -1;
	for (i = 0; text[i] != '\0'; i += n) {
		n = 1;
		if (in_string) {
			if (text[i] == '\\' && text[i + 1] != '\0')
				n = 2;
			else if (text[i] == '"')
				in_string = false;
			fwrite(text + i, 1, n, out);
			continue;
		}
		if (text[i] == '"')
			in_string = true;
		if (text[i] != '-' && (text[i] < '0' || text[i] > '9')) {
			fputc(text[i], out);
			continue;
		}
		n = number_length(text + i);
		if (strcspn(text + i, ".eE") >= n) {
			fwrite(text + i, 1, n, out); /* an integer */
			continue;
		}
		jsonout_real(real, sizeof(real), strtod(text + i, NULL));
		fputs(real, out);
	}
	fputc('\n', out);
	free(text);
	return 0;
}
