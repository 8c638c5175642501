#!/usr/bin/env bash
# kernel/checkpatch.sh — checkpatch.pl --strict on every patch of
# kernel/series, run from inside the kernel source (kernel/fetch-source.sh)
# so that it sees a kernel tree.  Exit 0 only when every patch is clean.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tree=$("$here/fetch-source.sh")
rc=0 n=0
while read -r p; do
	n=$((n + 1))
	# --terse prints one line per finding and nothing for a clean patch.
	# UNKNOWN_COMMIT_ID: Debian's source tree has no upstream history, so
	# checkpatch cannot look up the upstream ids that Fixes: tags and
	# commit messages cite (it still checks their format).
	if out=$(cd "$tree" && perl scripts/checkpatch.pl --strict --no-tree --terse \
		--ignore UNKNOWN_COMMIT_ID "$here/$p" 2>&1) && [[ -z $out ]]; then
		echo "checkpatch: $p: clean"
	else
		echo "checkpatch: $p:" >&2
		echo "$out" >&2
		rc=1
	fi
done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/series")
echo "checkpatch: $n patches, $( ((rc)) && echo 'NOT clean' || echo 'all clean')"
exit "$rc"
