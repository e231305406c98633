/* Patch series sent by email: mbox splitting, header values (RFC 2047
 * words, folding), transfer encodings and series numbering
 * (lib/mbox.c). */
#include "fuzz.h"

#include "../../lib/mbox.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct mbox_message **patches = NULL, *cover = NULL;
	struct mbox_series series;
	char *err = NULL;
	size_t count = 0;

	memset(&series, 0, sizeof(series));
	if (mbox_parse(&series, (const char *)data, size, &err) < 0) {
		free(err);
		return 0;
	}
	if (mbox_series_patches(&patches, &count, &cover, &series, &err) ==
	    0) {
		for (size_t i = 0; i < count; i++)
			free(mbox_commit_message(patches[i]));
		free(patches);
	} else {
		free(err);
	}
	mbox_series_free(&series);
	return 0;
}
