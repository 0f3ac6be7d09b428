# bash completion for exactav and stepctl.  `cmake --install` puts this file
# in PREFIX/share/bash-completion/completions/ twice, as exactav and stepctl
# (bash-completion loads a command's file on first use); or `source` it.
#
# Nothing is listed here by hand: the commands, sub-commands, options and
# option values are read from the program's own --help, so the completion
# says what the installed build accepts, and a command added to a program is
# completed without touching this file.

# The words of the program's command table: "  NAME  description" lines
# after "commands:" in `PROG --help`.
_exactav_commands() {
  "$1" --help 2>/dev/null | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z0-9-]*\)\( .*\)\{0,1\}$/\1/p'
}

# Sub-commands of CMD: the word after "PROG CMD" on its usage lines
# (`exactav evidence list`, `stepctl grants show`).
_exactav_subcommands() {
  local prog=${1##*/}
  "$1" "$2" --help 2>/dev/null |
    sed -n "s/^\(usage:\)\{0,1\} *$prog $2 \([a-z][a-z-]*\)\( .*\)\{0,1\}$/\2/p" | sort -u
}

# The options of CMD with their argument: "--name" or "--name ARG" (an
# argument is the word after one space, as --help writes it).
_exactav_option_table() {
  "$1" "$2" --help 2>/dev/null |
    grep -oE -- '(^|[ [,(])--[a-z][a-z0-9-]*( [^ -][^ ,]*)?' | sed 's/^[ [,(]//' | sort -u
}

_exactav_files() {
  compopt -o filenames 2>/dev/null # a folder gets its slash (only inside a real completion)
  mapfile -t COMPREPLY < <(compgen -f -- "$1")
}

_exactav_complete() {
  local cur=${COMP_WORDS[COMP_CWORD]} prog=${COMP_WORDS[0]} cmd="" i
  COMPREPLY=()
  command -v "$prog" >/dev/null 2>&1 || return 0
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac
  done
  if [ -z "$cmd" ]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_exactav_commands "$prog") --help --version" -- "$cur")
    return 0
  fi
  local table prev=${COMP_WORDS[COMP_CWORD - 1]} arg
  table=$(_exactav_option_table "$prog" "$cmd")
  if [[ $prev == --* ]]; then
    arg=$(printf '%s\n' "$table" | sed -n "s/^$prev \(.*\)$/\1/p" | head -1)
    if [ -n "$arg" ]; then
      if [[ $arg == *'|'* ]]; then # a closed set of values: auto|full
        mapfile -t COMPREPLY < <(compgen -W "${arg//|/ }" -- "$cur")
      else                         # FILE, DIR, URL, a number...: files help most
        _exactav_files "$cur"
      fi
      return 0
    fi
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$({ printf '%s\n' "$table" | cut -d' ' -f1; echo --help; } | sort -u)" -- "$cur")
  elif [ "$i" -eq $((COMP_CWORD - 1)) ] && [ -n "$(_exactav_subcommands "$prog" "$cmd")" ]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_exactav_subcommands "$prog" "$cmd")" -- "$cur")
  else
    _exactav_files "$cur"
  fi
}

complete -F _exactav_complete exactav stepctl
