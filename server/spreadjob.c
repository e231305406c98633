#include "spreadjob.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "scheduler.h"
#include "server.h"
#include "spread.h"
#include "store/store_spread.h"
#include "store/store_tasks.h"

/* Each machine's view of a spread job: the job's candidates with that
 * machine's runs only (sched_fill_runs on a copy of the job's shape). */
struct views {
	struct sched_job jobs[SPREAD_MACHINES_MAX];
	struct spread_machine machines[SPREAD_MACHINES_MAX];
	size_t *open[SPREAD_MACHINES_MAX];
	size_t *arrival[SPREAD_MACHINES_MAX];
	size_t count;
};

static void views_clear(struct views *v)
{
	size_t m;

	for (m = 0; m < v->count; m++) {
		sched_job_clear(&v->jobs[m]);
		free(v->open[m]);
		free(v->arrival[m]);
	}
	memset(v, 0, sizeof(*v));
}

static int view_fill(struct views *v, size_t m, const struct sched_job *job,
		     const struct store_spread_machine *machine,
		     const struct store_run_kpi *runs, size_t n)
{
	struct sched_job *mine = &v->jobs[m];
	struct store_run_kpi *own = malloc((n != 0 ? n : 1) * sizeof(*own));
	size_t i, kept = 0;
	int rc = -1;

	v->open[m] = calloc(machine->open_count + 1, sizeof(*v->open[m]));
	v->arrival[m] = calloc(job->count, sizeof(*v->arrival[m]));
	mine->count = job->count;
	mine->opts = job->opts;
	mine->commits = calloc(job->count, sizeof(*mine->commits));
	mine->input = calloc(job->count, sizeof(*mine->input));
	if (own == NULL || v->open[m] == NULL || v->arrival[m] == NULL ||
	    mine->commits == NULL || mine->input == NULL)
		goto out;
	for (i = 0; i < job->count; i++) {
		mine->commits[i].build_failed = job->commits[i].build_failed;
		mine->input[i].parents = job->input[i].parents;
		mine->input[i].parent_count = job->input[i].parent_count;
	}
	/* The engine's seq counts this machine's runs alone (dense, as it
	 * pairs runs a few places apart); the job's order of every
	 * machine's runs says when each answer came. */
	for (i = 0; i < n; i++) {
		long long x = runs[i].commit_index;

		if (runs[i].worker_id != machine->worker_id)
			continue;
		own[kept++] = runs[i];
		if (x >= 0 && (size_t)x < job->count && runs[i].has_kpi &&
		    !runs[i].confirm)
			v->arrival[m][x] = i + 1;
	}
	if (sched_fill_runs(mine, own, kept) < 0)
		goto out;
	for (i = 0; i < machine->open_count; i++)
		v->open[m][i] = (size_t)machine->open[i];
	v->machines[m].commits = mine->input;
	v->machines[m].open = v->open[m];
	v->machines[m].open_count = machine->open_count;
	v->machines[m].arrival = v->arrival[m];
	rc = 0;
out:
	free(own);
	return rc;
}

/* The views of every machine of `list`. */
static int views_load(struct views *v, PGconn *conn,
		      const struct sched_job *job,
		      const struct store_spread_machines *list)
{
	struct store_run_kpi *runs;
	size_t n, m;
	int rc = 0;

	memset(v, 0, sizeof(*v));
	if (store_runs_by_machine(&runs, &n, conn, job->id) < 0)
		return -1;
	for (m = 0; m < list->count && m < SPREAD_MACHINES_MAX && rc == 0;
	     m++) {
		v->count = m + 1;
		rc = view_fill(v, m, job, &list->items[m], runs, n);
	}
	free(runs);
	return rc;
}

/* Queues `plan` as a task of machine `worker_id`, or for the next machine
 * to join (worker_id 0). */
