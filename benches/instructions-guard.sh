#!/usr/bin/env bash
# The instruction budget of a reconcile, against parsing its own inputs
# (docs/performance.md): steady_state at most 0.5x parse_inputs, update_path at most 1.0x,
# for the realistic Gateway and for the wide one (64 listeners, 1,000 routes); and route
# admission linear in its input (issue #45 H1): the routes and the listeners' selector
# entries doubled together, a steady reconcile costs at most 2.5x (linear: about 2x; the
# admission decided per route and listener cost 4.7x).
# Counts come from callgrind, so they do not move with the machine's load.
#
#   benches/instructions-guard.sh          build the instructions bench, measure, check
#   benches/instructions-guard.sh EXE...   measure and check already-built bench executables
#
# Exits 1 when a budget is exceeded, 2 when it cannot measure. N (default 200) is how many
# times each operation runs.
set -euo pipefail
cd "$(dirname "$0")/.."

n="${N:-200}"
steady_budget="0.5"
update_budget="1.0"
admission_budget="2.5"

if ! command -v valgrind >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "instructions-guard: installing valgrind" >&2
    apt-get install -y valgrind >/dev/null 2>&1 ||
      { apt-get update >/dev/null && apt-get install -y valgrind >/dev/null; }
  else
    echo "instructions-guard: valgrind is missing; install it (apt-get install valgrind) or run as root" >&2
    exit 2
  fi
fi

if [ "$#" -eq 0 ]; then
  # Cargo's progress and errors go to standard error; the executable's path is in its JSON.
  if ! messages="$(cargo bench --bench instructions --no-run --message-format=json)"; then
    echo "instructions-guard: could not build the instructions bench" >&2
    exit 2
  fi
  exe="$(printf '%s\n' "$messages" | grep -o '"executable":"[^"]*instructions[^"]*"' |
    tail -n 1 | sed 's/"executable":"\(.*\)"/\1/')"
  if [ -z "$exe" ] || [ ! -x "$exe" ]; then
    echo "instructions-guard: could not build the instructions bench" >&2
    exit 2
  fi
  set -- "$exe"
fi

# Instructions of one run: `count OP N`.
count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$exe" "$1" "$2" 2>&1 |
    sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}

status=0
for exe in "$@"; do
  echo "$exe"
  # The realistic Gateway, then the one at the CRD's listener bound with 1,000 routes.
  for input in "" "_wide"; do
    base="$(count "none$input" 0)"
    parse="$(count "parse$input" "$n")"
    steady="$(count "steady$input" "$n")"
    update="$(count "update$input" "$n")"
    if [ -z "$base" ] || [ -z "$parse" ] || [ -z "$steady" ] || [ -z "$update" ]; then
      echo "instructions-guard: callgrind gave no count for $exe" >&2
      exit 2
    fi
    awk -v base="$base" -v n="$n" -v parse="$parse" -v steady="$steady" -v update="$update" \
      -v sb="$steady_budget" -v ub="$update_budget" -v input="${input:-_realistic}" '
      function per(total) { return (total - base) / n }
      BEGIN {
        p = per(parse); s = per(steady); u = per(update)
        printf "  %s\n", substr(input, 2)
        printf "    %-14s %10.0f instructions\n", "parse_inputs", p
        printf "    %-14s %10.0f instructions  %.2fx (budget %.1fx)\n", "steady_state", s, s / p, sb
        printf "    %-14s %10.0f instructions  %.2fx (budget %.1fx)\n", "update_path", u, u / p, ub
        exit (s / p > sb || u / p > ub) ? 1 : 0
      }' || status=1
  done
  # Route admission (issue #45 H1): 64 listeners, each selecting namespaces by a
  # `matchLabels` of S entries, R routes from 4 namespaces that every selector admits;
  # R and S doubled together. A count allocations cannot give: deciding admission per
  # route and listener allocated nothing per decision.
  h1_n=10
  per_admission() {
    local size="_admission:64:$1:$2:4" base steady
    base="$(count "none$size" 0)"
    steady="$(count "steady$size" "$h1_n")"
    if [ -z "$base" ] || [ -z "$steady" ]; then
      echo "instructions-guard: callgrind gave no count for $exe" >&2
      exit 2
    fi
    echo $(((steady - base) / h1_n))
  }
  small="$(per_admission 250 25)"
  large="$(per_admission 500 50)"
  awk -v small="$small" -v large="$large" -v ab="$admission_budget" '
    BEGIN {
      printf "  admission (64 listeners, 4 namespaces)\n"
      printf "    %-24s %10.0f instructions\n", "250 routes, 25 entries", small
      printf "    %-24s %10.0f instructions  %.2fx (budget %.1fx)\n", "500 routes, 50 entries", large, large / small, ab
      exit (large / small > ab) ? 1 : 0
    }' || status=1
done
if [ "$status" -ne 0 ]; then
  echo "instructions-guard: over budget" >&2
fi
exit "$status"
