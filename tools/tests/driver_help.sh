#!/usr/bin/env bash
# driver_help.sh: `./lab CMD --help` (and -h) for every command the help lists
# prints that command's usage and does nothing else: exit 0, no build, no file
# made where it was called or in the kit (./lab plots --help once drew every
# figure into a folder named --help). An unknown command's --help is refused.
set -uo pipefail
KIT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
mapfile -t commands < <("$KIT/lab" help | awk '/^  [a-z]+ / && $1 != "help" { print $1 }' | sort -u)
((${#commands[@]} >= 10)) || { echo "FAIL: ./lab help lists ${#commands[@]} commands"; exit 1; }
before=$(ls -A "$KIT")
failures=0
# --help for every command, -h (the same path) for three that take a folder.
for run in "${commands[@]/%/ --help}" "plots -h" "dist -h" "fuzz -h"; do
  read -r cmd flag <<<"$run"
  rc=0
  "$KIT/lab" "$cmd" "$flag" >out 2>&1 || rc=$?
  if ((rc != 0)) || ! grep -q '^usage: ' out || ! grep -qE "^  $cmd( |$)|^usage: \./lab $cmd " out || [[ $(ls -A) != out ]]; then
    echo "FAIL: ./lab $cmd $flag (exit status $rc, files here: $(ls -A | paste -sd' ' -)):"
    sed 's/^/    /' out | head -n 5
    failures=$((failures + 1))
  fi
done
rc=0
"$KIT/lab" nosuch --help >out 2>&1 || rc=$?
if ((rc != 2)) || ! grep -q "unknown command 'nosuch'" out; then
  echo "FAIL: ./lab nosuch --help: exit $rc, not 2 with 'unknown command'"
  failures=$((failures + 1))
fi
[[ $(ls -A "$KIT") == "$before" ]] || { echo "FAIL: the kit's folder changed: $(diff <(echo "$before") <(ls -A "$KIT"))"; failures=$((failures + 1)); }
((failures == 0)) || exit 1
echo "kit.driver.help: ${#commands[@]} commands, each --help (and three -h) only printed its usage"
