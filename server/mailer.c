#include "mailer.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cause.h"
#include "db.h"
#include "log.h"
#include "report.h"
#include "server.h"
#include "store/store_outbox.h"
#include "strbuf.h"
#include "webhooks.h"

/* Seconds of failed attempts after which a report is given up. */
#define MAILER_GIVE_UP_SECONDS 172800
/* How often the outbox is looked at without a mailer_wake(): for rows
 * whose next attempt came due, and notifications that were lost. */
#define MAILER_POLL_MS 1000

struct mailer {
	pthread_t thread;
	atomic_bool stop;
	pthread_mutex_t lock;
	pthread_cond_t woken; /* on CLOCK_MONOTONIC */
	bool wake;	      /* under `lock`: a row may be waiting */
	char *curl_url;	      /* server_config.smtp_url as libcurl takes it */
	long use_ssl;
};

int mailer_smtp_url(const char *url, char **curl_url, long *use_ssl,
		    char **cause)
{
	static const struct {
		const char *scheme, *curl_scheme;
		long use_ssl;
	} schemes[] = {
	    {"smtp+starttls://", "smtp://", CURLUSESSL_ALL},
	    {"smtps://", "smtps://", CURLUSESSL_ALL},
	    {"smtp://", "smtp://", CURLUSESSL_NONE},
	};
	const char *rest = NULL, *p;
	size_t i;

	if (cause != NULL)
		*cause = NULL;
	*curl_url = NULL;
	if (url == NULL) {
		cause_set(cause, "no SMTP URL");
		return -EINVAL;
	}
	for (p = url; *p != '\0'; p++) {
		if ((unsigned char)*p <= ' ' || *p == 0x7f) {
			cause_set(cause, "SMTP URL holds a space or a control "
					 "character");
			return -EINVAL;
		}
	}
	for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		size_t n = strlen(schemes[i].scheme);

		if (strncasecmp(url, schemes[i].scheme, n) == 0) {
			rest = url + n;
			break;
		}
	}
	if (rest == NULL) {
		cause_set(cause,
			  "SMTP URL '%.40s...' must start with smtp://, "
			  "smtps:// or smtp+starttls://",
			  url);
		return -EINVAL;
	}
	/* The host: after any user information, before port or path. */
	p = strchr(rest, '@');
	if (p != NULL && p < rest + strcspn(rest, "/?#"))
		rest = p + 1;
	if (*rest == '\0' || *rest == ':' || *rest == '/' || *rest == '?' ||
	    *rest == '#') {
		cause_set(cause, "SMTP URL has no host");
		return -EINVAL;
	}
	if (asprintf(curl_url, "%s%s", schemes[i].curl_scheme,
		     url + strlen(schemes[i].scheme)) < 0) {
		*curl_url = NULL;
		return -ENOMEM;
	}
	*use_ssl = schemes[i].use_ssl;
	return 0;
}

static int make_dir(const char *path)
{
	return mkdir(path, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

int mailer_maildir_deliver(const char *dir, const char *message,
			   long long outbox_id, char **err)
{
	char tmp[4096], new[4096], sub[4096], host[64] = "localhost";
	struct strbuf lf = STRBUF_INIT;
	size_t len = 0, done = 0;
	char *text = NULL;
	struct timespec now;
	int fd;

	/* Maildir files end their lines in LF; CRLF is SMTP's. */
	strbuf_lf(&lf, message, strlen(message));
	if (strbuf_finish(&text, &len, &lf) < 0) {
		errno = ENOMEM;
		goto fail;
	}

	if (make_dir(dir) < 0)
		goto fail;
	snprintf(sub, sizeof(sub), "%s/tmp", dir);
	if (make_dir(sub) < 0)
		goto fail;
	snprintf(sub, sizeof(sub), "%s/new", dir);
	if (make_dir(sub) < 0)
		goto fail;
	snprintf(sub, sizeof(sub), "%s/cur", dir);
	if (make_dir(sub) < 0)
		goto fail;
	gethostname(host, sizeof(host) - 1);
	host[strcspn(host, "/:")] = '\0';
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(tmp, sizeof(tmp), "%s/tmp/%lld.M%ldP%dQ%lld.%s", dir,
		 (long long)now.tv_sec, now.tv_nsec / 1000, (int)getpid(),
		 outbox_id, host);
	snprintf(new, sizeof(new), "%s/new/%s", dir, strrchr(tmp, '/') + 1);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		goto fail;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			unlink(tmp);
			goto fail;
		}
		done += (size_t)n;
	}
	if (fsync(fd) < 0 || close(fd) < 0 || rename(tmp, new) < 0) {
		unlink(tmp);
		goto fail;
	}
	free(text);
	return 0;
fail:
	if (asprintf(err, "maildir %s: %s", dir, strerror(errno)) < 0)
		*err = NULL;
	free(text);
	return -1;
}

