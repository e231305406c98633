#!/usr/bin/env bash
# The browser test, as `make check` runs it: installs what it lacks (Debian's
# chromium, and playwright-core from npm at the version package-lock.json
# pins), then tests/browser/run.py starts PostgreSQL, the server and a worker
# and drives Chromium through test.mjs.  Prints 'browser: N passed, N failed'.
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

# npm ci only when the installed playwright-core is not the locked one.
want=$(sed -n '/"node_modules\/playwright-core"/,/}/s/.*"version": "\(.*\)".*/\1/p' \
	"$here/package-lock.json")
have=$(sed -n 's/.*"version": "\(.*\)".*/\1/p' \
	"$here/node_modules/playwright-core/package.json" 2>/dev/null |
	head -n 1 || true)
if [ "$want" != "$have" ]; then
	echo "browser: npm ci (playwright-core $want)"
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

if [ ! -x "$root/bin/statbisect-server" ] || [ ! -x "$root/bin/statbisect-worker" ]; then
	make -C "$root" all
fi
exec /usr/bin/python3 "$here/run.py" "$@"
