/*
 * report_build - a finished job's report, from the job's stored facts to
 * the RFC 5322 message.  The contracts are in report_build.h.
 */
#include "report_build.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "metrics.h"
#include "rowselect.h"
#include "stats.h"
#include "strbuf.h"
#include "url.h"
#include "utf8.h"

/* ---- text from outside ------------------------------------------------ */

char *report_clean_line(const char *text, size_t max)
{
	const unsigned char *p = (const unsigned char *)(text ? text : "");
	char *out = malloc(max + 4), *o = out;
	size_t n;

	if (out == NULL)
		return NULL;
	while (*p != '\0') {
		n = utf8_char_len((const char *)p, 4);
		if ((size_t)(o - out) + (n ? n : 1) > max) {
			memcpy(o, "...", 3);
			o += 3;
			break;
		}
		if (n == 0) {
			*o++ = '?';
			p++;
		} else if (n == 1 && (*p < 0x20 || *p == 0x7f)) {
			*o++ = ' ';
			p++;
		} else {
			memcpy(o, p, n);
			o += n;
			p += n;
		}
	}
	*o = '\0';
	return out;
}

char *report_clean_command(const char *command)
{
	struct strbuf out = STRBUF_INIT;
	const char *line = command, *end;
	char *text = NULL, *clean;
	size_t n;

	if (command == NULL)
		return NULL;
	/* Lines end in LF; empty lines are dropped. */
	for (; *line != '\0'; line = *end != '\0' ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		n = (size_t)(end - line);
		if (n > 0 && line[n - 1] == '\r')
			n--;
		if (end == line)
			continue;
		if (n > REPORT_COMMAND_LINE_MAX)
			goto fail;
		text = strndup(line, n);
		clean =
		    text != NULL
			? report_clean_line(text, REPORT_COMMAND_LINE_MAX + 4)
			: NULL;
		free(text);
		if (clean == NULL)
			goto fail;
		if (out.len > 0)
			strbuf_append(&out, "\n");
		strbuf_append(&out, clean);
		free(clean);
	}
	if (out.len == 0 || strbuf_finish(&text, NULL, &out) < 0)
		goto fail;
	return text;
fail:
	strbuf_clear(&out);
	return NULL;
}

/* A required line: its cleaned text, or "?" when nothing is left. */
static const char *line_or_mark(const char *s)
{
	return s != NULL && s[0] != '\0' && strspn(s, " ") != strlen(s) ? s
									: "?";
}

/* ---- dates and ids ---------------------------------------------------- */

