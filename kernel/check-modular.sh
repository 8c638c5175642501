#!/usr/bin/env bash
# kernel/check-modular.sh — the builds that the test bed's configs (everything
# built in: tinyconfig + guest.config, UML's KUnit config) cannot fail:
#
#   =m      every tristate the series adds, built as a module.  UML, the
#           KUnit config of kernel/kunit.sh (drivers/base/test/.kunitconfig)
#           with CONFIG_MODULES=y and each such symbol =m, `kunit.py build`
#           (`make all`: vmlinux, the modules, modpost).  modpost fails on a
#           module that uses a symbol nothing exports to it (unexported, or
#           exported in a namespace the module does not import), which an =y
#           build links without complaint.  Each symbol's .ko must exist.
#           The modules are built, not loaded.
#   allmod  x86_64 `make allmodconfig` (KASAN, UBSAN, lockdep, CONFIG_WERROR,
#           every driver of a directory on), then every .c file the series
#           changes or adds compiled as an object (except a driver whose
#           Makefile symbol x86 cannot set, e.g. tegra-smmu: named in the
#           log; compile it for its architecture), and the directories whose
#           code the series changes most (fs/kernfs/ fs/sysfs/ drivers/base/,
#           recursively: objects and module objects, no link, no modpost).
#
#   kernel/check-modular.sh [--tree DIR] [--out DIR] [--only m|allmod]
#
#   --tree DIR  a git tree with the series applied on the tag luod-base
#               (default: the patched work tree of kernel/build.sh)
#   --out DIR   where the object directories go (default $cache/build:
#               modular-um/ and allmod/)
#   --only X    one of the two builds
#
# The tristates are found in the tree, not listed here: a `config` added in a
# Kconfig file by the diff luod-base..HEAD whose type is tristate, and its
# module the object a Makefile adds with obj-$(CONFIG_SYMBOL).
# Run time on the test bed's 2 cores shared with other builds and a VM (load
# ~11), ccache cold: =m 37 min (2237 s), an incremental =m build after a
# change to the test 21 s to modpost; allmod about 5 min cold (allmodconfig,
# prepare and the 14 objects 275 s, then the 3 directories' 92 objects
# 42 s, load ~6).  Bound it with `timeout`, e.g.
# `timeout 1h kernel/check-modular.sh`.
# kernel/check-prefixes.sh runs this once, at the last prefix.
# Exit status 0 when both builds passed.
set -euo pipefail
shopt -s inherit_errexit
cache=${LUOD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/luod-testbed}
log() { printf 'kernel/check-modular: %s\n' "$*" >&2; }

tree=$cache/work/patched/src out=$cache/build only=
while (($#)); do
	case $1 in
	--tree) tree=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) log "unknown argument '$1'"; exit 2 ;;
	esac
done
case $only in ''|m|allmod) ;; *) log "--only m|allmod"; exit 2 ;; esac
git -C "$tree" rev-parse -q --verify luod-base >/dev/null ||
	{ log "$tree has no tag luod-base"; exit 2; }

export CCACHE_DIR=${CCACHE_DIR:-$cache/ccache}
export CCACHE_BASEDIR=$cache CCACHE_NOHASHDIR=1 CCACHE_SLOPPINESS=time_macros,include_file_mtime,include_file_ctime
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026'
export KBUILD_BUILD_USER=luod KBUILD_BUILD_HOST=testbed
jobs=${JOBS:-$(nproc)}

# The tristate symbols the series adds: each `+config SYM` of the diff whose
# definition in the tree says tristate.
added_tristates() {
	local f sym
	while read -r f; do
		while read -r sym; do
			awk -v s="$sym" '
				$1 == "config" || $1 == "menuconfig" { cur = $2; next }
				cur == s && $1 == "tristate" { print s; exit }' "$tree/$f"
		done < <(git -C "$tree" diff luod-base HEAD -- "$f" |
			sed -n -E 's/^\+[[:space:]]*(menu)?config[[:space:]]+([A-Z0-9_]+).*/\2/p')
	done < <(git -C "$tree" diff --name-only luod-base HEAD | grep -E '(^|/)Kconfig[^/]*$' || true)
}

# The module of SYM: the .ko of each obj-$(CONFIG_SYM) object of the Makefile
# next to the Kconfig that defines it.
module_of() {
	local sym=$1 mk
	while read -r mk; do
		sed -n -E "s/^obj-\\\$\\(CONFIG_${sym}\\)[[:space:]]*\\+?=[[:space:]]*(.*)/\\1/p" "$tree/$mk" |
			tr ' ' '\n' | sed -n -E "s|^([A-Za-z0-9_-]+)\\.o$|$(dirname "$mk")/\\1.ko|p"
	done < <(git -C "$tree" grep -l -E "^obj-\\\$\\(CONFIG_${sym}\\)" -- '*Makefile' || true)
}

