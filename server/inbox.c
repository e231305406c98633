#include "inbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "db.h"
#include "fields.h"
#include "log.h"
#include "mailthread.h"
#include "mbox.h"
#include "patches.h"
#include "report.h"
#include "reportjob.h"
#include "server.h"
#include "store/store_inbox.h"
#include "strbuf.h"
#include "utf8.h"

/* Seconds between looks at the Maildir. */
#define INBOX_TICK_S 1
/* A larger message is no patch we take (logged, moved to cur/). */
#define INBOX_FILE_MAX (16 * 1024 * 1024)
/* Messages read in one look; the rest wait for the next. */
#define INBOX_FILES_PER_TICK 200

static struct {
	char *dir;
	unsigned timeout_s;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_bool stopping;
	bool running;
} inbox = {.lock = PTHREAD_MUTEX_INITIALIZER,
	   .cond = PTHREAD_COND_INITIALIZER};

/* Reads the regular file at `path` whole, NUL-terminated; NULL when it
 * cannot, or when it is over INBOX_FILE_MAX (errno EFBIG). */
static char *read_message_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char *text = NULL;
	ssize_t got;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		goto out;
	if (st.st_size > INBOX_FILE_MAX) {
		errno = EFBIG;
		goto out;
	}
	text = malloc((size_t)st.st_size + 1);
	if (text == NULL)
		goto out;
	*len = 0;
	while (*len < (size_t)st.st_size &&
	       (got = read(fd, text + *len, (size_t)st.st_size - *len)) > 0)
		*len += (size_t)got;
	text[*len] = '\0';
out:
	close(fd);
	return text;
}

/* True when the `len` bytes are UTF-8 text without NUL, as the database's
 * text and the API's JSON take them. */
static bool is_text(const char *text, size_t len)
{
	size_t i = 0, n;

	while (i < len) {
		n = utf8_char_len(text + i, len - i);
		if (n == 0 || text[i] == '\0')
			return false;
		i += n;
	}
	return true;
}

