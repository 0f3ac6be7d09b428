#!/usr/bin/env bash
# cli_17: `cmake --install` puts both programs and their man pages under the prefix.
#   install_test.sh BUILD_DIR
set -euo pipefail
build=$1
prefix=$(mktemp -d /tmp/exactav-install-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1 || { cat "$prefix.log"; rm -f "$prefix.log"; exit 1; }
rm -f "$prefix.log"
for f in bin/exactav bin/stepctl; do
  test -x "$prefix/$f" || { echo "missing $f"; exit 1; }
done
"$prefix/bin/exactav" --version | grep -q '^exactav '
"$prefix/bin/stepctl" --version | grep -q '^stepctl '
man=$(find "$prefix" -path '*/man1/*' -name '*.1' | sort | xargs -n1 basename | tr '\n' ' ')
[ "$man" = "exactav.1 stepctl.1 " ] || { echo "man pages: '$man'"; exit 1; }
test ! -e "$prefix/bin/exactav-testd"
# plain roff that formats without a warning (when groff is installed)
if command -v groff >/dev/null; then
  for p in "$prefix"/share/man/man1/*.1; do
    warnings=$(groff -man -Tutf8 -ww -z "$p" 2>&1)
    [ -z "$warnings" ] || { echo "$p: $warnings"; exit 1; }
  done
fi
grep -q '^\.SH EXIT STATUS' "$prefix/share/man/man1/exactav.1"
grep -q '^\.SH EXIT STATUS' "$prefix/share/man/man1/stepctl.1"
echo "installed: bin/exactav bin/stepctl, man1/$man"