struct upload {
	const char *data;
	size_t len, pos;
};

static size_t read_message(char *buf, size_t size, size_t nmemb, void *arg)
{
	struct upload *up = arg;
	size_t n = size * nmemb;

	if (n > up->len - up->pos)
		n = up->len - up->pos;
	memcpy(buf, up->data + up->pos, n);
	up->pos += n;
	return n;
}

/* libcurl's progress callback: a stop request aborts the transfer. */
static int abort_on_stop(void *arg, curl_off_t dltotal, curl_off_t dlnow,
			 curl_off_t ultotal, curl_off_t ulnow)
{
	struct mailer *m = arg;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return atomic_load(&m->stop) ? 1 : 0;
}

/*
 * Sends `message` to `recipients` (a JSON array of addresses) over SMTP.
 * Every recipient is checked again: an address that reached the outbox
 * some other way can never add an SMTP command (RCPT TO:<a>\r\nDATA).
 */
static int smtp_deliver(struct mailer *m, json_t *recipients,
			const char *message, char **err)
{
	struct upload up = {message, strlen(message), 0};
	struct curl_slist *rcpt = NULL, *added;
	char from[512], errbuf[CURL_ERROR_SIZE] = "";
	long response = 0;
	CURLcode rc;
	CURL *curl;
	size_t i;
	json_t *r;

	json_array_foreach(recipients, i, r)
	{
		char addr[512];

		if (!json_is_string(r) ||
		    !report_address_is_valid(json_string_value(r))) {
			curl_slist_free_all(rcpt);
			*err = strdup("smtp: the outbox row holds a recipient "
				      "that is not a plain address");
			return -1;
		}
		snprintf(addr, sizeof(addr), "<%s>", json_string_value(r));
		added = curl_slist_append(rcpt, addr);
		if (added == NULL) {
			curl_slist_free_all(rcpt);
			*err = strdup("smtp: out of memory");
			return -1;
		}
		rcpt = added;
	}
	curl = curl_easy_init();
	if (curl == NULL) {
		curl_slist_free_all(rcpt);
		*err = strdup("cannot start libcurl");
		return -1;
	}
	/* The envelope sender: the plain address main() took out of
	 * STATBISECT_MAIL_FROM once, at start. */
	snprintf(from, sizeof(from), "<%s>", server_config.mail_from_address);
	curl_easy_setopt(curl, CURLOPT_URL, m->curl_url);
	curl_easy_setopt(curl, CURLOPT_USE_SSL, m->use_ssl);
	curl_easy_setopt(curl, CURLOPT_MAIL_FROM, from);
	curl_easy_setopt(curl, CURLOPT_MAIL_RCPT, rcpt);
	curl_easy_setopt(curl, CURLOPT_READFUNCTION, read_message);
	curl_easy_setopt(curl, CURLOPT_READDATA, &up);
	curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)up.len);
	curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, abort_on_stop);
	curl_easy_setopt(curl, CURLOPT_XFERINFODATA, m);
	rc = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response);
	curl_slist_free_all(rcpt);
	curl_easy_cleanup(curl);
	if (rc != CURLE_OK) {
		char code[48] = "";

		if (response > 0)
			snprintf(code, sizeof(code), " (server said %ld)",
				 response);
		if (asprintf(err, "smtp: %s%s",
			     errbuf[0] ? errbuf : curl_easy_strerror(rc),
			     code) < 0)
			*err = NULL;
		return -1;
	}
	return 0;
}

/* Delivers at most one due row; 1 when one was handled, 0 when none was
 * due, -1 on a database error. */