check_m() {
	local o=$out/modular-um t0=$SECONDS syms sym ko bad=0
	local kos=()
	mapfile -t syms < <(added_tristates)
	if ((${#syms[@]} == 0)); then
		log "=m: the series adds no tristate"
		return 0
	fi
	mkdir -p "$o"
	{
		cat "$tree/drivers/base/test/.kunitconfig"
		echo CONFIG_MODULES=y
		for sym in "${syms[@]}"; do
			echo "CONFIG_$sym=m"
		done
	} | awk -F= '{ v[$1] = $0; if (!($1 in seen)) { seen[$1] = 1; o[n++] = $1 } }
		END { for (i = 0; i < n; i++) print v[o[i]] }' >"$o/.kunitconfig"
	for sym in "${syms[@]}"; do
		mapfile -t -O "${#kos[@]}" kos < <(module_of "$sym")
	done
	log "=m: ${syms[*]} as modules (${kos[*]:-no module found}), UML, in $o"
	if ! (cd "$tree" && python3 tools/testing/kunit/kunit.py build \
		--kunitconfig="$o/.kunitconfig" --build_dir="$o" --jobs="$jobs" \
		--make_options "CC=ccache gcc") >"$o/build.log" 2>&1; then
		grep -E 'ERROR|error:|undefined' "$o/build.log" | head -n 20 >&2 || tail -n 20 "$o/build.log" >&2
		log "=m: FAIL ($((SECONDS - t0)) s; $o/build.log)"
		return 1
	fi
	for ko in "${kos[@]}"; do
		[[ -f $o/$ko ]] || { log "=m: $ko was not built"; bad=1; }
	done
	((${#kos[@]})) || { log "=m: no module found for ${syms[*]}"; bad=1; }
	((bad == 0)) || { log "=m: FAIL"; return 1; }
	log "=m: PASS, $((SECONDS - t0)) s: ${kos[*]}"
}

# object_symbol DIR/NAME.c: the CONFIG_ symbol DIR/Makefile builds NAME.o
# under (`obj-$(CONFIG_X) += ... NAME.o`), or nothing when it has no such
# line (obj-y, or a part of a composite object).
object_symbol() {
	local f=$1 mk
	mk=$tree/$(dirname "$f")/Makefile
	[[ -f $mk ]] || return 0
	sed -n -E "s/^obj-\\\$\((CONFIG_[A-Za-z0-9_]+)\)[[:space:]]*[+:]?=.*[[:space:]]$(basename "${f%.c}")\.o([[:space:]].*)?\$/\1/p" "$mk" | head -n 1
}

check_allmod() {
	local o=$out/allmod t0=$SECONDS f
	local files=()
	local objs=()
	local dirs=(fs/kernfs/ fs/sysfs/ drivers/base/)
	mkdir -p "$o"
	local kmake=(make -C "$tree" O="$o" -j"$jobs" CC="ccache gcc" HOSTCC="ccache gcc" -s)
	mapfile -t files < <(git -C "$tree" diff --name-only --diff-filter=AM luod-base HEAD -- '*.c')
	if ! "${kmake[@]}" allmodconfig >"$o/build.log" 2>&1; then
		tail -n 20 "$o/build.log" >&2
		log "allmod: FAIL (allmodconfig; $o/build.log)"
		return 1
	fi
	# A driver x86 cannot configure even with COMPILE_TEST (tegra-smmu:
	# TEGRA_AHB is offered on ARM only) is skipped: forced, its object
	# would collide with the stubs its headers give when it is off.  The
	# symbol is the one its directory's Makefile builds it under.
	local sym
	for f in "${files[@]}"; do
		sym=$(object_symbol "$f")
		if [[ -n $sym ]] && ! grep -qE "^$sym=[ym]\$" "$o/.config"; then
			log "allmod: skipping $f: $sym is not set in x86_64 allmodconfig"
			continue
		fi
		objs+=("${f%.c}.o")
	done
	log "allmod: allmodconfig (x86_64) in $o: ${#objs[@]} objects, then ${dirs[*]}"
	# Objects and directories in two runs: with a single-object target on
	# its command line kbuild does not descend into a directory's subdirs.
	if ! { "${kmake[@]}" -k "${objs[@]}" && "${kmake[@]}" -k "${dirs[@]}"; } >>"$o/build.log" 2>&1; then
		grep -E 'error|Error|warning' "$o/build.log" | head -n 20 >&2 || tail -n 20 "$o/build.log" >&2
		log "allmod: FAIL ($((SECONDS - t0)) s; $o/build.log)"
		return 1
	fi
	if grep -q 'warning:' "$o/build.log"; then
		grep 'warning:' "$o/build.log" | head -n 20 >&2
		log "allmod: FAIL (compiler warnings; $o/build.log)"
		return 1
	fi
	log "allmod: PASS, $((SECONDS - t0)) s"
}

rc=0
[[ $only == allmod ]] || check_m || rc=1
[[ $only == m ]] || check_allmod || rc=1
exit "$rc"
