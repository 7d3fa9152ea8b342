#!/usr/bin/env bash
# fuzz.sh: run fence's fuzz tests, each for N inputs (default 200000).
# Their seed corpora (and any failing input kept in testdata/fuzz) also run
# in plain `go test`, so CI checks every input that ever failed.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${N:-200000}
go test ./policy -run '^$' -fuzz '^FuzzParse$' -fuzztime "${n}x"
go test ./sandbox -run '^$' -fuzz '^FuzzPreflight$' -fuzztime "${n}x"
go test ./sandbox -run '^$' -fuzz '^FuzzPlainDenyIsBlocked$' -fuzztime "${n}x"
