/*
 * The mailer: a thread that delivers outbox rows over SMTP (libcurl) or,
 * when no SMTP URL is set, into a Maildir, with retries and backoff.
 *
 * A report is written into the outbox in the transaction that stores the
 * job's verdict (server/reportjob.c).  The mailer takes due rows one at a
 * time (FOR UPDATE SKIP LOCKED, so several servers share one outbox) and
 * marks a row sent only once the SMTP server accepted the message (its
 * final 250 after DATA) or the file is in Maildir/new.  A failed attempt
 * counts in `attempts`, keeps its reason in `last_error` and schedules
 * the next attempt after 5 s * 2^attempts, at most
 * server_config.smtp_retry_max seconds (--smtp-retry-max, default 3600);
 * after two days of failures the row is given up (`failed_at`).  The API
 * shows this as the job's "report" object.  Delivery is at least once: a
 * crash between the server's 250 and the commit sends the message again.
 *
 * SMTP URLs (--smtp-url, STATBISECT_SMTP_URL):
 *
 *   smtp://host[:port]            plain SMTP (port 25 by default)
 *   smtps://host[:port]           SMTP over TLS from the start (465)
 *   smtp+starttls://host[:port]   SMTP upgraded with STARTTLS, which the
 *                                 server must offer (curl's smtp:// with
 *                                 CURLOPT_USE_SSL = CURLUSESSL_ALL); give
 *                                 the port, usually 587
 *
 * Credentials for AUTH go in the URL, percent-encoded as usual:
 * smtp+starttls://user%40example.org:secret@mail.example.org:587.  libcurl
 * picks the mechanism the server offers, verifies the server's certificate
 * for TLS, and does the dot-stuffing of the message.
 *
 * The same thread delivers the webhooks' POSTs (webhooks.h), one due
 * mail and one due POST in turn.
 */
#ifndef STATBISECT_MAILER_H
#define STATBISECT_MAILER_H

#include <stdbool.h>

struct mailer;

/*
 * Starts the thread; NULL on failure (logged), also when
 * server_config.smtp_url is set but not one of the URLs above.  Reads
 * server_config.
 */
struct mailer *mailer_start(void);

/*
 * Tells the thread a row may have entered the outbox (the store's
 * 'statbisect_outbox' channel, server/notify.c): it looks at once rather
 * than at its next poll, once a second.  `mailer` is a struct mailer; the
 * type suits notify_start's callback.
 */
void mailer_wake(void *mailer);

/* Stops the thread, aborting a delivery in progress, and frees it. */
void mailer_stop(struct mailer *mailer);

/*
 * What libcurl is given for SMTP URL `url`: *curl_url (malloc'd, the
 * caller frees it) is `url` with "smtp+starttls://" replaced by
 * "smtp://", *use_ssl is CURLUSESSL_ALL for smtp+starttls and smtps, and
 * CURLUSESSL_NONE for smtp.  The scheme is matched without regard to case.
 * Returns 0, or -EINVAL when `url` is NULL, has another scheme, no host,
 * or holds a control character or a space (then *cause, when `cause` is
 * not NULL, is a malloc'd message), or -ENOMEM.
 */
int mailer_smtp_url(const char *url, char **curl_url, long *use_ssl,
		    char **cause);

/* Delivers one message file into the Maildir `dir` (tmp/ then new/),
 * its CRLF line ends written as LF as Maildir readers expect. */
int mailer_maildir_deliver(const char *dir, const char *message,
			   long long outbox_id, char **err);

#endif
