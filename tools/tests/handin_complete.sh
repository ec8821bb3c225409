#!/usr/bin/env bash
# handin_complete.sh: the hand-in archive's command, in the student's README
# (tools/dist/README.md) and in ./lab help, names every file that a lab's
# README calls **yours** (lab.c by its glob, each kernel file by its path):
# lab 09's kernels were once left out of it, so a student who followed it
# handed in lab 09 without its kernels.
set -uo pipefail
KIT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
cd "$KIT" || exit 1
# The command: its lines from "tar czf handin.tar.gz" to the first without a trailing backslash.
command_in() { awk '/tar czf handin.tar.gz/ { on = 1 } on { print; if ($0 !~ /\\$/) exit }' "$1"; }
readme=$(command_in tools/dist/README.md)
help=$(./lab help 2>&1 | awk '/tar czf handin.tar.gz/ { on = 1 } on { print; if ($0 !~ /\\$/) exit }')
[[ -n $readme && -n $help ]] || { echo "FAIL: no hand-in command in tools/dist/README.md or ./lab help"; exit 1; }
failures=0 files=0
for lab_readme in labs/[0-9][0-9]_*/README.md; do
  dir=${lab_readme%/README.md}
  while read -r file; do
    files=$((files + 1))
    want=$dir/$file
    [[ $file == lab.c ]] && want="labs/*/lab.c"
    for where in readme help; do
      if [[ ${!where} != *"$want"* ]]; then
        echo "FAIL: the hand-in command of $where leaves out $want (**yours** in $lab_readme)"
        failures=$((failures + 1))
      fi
    done
  done < <(sed -nE 's/^\| `([^`]+)` \| \*\*yours\*\*.*/\1/p' "$lab_readme")
done
((files > 0)) || { echo "FAIL: no lab README calls a file **yours**"; exit 1; }
((failures == 0)) || exit 1
echo "handin_complete: the hand-in command names all $files files the labs call yours"
