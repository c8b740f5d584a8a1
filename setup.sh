#!/bin/sh
# pyward's one-step setup.
#   ./setup.sh run [PYWARD ARGS]   install what is missing, build, start pyward here
#   ./setup.sh test                install what is missing, build, run the whole suite
#   ./setup.sh deps                only install what is missing (with the benches' packages)
#   ./setup.sh bench-deps          the same: what bench/ needs besides the build and the suite
# Build dependencies come from Debian's packages: apt-get as root, sudo
# otherwise, nothing when all are present. The build goes to ./_build
# (override with BUILD_DIR); extra configure flags in CONFIGURE_FLAGS.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
origin=$(pwd)
build=${BUILD_DIR:-$here/_build}

build_packages="build-essential autoconf automake autoconf-archive autopoint gettext libtool
pkg-config libncurses-dev libcurl4-openssl-dev libarchive-dev libisal-dev libssl-dev libsqlite3-dev
libjansson-dev libcmocka-dev libmicrohttpd-dev libsystemd-dev"
test_packages="tmux mandoc python3 python3-venv openssl sqlite3 procps strace curl prometheus systemd clang libclang-rt-14-dev"
# Only for bench/ (not ./setup.sh run or test): wrk and nginx (api.sh),
# python3-virtualenv (venv.sh's peer), libarchive-tools (bsdtar, the
# pipeline peer of runtime-install.sh); installed by ./setup.sh bench-deps.
bench_packages="wrk nginx python3-virtualenv libarchive-tools"
with_bench=

say() { printf 'setup: %s\n' "$*" >&2; }

missing_packages() {
	for p in $build_packages $test_packages ${with_bench:+$bench_packages}; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			printf '%s ' "$p"
	done
}

install_deps() {
	command -v dpkg-query >/dev/null 2>&1 || {
		say "not a Debian-like system: install the equivalents of: $build_packages $test_packages"
		return 0
	}
	need=$(missing_packages)
	[ -n "$need" ] || return 0
	say "installing: $need"
	if [ "$(id -u)" -eq 0 ]; then
		sudo=""
	elif command -v sudo >/dev/null 2>&1; then
		sudo="sudo"
	else
		say "these packages are missing and there is no sudo: $need"
		exit 1
	fi
	# shellcheck disable=SC2086
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	# shellcheck disable=SC2086
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need
}

# The MCP tests drive `pyward mcp` with the official SDK and Inspector
# (tests/mcp/package.json, exact versions in its lock file): Debian's nodejs
# and npm when node or npm is missing, then npm ci.
install_node_deps() {
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
		command -v dpkg-query >/dev/null 2>&1 || {
			say "node and npm are missing: install them for the MCP tests"
			return 0
		}
		need=""
		command -v node >/dev/null 2>&1 || need="nodejs"
		command -v npm >/dev/null 2>&1 || need="$need npm"
		say "installing: $need"
		if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
			say "these packages are missing and there is no sudo: $need"
			exit 1
		fi
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
		# shellcheck disable=SC2086
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need
	fi
	lock="$here/tests/mcp/package-lock.json"
	stamp="$here/tests/mcp/node_modules/.package-lock.json"
	if [ ! -f "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
		say "installing the MCP test clients (npm ci in tests/mcp)"
		(cd "$here/tests/mcp" && npm ci --no-audit --no-fund --loglevel=error)
	fi
}

build_tree() {
	if [ ! -x "$here/configure" ] || [ "$here/configure.ac" -nt "$here/configure" ]; then
		say "bootstrapping (autoreconf)"
		(cd "$here" && autoreconf -fi)
	fi
	mkdir -p "$build"
	flags=${CONFIGURE_FLAGS:-}
	stamp="$build/.setup-flags"
	if [ ! -f "$build/Makefile" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$flags" ]; then
		say "configuring in $build ${flags:+($flags)}"
		# shellcheck disable=SC2086
		(cd "$build" && "$here/configure" -q $flags)
		printf '%s' "$flags" > "$stamp"
	fi
	say "building"
	make -C "$build" -s -j"$(nproc 2>/dev/null || echo 2)"
}

cmd=${1:-run}
[ $# -gt 0 ] && shift
case $cmd in
deps | bench-deps)
	with_bench=yes
	install_deps
	;;
run)
	install_deps
	build_tree
	cd "$origin"
	exec "$build/src/pyward" -C "$origin" "$@"
	;;
test)
	install_deps
	install_node_deps
	build_tree
	say "running the test suite"
	make -C "$build" -s -j"$(nproc 2>/dev/null || echo 2)" check
	;;
*)
	say "usage: ./setup.sh run [PYWARD ARGS] | test | deps | bench-deps"
	exit 2
	;;
esac
