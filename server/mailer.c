#include "mailer.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "server.h"

struct mailer {
	pthread_t thread;
	atomic_bool stop;
};

static int make_dir(const char *path)
{
	return mkdir(path, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

int mailer_maildir_deliver(const char *dir, const char *message,
			   long long outbox_id, char **err)
{
	char tmp[4096], new[4096], sub[4096], host[64] = "localhost";
	size_t len = strlen(message), done = 0;
	struct timespec now;
	int fd;

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
		ssize_t n = write(fd, message + done, len - done);

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
	return 0;
fail:
	if (asprintf(err, "maildir %s: %s", dir, strerror(errno)) < 0)
		*err = NULL;
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

/* The address inside "Name <addr>", or the whole text. */
static void plain_address(char *out, size_t size, const char *from)
{
	const char *lt = strchr(from, '<'), *gt = lt ? strchr(lt, '>') : NULL;

	if (lt != NULL && gt != NULL)
		snprintf(out, size, "<%.*s>", (int)(gt - lt - 1), lt + 1);
	else
		snprintf(out, size, "<%s>", from);
}

static int smtp_deliver(const char *url, json_t *recipients,
			const char *message, char **err)
{
	struct upload up = {message, strlen(message), 0};
	struct curl_slist *rcpt = NULL;
	char from[512], errbuf[CURL_ERROR_SIZE] = "";
	CURLcode rc;
	CURL *curl;
	size_t i;
	json_t *r;

	curl = curl_easy_init();
	if (curl == NULL) {
		*err = strdup("cannot start libcurl");
		return -1;
	}
	json_array_foreach(recipients, i, r)
	{
		char addr[512];

		snprintf(addr, sizeof(addr), "<%s>", json_string_value(r));
		rcpt = curl_slist_append(rcpt, addr);
	}
	plain_address(from, sizeof(from), server_config.mail_from);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_MAIL_FROM, from);
	curl_easy_setopt(curl, CURLOPT_MAIL_RCPT, rcpt);
	curl_easy_setopt(curl, CURLOPT_READFUNCTION, read_message);
	curl_easy_setopt(curl, CURLOPT_READDATA, &up);
	curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
	rc = curl_easy_perform(curl);
	curl_slist_free_all(rcpt);
	curl_easy_cleanup(curl);
	if (rc != CURLE_OK) {
		if (asprintf(err, "smtp: %s", errbuf[0] ? errbuf
							: curl_easy_strerror(rc)) <
		    0)
			*err = NULL;
		return -1;
	}
	return 0;
}

/* Delivers at most one due row; 1 when one was handled, 0 when none was
 * due, -1 on a database error. */
static int deliver_one(PGconn *conn)
{
	const char *params[2];
	char *err = NULL;
	json_t *recipients;
	PGresult *r, *u;
	int rc;

	if (db_begin(conn) < 0)
		return -1;
	r = db_exec(conn,
		    "SELECT id, recipients, message, attempts FROM outbox"
		    " WHERE sent_at IS NULL AND next_attempt_at <= now()"
		    " ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
		    0, NULL);
	if (r == NULL) {
		db_rollback(conn);
		return -1;
	}
	if (PQntuples(r) == 0) {
		PQclear(r);
		db_rollback(conn);
		return 0;
	}
	recipients = json_loads(db_text(r, 0, 1), 0, NULL);
	if (server_config.smtp_url != NULL && server_config.smtp_url[0]) {
		if (json_array_size(recipients) == 0)
			rc = 0; /* nobody to tell; the report stays readable */
		else
			rc = smtp_deliver(server_config.smtp_url, recipients,
					  db_text(r, 0, 2), &err);
	} else {
		rc = mailer_maildir_deliver(server_config.mail_dir,
					    db_text(r, 0, 2), db_int(r, 0, 0),
					    &err);
	}
	json_decref(recipients);
	params[0] = db_text(r, 0, 0);
	params[1] = err != NULL ? err : "delivery failed";
	if (rc == 0) {
		u = db_exec(conn,
			    "UPDATE outbox SET sent_at = now(),"
			    " attempts = attempts + 1, last_error = NULL"
			    " WHERE id = $1",
			    1, params);
		log_info("report %s delivered", params[0]);
	} else {
		u = db_exec(conn,
			    "UPDATE outbox SET attempts = attempts + 1,"
			    " last_error = $2, next_attempt_at = now() +"
			    " make_interval(secs => least(3600, 5 * 2 ^"
			    " least(attempts, 12))) WHERE id = $1",
			    2, params);
		log_warn("report %s not delivered: %s", params[0], params[1]);
	}
	free(err);
	PQclear(r);
	if (u == NULL) {
		db_rollback(conn);
		return -1;
	}
	PQclear(u);
	return db_commit(conn) < 0 ? -1 : 1;
}

static void *mailer_main(void *arg)
{
	struct mailer *m = arg;

	while (!atomic_load(&m->stop)) {
		PGconn *conn = db_conn();
		int rc = conn != NULL ? deliver_one(conn) : -1;

		if (rc == 1)
			continue;
		/* Nothing due, or the database is away: look again soon. */
		for (int i = 0; i < 5 && !atomic_load(&m->stop); i++)
			usleep(100 * 1000);
	}
	db_disconnect();
	return NULL;
}

struct mailer *mailer_start(void)
{
	struct mailer *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return NULL;
	atomic_init(&m->stop, false);
	if (pthread_create(&m->thread, NULL, mailer_main, m) != 0) {
		free(m);
		return NULL;
	}
	return m;
}

void mailer_stop(struct mailer *mailer)
{
	if (mailer == NULL)
		return;
	atomic_store(&mailer->stop, true);
	pthread_join(mailer->thread, NULL);
	free(mailer);
}
