#!/usr/bin/env bash
# bench.sh: fence's benchmarks, runnable from a fresh clone.
#
#   scripts/bench.sh          # Go benchmarks, then whole-process timings
#   RUNS=500 scripts/bench.sh
#
# Whole-process timings run the built binary the way an agent does, once
# per command, and report the mean wall time per call.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-200}

echo "== go benchmarks (policy)"
go test ./policy -run '^$' -bench . -benchmem

echo "== fence check --stdin in process (decisions/s; the target is 100,000)"
go test ./cmd -run '^$' -bench CheckStdin -benchtime 20x

echo "== proxies: bulk through a CONNECT tunnel vs direct loopback, cost of a new connection"
go test ./sandbox/proxy -run '^$' -bench . -benchtime 2s

echo "== sandbox start-up: true, unshare -Urmnp -f true, fence -t code -- true (median-ms per run)"
go test ./linux -run '^$' -bench 'True' -benchtime "${runs}x"
go test ./linux -run '^$' -bench 'ProxyHandover' -benchmem

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$work/fence" .
mkdir -p "$work/home/.config/fence" "$work/repo/a/b"
printf '{"extends": "code"}\n' >"$work/home/.config/fence/fence.jsonc"
printf '{"extends": "@base", "filesystem": {"allowWrite": ["."]}}\n' >"$work/repo/fence.jsonc"

# mean_ms CMD...: mean wall time of $runs runs of CMD, in milliseconds.
mean_ms() {
	local start end
	start=$(date +%s%N)
	for ((i = 0; i < runs; i++)); do "$@" >/dev/null 2>&1; done
	end=$(date +%s%N)
	awk -v ns=$((end - start)) -v n="$runs" 'BEGIN { printf "%.2f", ns / n / 1e6 }'
}

echo "== whole process, mean of $runs runs"
cd "$work/repo/a/b"
export HOME="$work/home" XDG_CONFIG_HOME=
printf '%-52s %8s ms\n' "fence --version" "$(mean_ms "$work/fence" --version)"
printf '%-52s %8s ms\n' "fence config show -t code" "$(mean_ms "$work/fence" config show -t code)"
printf '%-52s %8s ms\n' "fence config show (project -> @base -> code chain)" "$(mean_ms "$work/fence" config show)"

echo "== fence check --stdin: 200,000 path queries in one process (decisions/s)"
mkdir -p src/pkg keys && touch src/main.go src/pkg/util.go .env keys/server.pem
for p in src/main.go src/pkg/util.go .env keys/server.pem docs/README.md missing/a/b.txt /etc/hosts "$HOME/.ssh/id_rsa" ../outside.txt src/pkg/new.go; do
	printf '{"access":"read","path":"%s"}\n{"access":"write","path":"%s"}\n' "$p" "$p"
done >"$work/q10.jsonl"
for ((i = 0; i < 10000; i++)); do cat "$work/q10.jsonl"; done >"$work/queries.jsonl"
start=$(date +%s%N)
"$work/fence" check --stdin <"$work/queries.jsonl" >"$work/answers.jsonl" || true
end=$(date +%s%N)
answers=$(wc -l <"$work/answers.jsonl")
awk -v ns=$((end - start)) -v n="$answers" 'BEGIN { printf "%-52s %8.0f decisions/s (%d answers)\n", "fence check --stdin", n / (ns / 1e9), n }'
