#!/usr/bin/env bash
# kernel/check-prefixes.sh — bisectability of kernel/series: build every
# prefix of the series (patches 1..k for k = 1..N) into a full guest bzImage,
# same config as `kernel/build.sh patched` (tinyconfig + guest.config), and
# from the prefix that adds the staged-sysfs KUnit suite on, also build and
# run the KUnit suites of kernel/kunit.sh (UML) at that prefix.  At the last
# prefix, kernel/check-modular.sh: every tristate the series adds built =m
# (UML, modpost) and an allmodconfig compile of what the series touches.
#
#   kernel/check-prefixes.sh [--from K] [--to K] [--no-kunit] [--kunit-all]
#                            [--no-modular] [--keep]
#
#   --from/--to K  only prefixes K..  (1-based, default all)
#   --no-kunit     bzImage only
#   --kunit-all    run kernel/kunit.sh at every prefix, also before the suite
#                  exists (the existing driver-core suites alone)
#   --no-modular   no kernel/check-modular.sh at the last prefix (it takes
#                  ~25 min cold, a minute or two warm, on the test bed)
#   --keep         keep the private trees afterwards (~2.5 GB)
#
# How: `kernel/build.sh patched` first brings the patched work tree and its
# objects up to date (the only change to the test bed's own trees); then the
# tree and its object directories are copied (mtimes kept) and, in a private
# mount namespace (unshare -m; needs root), the copies are bind-mounted over
# the paths kernel/build.sh uses.  Every commit of the copy must be its
# patch file (same `git patch-id --stable`) and the copy clean.  Each prefix
# is then `git checkout` in the copy and built incrementally, the way `git
# rebase --exec make` checks a series: kbuild's dependency files rebuild
# every object whose source, headers or config changed; the objects of
# files that only later patches add are deleted first (else kbuild would
# link the full series' leftover object), and the config is regenerated
# and checked (build.sh) at every prefix.  Same paths mean ccache hits for
# prefixes whose headers match a state built before.  A prefix that changes
# a widely included header (kernfs.h, sysfs.h, kobject.h, device.h)
# recompiles most of the kernel: ~30 min each on 2 cores shared with VM
# runs, ~1.5-2 h for the whole series.
#
# Checks one config (the guest's, x86_64, everything built in) and, from
# the KUnit suite on, UML's KUnit config, at every prefix; the =m and
# allmodconfig builds only at the last one; not SYSFS=n / PCI_IOV=n stubs.
# Prints one line per prefix (PASS/FAIL, seconds, compiler warnings) and
# writes the full log to $cache/prefixes/log.  Exit status: 0 when every
# prefix passed.
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "$0")" && pwd)
cache=${LUOD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/luod-testbed}
log() { printf 'kernel/check-prefixes: %s\n' "$*" >&2; }

from=1 to=0 kunit=1 kunit_all=0 modular=1 keep=0
while (($#)); do
	case $1 in
	--from) from=$2; shift 2 ;;
	--to) to=$2; shift 2 ;;
	--no-kunit) kunit=0; shift ;;
	--kunit-all) kunit_all=1; shift ;;
	--no-modular) modular=0; shift ;;
	--keep) keep=1; shift ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) log "unknown argument '$1'"; exit 2 ;;
	esac
done
[[ $from =~ ^[0-9]+$ && $to =~ ^[0-9]+$ ]] && ((from >= 1)) && ((to == 0 || to >= from)) ||
	{ log "--from/--to: want 1 <= FROM <= TO (TO 0: the last patch)"; exit 2; }

if [[ ${LUOD_PREFIX_INNER:-0} != 1 ]]; then
	((EUID == 0)) || { log "needs root (unshare -m for a private mount namespace)"; exit 2; }
	# The full series first: an up-to-date tree and objects to start from.
	bash "$here/build.sh" patched >/dev/null
	priv=$cache/prefixes
	rm -rf "$priv"
	mkdir -p "$priv"
	# kernel/build.sh's lock: no build writes the trees while they are copied.
	exec 8>"$cache/build.lock"
	flock 8
	log "copying the patched tree and objects to $priv (mtimes kept)"
	cp -a "$cache/work/patched/src" "$priv/src"
	cp -a "$cache/build/patched" "$priv/build-patched"
	mkdir -p "$cache/build/kunit"
	cp -a "$cache/build/kunit" "$priv/build-kunit"
	flock -u 8
	exec 8>&-
	args=(--from "$from" --to "$to")
	((kunit)) || args+=(--no-kunit)
	((kunit_all)) && args+=(--kunit-all)
	((modular)) || args+=(--no-modular)
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

# Inside the private mount namespace (never bind-mount over the real trees
# in the init namespace).
[[ $(readlink /proc/self/ns/mnt) != "$(readlink /proc/1/ns/mnt)" ]] ||
	{ log "inner mode outside a private mount namespace: refusing"; exit 2; }