static int queue(PGconn *conn, const struct sched_job *job,
		 const struct spread_plan *plan, long long worker_id)
{
	struct store_plan_entry entries[BISECT_MAX_REQUESTS];
	struct store_plan task = {.entries = entries};
	size_t i;

	memset(entries, 0, sizeof(entries));
	task.count = plan->request_count;
	task.interleave = plan->interleave && plan->request_count > 1;
	task.for_worker = worker_id;
	task.joining = worker_id == 0;
	for (i = 0; i < plan->request_count; i++) {
		const struct bisect_request *q = &plan->requests[i];

		entries[i].index = (long long)q->commit;
		entries[i].runs = (long long)q->runs;
		snprintf(entries[i].purpose, sizeof(entries[i].purpose), "%s",
			 q->purpose == BISECT_CONFIRM ? "confirm" : "search");
	}
	if (store_tasks_insert(conn, job->id, &task) != STORE_OK)
		return -1;
	if (worker_id > 0)
		log_info("job %lld: worker %lld runs %zu commits, %zu runs of "
			 "%.12s first",
			 job->id, worker_id, plan->request_count,
			 plan->requests[0].runs,
			 job->commits[plan->requests[0].commit].sha);
	return 0;
}

/* Stores what spread_step answered: the free machines' tasks and the
 * joins, or the machine the job settles on (returns 1 then). */
static int apply(PGconn *conn, const struct sched_job *job,
		 const struct store_spread_machines *list, long long most,
		 const struct spread_result *res)
{
	long long joins;
	size_t m;

	if (res->settle) {
		long long worker = res->settle_on == SPREAD_NONE
				       ? 0
				       : list->items[res->settle_on].worker_id;

		log_info("job %lld: settles on worker %lld: %s", job->id,
			 worker, res->reason);
		return store_spread_settle(conn, job->id, worker,
					   res->reason) == STORE_OK
			   ? 1
			   : -1;
	}
	for (m = 0; m < list->count && m < SPREAD_MACHINES_MAX; m++)
		if (res->plans[m].request_count > 0 &&
		    queue(conn, job, &res->plans[m],
			  list->items[m].worker_id) < 0)
			return -1;
	if (res->room == 0)
		return store_spread_cancel_joins(conn, job->id) == STORE_OK
			   ? 0
			   : -1;
	for (joins = most - (long long)list->count - list->joins_queued;
	     joins > 0 && res->join.request_count > 0; joins--)
		if (queue(conn, job, &res->join, 0) < 0)
			return -1;
	return 0;
}

int spreadjob_advance(PGconn *conn, long long job_id)
{
	struct store_spread_machines list = {0};
	struct spread_result res;
	struct sched_job job;
	struct views views = {0};
	long long most;
	bool spread;
	int rc = store_spread_state(&spread, &most, conn, job_id);

	if (rc != STORE_OK || !spread)
		return rc == STORE_OK || rc == STORE_NOT_FOUND ? 1 : -1;
	rc = sched_load_shape(&job, conn, job_id);
	if (rc != 0)
		return rc < 0 ? -1 : 1;
	if (strcmp(job.state, "queued") != 0 &&
	    strcmp(job.state, "running") != 0) {
		rc = 1;
		goto out;
	}
	rc = -1;
	/* a job still resolving has no candidates yet */
	if (job.count < 2) {
		rc = 0;
		goto out;
	}
	if (store_spread_machines(&list, conn, job_id) != STORE_OK ||
	    views_load(&views, conn, &job, &list) < 0 ||
	    spread_step(&res, job.input, job.count, views.machines,
			views.count, &job.opts) < 0)
		goto out;
	rc = apply(conn, &job, &list, most, &res);
out:
	views_clear(&views);
	store_spread_machines_clear(&list);
	sched_job_clear(&job);
	return rc;
}

int spreadjob_drop_lost(PGconn *conn, long long worker_id)
{
	long long job_id, lost;
	int rc = store_spread_drop_lost(&job_id, &lost, conn, worker_id,
					server_config.machine_timeout_s);

	if (rc == STORE_NOT_FOUND)
		return 0;
	if (rc != STORE_OK)
		return -1;
	log_info("job %lld: worker %lld not seen for the machine timeout "
		 "(%u s) leaves the job; its runs stay its own",
		 job_id, lost, server_config.machine_timeout_s);
	return sched_advance(conn, job_id, server_config.base_url) < 0 ? -1
								       : 1;
}
