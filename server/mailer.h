/* The mailer: a thread that delivers outbox rows over SMTP (libcurl) or
 * into a Maildir, with retries and backoff.  A row is marked sent only once
 * the SMTP server accepted it or the file is in Maildir/new. */
#ifndef STATBISECT_MAILER_H
#define STATBISECT_MAILER_H

struct mailer;

/* Starts the thread; NULL on failure.  Reads server_config. */
struct mailer *mailer_start(void);

/* Stops the thread after its current delivery and frees it. */
void mailer_stop(struct mailer *mailer);

/* Delivers one message file into the Maildir `dir` (tmp/ then new/). */
int mailer_maildir_deliver(const char *dir, const char *message,
			   long long outbox_id, char **err);

#endif
