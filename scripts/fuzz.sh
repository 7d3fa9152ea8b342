#!/usr/bin/env bash
# fuzz.sh: run each of fence's fuzz tests for a while.
#
#   scripts/fuzz.sh                 # each target for 200000 inputs
#   N=2000000 scripts/fuzz.sh       # longer
#   FUZZTIME=10s scripts/fuzz.sh    # by time instead (what CI does)
#
# Their seed corpora (and every failing input kept in testdata/fuzz) also
# run in plain `go test`, so each input that ever failed is checked again.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-${N:-200000}x}
targets=(
	"./policy FuzzParse"              # the config loader: no panic, show round-trips
	"./policy FuzzCovers"             # the path matcher against a plain reference
	"./darwin FuzzGlobRegex"          # the SBPL regexes against the Linux matcher
	"./sandbox FuzzPreflight"         # command preflight: no panic, dynamic modes agree
	"./sandbox FuzzPlainDenyIsBlocked" # a denied command is blocked wherever it is put
	"./sandbox/proxy FuzzHTTPProxy"   # HTTP proxy requests: no dial the policy refuses
	"./sandbox/proxy FuzzSOCKSProxy"  # SOCKS5 requests: the same
)
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "== $name ($pkg, $fuzztime)"
	go test "$pkg" -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime"
done
