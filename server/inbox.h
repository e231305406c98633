/*
 * The inbox of patch series (issue 13): a Maildir that the mail system
 * fills with a mailing list's traffic (fetchmail, an MDA subscribed to the
 * list).  A background thread reads each new message into the database
 * (store/store_inbox.h), finds the series among them (lib/mailthread.h),
 * and
 * makes a patch job of each complete series that an inbox rule fits,
 * through the same patches_submit as the API and the form.  A series that
 * does not apply gets a short "could not apply" reply in its thread; one
 * that never completes is given up after the inbox timeout.  Files read
 * move from new/ to cur/, as a mail reader does; the state is in
 * PostgreSQL, so a restart reads nothing twice.
 */
#ifndef STATBISECT_INBOX_SERVER_H
#define STATBISECT_INBOX_SERVER_H

#include "http.h"

/* The default wait for a series to complete, in seconds. */
#define INBOX_TIMEOUT_DEFAULT_S 3600

/*
 * Starts the inbox thread on the Maildir `dir` (its new/ and cur/ are
 * made when missing), giving up on an incomplete series after
 * `timeout_s` seconds.  0, or -1 (logged) when it cannot start.
 */
int inbox_start(const char *dir, unsigned timeout_s);

/* Stops it and waits for it (a no-op when it is not running). */
void inbox_stop(void);

/* The REST API of inbox rules and messages (inbox_rules.c).
 * NULL-method terminated. */
extern const struct http_route inbox_routes[];

#endif
