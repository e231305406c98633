#!/usr/bin/env bash
# Old-versus-new server comparison (tests/compare/README.md).
#
#   tests/compare/run.sh OLD_REV [NEW_REV]
#       builds statbisect-server at each git revision in a temporary
#       worktree and compares the two; without NEW_REV the new side is this
#       checkout as it is now (built with `make`, uncommitted changes
#       included).
#   tests/compare/run.sh --trees OLD_DIR NEW_DIR
#       compares two trees that are built already (DIR/bin, DIR/web).
#
# Further arguments after `--` go to compare.py (-v, --keep, --requests F).
# Exits 0 when the answers agree, 1 when any differs, 2 on a setup error.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
usage() {
	sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

[ $# -ge 1 ] || usage
extra=()
args=()
while [ $# -gt 0 ]; do
	if [ "$1" = "--" ]; then
		shift
		extra=("$@")
		break
	fi
	args+=("$1")
	shift
done
set -- "${args[@]}"

if [ "$1" = "--trees" ]; then
	[ $# -eq 3 ] || usage
	exec /usr/bin/python3 "$here/compare.py" "$2" "$3" "${extra[@]}"
fi
[ $# -le 2 ] || usage

tmp=$(mktemp -d /tmp/sbcompare-XXXXXX)
worktrees=()
cleanup() {
	for w in "${worktrees[@]}"; do
		git -C "$root" worktree remove --force "$w" >/dev/null 2>&1 || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# Builds the server of revision $1 in a worktree under $tmp/$2.
build_rev() {
	local rev=$1 dir=$tmp/$2 sha
	sha=$(git -C "$root" rev-parse --verify "$rev^{commit}") || {
		echo "compare: no revision '$rev'" >&2
		exit 2
	}
	git -C "$root" worktree add --detach "$dir" "$sha" >/dev/null 2>&1
	worktrees+=("$dir")
	echo "compare: building $2 = $rev ($(git -C "$root" log -1 \
		--format='%h %s' "$sha"))" >&2
	if ! make -C "$dir" -j2 bin/statbisect-server >"$tmp/$2-build.log" 2>&1
	then
		tail -n 30 "$tmp/$2-build.log" >&2
		echo "compare: the build of $rev failed" >&2
		exit 2
	fi
}

build_rev "$1" old
if [ $# -eq 2 ]; then
	build_rev "$2" new
	new=$tmp/new
else
	echo "compare: building new = this checkout" >&2
	make -C "$root" -j2 bin/statbisect-server >"$tmp/new-build.log" 2>&1 ||
		{ tail -n 30 "$tmp/new-build.log" >&2; exit 2; }
	new=$root
fi
set +e
/usr/bin/python3 "$here/compare.py" "$tmp/old" "$new" "${extra[@]}"
status=$?
set -e
exit $status
