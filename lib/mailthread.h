/*
 * Patch series in a mailing list's traffic (issue 13): which messages of
 * an inbox belong to one series, whether the series is complete, and
 * whether a rule's subject tag fits it.  Pure: the server's inbox
 * (server/inbox.c) reads the Maildir and stores the messages; this file
 * only decides on their headers.
 *
 * A series is threaded as `git format-patch --thread` and `git
 * send-email` send it: every patch replies to the cover letter ("[PATCH
 * 0/m]"), or to patch 1 when there is no cover letter (shallow), or each to
 * the one before (deep).  Its head is the message the thread starts from:
 * the cover letter, or patch 1.
 */
#ifndef STATBISECT_MAILTHREAD_H
#define STATBISECT_MAILTHREAD_H

#include <stdbool.h>
#include <stddef.h>

/* A series longer than this is no series to take. */
#define MAILTHREAD_PATCHES_MAX 500

/* The headers of one message of the inbox, as lib/mbox.h reads them. */
struct mailthread_item {
	const char *message_id; /* without angle brackets */
	const char
	    *in_reply_to;  /* likewise; NULL when it replies to nothing */
	int number, total; /* "[PATCH 3/4]": 3 and 4; "[PATCH]": 1, 1 */
	bool is_patch;	   /* the subject carries a PATCH tag */
};

/*
 * The head of the series that item `i` belongs to: its in_reply_to chain
 * followed through `items` for as long as the parent is there and is an
 * earlier message of a series of the same length (a patch or cover letter
 * numbered below the child).  A message whose parent is missing, is no
 * patch, counts another total or does not come before it (a v2 sent in
 * reply to v1) is a head itself, and so is a single "[PATCH]".  Patches
 * that reply to one message that has not come (a shallow thread's cover
 * letter) share one head: the first-numbered of them.  Returns the
 * head's index.
 */
size_t mailthread_head(const struct mailthread_item *items, size_t count,
		       size_t i);

/* What mailthread_series found of the series headed by one item. */
enum mailthread_state {
	MAILTHREAD_COMPLETE,  /* every patch, and the cover letter when sent */
	MAILTHREAD_WAITING,   /* a patch, or the cover letter, has not come */
	MAILTHREAD_NO_SERIES, /* numbers repeat or disagree: no series to take
			       */
};

/*
 * Collects the series headed by item `head` (an index mailthread_head gave):
 * into `order` (room for `count` indexes) the cover letter when there is
 * one, then patches 1..m in order; *n their number.  MAILTHREAD_WAITING when
 * a patch of 1..m is missing, or when the head is patch 1 of a longer
 * series replying to a message not in `items` (the cover letter, still
 * on its way); *n is then what has come, in the same order, and
 * *missing (when not NULL) the first patch number missing, or 0 when
 * every patch is here and only the cover letter is not.  A single "[PATCH]" is
 * complete by itself. MAILTHREAD_NO_SERIES when the head is no patch, a number
 * repeats or lies outside 0..m, or m is over MAILTHREAD_PATCHES_MAX.
 */
enum mailthread_state mailthread_series(size_t *order, size_t *n, int *missing,
					const struct mailthread_item *items,
					size_t count, size_t head);

/*
 * True when the subject's first bracketed tag that holds the word PATCH
 * ("[PATCH v2 net-next 3/4]", "[RFC PATCH]") also holds `word` as one of
 * its blank-separated words, compared without case; an empty `word`
 * matches any such subject.  False for a subject without a PATCH tag.
 */
bool mailthread_tag_matches(const char *subject, const char *word);

#endif
