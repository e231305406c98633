// statbisect's browser test: a person's session in headless Chromium (Debian's
// /usr/bin/chromium, driven by playwright-core).  Signs in, submits the form
// for a real range, watches the job page until the verdict appears without
// a reload, checks the plot and the downloads, and a form error.  Prints
// one "PASS name" or "FAIL name: why" line per step; run.py counts them.
// Environment: SB_URL, SB_ADMIN_TOKEN, SB_SUBMIT_TOKEN, SB_REPO,
// SB_TESTCASE, SB_GOOD, SB_BAD, SB_CULPRIT, SB_OUT (screenshots),
// SB_WATCH_ID, SB_WATCH_TESTCASE, SB_WATCH_CULPRIT (a watched branch the
// server bisected by itself).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { openapiLoad } from './openapi.mjs';

const env = process.env;
const url = env.SB_URL;
const out = env.SB_OUT;
const desktop = { width: 1280, height: 900 };
const phone = { width: 390, height: 844 };
let failures = 0;
let skipRest = false;

async function step(name, fn) {
	if (skipRest) {
		console.log(`FAIL ${name}: skipped after an earlier failure`);
		failures++;
		return;
	}
	try {
		await fn();
		console.log(`PASS ${name}`);
	} catch (e) {
		failures++;
		console.log(`FAIL ${name}: ${e.message.split('\n')[0]}`);
	}
}

function expect(cond, what) {
	if (!cond) {
		throw new Error(what);
	}
}

async function api(pathname) {
	const r = await fetch(url + pathname, {
		headers: { Authorization: 'Bearer ' + env.SB_ADMIN_TOKEN },
	});
	expect(r.ok, `GET ${pathname}: ${r.status}`);
	return r.json();
}

async function shoot(page, name) {
	await page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
	await page.setViewportSize(phone);
	await page.screenshot({ path: path.join(out, `${name}-phone.png`), fullPage: true });
	await page.setViewportSize(desktop);
}

const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
	executablePath: '/usr/bin/chromium',
	headless: true,
	viewport: desktop,
	acceptDownloads: true,
	args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-quic',
		'--no-first-run', '--disable-background-networking',
		'--disable-component-update', '--disable-sync'],
});
const page = context.pages()[0] || await context.newPage();
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(e.message));
page.on('console', (m) => {
	if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) {
		pageErrors.push(m.text());
	}
});
let jobId = null;

