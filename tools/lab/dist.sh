# dist.sh: the student distribution (sourced by ./lab).
#
# Made from the last commit only, never from the working tree: an instructor's
# finished lab.c, a plot drawn into the kit's root or a build directory cannot
# leak into it. Left out: solutions/ (with the known-wrong versions), tools/dist/
# and what tools/dist/instructors-only lists (the authors' docs/, the CI, the
# benches that hold a lab's answer). The README becomes the student's
# (tools/dist/README.md), which describes only what a student has.

# Files of the last commit that differ in the working tree, among the labs.
edited_labs() {
  git diff --name-only HEAD -- labs/ 2>/dev/null || true
}

cmd_dist() {
  (($# <= 1)) || usage_error "dist takes at most one DIR"
  local dest parent name edited untracked count
  if (($# == 1)); then dest=$(abspath_from_caller "$1"); else dest=$ROOT/dist/labkit-student; fi
  dest=${dest%/}
  [[ -n $dest ]] || usage_error "dist: '/' is not a place for the distribution"
  if ! command -v git >/dev/null 2>&1 || [[ "$(git rev-parse --show-toplevel 2>/dev/null)" != "$ROOT" ]]; then
    die "dist: the student copy is made from the kit's git repository (its last commit); $ROOT is not one."
  fi
  mkdir -p "$(dirname "$dest")"
  parent=$(cd "$(dirname "$dest")" && pwd)
  name=$(basename "$dest")
  dest=${parent%/}/$name
  if [[ $ROOT == "$dest" || $ROOT == "$dest"/* ]]; then
    die "dist: $dest holds the kit itself; choose a directory outside it (default: dist/labkit-student)."
  fi
  if [[ -e $dest ]]; then
    # Replace an earlier distribution; refuse to touch anything else.
    if [[ -d $dest && -f $dest/lab && -f $dest/CMakePresets.json && ! -e $dest/.git && ! -e $dest/solutions ]] \
      || [[ -d $dest && -z "$(ls -A "$dest")" ]]; then
      rm -rf "$dest"
    else
      die "dist: $dest exists and is not an earlier student distribution; remove it or choose another DIR."
    fi
  fi
  edited=$(edited_labs)
  untracked=$(git ls-files --others --exclude-standard | grep -c -v -E '^(build|dist|plots)/' || true)
  mkdir -p "$dest"
  local left_out=(solutions tools/dist) path
  mapfile -t -O 2 left_out < <(git show "HEAD:tools/dist/instructors-only" | sed -e 's/#.*//' -e 's/[[:space:]]*$//' | grep -v '^$')
  git archive --format=tar HEAD | tar -C "$dest" -xf - --anchored "${left_out[@]/#/--exclude=}"
  git show "HEAD:tools/dist/README.md" >"$dest/README.md"
  for path in "${left_out[@]}"; do
    [[ ! -e $dest/$path ]] || die "dist: $path ended up in $dest; this is a bug in ./lab."
  done
  count=$(find "$dest" -type f | wc -l)
  tar -C "$parent" --owner=0 --group=0 --numeric-owner -czf "$dest.tar.gz" "$name"
  say "student distribution: $dest ($count files of commit $(git rev-parse --short HEAD); left out: ${left_out[*]})"
  say "archive: $dest.tar.gz"
  if [[ -n $edited ]]; then
    say "left out: these files differ from the commit, and the student copy has the committed ones:"
    printf '  %s\n' $edited
  fi
  ((untracked == 0)) || say "left out: $untracked files git does not track (commit them to ship them)."
  say "students start with: ./lab deps && ./lab run 01"
}
