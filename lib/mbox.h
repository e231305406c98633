/*
 * A patch series as mail: the mbox that `git format-patch --stdout` (or a
 * mailing-list archive) gives, split into messages and read the way
 * `git am` reads them.  Pure: no I/O, no clock, no global state.
 *
 * Every text field is valid UTF-8 (RFC 2047 encoded words decoded, other
 * bytes sanitised as utf8.h does), so it can go into PostgreSQL and JSON
 * as it is.  The diff is the exception: it is kept byte for byte, since the
 * files it patches may hold any bytes.
 */
#ifndef STATBISECT_MBOX_H
#define STATBISECT_MBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* More messages than this in one mbox is refused, not parsed. */
#define MBOX_MESSAGES_MAX 500

struct mbox_message {
	char *message_id;  /* without the angle brackets; NULL if none */
	char *in_reply_to; /* likewise */
	char *references;  /* the header as sent, unfolded; NULL if none */
	char *subject;	   /* the whole decoded subject, "[PATCH 3/4] x: y" */
	char *title;	   /* the subject without its [...] prefixes */
	/* "[PATCH v2 net-next 3/4]": number 3, total 4; "[PATCH]": 1 and 1;
	 * a subject without a PATCH prefix: 0 and 0.  The cover letter is
	 * number 0. */
	int number, total;
	bool is_patch;	    /* the subject carries a [PATCH ...] prefix */
	char *author_name;  /* From (or the body's own From: line) */
	char *author_email; /* NULL when From holds no address */
	int64_t date;	    /* seconds since the epoch, 0 when unreadable */
	int date_offset;    /* minutes east of UTC */
	char **to;	    /* the addresses of To and Cc, plain */
	size_t to_count;
	char **cc;
	size_t cc_count;
	char *body; /* the commit message below the title, up to "---" */
	char *diff; /* from the first "diff --git" line up to the signature,
		       NULL when the message holds none */
	size_t diff_len;
	char *base_commit; /* the "base-commit:" line's SHA, NULL if none */
};

struct mbox_series {
	struct mbox_message *messages; /* in mbox order */
	size_t count;
};

/*
 * Splits the `len` bytes at `text` (an mbox: messages each starting with a
 * "From " line; a single message without one is read too) into messages.
 * Transfer encodings quoted-printable and base64 are decoded.  On success
 * *out holds at least one message and the caller frees it with
 * mbox_series_free.  Fails (-1, *err a malloc'd message for the user, *out
 * empty) on text that holds no message, or more than MBOX_MESSAGES_MAX.
 */
int mbox_parse(struct mbox_series *out, const char *text, size_t len,
	       char **err);

/*
 * The patches of a parsed series in the order they apply: the messages
 * numbered 1..m of an "n/m" series (its cover letter, number 0, left out),
 * or the single un-numbered patch.  *out is a malloc'd array of pointers
 * into `series` that the caller frees (not its elements).  Fails with a
 * message naming the offending subject when a numbered patch is missing or
 * repeated, numbers disagree on m, a patch holds no diff, or the mbox mixes
 * numbered and un-numbered patches.  `cover`, when not NULL, receives the
 * cover letter or NULL.
 */
int mbox_series_patches(const struct mbox_message ***out, size_t *count,
			const struct mbox_message **cover,
			const struct mbox_series *series, char **err);

/* Frees what mbox_parse filled; NULL and an empty series are no-ops. */
void mbox_series_free(struct mbox_series *series);

/*
 * The commit message `git am` would write for `message`: its title, a
 * blank line and its body (without trailing blank lines), ending in a
 * newline.  Returns a malloc'd string or NULL when memory runs out.
 */
char *mbox_commit_message(const struct mbox_message *message);

#endif