try {
	await step('sign in with a token', async () => {
		await page.goto(url + '/');
		expect(new URL(page.url()).pathname === '/signin',
			`redirected to sign-in, at ${page.url()}`);
		await page.getByLabel('Token').fill(env.SB_SUBMIT_TOKEN);
		await page.getByRole('button', { name: 'Sign in' }).click();
		await page.waitForURL(url + '/');
		const cookies = await context.cookies(url);
		const session = cookies.find((c) => c.name === 'sb_session');
		expect(session && session.httpOnly && session.sameSite === 'Strict',
			'HttpOnly SameSite=Strict session cookie');
		expect(await page.evaluate(() => document.cookie) === '',
			'the session cookie is invisible to scripts');
		await page.getByRole('heading', { name: 'Jobs' }).waitFor();
	});
	if (failures) {
		skipRest = true;
	}

	await step('a bad revision and a bad address are refused at once, next to their fields', async () => {
		await page.getByRole('link', { name: 'New job' }).first().click();
		await page.getByLabel('Repository').selectOption(env.SB_REPO);
		await page.getByLabel('Testcase').selectOption(env.SB_TESTCASE);
		await page.getByLabel('Good revision').fill('v0.0-does-not-exist');
		await page.getByLabel('Bad revision').fill('main');
		await page.getByLabel(/^Notify/).fill('dev@example.org, bob@');
		await page.getByRole('button', { name: 'Start bisecting' }).click();
		const error = page.locator('#good-error');
		await error.waitFor();
		const text = await error.textContent();
		expect(text === `Good revision 'v0.0-does-not-exist' names no commit in repository '${env.SB_REPO}'.`,
			`error text: ${text}`);
		const notifyError = await page.locator('#notify-error').textContent();
		expect(notifyError === "'bob@' is not an email address: write each as name@example.org, separated by commas.",
			`notify error text: ${notifyError}`);
		expect(await page.getByLabel('Good revision').inputValue() === 'v0.0-does-not-exist',
			'good value kept');
		expect(await page.getByLabel('Bad revision').inputValue() === 'main',
			'bad value kept');
		expect(await page.getByLabel(/^Notify/).inputValue() === 'dev@example.org, bob@',
			'notify kept');
		expect(await page.getByLabel('Repository').inputValue() === env.SB_REPO,
			'repository kept');
		expect(await page.getByLabel('Good revision').getAttribute('aria-invalid') === 'true',
			'field marked invalid');
		expect(await page.getByLabel(/^Notify/).getAttribute('aria-invalid') === 'true',
			'notify marked invalid');
		await shoot(page, 'form-error');
	});

	await step('submit the form for a real range', async () => {
		await page.getByLabel('Good revision').fill(env.SB_GOOD);
		await page.getByLabel(/^Notify/).fill('dev@example.org');
		await page.getByRole('button', { name: 'Start bisecting' }).click();
		await page.waitForURL(/\/jobs\/\d+$/);
		jobId = Number(new URL(page.url()).pathname.split('/').pop());
		const state = await page.locator('#job-state').textContent();
		expect(state === 'queued' || state === 'running',
			`the page opens while the job runs (state ${state})`);
		const job = await api(`/api/v1/jobs/${jobId}`);
		expect(job.good === env.SB_GOOD && job.bad === env.SB_BAD,
			'the job has the submitted range');
	});
	if (jobId === null) {
		skipRest = true;
	}

	await step('the job page updates itself until the verdict', async () => {
		// A marker in this document: a reload would lose it.
		await page.evaluate(() => { window.sbNoReload = 'still here'; });
		const seen = new Set();
		const remaining = new Set();
		const timeLeft = new Set();
		const deadline = Date.now() + 300000;
		let shotRunning = false;
		while (Date.now() < deadline) {
			if (await page.locator('#verdict').count() > 0) {
				break;
			}
			const tested = await page.locator('#commits-tested').textContent();
			seen.add(tested);
			if (await page.locator('#remaining strong').count() > 0) {
				remaining.add(await page.locator('#remaining strong').textContent());
			}
			if (await page.locator('#time-left').count() > 0) {
				timeLeft.add(await page.locator('#time-left').textContent());
			}
			if (!shotRunning && Number(tested) >= 3) {
				await page.screenshot({ path: path.join(out, 'job-running.png'),
					fullPage: true });
				shotRunning = true;
			}
			await page.waitForTimeout(300);
		}
		const verdict = await page.locator('#verdict').textContent();
		expect(verdict === 'regression', `verdict ${verdict}`);
		expect(await page.evaluate(() => window.sbNoReload) === 'still here',
			'the page was not reloaded');
		const navigations = await page.evaluate(
			() => performance.getEntriesByType('navigation').length);
		expect(navigations === 1, `one navigation, got ${navigations}`);
		expect(seen.size >= 2, `progress changed on the page: ${[...seen]}`);
		expect(remaining.size >= 2, `the candidate range shrank: ${[...remaining]}`);
		// While it ran, the page estimated the time left (issue 15); once
		// done, it says how long the job took.
		const duration = /^\d+ (s|min \d+ s|h \d+ min|d \d+ h)$/;
		expect(timeLeft.size >= 1 && [...timeLeft].every((t) => duration.test(t)),
			`the time left was shown while the job ran: ${[...timeLeft]}`);
		expect(await page.locator('#time-left').count() === 0,
			'a finished job has no time left');
		const took = await page.locator('#elapsed').textContent();
		expect(duration.test(took), `the job's time on the finished page: ${took}`);
		const subject = await page.locator('#culprit-subject').textContent();
		const link = await page.locator('.facts a[href*="/c/"]').first().getAttribute('href');
		expect(link.endsWith(env.SB_CULPRIT), `culprit link ${link} (${subject})`);
	});

	await step('the plot shows the tested commits', async () => {
		const job = await api(`/api/v1/jobs/${jobId}`);
		expect(job.state === 'done', `job ${job.state}`);
		const svg = page.locator('#plot-range svg');
		expect(await svg.isVisible(), 'the range plot is visible');
		const box = await svg.boundingBox();
		expect(box.width > 600 && box.height > 250, `plot size ${box.width}x${box.height}`);
		const plotted = await page.locator('#plot-range g.commit').evaluateAll(
			(gs) => gs.map((g) => `${g.getAttribute('data-index')}:${g.classList[1]}`));
		const want = job.commits.map((c) => `${c.index}:${c.classification}`);
		expect(JSON.stringify(plotted.sort()) === JSON.stringify(want.sort()),
			`plotted ${plotted} want ${want}`);
		const marks = await page.locator('#plot-range .run').count();
		// Every run, search and confirmation, as the report counts them.
		const runs = job.commits.reduce(
			(n, c) => n + c.runs.length + c.confirm_runs.length, 0);
		expect(marks === runs, `${marks} run marks for ${runs} runs`);
		expect(await page.locator('#plot-pair svg [data-role="culprit"]').count() === 1,
			'the parent vs culprit plot');
		const path = await page.locator('#path li').count();
		expect(path === job.commits_tested, `bisection path of ${path} commits`);
		expect(await page.locator('#report').isVisible(), 'the report is shown');
		await shoot(page, 'job');
	});

	await step('download the runs as CSV', async () => {
		const job = await api(`/api/v1/jobs/${jobId}`);
		const [download] = await Promise.all([
			page.waitForEvent('download'),
			page.locator('#download-csv').click(),
		]);
		expect(download.suggestedFilename() === `job-${jobId}-runs.csv`,
			`file name ${download.suggestedFilename()}`);
		const file = path.join(out, download.suggestedFilename());
		await download.saveAs(file);
		const lines = fs.readFileSync(file, 'utf8').trim().split(/\r?\n/);
		expect(lines[0].startsWith('job,commit_index,commit,'), `header ${lines[0]}`);
		expect(lines.length - 1 === job.runs, `${lines.length - 1} rows for ${job.runs} runs`);
		const culpritRows = lines.filter((l) => l.includes(env.SB_CULPRIT)).length;
		const culprit = job.commits.find((c) => c.commit === env.SB_CULPRIT);
		expect(culpritRows === culprit.runs.length + culprit.confirm_runs.length,
			'the culprit runs (search and confirmation) are in the CSV');
	});

	await step('the dashboard lists the job', async () => {
		await page.getByRole('link', { name: 'Jobs' }).first().click();
		const row = page.locator('table.jobs tbody tr', { hasText: `#${jobId}` });
		await row.waitFor();
		const text = await row.textContent();
		expect(text.includes('done') && text.includes('regression') &&
			text.includes(env.SB_CULPRIT.slice(0, 12)), `row: ${text}`);
		await shoot(page, 'dashboard');
	});

	await step('the watch history plots the branch with its culprit marked', async () => {
		await page.getByRole('link', { name: 'Watches' }).first().click();
		await page.locator(`#watches a[href="/watches/${env.SB_WATCH_ID}"]`).click();
		await page.getByRole('link', { name: env.SB_WATCH_TESTCASE }).click();
		const svg = page.locator('#history-plot svg');
		await svg.waitFor();
		expect(await svg.isVisible(), 'the history plot is visible');
		const box = await svg.boundingBox();
		expect(box.width > 600 && box.height > 250, `plot size ${box.width}x${box.height}`);
		const hist = await api(`/api/v1/watches/${env.SB_WATCH_ID}/history`);
		const heads = await page.locator('#history-plot g.head').count();
		expect(heads === hist.points.length, `${heads} heads plotted for ${hist.points.length}`);
		const marked = page.locator('#history-plot g.head.culprit.regression');
		expect(await marked.count() === 1, 'one head marked with a regression culprit');
		const label = await page.locator('#history-plot .culprit-label').textContent();
		expect(label === `culprit ${env.SB_WATCH_CULPRIT.slice(0, 10)}`, `culprit label: ${label}`);
		const href = await page.locator('#history-plot a.job-link:has(g.head.culprit)')
			.getAttribute('href');
		expect(/^\/jobs\/\d+$/.test(href), `the marked point links its job: ${href}`);
		const shas = await page.locator('#history-plot a.commit-link').count();
		expect(shas === hist.points.length, 'each head links its commit');
		await shoot(page, 'watch-history');
	});

	await step('a page past the end of the job list says so and links back', async () => {
		await page.goto(url + '/?page=99');
		const count = await page.locator('#job-count').textContent();
		expect(!count.includes('page 99 of'), `count line: ${count}`);
		expect(count.includes('No page 99'), `count line says there is no page 99: ${count}`);
		const back = page.locator('nav.pages a[rel="first"]');
		expect(await back.count() === 1, 'a link back to the last page');
		await back.click();
		await page.locator('table.jobs tbody tr', { hasText: `#${jobId}` }).waitFor();
		const again = await page.locator('#job-count').textContent();
		expect(again.includes('page 1 of 1'), `after the link: ${again}`);
	});

	// Every page at a 390-pixel phone: nothing wider than the screen, and
	// no plot that needs scrolling sideways to be seen whole.
	async function fitsPhone(pathname, wanted) {
		await page.setViewportSize(phone);
		try {
			await page.goto(url + pathname);
			if (wanted) {
				await page.locator(wanted).first().waitFor({ timeout: 10000 })
					.catch(() => { throw new Error(`${pathname}: no ${wanted}`); });
			}
			const sizes = await page.evaluate(() => ({
				document: Math.max(document.documentElement.scrollWidth,
					document.body.scrollWidth),
				plots: [...document.querySelectorAll('.plot-scroll')].map(
					(d) => d.scrollWidth - d.clientWidth),
				checkboxes: [...document.querySelectorAll('input[type="checkbox"]')]
					.map((b) => b.getBoundingClientRect())
					.filter((r) => r.width > 0)
					.map((r) => Math.max(r.width, r.height)),
			}));
			const bad = [];
			if (sizes.document > phone.width) {
				bad.push(`${pathname} is ${sizes.document} px wide`);
			}
			sizes.plots.forEach((over, i) => {
				if (over > 0) {
					bad.push(`${pathname} plot ${i + 1} is cut off by ${over} px`);
				}
			});
			// A checkbox stays a checkbox, not a box the width of the form.
			sizes.checkboxes.forEach((side, i) => {
				if (side > 32) {
					bad.push(`${pathname} checkbox ${i + 1} is ${Math.round(side)} px`);
				}
			});
			return bad;
		} finally {
			await page.setViewportSize(desktop);
		}
	}

	await step('every page fits a 390-pixel phone', async () => {
		const job = await api(`/api/v1/jobs/${jobId}`);
		const tested = job.commits.find((c) => c.runs.length > 0);
		let bad = [];
		for (const [p, w] of [['/', 'table.jobs'], ['/jobs/new', 'form'],
			[`/jobs/${jobId}`, '#plot-pair svg'],
			[`/jobs/${jobId}/commits/${tested.commit}/log`, '#outcome'],
			['/?page=99', '#job-count'], ['/jobs/999999', 'main']]) {
			bad = bad.concat(await fitsPhone(p, w));
		}
		// The admin pages, signed in with an admin token.
		await page.goto(url + '/');
		await page.getByRole('button', { name: /sign out/i }).click();
		await page.goto(url + '/signin');
		bad = bad.concat(await fitsPhone('/signin', 'form'));
		await page.getByLabel('Token').fill(env.SB_ADMIN_TOKEN);
		await page.getByRole('button', { name: 'Sign in' }).click();
		await page.waitForURL(url + '/');
		for (const p of ['/admin/repos', '/admin/testcases', '/admin/tokens',
			'/admin/workers']) {
			bad = bad.concat(await fitsPhone(p, 'h1'));
		}
		expect(bad.length === 0, bad.join('; '));
	});

	async function adminCall(method, pathname, body) {
		const r = await fetch(url + pathname, {
			method,
			headers: { Authorization: 'Bearer ' + env.SB_ADMIN_TOKEN,
				'Content-Type': 'application/json' },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		return { status: r.status, body: await r.json() };
	}

	await step('edit a testcase and delete a repository through their pages', async () => {
		// Signed in as the admin by the step before.
		const made = await adminCall('POST', '/api/v1/testcases', {
			name: 'browser-edit', build: '', run: './bench', kpi: 'bench.score',
			higher_is_better: true, notify: ['perf@example.org'] });
		expect(made.status === 201, `testcase made: ${made.status}`);
		const source = await api(`/api/v1/repos/${env.SB_REPO}`);
		const repo = await adminCall('POST', '/api/v1/repos',
			{ name: 'browser-gone', url: source.url });
		expect(repo.status === 201, `repository made: ${repo.status}`);

		await page.goto(url + '/admin/testcases');
		await page.locator('tr', { hasText: 'browser-edit' })
			.getByRole('link', { name: 'Edit' }).click();
		await page.waitForURL(url + '/admin/testcases/browser-edit/edit');
		expect(await page.getByLabel('Notify').inputValue() === 'perf@example.org',
			'the stored addresses are filled in');
		await page.getByLabel('Better is').selectOption('false');
		await page.getByLabel('Most runs').fill('3');
		await page.getByLabel('time', { exact: true }).check();
		await page.getByRole('button', { name: 'Save' }).click();
		const error = page.locator('#runs_max-error');
		await error.waitFor();
		expect((await error.textContent()).includes('\u201cMost runs\u201d'),
			'the error names the field by its label');
		expect(await page.getByLabel('Better is').inputValue() === 'false',
			'the select keeps its value after the error');
		expect(await page.getByLabel('time', { exact: true }).isChecked(), 'the checkbox stays checked');
		await shoot(page, 'admin-testcase-edit-error');
		await page.getByLabel('Most runs').fill('40');
		await page.getByRole('button', { name: 'Save' }).click();
		await page.waitForURL(url + '/admin/testcases');
		const t = await api('/api/v1/testcases/browser-edit');
		expect(t.higher_is_better === false && t.runs_max === 40 &&
			t.monitors.join() === 'time', `stored: ${JSON.stringify(t)}`);

		await page.goto(url + '/admin/repos');
		await page.locator('tr', { hasText: 'browser-gone' })
			.getByRole('link', { name: 'Delete' }).click();
		await page.waitForURL(url + '/admin/repos/browser-gone/delete');
		expect((await page.locator('h1').textContent()).includes('browser-gone'),
			'the confirmation page names it');
		await shoot(page, 'admin-repo-delete');
		await page.getByRole('button', { name: 'Delete browser-gone' }).click();
		await page.waitForURL(url + '/admin/repos');
		expect(await page.locator('tr', { hasText: 'browser-gone' }).count() === 0,
			'gone from the list');
		const gone = await adminCall('GET', '/api/v1/repos/browser-gone');
		expect(gone.status === 404, `the API says it is gone: ${gone.status}`);
		let bad = [];
		for (const p of ['/admin/testcases/browser-edit/edit',
			'/admin/testcases/browser-edit/delete']) {
			bad = bad.concat(await fitsPhone(p, 'h1'));
		}
		expect(bad.length === 0, bad.join('; '));
	});

	await step('live API answers match web/openapi.yaml under a strict validator', async () => {
		const spec = await openapiLoad(new URL('../../web/openapi.yaml', import.meta.url).pathname);
		const problems = [];
		async function call(method, pathname, template, body) {
			const r = await fetch(url + pathname, {
				method,
				headers: { Authorization: 'Bearer ' + env.SB_ADMIN_TOKEN,
					'Content-Type': 'application/json' },
				body: body === undefined ? undefined : JSON.stringify(body),
			});
			const answer = await r.json();
			problems.push(...spec.validate(method, template, String(r.status), answer));
			return answer;
		}
		const job = await call('GET', `/api/v1/jobs/${jobId}`, '/api/v1/jobs/{id}');
		await call('GET', '/healthz', '/healthz');
		await call('GET', '/api/v1/jobs', '/api/v1/jobs');
		await call('GET', `/api/v1/jobs/${jobId}/runs`, '/api/v1/jobs/{id}/runs');
		await call('GET', `/api/v1/jobs/${jobId}/commits/${job.culprit}/log`,
			'/api/v1/jobs/{id}/commits/{sha}/log');
		await call('GET', '/api/v1/jobs/999999', '/api/v1/jobs/{id}');
		await call('GET', '/api/v1/repos', '/api/v1/repos');
		await call('GET', '/api/v1/testcases', '/api/v1/testcases');
		await call('GET', `/api/v1/repos/${env.SB_REPO}`, '/api/v1/repos/{name}');
		await call('GET', '/api/v1/repos/browser-gone', '/api/v1/repos/{name}');
		await call('PATCH', `/api/v1/repos/${env.SB_REPO}`, '/api/v1/repos/{name}',
			{ web_url: null });
		await call('PATCH', `/api/v1/repos/${env.SB_REPO}`, '/api/v1/repos/{name}',
			{ web_url: 'no-sha' });
		await call('GET', '/api/v1/testcases/browser-edit', '/api/v1/testcases/{name}');
		await call('PATCH', '/api/v1/testcases/browser-edit', '/api/v1/testcases/{name}',
			{ runs_max: 41, params: { threads: 2 } });
		await call('PATCH', '/api/v1/testcases/browser-edit', '/api/v1/testcases/{name}',
			{ runs_max: 1 });
		await call('DELETE', '/api/v1/testcases/browser-edit', '/api/v1/testcases/{name}');
		await call('DELETE', '/api/v1/testcases/browser-edit', '/api/v1/testcases/{name}');
		await call('GET', '/api/v1/workers', '/api/v1/workers');
		// A queued job: verdict and finished_at are null.
		const again = await call('POST', `/api/v1/jobs/${jobId}/rerun`,
			'/api/v1/jobs/{id}/rerun', {});
		expect(again.verdict === null && again.finished_at === null,
			'the rerun is queued with null verdict and finished_at');
		await call('DELETE', `/api/v1/jobs/${again.id}`, '/api/v1/jobs/{id}');
		// A compare job (issue 13): its revisions while queued; the
		// re-test refusals.
		const cmp = await call('POST', '/api/v1/jobs', '/api/v1/jobs',
			{ kind: 'compare', repo: env.SB_REPO, testcase: env.SB_TESTCASE,
				revisions: [env.SB_GOOD, env.SB_BAD] });
		expect(cmp.kind === 'compare' && cmp.revisions.length === 2,
			'a compare job shows its two revisions');
		await call('POST', `/api/v1/jobs/${cmp.id}/retest`,
			'/api/v1/jobs/{id}/retest', { fix: env.SB_BAD });
		await call('POST', `/api/v1/jobs/${jobId}/retest`,
			'/api/v1/jobs/{id}/retest', { fix: 'no-such-revision' });
		await call('DELETE', `/api/v1/jobs/${cmp.id}`, '/api/v1/jobs/{id}');
		// A token: revoked_at null, then set.
		const token = await call('POST', '/api/v1/tokens', '/api/v1/tokens',
			{ name: 'openapi-check', role: 'read' });
		await call('GET', '/api/v1/tokens', '/api/v1/tokens');
		await call('DELETE', `/api/v1/tokens/${token.id}`, '/api/v1/tokens/{id}');
		expect(problems.length === 0, problems.join('; '));
	});

	await step('no script errors on any page', async () => {
		expect(pageErrors.length === 0, pageErrors.join('; '));
	});
} finally {
	await context.close();
	fs.rmSync(profile, { recursive: true, force: true });
}
process.exit(failures ? 1 : 0);
