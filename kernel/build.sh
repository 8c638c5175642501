#!/usr/bin/env bash
# kernel/build.sh — build the test bed's guest bzImage.
#
#   kernel/build.sh [base|patched|base-lockdep|patched-lockdep|base-trace|
#                    patched-trace|modular] ...
#   kernel/build.sh --prepare-only patched     (the patched tree, no build)
#
# base:    Debian's linux-source-7.3 (kernel/SOURCE) as shipped.
# patched: the same tree with kernel/series applied in order with `git am`
#          (patch file names relative to kernel/; '#' comments allowed).
# Both variants use one config: `make tinyconfig` + kernel/guest.config.
# base-lockdep, patched-lockdep: the same trees, config tinyconfig +
#          guest.config + kernel/lockdep.config (PROVE_LOCKING, raised
#          lockdep tables); objects in their own build/<variant>.
# base-trace, patched-trace: the same trees, config tinyconfig +
#          guest.config + kernel/trace.config (tracepoints and hist
#          triggers, the ORC unwinder, no lockdep, no function tracer);
#          objects in build/<variant>.
# modular: the patched tree, config tinyconfig + guest.config +
#          kernel/modular.config (igb, igbvf, nvme, vfio, vfio-pci as
#          modules, the way a distribution host has them);
#          objects in build/modular, and the modules installed with depmod
#          (modules_install) in build/modular/modules-install/lib/modules/
#          <release>, which tests/vm/run puts into the guest's initramfs.
#          guest.config has CONFIG_MODULES on, so the two configs differ
#          only in those drivers and, with patched in ccache, modular's
#          first build is mostly cache hits (docs/testbed.md).
# LUOD_PATCHED_AS_IS=1: build the patched work tree as checked out, without
#          (re)applying the series (kernel/check-prefixes.sh).
# Build trees, objects and ccache live in the cache directory (LUOD_CACHE,
# default ~/.cache/luod-testbed), never in git.  Prints the bzImage path of
# each variant on stdout.  An unchanged variant is a no-op (~seconds).
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "$0")" && pwd)
cache=${LUOD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/luod-testbed}
jobs=${JOBS:-$(nproc)}
log() { printf 'kernel/build: %s\n' "$*" >&2; }

# One build at a time writes the cache's trees (kernel/check-prefixes.sh
# copies them under the same lock); its own private-namespace builds
# (LUOD_PATCHED_AS_IS=1) touch only its copies.  LUOD_BUILD_LOCK_HELD=1:
# the caller (kernel/kunit.sh) holds the lock already, for as long as it
# builds from the patched tree.
if [[ ${LUOD_PATCHED_AS_IS:-0} != 1 && ${LUOD_BUILD_LOCK_HELD:-0} != 1 ]]; then
	mkdir -p "$cache"
	exec 8>"$cache/build.lock"
	flock -n 8 || { log "waiting for another kernel build ($cache/build.lock)"; flock 8; }
fi
base_tree=$("$here/fetch-source.sh")
export CCACHE_DIR=${CCACHE_DIR:-$cache/ccache}
export CCACHE_BASEDIR=$cache CCACHE_NOHASHDIR=1 CCACHE_SLOPPINESS=time_macros,include_file_mtime,include_file_ctime
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
# Reproducible-ish objects so ccache hits across variants and rebuilds.
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026'
export KBUILD_BUILD_USER=luod KBUILD_BUILD_HOST=testbed

series_patches() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/series" | while read -r p; do
		[[ -f $here/$p ]] || { log "series names $p, which does not exist"; exit 1; }
		echo "$here/$p"
	done
}

