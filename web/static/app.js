/* statbisect web UI: the little script there is.  Pages work without it;
 * with it, a running job's page updates itself without reloading. */
(function () {
	'use strict';

	document.documentElement.classList.add('js');

	var live = document.getElementById('live');
	if (!live || !window.fetch || !window.DOMParser) {
		return;
	}
	var url = live.getAttribute('data-live-url');
	var delay = 1500;

	function active(state) {
		return state === 'resolving' || state === 'queued' ||
		    state === 'running';
	}

	function replace(html) {
		var doc = new DOMParser().parseFromString(html, 'text/html');
		var root = doc.querySelector('.live-root');
		if (!root) {
			throw new Error('no live part in the answer');
		}
		var state = root.getAttribute('data-state');
		live.replaceChildren(document.importNode(root, true));
		live.setAttribute('data-state', state);
		return state;
	}

	function tick() {
		fetch(url, {credentials: 'same-origin',
			    headers: {'Accept': 'text/html'}})
			.then(function (response) {
				if (!response.ok) {
					throw new Error('HTTP ' + response.status);
				}
				return response.text();
			})
			.then(function (html) {
				if (active(replace(html))) {
					window.setTimeout(tick, delay);
				}
			})
			.catch(function () {
				window.setTimeout(tick, 5000);
			});
	}

	if (active(live.getAttribute('data-state'))) {
		window.setTimeout(tick, delay);
	}
}());
