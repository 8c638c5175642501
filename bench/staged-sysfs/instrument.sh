#!/usr/bin/env bash
# bench/staged-sysfs/instrument.sh TREE — count kernfs_rwsem acquisitions in a
# kernel tree, for the staged-sysfs measurement only (never part of the
# series).  Every `down_write(&X->kernfs_rwsem)` / `down_read(...)` in
# fs/kernfs/*.c goes through a counting wrapper; the counts are in debugfs:
#   /sys/kernel/debug/kernfs_rwsem_writes, /sys/kernel/debug/kernfs_rwsem_reads
# (all kernfs roots together; in the test bed's guest only sysfs is busy).
# Writing N to /sys/kernel/debug/kernfs_rwsem_trace_writes (_reads) prints
# the stack of each of the next N write (read) acquisitions to the kernel log
# (bench/staged-sysfs/trace).
# Idempotent: a tree already instrumented is left alone.
set -euo pipefail
tree=${1:?usage: instrument.sh KERNEL_TREE}
h=$tree/fs/kernfs/kernfs-internal.h
grep -q kernfs_stat_down_write "$h" && { echo "instrument: $tree already instrumented" >&2; exit 0; }
# The wrappers, just before the header's closing #endif.
python3 - "$h" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
add = '''
/* bench/staged-sysfs instrumentation: kernfs_rwsem acquisitions */
extern atomic_t kernfs_rwsem_writes, kernfs_rwsem_reads;
extern atomic_t kernfs_rwsem_trace_writes, kernfs_rwsem_trace_reads;

static inline void kernfs_stat_trace(atomic_t *left, const char *what)
{
	if (atomic_read(left) > 0 && atomic_dec_if_positive(left) >= 0) {
		pr_info("kernfs_rwsem trace: %s\\n", what);
		dump_stack();
	}
}

static inline void kernfs_stat_down_write(struct rw_semaphore *sem)
{
	atomic_inc(&kernfs_rwsem_writes);
	kernfs_stat_trace(&kernfs_rwsem_trace_writes, "write");
	down_write(sem);
}

static inline void kernfs_stat_down_read(struct rw_semaphore *sem)
{
	atomic_inc(&kernfs_rwsem_reads);
	kernfs_stat_trace(&kernfs_rwsem_trace_reads, "read");
	down_read(sem);
}

'''
i = s.rindex('#endif')
open(p, 'w').write(s[:i] + add + s[i:])
PY
sed -i -E 's/\bdown_write\(&([a-z_]+)->kernfs_rwsem\)/kernfs_stat_down_write(\&\1->kernfs_rwsem)/; s/\bdown_read\(&([a-z_]+)->kernfs_rwsem\)/kernfs_stat_down_read(\&\1->kernfs_rwsem)/' \
	"$tree"/fs/kernfs/*.c
cat >>"$tree/fs/kernfs/mount.c" <<'C'

/* bench/staged-sysfs instrumentation: kernfs_rwsem acquisitions */
#include <linux/debugfs.h>
atomic_t kernfs_rwsem_writes, kernfs_rwsem_reads;
atomic_t kernfs_rwsem_trace_writes, kernfs_rwsem_trace_reads;

static int __init kernfs_rwsem_stat_init(void)
{
	debugfs_create_atomic_t("kernfs_rwsem_writes", 0444, NULL,
				&kernfs_rwsem_writes);
	debugfs_create_atomic_t("kernfs_rwsem_reads", 0444, NULL,
				&kernfs_rwsem_reads);
	debugfs_create_atomic_t("kernfs_rwsem_trace_writes", 0644, NULL,
				&kernfs_rwsem_trace_writes);
	debugfs_create_atomic_t("kernfs_rwsem_trace_reads", 0644, NULL,
				&kernfs_rwsem_trace_reads);
	return 0;
}
late_initcall(kernfs_rwsem_stat_init);
C
n=$(grep -c 'kernfs_stat_down_\(write\|read\)(&' "$tree"/fs/kernfs/*.c | awk -F: '{ s += $2 } END { print s }')
echo "instrument: $tree: $n kernfs_rwsem acquisition sites counted" >&2