void report_date(char *buf, size_t size, time_t when)
{
	static const char *const days[] = {"Sun", "Mon", "Tue", "Wed",
					   "Thu", "Fri", "Sat"};
	static const char *const months[] = {"Jan", "Feb", "Mar", "Apr",
					     "May", "Jun", "Jul", "Aug",
					     "Sep", "Oct", "Nov", "Dec"};
	struct tm tm;

	gmtime_r(&when, &tm);
	snprintf(buf, size, "%s, %02d %s %04d %02d:%02d:%02d +0000",
		 days[tm.tm_wday], tm.tm_mday, months[tm.tm_mon],
		 tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

int report_message_id(char *buf, size_t size, long long job_id,
		      const char *tag, const char *host)
{
	size_t n = tag != NULL ? strlen(tag) : 0;

	if (n == 0 || n > 64 || strspn(tag, "0123456789abcdef") != n)
		return -EINVAL;
	if (host == NULL || host[0] == '\0' || strlen(host) > 127 ||
	    strpbrk(host, "<>@ \t\r\n") != NULL)
		host = "localhost";
	snprintf(buf, size, "<statbisect.job%lld.%s@%s>", job_id, tag, host);
	return 0;
}

/* ---- the metric table ------------------------------------------------- */

/* FNV-1a of a name, for the samples' index. */
static size_t name_hash(const char *name)
{
	size_t h = (size_t)14695981039346656037ULL;

	for (; *name != '\0'; name++)
		h = (h ^ (unsigned char)*name) * (size_t)1099511628211ULL;
	return h;
}

/* The slot of `name` in the index: the one holding its series, or the
 * empty one where it goes. */
static size_t *slot_of(const struct report_samples *t, const char *name)
{
	size_t mask = t->slot_count - 1, i = name_hash(name) & mask;

	while (t->slots[i] != 0 &&
	       strcmp(t->series[t->slots[i] - 1].name, name) != 0)
		i = (i + 1) & mask;
	return &t->slots[i];
}

/* Makes the index room for one more series: twice the slots, rebuilt. */
static int index_grow(struct report_samples *t)
{
	size_t count = t->slot_count ? 2 * t->slot_count : 64, i;
	size_t *slots;

	if (2 * (t->count + 1) <= t->slot_count)
		return 0;
	slots = calloc(count, sizeof(*slots));
	if (slots == NULL)
		return -1;
	free(t->slots);
	t->slots = slots;
	t->slot_count = count;
	for (i = 0; i < t->count; i++)
		*slot_of(t, t->series[i].name) = i + 1;
	return 0;
}

static struct report_series *series_named(struct report_samples *t,
					  const char *name)
{
	struct report_series *s;
	size_t *slot;

	if (index_grow(t) < 0)
		return NULL;
	slot = slot_of(t, name);
	if (*slot != 0)
		return &t->series[*slot - 1];
	if (t->count == t->capacity) {
		size_t capacity = t->capacity ? t->capacity * 2 : 16;
		void *grown = realloc(t->series, capacity * sizeof(*s));

		if (grown == NULL)
			return NULL;
		t->series = grown;
		t->capacity = capacity;
	}
	s = &t->series[t->count];
	memset(s, 0, sizeof(*s));
	s->name = strdup(name);
	if (s->name == NULL)
		return NULL;
	t->count++;
	*slot = t->count;
	return s;
}

int report_samples_add(struct report_samples *samples, const char *name,
		       int side, double value)
{
	struct report_series *s;

	if ((side != 0 && side != 1) || name == NULL ||
	    !metrics_name_valid(name) || !isfinite(value))
		return 0;
	s = series_named(samples, name);
	if (s == NULL)
		return -ENOMEM;
	if (s->count[side] == s->capacity[side]) {
		size_t capacity =
		    s->capacity[side] ? s->capacity[side] * 2 : 8;
		double *grown =
		    realloc(s->side[side], capacity * sizeof(double));

		if (grown == NULL)
			return -ENOMEM;
		s->side[side] = grown;
		s->capacity[side] = capacity;
	}
	s->side[side][s->count[side]++] = value;
	return 0;
}

void report_samples_clear(struct report_samples *samples)
{
	size_t i;

	for (i = 0; i < samples->count; i++) {
		free(samples->series[i].name);
		free(samples->series[i].side[0]);
		free(samples->series[i].side[1]);
	}
	free(samples->series);
	free(samples->slots);
	memset(samples, 0, sizeof(*samples));
}

static void side_of(struct report_side *out, const double *x, size_t n)
{
	double mean = n > 0 ? stats_mean(x, n) : 0;

	out->mean = mean;
	out->runs = n;
	out->stddev_pct =
	    n > 1 && mean != 0 ? 100.0 * stats_pop_sd(x, n) / fabs(mean) : 0;
}

/*
 * Rows: the KPI first, then every metric that lib/rowselect.h selects (the
 * robot's rules and a per-row test with FDR control across all rows).
 */
static int build_rows(struct report_metric_row **out, size_t *count,
		      const struct report_samples *t, const char *kpi)
{
	struct report_metric_row *rows = NULL;
	struct rowselect_series *series = NULL;
	struct rowselect_row *selected = NULL;
	size_t i, n = 0;
	int error = -ENOMEM;

	rows = calloc(t->count + 1, sizeof(*rows));
	series = calloc(t->count + 1, sizeof(*series));
	selected = calloc(t->count + 1, sizeof(*selected));
	if (rows == NULL || series == NULL || selected == NULL)
		goto out;
	for (i = 0; i < t->count; i++) {
		series[i].name = t->series[i].name;
		series[i].base = t->series[i].side[0];
		series[i].base_count = t->series[i].count[0];
		series[i].culprit = t->series[i].side[1];
		series[i].culprit_count = t->series[i].count[1];
	}
	if (rowselect_select(selected, series, t->count, kpi, NULL) < 0)
		goto out;
	for (i = 0; i < t->count; i++) {
		const struct report_series *s = &t->series[i];

		if (!selected[i].shown)
			continue;
		rows[n].metric = s->name;
		side_of(&rows[n].base, s->side[0], s->count[0]);
		side_of(&rows[n].culprit, s->side[1], s->count[1]);
		if (strcmp(s->name, kpi) == 0 && n > 0) {
			struct report_metric_row first = rows[0];

			rows[0] = rows[n];
			rows[n] = first;
		}
		n++;
	}
	*out = rows;
	rows = NULL;
	*count = n;
	error = 0;
out:
	free(rows);
	free(series);
	free(selected);
	return error;
}

/* ---- one report ------------------------------------------------------- */

void report_build_sides(size_t *base_idx, size_t *new_idx,
			const struct bisect_result *result, size_t which,
			size_t commit_count)
{
	bool culprit = (result->verdict == BISECT_REGRESSION ||
			result->verdict == BISECT_IMPROVEMENT) &&
		       which < result->culprit_count;

	*base_idx = culprit ? result->culprits[which].parent : 0;
	*new_idx = culprit ? result->culprits[which].commit : commit_count - 1;
}

/* What one report holds while it is built: the input of lib/report.h and
 * the storage behind it. */
struct build {
	const struct report_job *job;
	const struct bisect_culprit *culprit; /* or NULL: the range */
	size_t base_idx, new_idx;
	struct report_input in;
	struct report_metric_row *rows;
	char *culprit_subject, *parent_subject, *good_subject, *bad_subject;
	char *tree, *branch, *testcase, *kpi, *machine, *reason;
	char *build_cmd, *run_cmd, *checkout_cmd;
	char *job_url, *report_url, *commit_url, *link_query;
	char *param_texts[2 * REPORT_PARAMS_MAX];
	struct report_param params[REPORT_PARAMS_MAX];
	char *change_subjects[BISECT_MAX_CULPRITS];
	struct report_change changes[BISECT_MAX_CULPRITS];
	char *build_logs[REPORT_BUILD_LOGS_MAX];
	const char **to, **cc;
	size_t to_count, cc_count;
	struct report_skipped *skipped;
	size_t skipped_count;
};

/* "?key=..." for links to the job's pages, or "". */
static const char *query_of(const struct build *b)
{
	return b->link_query != NULL ? b->link_query : "";
}

static void build_clear(struct build *b)
{
	size_t i;

	free(b->rows);
	free(b->culprit_subject);
	free(b->parent_subject);
	free(b->good_subject);
	free(b->bad_subject);
	free(b->tree);
	free(b->branch);
	free(b->testcase);
	free(b->kpi);
	free(b->machine);
	free(b->reason);
	free(b->build_cmd);
	free(b->run_cmd);
	free(b->checkout_cmd);
	free(b->job_url);
	free(b->report_url);
	free(b->commit_url);
	free(b->link_query);
	for (i = 0; i < 2 * REPORT_PARAMS_MAX; i++)
		free(b->param_texts[i]);
	for (i = 0; i < BISECT_MAX_CULPRITS; i++)
		free(b->change_subjects[i]);
	for (i = 0; i < REPORT_BUILD_LOGS_MAX; i++)
		free(b->build_logs[i]);
	free(b->to);
	free(b->cc);
	free(b->skipped);
}

/* ---- recipients ------------------------------------------------------- */

static bool already(const struct build *b, const char *address)
{
	size_t i;

	for (i = 0; i < b->to_count; i++)
		if (strcasecmp(b->to[i], address) == 0)
			return true;
	for (i = 0; i < b->cc_count; i++)
		if (strcasecmp(b->cc[i], address) == 0)
			return true;
	return false;
}

static void add_recipient(struct build *b, bool cc, const char *address,
			  const char *whose)
{
	if (address == NULL || already(b, address))
		return;
	if (!report_address_is_valid(address)) {
		b->skipped[b->skipped_count].address = address;
		b->skipped[b->skipped_count++].whose = whose;
		return;
	}
	if (cc)
		b->cc[b->cc_count++] = address;
	else
		b->to[b->to_count++] = address;
}

static int collect_recipients(struct build *b)
{
	const struct report_job *job = b->job;
	size_t max = 1 + job->notify_count + job->testcase_notify_count +
		     job->patch_recipient_count;
	size_t i;

	b->to = calloc(max + 1, sizeof(*b->to));
	b->cc = calloc(max + 1, sizeof(*b->cc));
	b->skipped = calloc(max + 1, sizeof(*b->skipped));
	if (b->to == NULL || b->cc == NULL || b->skipped == NULL)
		return -ENOMEM;
	if (b->culprit != NULL && job->notify_author)
		add_recipient(b, false, job->commits[b->new_idx].author_email,
			      "the culprit author's");
	/* A patch's list and reviewers, as its sender addressed them. */
	for (i = 0; job->notify_author && i < job->patch_recipient_count; i++)
		add_recipient(b, false, job->patch_recipients[i],
			      "a patch recipient's");
	for (i = 0; i < job->notify_count; i++)
		add_recipient(b, false, job->notify[i], "a notify");
	for (i = 0; i < job->testcase_notify_count; i++)
		add_recipient(b, true, job->testcase_notify[i],
			      "a testcase notify");
	if (b->to_count == 0) {
		const char **swap = b->to;

		b->to = b->cc;
		b->to_count = b->cc_count;
		b->cc = swap;
		b->cc_count = 0;
	}
	return 0;
}

/* ---- cleaned text ----------------------------------------------------- */

/* Testcase parameters, keys and values cleaned as lines. */
static int clean_params(struct build *b)
{
	const struct report_job *job = b->job;
	size_t i, n = job->param_count < REPORT_PARAMS_MAX ? job->param_count
							   : REPORT_PARAMS_MAX;

	for (i = 0; i < n; i++) {
		char **value = &b->param_texts[2 * i];
		char **key = &b->param_texts[2 * i + 1];

		*value =
		    report_clean_line(job->params[i].value, REPORT_TEXT_MAX);
		*key = report_clean_line(job->params[i].key, REPORT_TEXT_MAX);
		if (*value == NULL || *key == NULL)
			return -ENOMEM;
		b->params[i].key = (*key)[0] != '\0' ? *key : "?";
		b->params[i].value = *value;
	}
	b->in.params = b->params;
	b->in.param_count = n;
	return 0;
}

/* The benchmark's lines of the reproduce section: its clone at the job's
 * bench commit beside the tree, then the variable the commands read. */
static void bench_lines(struct strbuf *cmd, const char *bench_repo,
			const char *bench_commit)
{
	char *url = NULL;

	if (bench_repo == NULL || bench_commit == NULL ||
	    url_redact(&url, bench_repo) < 0)
		return;
	strbuf_append(cmd, "git clone ");
	strbuf_shell_quote(cmd, url);
	strbuf_printf(cmd,
		      " bench && git -C bench checkout %s\n"
		      "export STATBISECT_BENCH_DIR=$PWD/bench\n",
		      bench_commit);
	free(url);
}

char *report_bench_command(const char *bench_repo, const char *bench_commit)
{
	struct strbuf cmd = STRBUF_INIT;
	char *text = NULL, *clean;

	bench_lines(&cmd, bench_repo, bench_commit);
	if (strbuf_finish(&text, NULL, &cmd) < 0 || text == NULL)
		return NULL;
	clean = report_clean_command(text);
	free(text);
	return clean;
}

/* "git clone URL REPO && cd REPO && git checkout SHA", cleaned, after the
 * benchmark's lines when the testcase has a benchmark repository. */
static char *checkout_command(const struct report_job *job, const char *sha)
{
	struct strbuf cmd = STRBUF_INIT;
	const char *repo = job->repo != NULL ? job->repo : "";
	char *text = NULL, *clean, *url = NULL;

	/* A mail never carries a password, the tree's no more than the
	 * benchmark's. */
	if (url_redact(&url, job->repo_url != NULL ? job->repo_url : "") < 0)
		return NULL;
	bench_lines(&cmd, job->bench_repo, job->bench_commit);
	strbuf_append(&cmd, "git clone ");
	strbuf_shell_quote(&cmd, url);
	free(url);
	strbuf_printf(&cmd, " %s && cd %s && git checkout %s", repo, repo,
		      sha);
	if (strbuf_finish(&text, NULL, &cmd) < 0)
		return NULL;
	clean = report_clean_command(text);
	free(text);
	return clean;
}

/* The culprit's web link from the repository's "{sha}" template, or NULL
 * when there is none or it would not fit on its line with the branch. */
static char *commit_link(const struct report_job *job, const char *sha,
			 const char *branch)
{
	const char *at =
	    job->web_url != NULL ? strstr(job->web_url, "{sha}") : NULL;
	char *raw = NULL, *clean;

	if (at == NULL || asprintf(&raw, "%.*s%s%s", (int)(at - job->web_url),
				   job->web_url, sha, at + 5) < 0)
		return NULL;
	clean = report_clean_line(raw, 2 * REPORT_COMMAND_LINE_MAX);
	free(raw);
	if (clean != NULL && strlen(clean) + 1 + strlen(branch) > 990) {
		free(clean);
		clean = NULL;
	}
	return clean;
}

static int clean_texts(struct build *b)
{
	const struct report_job *job = b->job;
	const struct report_commit *commits = job->commits;

	b->culprit_subject =
	    report_clean_line(commits[b->new_idx].subject, REPORT_TEXT_MAX);
	b->parent_subject =
	    report_clean_line(commits[b->base_idx].subject, REPORT_TEXT_MAX);
	b->good_subject =
	    report_clean_line(commits[0].subject, REPORT_TEXT_MAX);
	b->bad_subject = report_clean_line(
	    commits[job->commit_count - 1].subject, REPORT_TEXT_MAX);
	b->branch = report_clean_line(job->branch, REPORT_TEXT_MAX);
	b->tree = report_clean_line(job->repo, REPORT_TEXT_MAX);
	b->testcase = report_clean_line(job->testcase, REPORT_TEXT_MAX);
	b->kpi = report_clean_line(job->kpi, REPORT_TEXT_MAX);
	b->machine = report_clean_line(job->machine, REPORT_TEXT_MAX);
	if (b->culprit_subject == NULL || b->parent_subject == NULL ||
	    b->good_subject == NULL || b->bad_subject == NULL ||
	    b->branch == NULL || b->tree == NULL || b->testcase == NULL ||
	    b->kpi == NULL || b->machine == NULL)
		return -ENOMEM;
	/* Commands with an over-long line are left out (NULL). */
	if (job->build != NULL && job->build[0] != '\0')
		b->build_cmd = report_clean_command(job->build);
	b->run_cmd = report_clean_command(job->run);
	b->checkout_cmd = checkout_command(job, commits[b->new_idx].sha);
	b->commit_url =
	    commit_link(job, commits[b->new_idx].sha, line_or_mark(b->branch));
	if (job->link_key != NULL &&
	    asprintf(&b->link_query, "?key=%s", job->link_key) < 0) {
		b->link_query = NULL;
		return -ENOMEM;
	}
	if (asprintf(&b->job_url, "%s/jobs/%lld", job->base_url, job->id) <
	    0) {
		b->job_url = NULL;
		return -ENOMEM;
	}
	if (asprintf(&b->report_url, "%s/report%s", b->job_url, query_of(b)) <
	    0) {
		b->report_url = NULL;
		return -ENOMEM;
	}
	return clean_params(b);
}

/* ---- the input of lib/report.h ---------------------------------------- */

static enum report_kind kind_of(const struct build *b)
{
	const struct bisect_result *res = b->job->result;

	/* A culprit's report says its own direction; a verdict of change
	 * without a culprit (never given by the engine) names no commit. */
	if (b->culprit != NULL)
		return b->culprit->regression ? REPORT_REGRESSION
					      : REPORT_IMPROVEMENT;
	switch (res->verdict) {
	case BISECT_NO_CHANGE:
		return REPORT_NO_CHANGE;
	default:
		return REPORT_INCONCLUSIVE;
	}
}

/* Every change of the job, when it found several. */
static int fill_changes(struct build *b)
{
	const struct bisect_result *res = b->job->result;
	size_t k, n;

	if (b->culprit == NULL || res->culprit_count < 2)
		return 0;
	n = res->culprit_count < BISECT_MAX_CULPRITS ? res->culprit_count
						     : BISECT_MAX_CULPRITS;
	for (k = 0; k < n; k++) {
		const struct bisect_culprit *o = &res->culprits[k];
		const struct report_commit *c = &b->job->commits[o->commit];

		b->change_subjects[k] =
		    report_clean_line(c->subject, REPORT_TEXT_MAX);
		if (b->change_subjects[k] == NULL)
			return -ENOMEM;
		b->changes[k].sha = c->sha;
		b->changes[k].subject = b->change_subjects[k];
		b->changes[k].kind =
		    o->regression ? REPORT_REGRESSION : REPORT_IMPROVEMENT;
		b->changes[k].change_pct = o->change_pct;
	}
	b->in.changes = b->changes;
	b->in.change_count = n;
	return 0;
}

/* Why an inconclusive job bisected nothing, and where the build logs of
 * the commits that did not build are. */
static int fill_inconclusive(struct build *b)
{
	const struct report_job *job = b->job;
	const struct bisect_result *res = job->result;
	size_t i, n = 0;

	if (b->in.kind == REPORT_INCONCLUSIVE && res->reason != NULL &&
	    (b->reason = report_clean_line(res->reason, REPORT_REASON_MAX)) ==
		NULL)
		return -ENOMEM;
	b->in.reason = b->reason;
	if (b->in.kind == REPORT_INCONCLUSIVE && b->in.reason == NULL &&
	    res->verdict != BISECT_INCONCLUSIVE)
		b->in.reason = "the search named no culprit";
	for (i = 0; i < job->commit_count && n < REPORT_BUILD_LOGS_MAX; i++) {
		if (!job->commits[i].build_failed)
			continue;
		if (asprintf(&b->build_logs[n], "%s/commits/%s/log%s",
			     b->job_url, job->commits[i].sha,
			     query_of(b)) < 0) {
			b->build_logs[n] = NULL;
			return -ENOMEM;
		}
		n++;
	}
	b->in.build_log_urls = (const char *const *)b->build_logs;
	b->in.build_log_url_count = n;
	return 0;
}

static void fill_numbers(struct build *b)
{
	const struct report_job *job = b->job;
	const struct bisect_result *res = job->result;
	const struct bisect_culprit *cul = b->culprit;
	struct report_input *in = &b->in;

	in->change_pct = cul != NULL ? cul->change_pct : res->change_pct;
	in->base_runs = job->commits[b->base_idx].runs;
	in->culprit_runs = job->commits[b->new_idx].runs;
	in->confidence = cul != NULL ? cul->confidence : -1.0;
	if (!(in->confidence <= 1))
		in->confidence = -1.0;
	in->change_ci95_given = true;
	in->change_ci95_lo =
	    cul != NULL ? cul->change_ci95_lo : res->change_ci95_lo;
	in->change_ci95_hi =
	    cul != NULL ? cul->change_ci95_hi : res->change_ci95_hi;
	/* The KPI row shows the one estimate (lib/estimate.h) that the
	 * subject shows, over the same runs, not a change of its own. */
	if (in->row_count > 0 && strcmp(b->rows[0].metric, job->kpi) == 0 &&
	    !report_metric_is_absolute(job->kpi) && isfinite(in->change_pct)) {
		b->rows[0].change_given = true;
		b->rows[0].change = in->change_pct;
	}
}

static int fill_input(struct build *b)
{
	const struct report_job *job = b->job;
	struct report_input *in = &b->in;
	int error;

	in->robot_name = "statbisect robot";
	in->robot_email = job->mail_from_address;
	in->service_name = "statbisect performance bisection";
	in->service_url = job->base_url;
	in->tree = line_or_mark(b->tree);
	in->branch = line_or_mark(b->branch);
	in->branch_watched = job->branch_watched;
	in->kind = kind_of(b);
	if ((error = fill_changes(b)) < 0)
		return error;
	in->kpi = line_or_mark(b->kpi);
	in->culprit_sha = job->commits[b->new_idx].sha;
	in->culprit_subject = b->culprit_subject;
	in->parent_sha = job->commits[b->base_idx].sha;
	in->parent_subject = b->parent_subject;
	in->commit_url = b->commit_url;
	in->testcase = line_or_mark(b->testcase);
	in->machine = b->machine[0] != '\0' ? b->machine : NULL;
	in->rows = b->rows;
	in->kpi_row_first = true;
	in->job_url = b->job_url;
	in->link_query = b->link_query;
	in->report_url = b->report_url;
	in->checkout_cmd = b->checkout_cmd;
	in->build_cmd = b->build_cmd;
	in->run_cmd = b->run_cmd;
	in->good_sha = job->commits[0].sha;
	in->bad_sha = job->commits[job->commit_count - 1].sha;
	in->good_subject = b->good_subject;
	in->bad_subject = b->bad_subject;
	in->commit_lines = job->reply_lines;
	in->commit_line_count = job->reply_line_count;
	fill_numbers(b);
	return fill_inconclusive(b);
}

/* ---- the message ------------------------------------------------------ */

static int render(struct report_mail *out, struct build *b)
{
	const struct report_job *job = b->job;
	struct report_message msg = {0};
	char *body = NULL;
	size_t i;
	int error;

	if (job->reply_subject != NULL) {
		/* A patch's report is a reply in the patch's thread. */
		out->subject = strdup(job->reply_subject);
		if (out->subject == NULL)
			return -ENOMEM;
	} else if ((error = report_render_subject(&out->subject, &b->in)) <
		   0) {
		return error;
	}
	if ((error = report_render_body(&body, &b->in)) < 0)
		return error;
	msg.from = job->mail_from;
	if (b->to_count > 0) {
		msg.to = b->to;
		msg.to_count = b->to_count;
		msg.cc = b->cc;
		msg.cc_count = b->cc_count;
	} else {
		/* Nobody to tell: the report is kept, addressed to us. */
		msg.to = &job->mail_from_address;
		msg.to_count = 1;
	}
	msg.date = job->date;
	msg.message_id = job->message_id;
	msg.in_reply_to = job->in_reply_to;
	msg.subject = out->subject;
	msg.body = body;
	error = report_message_render(&out->message, &msg);
	free(body);
	if (error < 0)
		return error;
	out->recipients =
	    calloc(b->to_count + b->cc_count + 1, sizeof(*out->recipients));
	if (out->recipients == NULL)
		return -ENOMEM;
	for (i = 0; i < b->to_count; i++)
		out->recipients[out->recipient_count++] = b->to[i];
	for (i = 0; i < b->cc_count; i++)
		out->recipients[out->recipient_count++] = b->cc[i];
	return 0;
}

int report_build(struct report_mail *out, const struct report_job *job)
{
	const struct bisect_result *res = job != NULL ? job->result : NULL;
	struct build b = {0};
	int error = -EINVAL;

	if (out == NULL)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (res == NULL || job->commits == NULL || job->commit_count == 0 ||
	    job->samples == NULL || job->base_url == NULL || job->kpi == NULL)
		return -EINVAL;
	b.job = job;
	report_build_sides(&b.base_idx, &b.new_idx, res, job->which,
			   job->commit_count);
	if ((res->verdict == BISECT_REGRESSION ||
	     res->verdict == BISECT_IMPROVEMENT) &&
	    job->which < res->culprit_count)
		b.culprit = &res->culprits[job->which];
	if (b.base_idx >= job->commit_count || b.new_idx >= job->commit_count)
		goto out;
	if ((error = build_rows(&b.rows, &b.in.row_count, job->samples,
				job->kpi)) < 0 ||
	    (error = clean_texts(&b)) < 0 ||
	    (error = collect_recipients(&b)) < 0 ||
	    (error = fill_input(&b)) < 0 || (error = render(out, &b)) < 0)
		goto out;
	out->skipped = b.skipped;
	out->skipped_count = b.skipped_count;
	b.skipped = NULL;
out:
	build_clear(&b);
	if (error < 0)
		report_mail_clear(out);
	return error;
}

void report_mail_clear(struct report_mail *mail)
{
	if (mail == NULL)
		return;
	free(mail->subject);
	free(mail->message);
	free(mail->recipients);
	free(mail->skipped);
	memset(mail, 0, sizeof(*mail));
}