priv=$LUOD_PREFIX_PRIV
mount --bind "$priv/src" "$cache/work/patched/src"
mount --bind "$priv/build-patched" "$cache/build/patched"
mount --bind "$priv/build-kunit" "$cache/build/kunit"
tree=$cache/work/patched/src
mapfile -t commits < <(git -C "$tree" rev-list --reverse luod-base..HEAD)
n=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/series" | wc -l)
((${#commits[@]} == n)) || { log "the tree has ${#commits[@]} commits on luod-base, kernel/series names $n"; exit 1; }
# The commits are the patch files, in order, and the tree is clean.
mapfile -t pfiles < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/series")
for ((k = 1; k <= n; k++)); do
	want=$(git -C "$tree" patch-id --stable <"$here/${pfiles[k - 1]}" | cut -d' ' -f1)
	have=$(git -C "$tree" show "${commits[k - 1]}" | git -C "$tree" patch-id --stable | cut -d' ' -f1)
	[[ -n $want && $want == "$have" ]] ||
		{ log "commit $k of the tree is not ${pfiles[k - 1]} (patch-id ${have:-none} vs ${want:-none})"; exit 1; }
done
[[ -z $(git -C "$tree" status --porcelain --untracked-files=no) ]] ||
	{ log "the patched tree has uncommitted changes"; exit 1; }
log "the tree's $n commits are kernel/series' patches (patch-id), tree clean"
((to == 0 || to > n)) && to=$n
final_bz=$(sha256sum "$cache/build/patched/arch/x86/boot/bzImage" | cut -d' ' -f1)
log "prefixes $from..$to of $n; the full series' bzImage is ${final_bz:0:12}"

failed=0 modular_failed=0
for ((k = from; k <= to; k++)); do
	c=${commits[k - 1]}
	subj=$(git -C "$tree" log -1 --format=%s "$c")
	git -C "$tree" checkout -q --detach "$c"
	echo "=== prefix $k: $subj"
	# Files that only later patches add: their objects (left by the full
	# series' build) must not be linked into this prefix.
	while read -r f; do
		case $f in *.c|*.S) ;; *) continue ;; esac
		for out in "$cache/build/patched" "$cache/build/kunit"; do
			o=$out/${f%.*}.o
			rm -f "$o" "$(dirname "$o")/.$(basename "$o").cmd"
		done
	done < <(git -C "$tree" diff --name-only --diff-filter=A "$c" "${commits[n - 1]}")
	# Regenerate and check the config at this prefix (build.sh).
	rm -f "$cache/build/patched/.luod-config.sha256"
	t0=$SECONDS
	res=PASS
	LUOD_PATCHED_AS_IS=1 bash "$here/build.sh" patched 2>&1 | tee "$priv/prefix-$k.out" || res=FAIL
	tb=$((SECONDS - t0))
	warn=$(grep -c 'warning:' "$priv/prefix-$k.out" || true)
	line="prefix $(printf '%2d' "$k") bzImage $res ${tb} s, $warn warnings"
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
		warn=$((warn + $(printf '%s\n' "$out" | grep -c 'warning:' || true)))
		# kunit.py's summary: "Testing complete. Ran N tests: passed: P, ..."
		summary=$(printf '%s\n' "$out" | grep -o 'Ran [0-9]* tests.*' | tail -n1 | sed 's/\x1b\[[0-9;]*m//g')
		[[ -n $summary ]] || kres=FAIL
		line+="; KUnit $kres $((SECONDS - t0)) s: ${summary:-no summary}"
		[[ $kres == PASS ]] || res=FAIL
	fi
	echo "$line $subj"
	[[ $res == PASS ]] || failed=$((failed + 1))
	((warn == 0)) || log "prefix $k: $warn compiler warnings (see $priv/log)"
done
if ((modular)) && ((to == n)); then
	# The last prefix is the whole series, checked out in the private tree.
	t0=$SECONDS
	mres=PASS
	bash "$here/check-modular.sh" --tree "$tree" --out "$priv" || mres=FAIL
	echo "prefix $(printf '%2d' "$n") modular $mres $((SECONDS - t0)) s (=m and allmodconfig, kernel/check-modular.sh)"
	[[ $mres == PASS ]] || modular_failed=1
fi
if ((to == n)) && [[ $(sha256sum "$cache/build/patched/arch/x86/boot/bzImage" | cut -d' ' -f1) != "$final_bz" ]]; then
	log "note: the last prefix's bzImage differs from the full build's (not byte-reproducible incrementally)"
fi
log "$failed of $((to - from + 1)) prefixes failed$( ((modular_failed)) && echo '; the =m/allmodconfig check failed')"
((failed == 0 && modular_failed == 0))
