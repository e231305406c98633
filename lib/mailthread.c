#include "mailthread.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#define NONE SIZE_MAX

/* The index of the message whose id is `id`, or `count`. */
static size_t find(const struct mailthread_item *items, size_t count,
		   const char *id)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (items[i].message_id != NULL &&
		    strcmp(items[i].message_id, id) == 0)
			return i;
	return count;
}

/*
 * The top of a chain, `at`, or when it replies to a message that has not
 * come (the cover letter of a shallow thread), the first-numbered patch
 * of those replying to the same missing message: they are one series.
 */
static size_t at_or_sibling(const struct mailthread_item *items, size_t count,
			    size_t at)
{
	const struct mailthread_item *top = &items[at];
	size_t best = at, k;

	if (!top->is_patch || top->total <= 1 || top->in_reply_to == NULL ||
	    find(items, count, top->in_reply_to) != count)
		return at;
	for (k = 0; k < count; k++) {
		const struct mailthread_item *it = &items[k];

		if (it->is_patch && it->total == top->total &&
		    it->in_reply_to != NULL &&
		    strcmp(it->in_reply_to, top->in_reply_to) == 0 &&
		    (it->number < items[best].number ||
		     (it->number == items[best].number && k < best)))
			best = k;
	}
	return best;
}

size_t mailthread_head(const struct mailthread_item *items, size_t count,
		       size_t i)
{
	size_t at = i, hops;

	for (hops = 0; hops < count; hops++) {
		const struct mailthread_item *m = &items[at];
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
	return at_or_sibling(items, count, at);
}

enum mailthread_state mailthread_series(size_t *order, size_t *n, int *missing,
					const struct mailthread_item *items,
					size_t count, size_t head)
{
	const struct mailthread_item *h = &items[head];
	size_t slot[MAILTHREAD_PATCHES_MAX + 1], j;
	int m = h->total, k, first_missing = -1;

	*n = 0;
	if (missing != NULL)
		*missing = -1;
	if (!h->is_patch || m > MAILTHREAD_PATCHES_MAX)
		return MAILTHREAD_NO_SERIES;
	if (m <= 1) {
		if (h->number > 1)
			return MAILTHREAD_NO_SERIES;
		order[(*n)++] = head;
		return MAILTHREAD_COMPLETE;
	}
	for (k = 0; k <= m; k++)
		slot[k] = NONE;
	for (j = 0; j < count; j++) {
		const struct mailthread_item *it = &items[j];

		if (!it->is_patch || mailthread_head(items, count, j) != head)
			continue;
		if (it->total != m || it->number < 0 || it->number > m ||
		    slot[it->number] != NONE)
			return MAILTHREAD_NO_SERIES;
		slot[it->number] = j;
	}
	if (slot[0] != NONE)
		order[(*n)++] = slot[0];
	for (k = 1; k <= m; k++) {
		if (slot[k] != NONE)
			order[(*n)++] = slot[k];
		else if (first_missing < 0)
			first_missing = k;
	}
	/* Every patch is here, replying to a cover letter that is not. */
	if (first_missing < 0 && slot[0] == NONE && h->number == 1 &&
	    h->in_reply_to != NULL &&
	    find(items, count, h->in_reply_to) == count)
		first_missing = 0;
	if (missing != NULL)
		*missing = first_missing;
	return first_missing < 0 ? MAILTHREAD_COMPLETE : MAILTHREAD_WAITING;
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

bool mailthread_tag_matches(const char *subject, const char *word)
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
