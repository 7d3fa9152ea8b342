#!/usr/bin/env bash
# fuzz.sh: run each of fence's fuzz tests for a while.
#
#   scripts/fuzz.sh                 # each target for 200000 inputs
#   N=2000000 scripts/fuzz.sh       # longer
#   FUZZTIME=10m scripts/fuzz.sh    # by time instead
#   QUICK=1 scripts/fuzz.sh         # about 10 s each on a small machine (what CI does)
#
# QUICK counts inputs rather than seconds: with a time limit, Go 1.26's
# fuzzing coordinator can report its own deadline as a failure of the
# target when a worker is busy as the time runs out (golang/go#75804).
#
# Their seed corpora (and every failing input kept in testdata/fuzz) also
# run in plain `go test`, so each input that ever failed is checked again.
set -euo pipefail
cd "$(dirname "$0")/.."
# package, target, inputs for QUICK
targets=(
	"./policy FuzzParse 150000"               # the config loader: no panic, show round-trips
	"./policy FuzzCovers 300000"              # the path matcher against a plain reference
	"./policy FuzzRuleJSON 150000"            # a rule read directly reads as encoding/json reads it
	"./darwin FuzzGlobRegex 200000"           # the SBPL regexes against the Linux matcher
	"./sandbox FuzzPreflight 120000"          # command preflight: no panic, dynamic modes agree
	"./sandbox FuzzPlainDenyIsBlocked 60000"  # a denied command is blocked wherever it is put
	"./sandbox/proxy FuzzHTTPProxy 40000"     # HTTP proxy requests: no dial the policy refuses
	"./sandbox/proxy FuzzSOCKSProxy 70000"    # SOCKS5 requests: the same
	"./sandbox/proxy FuzzHelloReader 200000"  # the ClientHello reader: the same answer however the stream is cut
)
for t in "${targets[@]}"; do
	read -r pkg name quick <<<"$t"
	fuzztime=${FUZZTIME:-${N:-200000}x}
	if [ -n "${QUICK:-}" ]; then
		fuzztime=${quick}x
	fi
	echo "== $name ($pkg, $fuzztime)"
	go test "$pkg" -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime"
done
