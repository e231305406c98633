#!/usr/bin/env bash
# The browser test, as `make check` runs it: installs what it lacks (Debian's
# chromium; from npm, at the versions package-lock.json pins, playwright-core
# and the strict OpenAPI validators of openapi.mjs), then tests/browser/run.py
# starts PostgreSQL, the server and a worker and drives Chromium through
# test.mjs.  Prints 'browser: N passed, N failed'.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive

apt_install() {
	if ! apt-cache show "$@" >/dev/null 2>&1; then
		"${sudo[@]}" apt-get update -q
	fi
	"${sudo[@]}" apt-get install -y -q --no-install-recommends "$@"
}

if [ ! -x /usr/bin/chromium ]; then
	echo "browser: installing Debian's chromium"
	apt_install chromium fonts-dejavu-core
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "browser: installing node and npm"
	apt_install nodejs npm
fi

# npm ci only when an installed package is not the locked one (playwright-
# core, and the OpenAPI validators openapi.mjs uses).
if ! (cd "$here" && node -e '
const fs = require("fs");
const lock = JSON.parse(fs.readFileSync("package-lock.json", "utf8"));
for (const [dir, entry] of Object.entries(lock.packages)) {
	if (dir === "") continue;
	const have = JSON.parse(fs.readFileSync(dir + "/package.json", "utf8"));
	if (have.version !== entry.version) process.exit(1);
}' 2>/dev/null); then
	echo "browser: npm ci (package-lock.json)"
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

if [ ! -x "$root/bin/statbisect-server" ] || [ ! -x "$root/bin/statbisect-worker" ]; then
	make -C "$root" all
fi
exec /usr/bin/python3 "$here/run.py" "$@"
