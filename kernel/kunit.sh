#!/usr/bin/env bash
# kernel/kunit.sh — the series' KUnit suites under UML, in the patched tree
# that kernel/build.sh prepares: drivers/base/test/.kunitconfig (the staged
# sysfs suites of patch 7 and the driver-core tests there) with the existing
# KUnit self-tests, software-node and property-entry suites added.
#
#   kernel/kunit.sh          (~10 min cold on 2 cores, ~1 min warm)
#
# Build objects live in the cache (LUOD_CACHE/build/kunit), never in git.
# Prints kunit.py's summary; exits non-zero when a test fails or the build
# does.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${LUOD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/luod-testbed}
# The UML build reads the patched tree: hold the build lock throughout, or
# a kernel/build.sh that re-applies the series meanwhile rewrites the tree
# under it.  kernel/check-prefixes.sh (LUOD_PATCHED_AS_IS=1) holds it itself
# and builds in its private copies.
if [[ ${LUOD_PATCHED_AS_IS:-0} != 1 ]]; then
	mkdir -p "$cache"
	exec 8>"$cache/build.lock"
	flock -n 8 || { echo "kernel/kunit: waiting for another kernel build ($cache/build.lock)" >&2; flock 8; }
fi
LUOD_BUILD_LOCK_HELD=1 bash "$here/build.sh" --prepare-only patched >/dev/null
tree=$cache/work/patched/src
out=$cache/build/kunit
mkdir -p "$out"
export CCACHE_DIR=${CCACHE_DIR:-$cache/ccache}
cd "$tree"
python3 tools/testing/kunit/kunit.py run \
	--kunitconfig=drivers/base/test \
	--kconfig_add CONFIG_KUNIT_TEST=y \
	--kconfig_add CONFIG_DRIVER_PE_KUNIT_TEST=y \
	--kconfig_add CONFIG_DRIVER_SWNODE_KUNIT_TEST=y \
	--build_dir="$out" --jobs="${JOBS:-$(nproc)}" \
	--make_options "CC=ccache gcc" 2>&1 | tail -n 40