prepare_patched() {
	local tree=$cache/work/patched/src stamp want
	# kernel/check-prefixes.sh checks out each prefix of the series in a
	# private copy of this tree and builds it as it stands.
	if [[ ${LUOD_PATCHED_AS_IS:-0} == 1 ]]; then
		[[ -d $tree/.git ]] || { log "LUOD_PATCHED_AS_IS=1 but there is no tree at $tree"; exit 1; }
		log "patched: building the tree as it stands ($(git -C "$tree" log -1 --format=%s))"
		echo "$tree"
		return
	fi
	want=$( { cat "$here/series"; series_patches | xargs -r cat; } | sha256sum | cut -d' ' -f1)
	if [[ ! -d $tree/.git ]]; then
		log "creating patched work tree (git) at $tree"
		rm -rf "$tree"
		mkdir -p "$tree"
		cp -a "$base_tree/." "$tree/"
		rm -f "$tree/.luod-unpacked"
		git -C "$tree" init -q
		git -C "$tree" -c user.name=luod -c user.email=luod@localhost add -f -A .
		git -C "$tree" -c user.name=luod -c user.email=luod@localhost commit -qm "linux-source $(. "$here/SOURCE"; echo "$DEB_VERSION")"
		git -C "$tree" tag -f luod-base >/dev/null
	fi
	stamp=$tree/.git/luod-series.sha256
	if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
		log "patched: series unchanged"
	else
		log "patched: applying kernel/series onto luod-base"
		# No background `git gc --auto` after am: it would inherit the
		# build lock (fd 8) and hold the next build while it repacks the
		# whole tree.
		git -C "$tree" config gc.auto 0
		git -C "$tree" config gc.autoDetach false
		git -C "$tree" am --abort >/dev/null 2>&1 || true
		git -C "$tree" checkout -q -f luod-base
		git -C "$tree" clean -qfdx
		local patches
		mapfile -t patches < <(series_patches)
		if ((${#patches[@]})); then
			git -C "$tree" -c user.name=luod -c user.email=luod@localhost am -q --3way "${patches[@]}" 8>&- ||
				{ log "git am failed; see $tree"; exit 1; }
		fi
		echo "$want" >"$stamp"
	fi
	echo "$tree"
}

build_variant() {
	local variant=$1 src out
	local fragments=("$here/guest.config")
	case $variant in
	base) src=$base_tree ;;
	patched) src=$(prepare_patched) ;;
	base-lockdep) src=$base_tree; fragments+=("$here/lockdep.config") ;;
	patched-lockdep) src=$(prepare_patched); fragments+=("$here/lockdep.config") ;;
	base-trace) src=$base_tree; fragments+=("$here/trace.config") ;;
	patched-trace) src=$(prepare_patched); fragments+=("$here/trace.config") ;;
	modular) src=$(prepare_patched); fragments+=("$here/modular.config") ;;
	*) log "unknown variant '$variant' (base|patched|base-lockdep|patched-lockdep|base-trace|patched-trace|modular)"; exit 2 ;;
	esac
	out=$cache/build/$variant
	mkdir -p "$out"
	local kmake=(make -C "$src" O="$out" -j"$jobs" CC="ccache gcc" HOSTCC="ccache gcc" -s)
	local cfgsum
	# base/patched: the sum of guest.config alone, as before the lockdep
	# variants existed, so their configured trees stay valid.
	cfgsum=$(cat "${fragments[@]}" | sha256sum | cut -d' ' -f1)
	if [[ ! -f $out/.config || $(cat "$out/.luod-config.sha256" 2>/dev/null) != "$cfgsum" ]]; then
		log "$variant: configuring (tinyconfig + ${fragments[*]##*/})"
		"${kmake[@]}" tinyconfig >/dev/null
		(cd "$out" && KCONFIG_CONFIG=.config "$src/scripts/kconfig/merge_config.sh" -m -O "$out" .config "${fragments[@]}" >/dev/null)
		"${kmake[@]}" olddefconfig >/dev/null
		# Each symbol's last value in the fragments must survive (a later
		# fragment overrides an earlier one: modular.config's =m).
		local bad=0 line
		while read -r line; do
			grep -qxF "$line" "$out/.config" || { log "$variant: config lost '$line'"; bad=1; }
		done < <(cat "${fragments[@]}" | grep -E '^CONFIG_[A-Z0-9_]+=' |
			awk -F= '{ if (!($1 in v)) o[n++] = $1; v[$1] = $0 } END { for (i = 0; i < n; i++) print v[o[i]] }')
		((bad == 0)) || exit 1
		echo "$cfgsum" >"$out/.luod-config.sha256"
	fi
	local targets=(bzImage)
	[[ $variant == modular ]] && targets+=(modules)
	log "$variant: building ${targets[*]} in $out (-j$jobs, ccache $CCACHE_DIR)"
	local t0=$SECONDS
	"${kmake[@]}" "${targets[@]}"
	if [[ $variant == modular ]]; then
		# /lib/modules/<release> as a host has it: the .ko files (debug
		# info stripped), modules.builtin*, and depmod's modules.dep,
		# modules.alias and their .bin indexes.  Installed afresh each
		# time (a second or two) so no module of an older config stays.
		rm -rf "$out/modules-install"
		"${kmake[@]}" INSTALL_MOD_PATH="$out/modules-install" INSTALL_MOD_STRIP=1 modules_install >/dev/null
		local rel
		rel=$("${kmake[@]}" kernelrelease 2>/dev/null)
		[[ -s $out/modules-install/lib/modules/$rel/modules.dep ]] ||
			{ log "$variant: modules_install left no modules.dep in $out/modules-install/lib/modules/$rel"; exit 1; }
		log "$variant: $(find "$out/modules-install/lib/modules/$rel" -name '*.ko*' | wc -l) modules in $out/modules-install/lib/modules/$rel"
	fi
	log "$variant: built in $((SECONDS - t0)) s: $("${kmake[@]}" kernelrelease 2>/dev/null)"
	echo "$out/arch/x86/boot/bzImage"
}

# --prepare-only patched: only the patched work tree (series applied), its
# path on stdout (kernel/kunit.sh builds UML from it).
if [[ ${1:-} == --prepare-only ]]; then
	[[ ${2:-patched} == patched ]] || { log "--prepare-only takes patched"; exit 2; }
	prepare_patched
	exit 0
fi
(($#)) || set -- patched
for v in "$@"; do
	build_variant "$v"
done
