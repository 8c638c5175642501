#!/usr/bin/env bash
# kernel/check-prefixes.sh — bisectability of kernel/series: build every
# prefix of the series (patches 1..k for k = 1..N) into a full guest bzImage,
# same config as `kernel/build.sh patched` (tinyconfig + guest.config), and
# from the prefix that adds the staged-sysfs KUnit suite on, also build and
# run the KUnit suites of kernel/kunit.sh (UML) at that prefix.
#
#   kernel/check-prefixes.sh [--from K] [--to K] [--no-kunit] [--kunit-all] [--keep]
#
#   --from/--to K  only prefixes K..  (1-based, default all)
#   --no-kunit     bzImage only
#   --kunit-all    run kernel/kunit.sh at every prefix, also before the suite
#                  exists (the existing driver-core suites alone)
#   --keep         keep the private trees afterwards (~2.5 GB)
#
# How: the patched work tree and its object directories are copied (mtimes
# kept) and, in a private mount namespace (unshare -m; needs root), the copies
# are bind-mounted over the paths kernel/build.sh uses.  Each prefix is then
# `git checkout` in the copy and built incrementally, the way `git rebase
# --exec make` checks a series: kbuild's dependency files rebuild every object
# whose source, headers or config changed.  Same paths mean ccache hits for
# prefixes whose headers match a state built before; the test bed's own trees
# and kernels are never touched.  A prefix that changes a widely included
# header (kernfs.h, sysfs.h, kobject.h, device.h) recompiles most of the
# kernel: expect ~40-60 min for the whole series on 2 cores.
#
# Prints one line per prefix (PASS/FAIL, seconds) and writes the full log
# to $cache/prefixes/log.  Exit status: 0 when every prefix passed.
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "$0")" && pwd)
cache=${LUOD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/luod-testbed}
log() { printf 'kernel/check-prefixes: %s\n' "$*" >&2; }

from=1 to=0 kunit=1 kunit_all=0 keep=0
while (($#)); do
	case $1 in
	--from) from=$2; shift 2 ;;
	--to) to=$2; shift 2 ;;
	--no-kunit) kunit=0; shift ;;
	--kunit-all) kunit_all=1; shift ;;
	--keep) keep=1; shift ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) log "unknown argument '$1'"; exit 2 ;;
	esac
done

if [[ ${LUOD_PREFIX_INNER:-0} != 1 ]]; then
	((EUID == 0)) || { log "needs root (unshare -m for a private mount namespace)"; exit 2; }
	# The full series first: an up-to-date tree and objects to start from.
	bash "$here/build.sh" patched >/dev/null
	priv=$cache/prefixes
	rm -rf "$priv"
	mkdir -p "$priv"
	log "copying the patched tree and objects to $priv (mtimes kept)"
	cp -a "$cache/work/patched/src" "$priv/src"
	cp -a "$cache/build/patched" "$priv/build-patched"
	mkdir -p "$cache/build/kunit"
	cp -a "$cache/build/kunit" "$priv/build-kunit"
	args=(--from "$from" --to "$to")
	((kunit)) || args+=(--no-kunit)
	((kunit_all)) && args+=(--kunit-all)
	set +e
	LUOD_PREFIX_INNER=1 LUOD_PREFIX_PRIV=$priv unshare -m --propagation private \
		bash "$0" "${args[@]}" 2>&1 | tee "$priv/log" | grep --line-buffered -E '^(prefix|kernel/check-prefixes)'
	rc=${PIPESTATUS[0]}
	set -e
	if ((keep)); then
		log "kept $priv"
	else
		find "$priv" -mindepth 1 -maxdepth 1 ! -name log -exec rm -rf {} +
	fi
	log "full log: $priv/log"
	exit "$rc"
fi

# Inside the private mount namespace.
priv=$LUOD_PREFIX_PRIV
mount --bind "$priv/src" "$cache/work/patched/src"
mount --bind "$priv/build-patched" "$cache/build/patched"
mount --bind "$priv/build-kunit" "$cache/build/kunit"
tree=$cache/work/patched/src
mapfile -t commits < <(git -C "$tree" rev-list --reverse luod-base..HEAD)
n=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/series" | wc -l)
((${#commits[@]} == n)) || { log "the tree has ${#commits[@]} commits on luod-base, kernel/series names $n"; exit 1; }
((to == 0 || to > n)) && to=$n
final_bz=$(sha256sum "$cache/build/patched/arch/x86/boot/bzImage" | cut -d' ' -f1)
log "prefixes $from..$to of $n; the full series' bzImage is ${final_bz:0:12}"

failed=0
for ((k = from; k <= to; k++)); do
	c=${commits[k - 1]}
	subj=$(git -C "$tree" log -1 --format=%s "$c")
	git -C "$tree" checkout -q --detach "$c"
	echo "=== prefix $k: $subj"
	t0=$SECONDS
	res=PASS
	LUOD_PATCHED_AS_IS=1 bash "$here/build.sh" patched || res=FAIL
	tb=$((SECONDS - t0))
	line="prefix $(printf '%2d' "$k") bzImage $res ${tb} s"
	if [[ $res == PASS ]]; then
		sum=$(sha256sum "$cache/build/patched/arch/x86/boot/bzImage" | cut -d' ' -f1)
		line+=" (${sum:0:12})"
	fi
	if ((kunit)) && [[ $res == PASS ]] &&
		{ ((kunit_all)) || [[ -f $tree/drivers/base/test/staged-device-test.c ]]; }; then
		t0=$SECONDS
		kres=PASS
		out=$(LUOD_PATCHED_AS_IS=1 bash "$here/kunit.sh" 2>&1) || kres=FAIL
		printf '%s\n' "$out"
		# kunit.py's summary: "Testing complete. Ran N tests: passed: P, ..."
		summary=$(printf '%s\n' "$out" | grep -o 'Ran [0-9]* tests.*' | tail -n1 | sed 's/\x1b\[[0-9;]*m//g')
		[[ -n $summary ]] || kres=FAIL
		line+="; KUnit $kres $((SECONDS - t0)) s: ${summary:-no summary}"
		[[ $kres == PASS ]] || res=FAIL
	fi
	echo "$line $subj"
	[[ $res == PASS ]] || failed=$((failed + 1))
done
if ((to == n)) && [[ $(sha256sum "$cache/build/patched/arch/x86/boot/bzImage" | cut -d' ' -f1) != "$final_bz" ]]; then
	log "note: the last prefix's bzImage differs from the full build's (not byte-reproducible incrementally)"
fi
log "$failed of $((to - from + 1)) prefixes failed"
((failed == 0))