/* To and Cc of `m`, lower case, one a line. */
static char *recipients_of(const struct mbox_message *m)
{
	struct strbuf buf = STRBUF_INIT;
	char *out = NULL, *p;
	size_t i, len;

	for (i = 0; i < m->to_count; i++)
		strbuf_printf(&buf, "%s\n", m->to[i]);
	for (i = 0; i < m->cc_count; i++)
		strbuf_printf(&buf, "%s\n", m->cc[i]);
	strbuf_append(&buf, "");
	if (strbuf_finish(&out, &len, &buf) < 0)
		return NULL;
	for (p = out; *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return out;
}

/*
 * Keeps the message of file `name` in new/: 1 when it is kept (or was
 * before) or can never be (logged), so the file may move to cur/; 0 when
 * the database failed and the file stays for the next look.
 */
static int keep_message(PGconn *conn, const char *name)
{
	struct mbox_series series = {0};
	struct store_inbox_new row = {0};
	char path[PATH_MAX], *text, *err = NULL, *recipients = NULL;
	size_t len = 0;
	bool added = false;
	int rc = 1;

	snprintf(path, sizeof(path), "%s/new/%s", inbox.dir, name);
	text = read_message_file(path, &len);
	if (text == NULL) {
		log_warn("inbox: %s cannot be read (%s); left aside", name,
			 strerror(errno));
		return 1;
	}
	if (!is_text(text, len) || mbox_parse(&series, text, len, &err) < 0 ||
	    series.messages[0].message_id == NULL) {
		log_warn("inbox: %s is no UTF-8 mail with a Message-ID (%s); "
			 "left aside",
			 name, err != NULL ? err : "not text");
		goto out;
	}
	recipients = recipients_of(&series.messages[0]);
	row = (struct store_inbox_new){
	    .message_id = series.messages[0].message_id,
	    .in_reply_to = series.messages[0].in_reply_to,
	    .subject = series.messages[0].subject,
	    .author = series.messages[0].author_email,
	    .recipients = recipients != NULL ? recipients : "",
	    .raw = text,
	    .number = series.messages[0].number,
	    .total = series.messages[0].total,
	    .is_patch = series.messages[0].is_patch,
	};
	if (store_inbox_add(&added, conn, &row) < 0)
		rc = 0;
	else if (added)
		log_info("inbox: read <%s> \"%s\"", row.message_id,
			 row.subject);
out:
	free(err);
	free(recipients);
	free(text);
	mbox_series_free(&series);
	return rc;
}

/* Moves new/`name` to cur/ as a mail reader marks a message seen. */
static void mark_seen(const char *name)
{
	char from[PATH_MAX], to[PATH_MAX + 8];

	snprintf(from, sizeof(from), "%s/new/%s", inbox.dir, name);
	snprintf(to, sizeof(to), "%s/cur/%s%s", inbox.dir, name,
		 strchr(name, ':') != NULL ? "" : ":2,S");
	if (rename(from, to) < 0 && errno != ENOENT)
		log_warn("inbox: cannot move %s to cur/ (%s)", name,
			 strerror(errno));
}

/* Reads the new messages of the Maildir into the database. */
static void read_new(PGconn *conn)
{
	char path[PATH_MAX];
	struct dirent *entry;
	unsigned done = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/new", inbox.dir);
	d = opendir(path);
	if (d == NULL)
		return;
	while (done < INBOX_FILES_PER_TICK && (entry = readdir(d)) != NULL) {
		if (entry->d_name[0] == '.')
			continue;
		if (!keep_message(conn, entry->d_name))
			break;
		mark_seen(entry->d_name);
		done++;
	}
	closedir(d);
}

/* True when the address `list` is one of `recipients` (one a line). */
static bool sent_to(const char *recipients, const char *list)
{
	size_t n = strlen(list);
	const char *p = recipients;

	while (p != NULL && *p != '\0') {
		const char *eol = strchr(p, '\n');
		size_t len = eol != NULL ? (size_t)(eol - p) : strlen(p);

		if (len == n && strncasecmp(p, list, n) == 0)
			return true;
		p = eol != NULL ? eol + 1 : NULL;
	}
	return false;
}

/* The first rule that fits the series whose head is `head`, or NULL. */
static const struct store_inbox_rule *
rule_for(const struct store_inbox_rules *rules,
	 const struct store_inbox_row *head)
{
	size_t i;

	for (i = 0; i < rules->count; i++) {
		const struct store_inbox_rule *r = &rules->rules[i];

		if (mailthread_tag_matches(head->subject, r->tag) &&
		    (r->list[0] == '\0' || sent_to(head->recipients, r->list)))
			return r;
	}
	return NULL;
}

/* Appends message `raw` to an mbox: a separator line, then the message
 * with body lines that start with "From " quoted as mboxo does. */
static void mbox_append(struct strbuf *mbox, const char *raw)
{
	const char *p = raw;
	bool body = false;

	strbuf_append(mbox,
		      "From statbisect-inbox Mon Sep 17 00:00:00 2001\n");
	while (*p != '\0') {
		const char *eol = strchr(p, '\n');
		size_t len = eol != NULL ? (size_t)(eol - p + 1) : strlen(p);

		if (body && strncmp(p, "From ", 5) == 0)
			strbuf_append(mbox, ">");
		if (len == 1 || (len == 2 && p[0] == '\r'))
			body = true;
		strbuf_appendn(mbox, p, len);
		p += len;
	}
	if (p > raw && p[-1] != '\n')
		strbuf_append(mbox, "\n");
}

/* The series' messages, in order, as one mbox; NULL on a failure. */
static char *series_mbox(PGconn *conn, const struct store_inbox_rows *rows,
			 const size_t *order, size_t n)
{
	struct strbuf mbox = STRBUF_INIT;
	char *out = NULL, *raw;
	size_t i, len;

	for (i = 0; i < n; i++) {
		if (store_inbox_raw(&raw, conn, rows->rows[order[i]].id) < 0) {
			strbuf_clear(&mbox);
			return NULL;
		}
		mbox_append(&mbox, raw);
		free(raw);
	}
	return strbuf_finish(&out, &len, &mbox) < 0 ? NULL : out;
}

/* The ids of the series' messages. */
static long long *series_ids(const struct store_inbox_rows *rows,
			     const size_t *order, size_t n)
{
	long long *ids = calloc(n + 1, sizeof(*ids));
	size_t i;

	for (i = 0; ids != NULL && i < n; i++)
		ids[i] = rows->rows[order[i]].id;
	return ids;
}

/* What patches_submit marks taken in the job's own transaction. */
struct taking {
	const long long *ids;
	size_t count;
	long long rule_id;
};

static int mark_taken(PGconn *conn, long long job_id, void *arg)
{
	const struct taking *t = arg;

	return store_inbox_settle(conn, t->ids, t->count, "taken", t->rule_id,
				  job_id, NULL);
}

/*
 * Queues a short reply to the series' head saying why no job tests it:
 * to its author and the rule's notify list.  Failures are logged only:
 * the series is refused either way.
 */
static void send_note(PGconn *conn, const struct store_inbox_row *head,
		      const struct store_inbox_rule *rule, const char *reason)
{
	json_t *notify = json_loads(rule->notify, 0, NULL), *v;
	const char *to[52];
	char in_reply_to[1024], *subject = NULL, *body = NULL;
	size_t count = 0, i;

	if (head->author != NULL && report_address_is_valid(head->author))
		to[count++] = head->author;
	json_array_foreach(
	    notify, i,
	    v) if (count < 52 && report_address_is_valid(json_string_value(v)))
	    to[count++] = json_string_value(v);
	if (count == 0)
		goto out;
	snprintf(in_reply_to, sizeof(in_reply_to), "<%s>", head->message_id);
	if (asprintf(&subject, "Re: %s", head->subject) < 0)
		subject = NULL;
	if (asprintf(&body,
		     "Hello,\n\nstatbisect could not test this series on "
		     "%s of %s (inbox rule %s):\n\n  %s\n\nIt was not "
		     "queued.  A series that applies to %s is tested when it "
		     "is sent again.\n\n-- \nstatbisect robot\n",
		     rule->base, rule->repo, rule->name, reason,
		     rule->base) < 0)
		body = NULL;
	if (subject == NULL || body == NULL ||
	    reportjob_queue_mail(conn, 0, to, count, subject, in_reply_to,
				 body) < 0)
		log_warn("inbox: no note on <%s> could be queued",
			 head->message_id);
out:
	json_decref(notify);
	free(subject);
	free(body);
}

/* Makes the job of a complete series, or refuses it with a note. */
static void take_series(PGconn *conn, const struct store_inbox_rows *rows,
			const size_t *order, size_t n,
			const struct store_inbox_rules *rules)
{
	const struct store_inbox_row *head = &rows->rows[order[0]];
	const struct store_inbox_rule *rule = rule_for(rules, head);
	long long *ids = series_ids(rows, order, n), job_id = 0;
	struct field_errors errors;
	struct taking taking = {ids, n, 0};
	json_t *body = NULL, *refusal = NULL;
	char *mbox = NULL;

	if (ids == NULL)
		return;
	if (rule == NULL) {
		store_inbox_settle(conn, ids, n, "ignored", 0, 0,
				   "no inbox rule fits the series");
		goto out;
	}
	taking.rule_id = rule->id;
	mbox = series_mbox(conn, rows, order, n);
	body = json_pack("{s:s,s:s,s:s,s:s,s:s,s:o}", "kind", "patch", "repo",
			 rule->repo, "testcase", rule->testcase, "base",
			 rule->base, "mbox", mbox != NULL ? mbox : "",
			 "notify", json_loads(rule->notify, 0, NULL));
	if (mbox == NULL || body == NULL)
		goto out;
	if (rule->archive != NULL)
		json_object_set_new(body, "archive",
				    json_string(rule->archive));
	fields_init(&errors);
	if (patches_submit(&job_id, &refusal, &errors, 0, body, mark_taken,
			   &taking) == 0) {
		log_info("inbox: series <%s> \"%s\" is job %lld (rule %s)",
			 head->message_id, head->subject, job_id, rule->name);
	} else if (errors.count > 0 && errors.items[0].status < 500) {
		log_warn("inbox: series <%s> refused: %s", head->message_id,
			 errors.items[0].message);
		if (store_inbox_settle(conn, ids, n, "refused", rule->id, 0,
				       errors.items[0].message) == 0)
			send_note(conn, head, rule, errors.items[0].message);
	} else {
		log_warn("inbox: series <%s> waits: %s", head->message_id,
			 errors.count > 0 ? errors.items[0].message
					  : "out of memory");
	}
out:
	json_decref(refusal);
	json_decref(body);
	free(mbox);
	free(ids);
}

/* Gives up on an incomplete series, or takes it without its cover
 * letter when only that never came. */
static void series_timed_out(PGconn *conn, const struct store_inbox_rows *rows,
			     const size_t *order, size_t n, int missing,
			     const struct store_inbox_rules *rules)
{
	const struct store_inbox_row *head = &rows->rows[order[0]];
	long long *ids;
	char note[128];

	if (missing == 0) {
		take_series(conn, rows, order, n, rules);
		return;
	}
	ids = series_ids(rows, order, n);
	if (ids == NULL)
		return;
	snprintf(note, sizeof(note), "patch %d of %d never came within %u s",
		 missing, head->total, inbox.timeout_s);
	log_warn("inbox: series <%s> given up: %s", head->message_id, note);
	store_inbox_settle(conn, ids, n, "expired", 0, 0, note);
	free(ids);
}

/* Settles every series among the waiting messages that can be. */
static void take_up(PGconn *conn)
{
	struct store_inbox_rows rows = {0};
	struct store_inbox_rules rules = {0};
	struct mailthread_item *items = NULL;
	size_t *order = NULL, i, n;
	bool *seen = NULL;

	if (store_inbox_waiting(&rows, conn) < 0 || rows.count == 0 ||
	    store_inbox_rules_list(&rules, conn) < 0)
		goto out;
	items = calloc(rows.count, sizeof(*items));
	order = calloc(rows.count, sizeof(*order));
	seen = calloc(rows.count, sizeof(*seen));
	if (items == NULL || order == NULL || seen == NULL)
		goto out;
	for (i = 0; i < rows.count; i++)
		items[i] = (struct mailthread_item){
		    rows.rows[i].message_id, rows.rows[i].in_reply_to,
		    rows.rows[i].number, rows.rows[i].total, true};
	for (i = 0; i < rows.count && !atomic_load(&inbox.stopping); i++) {
		size_t head = mailthread_head(items, rows.count, i);
		enum mailthread_state state;
		int missing;

		if (seen[head])
			continue;
		seen[head] = true;
		state = mailthread_series(order, &n, &missing, items,
					  rows.count, head);
		if (state == MAILTHREAD_COMPLETE)
			take_series(conn, &rows, order, n, &rules);
		else if (state == MAILTHREAD_WAITING && n > 0 &&
			 rows.rows[head].age_s >= inbox.timeout_s)
			series_timed_out(conn, &rows, order, n, missing,
					 &rules);
		else if (state == MAILTHREAD_NO_SERIES)
			store_inbox_settle(conn, &rows.rows[head].id, 1,
					   "ignored", 0, 0,
					   "its numbers do not make a series");
	}
out:
	free(items);
	free(order);
	free(seen);
	store_inbox_rules_clear(&rules);
	store_inbox_rows_clear(&rows);
}

static void inbox_tick(PGconn *conn)
{
	bool got = false;

	if (store_inbox_lock(&got, conn) < 0 || !got)
		return;
	read_new(conn);
	take_up(conn);
	store_inbox_unlock(conn);
}

static void *inbox_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&inbox.stopping)) {
		PGconn *conn = db_conn();
		struct timespec until;

		if (conn != NULL)
			inbox_tick(conn);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += INBOX_TICK_S;
		pthread_mutex_lock(&inbox.lock);
		while (!atomic_load(&inbox.stopping) &&
		       pthread_cond_timedwait(&inbox.cond, &inbox.lock,
					      &until) == 0)
			;
		pthread_mutex_unlock(&inbox.lock);
	}
	db_disconnect();
	return NULL;
}

int inbox_start(const char *dir, unsigned timeout_s)
{
	const char *sub[] = {"new", "cur", "tmp"};
	char path[PATH_MAX];
	size_t i;

	inbox.dir = strdup(dir);
	if (inbox.dir == NULL)
		return -1;
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, sub[i]);
		mkdir(dir, 0755);
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			log_error("inbox: cannot make %s (%s)", path,
				  strerror(errno));
			return -1;
		}
	}
	inbox.timeout_s = timeout_s;
	atomic_store(&inbox.stopping, false);
	if (pthread_create(&inbox.thread, NULL, inbox_main, NULL) != 0) {
		log_error("cannot start the inbox thread");
		return -1;
	}
	inbox.running = true;
	log_info("inbox: reading patch series from the Maildir %s", dir);
	return 0;
}

void inbox_stop(void)
{
	if (inbox.running) {
		atomic_store(&inbox.stopping, true);
		pthread_mutex_lock(&inbox.lock);
		pthread_cond_broadcast(&inbox.cond);
		pthread_mutex_unlock(&inbox.lock);
		pthread_join(inbox.thread, NULL);
		inbox.running = false;
	}
	free(inbox.dir);
	inbox.dir = NULL;
}
