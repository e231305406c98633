#include "inbox.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#define NONE SIZE_MAX

/* The index of the message whose id is `id`, or `count`. */
static size_t find(const struct inbox_item *items, size_t count,
		   const char *id)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (items[i].message_id != NULL &&
		    strcmp(items[i].message_id, id) == 0)
			return i;
	return count;
}

size_t inbox_head(const struct inbox_item *items, size_t count, size_t i)
{
	size_t at = i, hops;

	for (hops = 0; hops < count; hops++) {
		const struct inbox_item *m = &items[at];
		size_t parent;

		if (!m->is_patch || m->total <= 1 || m->in_reply_to == NULL)
			break;
		parent = find(items, count, m->in_reply_to);
		if (parent == count || parent == at ||
		    !items[parent].is_patch ||
		    items[parent].total != m->total ||
		    items[parent].number >= m->number)
			break;
		at = parent;
	}
	return at;
}

enum inbox_state inbox_series(size_t *order, size_t *n, int *missing,
			      const struct inbox_item *items, size_t count,
			      size_t head)
{
	const struct inbox_item *h = &items[head];
	size_t slot[INBOX_PATCHES_MAX + 1], j;
	int m = h->total, k, first_missing = -1;

	*n = 0;
	if (missing != NULL)
		*missing = -1;
	if (!h->is_patch || m > INBOX_PATCHES_MAX)
		return INBOX_NO_SERIES;
	if (m <= 1) {
		if (h->number > 1)
			return INBOX_NO_SERIES;
		order[(*n)++] = head;
		return INBOX_COMPLETE;
	}
	for (k = 0; k <= m; k++)
		slot[k] = NONE;
	for (j = 0; j < count; j++) {
		const struct inbox_item *it = &items[j];

		if (!it->is_patch || inbox_head(items, count, j) != head)
			continue;
		if (it->total != m || it->number < 0 || it->number > m ||
		    slot[it->number] != NONE)
			return INBOX_NO_SERIES;
		slot[it->number] = j;
	}
	if (slot[0] != NONE)
		order[(*n)++] = slot[0];
	else if (h->number == 1 && h->in_reply_to != NULL &&
		 find(items, count, h->in_reply_to) == count)
		first_missing = 0; /* the cover letter is on its way */
	for (k = 1; k <= m; k++) {
		if (slot[k] != NONE)
			order[(*n)++] = slot[k];
		else if (first_missing < 0)
			first_missing = k;
	}
	if (missing != NULL)
		*missing = first_missing;
	return first_missing < 0 ? INBOX_COMPLETE : INBOX_WAITING;
}

/* True when the `len` bytes at `word` equal `want`, without case. */
static bool word_is(const char *word, size_t len, const char *want)
{
	return strlen(want) == len && strncasecmp(word, want, len) == 0;
}

/* Whether the tag text[0, len) holds the word PATCH, and `word`. */
static void tag_words(const char *text, size_t len, const char *word,
		      bool *patch, bool *has_word)
{
	size_t i = 0;

	*patch = *has_word = false;
	while (i < len) {
		size_t start;

		while (i < len && isspace((unsigned char)text[i]))
			i++;
		start = i;
		while (i < len && !isspace((unsigned char)text[i]))
			i++;
		if (i == start)
			continue;
		if (word_is(text + start, i - start, "PATCH"))
			*patch = true;
		if (word_is(text + start, i - start, word))
			*has_word = true;
	}
}

bool inbox_tag_matches(const char *subject, const char *word)
{
	const char *open = subject;

	while ((open = strchr(open, '[')) != NULL) {
		const char *close = strchr(open + 1, ']');
		bool patch, has_word;

		if (close == NULL)
			return false;
		tag_words(open + 1, (size_t)(close - open - 1), word, &patch,
			  &has_word);
		if (patch)
			return word[0] == '\0' || has_word;
		open = close + 1;
	}
	return false;
}
