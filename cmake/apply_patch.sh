#!/bin/sh
# apply_patch.sh: a known-wrong version's files (labs/CMakeLists.txt): the
# files FILE... of SOLUTION_DIR that PATCH changes, copied into OUT_DIR and
# patched there. One small process per wrong version, not one per step.
#   sh cmake/apply_patch.sh PATCH SOLUTION_DIR OUT_DIR FILE...
set -eu
patch_file=$1 solution_dir=$2 out_dir=$3
shift 3
rm -rf "$out_dir"
mkdir -p "$out_dir"
for file in "$@"; do
  mkdir -p "$out_dir/$(dirname "$file")"
  cp "$solution_dir/$file" "$out_dir/$file"
done
patch --quiet --batch -p1 -d "$out_dir" -i "$patch_file"
