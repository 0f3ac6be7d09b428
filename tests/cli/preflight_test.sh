#!/usr/bin/env bash
# cli_15 / cli_16: scripts/preflight, the README's first command.
#   preflight_test.sh runs N SRC BIN_DIR     N runs in a row, each must exit 0, reach the controller,
#                                            finish its canary run and show the step's content PASS
#                                            from the canary's verification session
#   preflight_test.sh foreign 1 SRC BIN_DIR  a non-empty WORKDIR it did not make is refused, untouched
set -euo pipefail
mode=$1 n=$2 src=$3 bin=$4
tmp=$(mktemp -d /tmp/exactav-preflight-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export BIN_DIR=$bin NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost

case $mode in
runs)
  for i in $(seq "$n"); do
    set +e
    "$src/scripts/preflight" "$tmp/work" >"$tmp/out" 2>&1
    rc=$?
    set -e
    if [ "$rc" -ne 0 ] || ! grep -q '^   stepctl exit 0;' "$tmp/out"; then
      echo "run $i: exit $rc"; cat "$tmp/out"; exit 1
    fi
    grep -q 'cdn-c: eligible' "$tmp/out" || { echo "run $i: no decision"; cat "$tmp/out"; exit 1; }
    grep -q '^   canary exit 0;' "$tmp/out" || { echo "run $i: the canary did not finish"; cat "$tmp/out"; exit 1; }
    # the canary's verification session of the step is what stepctl next counts
    grep -q 'content PASS match: .*(content from step_sessions: 1 verification allocation(s))' "$tmp/out" ||
      { echo "run $i: no content from the step's own session"; cat "$tmp/out"; exit 1; }
  done
  echo "$n runs in a row: all finished (exit 0, controller decision printed, canary run finished,"
  echo "the step's content PASS from its verification session)"
  # the work directory carries the marker, and is reused without complaint
  test -e "$tmp/work/.exactav-preflight"
  ;;
foreign)
  mkdir "$tmp/mine"
  echo "precious" >"$tmp/mine/notes.txt"
  set +e
  "$src/scripts/preflight" "$tmp/mine" >"$tmp/out" 2>&1
  rc=$?
  set -e
  [ "$rc" -ne 0 ] || { echo "a foreign non-empty WORKDIR was accepted"; cat "$tmp/out"; exit 1; }
  grep -q 'not made by preflight\|was not made by preflight' "$tmp/out"
  [ "$(cat "$tmp/mine/notes.txt")" = precious ] && [ "$(ls -A "$tmp/mine")" = notes.txt ]
  # a file in place of the WORKDIR is refused too
  echo data >"$tmp/file"
  if "$src/scripts/preflight" "$tmp/file" >"$tmp/out" 2>&1; then echo "a file was accepted"; exit 1; fi
  [ "$(cat "$tmp/file")" = data ]
  # an empty directory is used, and a user's file added later survives a second run
  mkdir "$tmp/empty"
  "$src/scripts/preflight" "$tmp/empty" >"$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
  echo "mine" >"$tmp/empty/user.txt"
  "$src/scripts/preflight" "$tmp/empty" >"$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
  [ "$(cat "$tmp/empty/user.txt")" = mine ]
  echo "foreign WORKDIR refused and untouched; own WORKDIR reused; user files kept"
  ;;
esac
