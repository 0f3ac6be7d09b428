#!/usr/bin/env bash
# tests/packaging: what an operator installs, one case per ctest test.
#   packaging_test.sh CASE SOURCE_DIR BUILD_DIR BIN_DIR
# Each case works in its own temporary folder, removed on exit.
set -euo pipefail
case_name=$1 src=$2 build=$3 bin=$4
tmp=$(mktemp -d /tmp/exactav-packaging-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIPPED: $* (scripts/install-deps --test installs it)"; exit 77; }
need() { command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"; }

# `cmake --install` of this build into $tmp/root with PREFIX (DESTDIR, as a
# package build does); prints the prefix's folder inside the tree.
install_tree() {
  DESTDIR=$tmp/root cmake --install "$build" --prefix "$1" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; fail "cmake --install --prefix $1"; }
  echo "$tmp/root$1"
}

# A man page as text, without the overstrike bold and underline.
man_text() { mandoc -Tascii "$1" | sed 's/.\x08//g'; }

# The section of man_text from heading $2 to the next heading.
man_section() { man_text "$1" | awk -v h="$2" '/^[A-Z]/ {on = ($0 == h)} on'; }

# The command table of PROG --help, and a command's sub-commands (the word
# after "PROG CMD" on its usage lines).
commands_of() { "$bin/$1" --help | awk '/^commands:/ {on = 1; next} /^$/ {on = 0} on {print $1}'; }
subcommands_of() {
  "$bin/$1" "$2" --help 2>&1 | sed -n "s/^\(usage:\)\{0,1\} *$1 $2 \([a-z][a-z-]*\).*/\2/p" | sort -u
}

has_word() { grep -qE "(^|[^a-z-])$2([^a-z-]|\$)" <<<"$1"; }

case_01_man_pages_lint_clean() {
  need mandoc
  local page out
  for page in "$src"/docs/man/*.1; do
    # -Wstyle reports every level from style up; only style may remain.
    out=$(mandoc -Tlint -Wstyle "$page" 2>&1 || true)
    if grep -v ': STYLE: ' <<<"$out" | grep -q .; then
      grep -v ': STYLE: ' <<<"$out"
      fail "$(basename "$page"): mandoc reports more than style"
    fi
    echo "$(basename "$page"): no mandoc message above style ($(grep -c ': STYLE: ' <<<"$out" || true) style)"
  done
}

case_02_man_pages_cover_every_command() {
  need mandoc
  local prog cmd sub synopsis description n=0
  for prog in exactav stepctl; do
    synopsis=$(man_section "$src/docs/man/$prog.1" SYNOPSIS)
    description=$(man_section "$src/docs/man/$prog.1" DESCRIPTION)
    for cmd in $(commands_of "$prog"); do
      has_word "$synopsis" "$cmd" || fail "$prog.1: SYNOPSIS lacks the command $cmd"
      has_word "$description" "$cmd" || fail "$prog.1: DESCRIPTION lacks the command $cmd"
      for sub in $(subcommands_of "$prog" "$cmd"); do
        has_word "$synopsis" "$sub" || fail "$prog.1: SYNOPSIS lacks $cmd $sub"
      done
      n=$((n + 1))
    done
  done
  [ "$n" -ge 18 ] || fail "only $n commands read from --help"
  echo "both man pages name all $n commands of the programs' --help"
}

case_03_install_puts_everything_under_the_prefix() {
  local p=/opt/exactav-test root f
  root=$(install_tree "$p")
  for f in bin/exactav bin/stepctl share/man/man1/exactav.1 share/man/man1/stepctl.1 \
           share/doc/exactav/README.md share/doc/exactav/LICENSE share/doc/exactav/CHANGELOG.md \
           share/doc/exactav/cli.md share/doc/exactav/canary.md \
           share/exactav/examples/canary.json share/exactav/examples/canary-statefulset.yaml \
           share/doc/exactav/examples/canary.json \
           lib/systemd/system/exactav-canary@.service lib/systemd/system/stepctl-serve.service \
           share/exactav/examples/stepctl-serve.service \
           lib/sysusers.d/exactav.conf lib/sysusers.d/stepctl.conf \
           share/bash-completion/completions/exactav share/bash-completion/completions/stepctl; do
    test -e "$root/$f" || fail "not installed: $p/$f"
  done
  [ ! -e "$src/player" ] || test -d "$root/share/exactav/player" || fail "player/ not installed"
  test ! -e "$root/bin/exactav-testd" || fail "the test server is installed"
  grep -q 'Apache License' "$root/share/doc/exactav/LICENSE" || fail "LICENSE"
  # The units name the install prefix, and every file they name is in the tree.
  for f in "$root"/lib/systemd/system/*.service; do
    ! grep -q /usr/local "$f" || fail "$(basename "$f") still names /usr/local"
    grep -q "^ExecStart=$p/bin/" "$f" || fail "$(basename "$f"): ExecStart outside $p/bin"
    cmp -s "$f" "$root/share/exactav/examples/$(basename "$f")" || fail "$(basename "$f"): two versions"
    for path in $(grep -oE "(file://)?$p/[^ ]+" "$f" | sed 's|^file://||'); do
      test -e "$tmp/root$path" || fail "$(basename "$f") names $path, not installed"
    done
  done
  echo "installed under $p: programs, man pages, docs, examples, units, sysusers.d, completion"
}

case_04_systemd_units_verify_in_the_installed_tree() {
  need systemd-analyze
  need systemd-sysusers
  local root units=(exactav-canary@1.service stepctl-serve.service) u out
  install_tree /usr/local >/dev/null
  root=$tmp/root
  # The tree is a package's: the host's own systemd units (sysinit.target...)
  # and /bin/kill (ExecReload) stand for the rest of the system.
  mkdir -p "$root/usr/lib/systemd" "$root/usr/bin"
  cp -a /usr/lib/systemd/system "$root/usr/lib/systemd/"
  cp /usr/bin/kill "$root/usr/bin/kill"
  ln -s usr/bin "$root/bin"
  out=$(systemd-analyze verify --root="$root" "${units[@]}" 2>&1) || { echo "$out"; fail "systemd-analyze verify"; }
  [ -z "$out" ] || { echo "$out"; fail "systemd-analyze verify printed warnings"; }
  echo "systemd-analyze verify --root: ${units[*]} clean"
  # The same check refuses a unit whose program is not in the tree.
  sed -i "s|^ExecStart=/usr/local/bin/|ExecStart=/usr/local/nowhere/|" \
    "$root/usr/local/lib/systemd/system/stepctl-serve.service"
  ! systemd-analyze verify --root="$root" stepctl-serve.service >/dev/null 2>&1 ||
    fail "systemd-analyze verify passed a unit whose ExecStart is missing"
  # Every unit has a state directory and runs as a user that sysusers.d makes.
  mkdir -p "$root/etc"
  systemd-sysusers --root="$root" >"$tmp/sysusers.log" 2>&1 || { cat "$tmp/sysusers.log"; fail "systemd-sysusers --root"; }
  for u in "$root"/usr/local/lib/systemd/system/*.service; do
    grep -q '^StateDirectory=' "$u" || fail "$(basename "$u") has no StateDirectory="
    user=$(sed -n 's/^User=//p' "$u")
    grep -q "^$user:x:[0-9]*:[0-9]*:[^:]*:/var/lib/$user:" "$root/etc/passwd" ||
      fail "$(basename "$u"): user $user not made by sysusers.d"
  done
  echo "sysusers.d makes the users exactav and stepctl; both units have StateDirectory="
}

case_05_bash_completion_completes_both_programs() {
  local root
  root=$(install_tree /usr/local)
  # The completion as installed, in a bash without rc files, on the
  # installed programs.  t WORD... prints the candidates for the last word.
  PATH=$root/bin:$PATH ROOT=$root bash --norc --noprofile -c '
    set -e
    source "$ROOT/share/bash-completion/completions/exactav"
    source "$ROOT/share/bash-completion/completions/stepctl"
    t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _exactav_complete; echo "${COMPREPLY[*]}"; }
    expect() { local want=$1; shift; local got; got=" $(t "$@") ";
      for w in $want; do [[ $got == *" $w "* ]] || { echo "FAIL: [$*] gave [$got], lacks $w"; exit 1; }; done; }
    expect "$(exactav --help | awk "/^commands:/{on=1;next} /^\$/{on=0} on{print \$1}")" exactav ""
    expect "$(stepctl --help | awk "/^commands:/{on=1;next} /^\$/{on=0} on{print \$1}")" stepctl ""
    expect "sign-url sign-cookies" stepctl sign
    expect "--compare --candidate --reference --evidence --json" exactav verify --
    expect "auto full" exactav verify --compare ""
    expect "MATCH MISMATCH UNKNOWN" exactav evidence list --verdict ""
    expect "list latest show import" exactav evidence ""
    expect "show" stepctl grants s
    expect "--paths --cors-origin" stepctl serve --
    expect "--key-pair-id" stepctl sign-url --key-p
    mkdir -p "$ROOT/cfgdir" && touch "$ROOT/cfgdir/canary.json"
    expect "$ROOT/cfgdir/canary.json" exactav canary --config "$ROOT/cfgdir/c"
    [ -z "$(t exactav verify --compare x)" ] || { echo "FAIL: a value outside auto|full"; exit 1; }
    complete -p stepctl | grep -q _exactav_complete
    echo "bash completion: commands, sub-commands, options and values of both programs"
  ' || fail "bash completion"
}

# The Dockerfile is never run here (no base image can be pulled): what can
# be checked without docker is.
case_06_dockerfile_builds_what_the_statefulset_runs() {
  local df=$src/Dockerfile yaml=$src/docs/examples/canary-statefulset.yaml image lib pkg f runtime libs
  test -f "$df" || fail "no Dockerfile"
  image=$(sed -n 's/^ *image: *\([^ ]*\).*/\1/p' "$yaml")
  [ -n "$image" ] || fail "the StatefulSet names no image"
  grep -q "docker build -t $image \." "$df" || fail "the Dockerfile does not say how to build $image"
  grep -q "docker build -t $image \." "$yaml" || fail "the StatefulSet does not say how $image is built"
  [ "$(grep -c '^FROM ' "$df")" -eq "$(grep -cE '^FROM debian:12(-slim)?( |$)' "$df")" ] ||
    fail "a stage is not Debian 12"
  grep -q '^RUN scripts/install-deps' "$df" || fail "the build stage does not use scripts/install-deps"
  grep -q 'install-deps --runtime' "$df" || fail "the image does not use scripts/install-deps --runtime"
  for f in $(sed -n 's/^COPY \([^-][^ ]*\) .*/\1/p' "$df"); do
    [ "$f" = . ] || test -e "$src/$f" || fail "COPY $f: not in the source tree"
  done
  # The image has every library the programs load: each NEEDED library of
  # both programs comes from a package of the --runtime list (or libc6).
  runtime=$("$src/scripts/install-deps" --runtime --list)
  libs=$(ldd "$bin/exactav" "$bin/stepctl")
  for lib in $(for b in exactav stepctl; do readelf -d "$bin/$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; done | sort -u); do
    # a sanitizer build's own runtime is no library of the image's Release build
    case $lib in libasan.so.* | libubsan.so.*) continue ;; esac
    f=$(awk -v l="$lib" '$1 == l && !seen++ {print $3}' <<<"$libs")
    # dpkg knows a file by /lib or /usr/lib, whichever its package shipped
    pkg=$({ dpkg -S "$f" || dpkg -S "$(readlink -f "$f")" || dpkg -S "/usr$f" || true; } 2>/dev/null | sed -n '1s/:.*//p')
    [ "$pkg" = libc6 ] || grep -qx "$pkg" <<<"$runtime" ||
      fail "$lib (package $pkg) is not in scripts/install-deps --runtime"
  done
  # The users of the image are those of sysusers.d, and the StatefulSet runs as exactav.
  grep -q 'useradd .*--uid 10001 .* exactav$\|useradd .*--uid 10001 .*exactav \\' "$df" || fail "no user exactav (10001)"
  grep -q 'runAsUser: 10001' "$yaml" || fail "the StatefulSet does not run as exactav"
  echo "Dockerfile: Debian 12 stages, scripts/install-deps, builds $image; every library in --runtime"
}

# The README's "Check your own stream" and "Admit viewers", command by
# command as written there, on the committed fixture (ref.ts, and
# cand_copy.ts for the CDN's copy) and the shipped templates; serve on a free
# port instead of 8080.
case_07_readme_commands_run_as_written() {
  local f=$src/fixtures ex=$src/docs/examples decision grant sport sv
  cd "$tmp"
  export PATH=$bin:$PATH
  exactav bind --channel ch1 --program-version v7 --rendition 360p --out ref.json "$f/ref.ts" >/dev/null
  exactav verify --reference ref.json --candidate "$f/cand_copy.ts" --path-id cdn-c --evidence evidence.db \
    | grep -q '^verdict:  MATCH' || fail "verify: no MATCH"
  exactav evidence latest --evidence evidence.db --path-id cdn-c | grep -q ' MATCH ' || fail "evidence latest"
  sed "s/@NOW@/$(date +%s%3N)/g" "$ex/situation.template.json" >situation.json
  decision=$(stepctl decide --input situation.json --evidence evidence.db --db control.db |
    sed -n 's/^decision \([0-9a-f]*\): step_proposed$/\1/p')
  [ -n "$decision" ] || fail "decide proposed no step on the template"
  grant=$(stepctl grant "$decision" --db control.db --max-allocations 20 --verification-allocations 2) ||
    fail "grant"
  (umask 077; openssl rand -hex 24 >verification.token)
  stepctl serve --db control.db --listen 127.0.0.1:0 --port-file serve.port \
    --verification-token-file verification.token 2>serve.log &
  sv=$!
  for _ in $(seq 100); do [ -s serve.port ] && break; sleep 0.1; done
  sport=$(cat serve.port)
  curl -s -o alloc.json -w '%{http_code}' -H 'Content-Type: application/json' -d '{"allocation_id": "viewer-1", "cohort": {"channel": "ch1",
    "region": "eu-west", "isp": "isp-x", "client": "web-hlsjs", "build": "2026.11.3", "rendition": "360p"}}' \
    "http://127.0.0.1:$sport/v1/allocations" | grep -qx 201 || { kill "$sv"; fail "allocation: $(cat alloc.json)"; }
  curl -s -o check.json -w '%{http_code}' -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $(cat verification.token)" -d '{"allocation_id": "check-1",
    "cohort": {"channel": "ch1", "region": "eu-west", "isp": "isp-x", "client": "web-hlsjs", "build": "2026.11.3",
    "rendition": "360p"}, "verification": true}' "http://127.0.0.1:$sport/v1/allocations" | grep -qx 201 ||
    { kill "$sv"; fail "verification allocation: $(cat check.json)"; }
  kill "$sv"; wait "$sv" || true
  sed "s/@NOW@/$(date +%s%3N)/g" "$ex/observations.template.json" >observations.json
  # the template counts only the step's own sessions: a check of the path's
  # public URL after the first allocation is not enough (UNKNOWN)
  exactav verify --reference ref.json --candidate "$f/cand_copy.ts" --path-id cdn-c --evidence evidence.db >/dev/null
  stepctl next "$grant" --db control.db --evidence evidence.db --input observations.json --dry-run >dry.txt || true
  grep -q 'no_step_session_evidence' dry.txt || fail "next --dry-run: a check outside the step's sessions counted"
  # the check of the verification session, then the review
  exactav verify --reference ref.json --candidate "$f/cand_copy.ts" --path-id cdn-c --allocation-id check-1 \
    --pathway cdn-c --evidence evidence.db >/dev/null
  stepctl next "$grant" --db control.db --evidence evidence.db --input observations.json >next.txt ||
    fail "next: exit $? ($(cat next.txt))"
  grep -q ': positive (PASS)$' next.txt || fail "next: not positive ($(cat next.txt))"
  grep -q 'content from step_sessions: 1 verification allocation' next.txt || fail "next: $(cat next.txt)"
  echo "README: bind, verify, evidence latest, decide, grant, serve, allocate (a viewer and a verification"
  echo "session), verify the session, next run as written"
}

"case_$case_name"
