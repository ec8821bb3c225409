#!/usr/bin/env bash
# driver_help.sh: `./lab CMD --help` (and -h) never runs CMD. For every
# command ./lab takes (its LAB_COMMANDS line) that the help lists: that
# command's usage, exit 0; for one it does not list (the student copy's
# instructors' commands): a refusal; for a word that is no command (the help's
# prose has many): "unknown command", exit 2. Never a build, never a file made
# where it was called or in the kit (./lab plots --help once drew every figure
# into a folder named --help, and in a copy without solutions/ ./lab fuzz
# --help started fuzzing).
set -uo pipefail
KIT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/here" && cd "$work/here" || exit 1
LAB_COMMANDS=""
eval "$(grep -m1 '^LAB_COMMANDS=' "$KIT/lab")"
read -ra commands <<<"$LAB_COMMANDS"
((${#commands[@]} >= 10)) || { echo "FAIL: ./lab names ${#commands[@]} commands (LAB_COMMANDS)"; exit 1; }
"$KIT/lab" help >"$work/help.txt" 2>&1
before=$(ls -A "$KIT")
failures=0 listed=0
# --help for every command, -h (the same path) for three that take a folder,
# and words of the help's prose that are no command.
for run in "${commands[@]/%/ --help}" "plots -h" "dist -h" "fuzz -h" "your --help" "first --help"; do
  read -r cmd flag <<<"$run"
  [[ $cmd == help || $cmd == grade && $flag == -h ]] && continue
  rc=0
  "$KIT/lab" "$cmd" "$flag" >out 2>&1 || rc=$?
  if [[ " ${commands[*]} " != *" $cmd "* ]]; then
    good=$( ((rc == 2)) && grep -q "unknown command '$cmd'" out && echo 1)
  elif grep -qE "^  $cmd( |$)" "$work/help.txt" || [[ $cmd == grade ]]; then
    [[ $flag == -h ]] || listed=$((listed + 1))
    good=$( ((rc == 0)) && grep -q '^usage: ' out && grep -qE "^  $cmd( |$)|^usage: \./lab $cmd " out && echo 1)
  else
    good=$( ((rc != 0)) && echo 1)
  fi
  if [[ -z $good || $(ls -A) != out ]]; then
    echo "FAIL: ./lab $cmd $flag (exit status $rc, files here: $(ls -A | paste -sd' ' -)):"
    sed 's/^/    /' out | head -n 5
    failures=$((failures + 1))
  fi
  rm -f out
done
[[ $(ls -A "$KIT") == "$before" ]] || { echo "FAIL: the kit's folder changed: $(diff <(echo "$before") <(ls -A "$KIT"))"; failures=$((failures + 1)); }
((failures == 0)) || exit 1
echo "kit.driver.help: ${#commands[@]} commands, $listed with an entry in this copy's help: each --help printed its usage or a refusal, nothing else"