static int deliver_one(struct mailer *m, PGconn *conn)
{
	struct store_outbox_item item;
	char *err = NULL;
	json_t *recipients;
	int rc;

	if (db_begin(conn) < 0)
		return -1;
	rc = store_outbox_next(&item, conn);
	if (rc != STORE_OK) {
		db_rollback(conn);
		return rc == STORE_NOT_FOUND ? 0 : -1;
	}
	recipients = json_loads(item.recipients, 0, NULL);
	/* A report with nobody to tell is never taken: it stays readable
	 * and its job page says no mail went out. */
	if (m->curl_url != NULL) {
		rc = smtp_deliver(m, recipients, item.message, &err);
	} else {
		rc = mailer_maildir_deliver(server_config.mail_dir,
					    item.message, item.id, &err);
	}
	json_decref(recipients);
	if (rc == 0) {
		rc = store_outbox_sent(conn, item.id);
		log_info("report %lld delivered", item.id);
	} else {
		/* 5 s, 10 s, 20 s ... up to the retry maximum; given up
		 * after two days of failures. */
		rc = store_outbox_failed(
		    conn, item.id, err != NULL ? err : "delivery failed",
		    server_config.smtp_retry_max, MAILER_GIVE_UP_SECONDS);
		log_warn("report %lld not delivered: %s", item.id,
			 err != NULL ? err : "delivery failed");
	}
	free(err);
	store_outbox_item_clear(&item);
	if (rc < 0) {
		db_rollback(conn);
		return -1;
	}
	return db_commit(conn) < 0 ? -1 : 1;
}

/* Waits MAILER_POLL_MS, or until mailer_wake() or mailer_stop(). */
static void nap(struct mailer *m)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += MAILER_POLL_MS / 1000;
	until.tv_nsec += (long)(MAILER_POLL_MS % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&m->lock);
	while (!m->wake && !atomic_load(&m->stop) &&
	       pthread_cond_timedwait(&m->woken, &m->lock, &until) == 0)
		;
	m->wake = false;
	pthread_mutex_unlock(&m->lock);
}

void mailer_wake(void *mailer)
{
	struct mailer *m = mailer;

	pthread_mutex_lock(&m->lock);
	m->wake = true;
	pthread_cond_signal(&m->woken);
	pthread_mutex_unlock(&m->lock);
}

static void *mailer_main(void *arg)
{
	struct mailer *m = arg;

	while (!atomic_load(&m->stop)) {
		PGconn *conn = db_conn();
		int rc = conn != NULL ? deliver_one(m, conn) : -1;
		/* Webhooks take turns with mail (webhooks.h). */
		int hooks =
		    conn != NULL ? webhooks_deliver_one(conn, &m->stop) : -1;

		if (rc == 1 || hooks == 1)
			continue;
		/* Nothing due, or the database is away: look again when a
		 * row comes, or soon. */
		nap(m);
	}
	db_disconnect();
	return NULL;
}

struct mailer *mailer_start(void)
{
	struct mailer *m = calloc(1, sizeof(*m));
	pthread_condattr_t attr;
	char *cause = NULL;

	if (m == NULL)
		return NULL;
	atomic_init(&m->stop, false);
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&m->woken, &attr);
	pthread_condattr_destroy(&attr);
	if (server_config.smtp_url != NULL && server_config.smtp_url[0] &&
	    mailer_smtp_url(server_config.smtp_url, &m->curl_url, &m->use_ssl,
			    &cause) < 0) {
		log_error("%s", cause != NULL ? cause : "out of memory");
		free(cause);
		goto fail;
	}
	if (pthread_create(&m->thread, NULL, mailer_main, m) != 0)
		goto fail;
	return m;
fail:
	free(m->curl_url);
	pthread_cond_destroy(&m->woken);
	pthread_mutex_destroy(&m->lock);
	free(m);
	return NULL;
}

void mailer_stop(struct mailer *mailer)
{
	if (mailer == NULL)
		return;
	atomic_store(&mailer->stop, true);
	mailer_wake(mailer);
	pthread_join(mailer->thread, NULL);
	pthread_cond_destroy(&mailer->woken);
	pthread_mutex_destroy(&mailer->lock);
	free(mailer->curl_url);
	free(mailer);
}
