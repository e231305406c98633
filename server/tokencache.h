/*
 * tokencache: whom a bearer token names, kept so that a request need not
 * look its token up in the database each time (issue 14: polling clients
 * and dashboards send the same token over and over).
 *
 * Only live tokens are kept, by the SHA-256 of their secret (the secret
 * itself is not kept).  They are forgotten together with every answer of
 * the job cache (jobcache.h): a token revoked or changed anywhere
 * notifies 'statbisect_jobs' with an empty payload
 * (sql/170_job_notify.sql), a write through this server forgets at once,
 * and nothing is kept while the listening connection is down.
 */
#ifndef STATBISECT_TOKENCACHE_H
#define STATBISECT_TOKENCACHE_H

#include <stdbool.h>

#include "tokens.h"

/* What tokencache_lookup saw, for tokencache_keep. */
struct tokencache_ticket {
	unsigned char digest[32];
	unsigned long generation;
	double at; /* monotonic seconds */
	bool live;
};

/* Whom `secret` names, into *out, when it is kept (true). */
bool tokencache_lookup(struct tokencache_ticket *ticket,
		       struct token_identity *out, const char *secret);

/* Keeps `who`, looked up after `ticket`'s lookup, unless everything was
 * forgotten since. */
void tokencache_keep(const struct tokencache_ticket *ticket,
		     const struct token_identity *who);

/*
 * Web sessions are kept the same way, by the SHA-256 of their cookie's
 * secret, until they expire, and forgotten with the tokens: a session
 * signed out or removed anywhere notifies (sql/180_job_list_notify.sql).
 * The session of `secret` into *out when it is kept (true).
 */
bool tokencache_session_lookup(struct tokencache_ticket *ticket,
			       struct token_session *out, const char *secret);

/* Keeps `session`, read after `ticket`'s lookup and expiring
 * `expires_in` seconds after that read, unless everything was forgotten
 * since. */
void tokencache_session_keep(const struct tokencache_ticket *ticket,
			     const struct token_session *session,
			     double expires_in);

#endif
