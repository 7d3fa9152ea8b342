#!/usr/bin/env bash
# bench.sh: fence's benchmarks, runnable from a fresh clone.
#
#   scripts/bench.sh          # Go benchmarks, then whole-process timings
#   RUNS=500 scripts/bench.sh
#   scripts/bench.sh load     # 500 sandboxes, 16 at a time, then a leak check
#
# Whole-process timings run the built binary the way an agent does, once
# per command, and report the median wall time of RUNS runs and its ratio
# to running the command directly.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-200}

if [ "${1:-}" = load ]; then
	echo "== load: ${LOAD:-500} sandboxes, 16 at a time (default policy, code template with proxy, killed mid-run)"
	go test ./linux -run '^TestLoad$' -load "${LOAD:-500}" -count=1 -v | grep -E 'sandboxes/s|^(---|ok|FAIL)|load_test'
	exit
fi

echo "== go benchmarks (policy)"
go test ./policy -run '^$' -bench . -benchmem

echo "== command preflight of a 2 KB command line, fully parsed and screened (the target is 200 us)"
go test ./sandbox -run '^$' -bench Preflight2KB -benchmem -count 5

echo "== the programs the code template's deny rules name, and their other names (links, copies) on this PATH and git's exec-path, found at start (the target is 0.3 ms)"
go test ./sandbox -run '^$' -bench 'Identity$' -benchmem

echo "== the environment of a run sanitized by the code template's 70 patterns"
go test ./sandbox -run '^$' -bench SanitizeEnv -benchmem

echo "== the host unix sockets found at start: this machine's /proc/net/unix and /run, and a table of 200 bound sockets (the target is 0.3 ms)"
go test ./sandbox -run '^$' -bench HostSockets -benchmem

echo "== planning the protections of what a run leaves behind (links, repositories), and the whole plan, for the code template: on this repository and on 50 repositories of 100,000 files"
go test ./cmd -run '^$' -bench PlanProtections -benchtime 20x

echo "== fence check --stdin in process (decisions/s; the target is 100,000)"
go test ./cmd -run '^$' -bench CheckStdin -benchtime 20x

echo "== fence hook AGENT in process: one decision with the policy loaded from the event's cwd, for a shell and a file call of each agent (p50/p99 ms; the target is a p99 under 5 ms)"
go test ./cmd -run '^$' -bench 'Hook(Claude|Cursor|Codex|Gemini|Copilot)$' -benchtime 2000x

echo "== proxies: bulk through a CONNECT tunnel vs direct loopback, cost of a new connection"
go test ./sandbox/proxy -run '^$' -bench 'Direct|ConnectTunnel|NewConnectionTunnel$|HelloReader|SNIGate' -benchtime 2s -benchmem

# The SNI check of tunnels, off (the code before it) and on, in runs that
# alternate case by case so that drift in the machine falls on all alike;
# the medians, and each one's ratio to off.
sni_runs=${SNI_RUNS:-5}
echo "== proxies: the tunnels' SNI check off and on, $sni_runs alternating runs of each (median MB/s, or us per new connection, and the ratio to off)"
sni_dir=$(mktemp -d)
go test -c -o "$sni_dir/proxy.test" ./sandbox/proxy
for ((i = 0; i < sni_runs; i++)); do
	for c in off on-plain on-same on-other; do
		(cd sandbox/proxy && "$sni_dir/proxy.test" -test.run '^$' -test.bench "TunnelSNI/^sni=$c\$" -test.benchtime 1s) | grep '^Benchmark'
	done
done >"$sni_dir/runs.txt"
awk '{ name = $1; sub(/-[0-9]+$/, "", name); print name, ($NF == "MB/s") ? $(NF-1) : $3 / 1000 }' "$sni_dir/runs.txt" |
	sort -k1,1 -k2,2g | awk '
	function flush() { if (k) { order[++n] = last; med[last] = (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 } k = 0 }
	$1 != last { flush(); last = $1 }
	{ v[++k] = $2 }
	END {
		flush()
		for (i = 1; i <= n; i++) {
			base = order[i]; sub(/sni=.*/, "sni=off", base)
			unit = (order[i] ~ /NewConnection/) ? "us/conn" : "MB/s"
			printf "%-52s %10.2f %-8s %6.3fx\n", order[i], med[order[i]], unit, med[order[i]] / med[base]
		}
	}'
rm -rf "$sni_dir"

echo "== sandbox start-up in Go: true, unshare -Urmnp -f true, an empty Go program, the design's floor, fence -t code -- true (median-ms)"
go test ./linux -run '^$' -bench 'True|GoEmpty' -benchtime "${runs}x"
echo "== fence -- true, fence -t code -- true and bwrap's true, alternating, one of each a round (median-ms, and fence's ratios to bwrap)"
go test ./linux -run '^$' -bench 'VsBwrap' -benchtime "${runs}x"
echo "== argv mode: one exec the supervisor judges, in us (path-us: the same failing exec unjudged; allowed, a script's interpreter line, refused), and how often a thread rewriting argv wins the race"
go test ./linux -run '^$' -bench 'ExecJudged|ExecArgvRace' -benchtime 2000x

root=$PWD
# Outside /tmp: a fence binary below /tmp makes the sandbox's /tmp the
# host's, read-only (fence protects its own binary), which is not the
# run being measured.
work=$(mktemp -d -p /var/tmp)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$work/fence" .
CGO_ENABLED=0 go build -trimpath -o "$work/floor" ./linux/testdata/floor
mkdir -p "$work/home/.config/fence" "$work/repo/a/b"
printf '{"extends": "code"}\n' >"$work/home/.config/fence/fence.jsonc"
printf '{"extends": "@base", "filesystem": {"allowWrite": ["."]}}\n' >"$work/repo/fence.jsonc"
printf '{}\n' >"$work/empty.jsonc"

# median_ms CMD...: the median wall time of $runs runs of CMD, in ms.
median_ms() {
	local i start end
	for ((i = 0; i < runs; i++)); do
		start=$(date +%s%N)
		"$@" >/dev/null 2>&1 || true
		end=$(date +%s%N)
		echo $((end - start))
	done | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] / 1e6 }'
}

# row NAME CMD...: one line of the table, with the ratio to `true`.
base=
row() {
	local name=$1 ms
	shift
	ms=$(median_ms "$@")
	[ -n "$base" ] || base=$ms
	awk -v n="$name" -v ms="$ms" -v b="$base" 'BEGIN { printf "%-56s %8.2f ms %7.1fx\n", n, ms, ms / b }'
}

echo "== whole processes, median of $runs runs, and the ratio to true"
cd "$work/repo/a/b"
export HOME="$work/home" XDG_CONFIG_HOME=
git init -q "$work/git" && (cd "$work/git" && echo hi >f && git add f && git -c user.email=b@e -c user.name=b commit -qm x)
row "true" true
row "unshare -Urmnp -f true" unshare -Urmnp -f true
bwrap_args=(--ro-bind / / --dev /dev --proc /proc --unshare-all --new-session --die-with-parent true)
if command -v bwrap >/dev/null; then
	row "bwrap ${bwrap_args[*]}" bwrap "${bwrap_args[@]}"
else
	echo "bwrap not installed: no bwrap row"
fi
row "an empty Go program" "$work/floor"
row "floor: Go supervisor + Go init in namespaces, true" "$work/floor" /bin/true
row "fence --version" "$work/fence" --version
row "fence -s empty.jsonc -- true (no proxies)" "$work/fence" -s "$work/empty.jsonc" -- true
row "fence -t code -- true" "$work/fence" -t code -- true
row "fence config show (project -> @base -> code chain)" "$work/fence" config show
row "git status (small repo)" git -C "$work/git" status
row "fence -t code -- git status (small repo)" sh -c "cd '$work/git' && '$work/fence' -t code -- git status"
peak=$(/usr/bin/env time -f %M "$work/fence" -t code -- true 2>&1 >/dev/null | tail -1 || true)
echo "supervisor peak RSS (fence -t code -- true): ${peak:-?} KB (the target is under 20 MB)"

# alternate: fence -- true, fence -t code -- true and bwrap's true, one
# of each a round, $runs rounds, so that drift in the machine falls on
# all three alike; the medians and fence's ratios to bwrap.
if command -v bwrap >/dev/null; then
	echo "== fence against bwrap, whole processes, $runs alternating rounds (median ms, and the ratio to bwrap)"
	for ((i = 0; i < runs; i++)); do
		for c in bwrap fence fence-code; do
			case $c in
			bwrap) set -- bwrap "${bwrap_args[@]}" ;;
			fence) set -- "$work/fence" -- true ;;
			fence-code) set -- "$work/fence" -t code -- true ;;
			esac
			start=$(date +%s%N)
			"$@" >/dev/null 2>&1 || true
			end=$(date +%s%N)
			echo "$c $((end - start))"
		done
	done | sort -k1,1 -k2,2n | awk '
		function flush() { if (k) { med[last] = v[int((k + 1) / 2)] / 1e6 } k = 0 }
		$1 != last { flush(); last = $1 }
		{ v[++k] = $2 }
		END {
			flush()
			split("bwrap fence fence-code", order, " ")
			for (i = 1; i <= 3; i++) printf "%-56s %8.2f ms %7.2fx bwrap\n", order[i], med[order[i]], med[order[i]] / med["bwrap"]
		}'
fi

echo "== fence check --stdin: 200,000 path queries in one process, through a pipe"
mkdir -p src/pkg keys && touch src/main.go src/pkg/util.go .env keys/server.pem
for p in src/main.go src/pkg/util.go .env keys/server.pem docs/README.md missing/a/b.txt /etc/hosts "$HOME/.ssh/id_rsa" ../outside.txt src/pkg/new.go; do
	printf '{"access":"read","path":"%s"}\n{"access":"write","path":"%s"}\n' "$p" "$p"
done >"$work/q10.jsonl"
for ((i = 0; i < 10000; i++)); do cat "$work/q10.jsonl"; done >"$work/queries.jsonl"
start=$(date +%s%N)
"$work/fence" check --stdin <"$work/queries.jsonl" >"$work/answers.jsonl" || true
end=$(date +%s%N)
answers=$(wc -l <"$work/answers.jsonl")
awk -v ns=$((end - start)) -v n="$answers" 'BEGIN { printf "%-56s %8.0f decisions/s (%d answers)\n", "fence check --stdin", n / (ns / 1e9), n }'

# hook_ms AGENT NAME EVENT: the p50 and p99 wall time of $runs runs of
# fence hook AGENT answering EVENT, as the agent runs it, once per call.
hook_ms() {
	local agent=$1 name=$2 i start end
	printf '%s\n' "$3" >"$work/event.json"
	for ((i = 0; i < runs; i++)); do
		start=$(date +%s%N)
		"$work/fence" hook "$agent" <"$work/event.json" >/dev/null 2>&1 || true
		end=$(date +%s%N)
		echo $((end - start))
	done | sort -n | awk -v n="$name" '{ a[NR] = $1 } END { printf "%-56s p50 %6.2f ms  p99 %6.2f ms\n", n, a[int((NR + 1) / 2)] / 1e6, a[int(NR * 0.99 + 0.5)] / 1e6 }'
}
echo "== fence hook AGENT, whole processes, $runs runs (the project config -> @base -> code chain, trusted)"
"$work/fence" config trust >/dev/null
hook_ms claude "fence hook claude: Bash" '{"hook_event_name":"PreToolUse","cwd":"'"$PWD"'","tool_name":"Bash","tool_input":{"command":"go test ./... && git status"}}'
hook_ms claude "fence hook claude: Read" '{"hook_event_name":"PreToolUse","cwd":"'"$PWD"'","tool_name":"Read","tool_input":{"file_path":"'"$PWD"'/.env"}}'
hook_ms claude "fence hook claude: Write" '{"hook_event_name":"PreToolUse","cwd":"'"$PWD"'","tool_name":"Write","tool_input":{"file_path":"'"$PWD"'/main.go","content":"package main\n"}}'
hook_ms cursor "fence hook cursor: beforeShellExecution" '{"hook_event_name":"beforeShellExecution","cwd":"'"$PWD"'","workspace_roots":["'"$PWD"'"],"command":"go test ./... && git status"}'
hook_ms cursor "fence hook cursor: beforeReadFile" '{"hook_event_name":"beforeReadFile","workspace_roots":["'"$PWD"'"],"file_path":"'"$PWD"'/.env","content":""}'
hook_ms codex "fence hook codex: Bash" '{"hook_event_name":"PreToolUse","cwd":"'"$PWD"'","tool_name":"Bash","tool_input":{"command":"go test ./... && git status"}}'
hook_ms codex "fence hook codex: apply_patch" '{"hook_event_name":"PreToolUse","cwd":"'"$PWD"'","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: x.go\n+package main\n*** End Patch"}}'
hook_ms gemini "fence hook gemini: run_shell_command" '{"hook_event_name":"BeforeTool","cwd":"'"$PWD"'","tool_name":"run_shell_command","tool_input":{"command":"go test ./... && git status"}}'
hook_ms gemini "fence hook gemini: read_file" '{"hook_event_name":"BeforeTool","cwd":"'"$PWD"'","tool_name":"read_file","tool_input":{"file_path":"'"$PWD"'/.env"}}'
hook_ms copilot "fence hook copilot: bash" '{"timestamp":1,"cwd":"'"$PWD"'","toolName":"bash","toolArgs":"{\"command\":\"go test ./... && git status\"}"}'
hook_ms copilot "fence hook copilot: view" '{"timestamp":1,"cwd":"'"$PWD"'","toolName":"view","toolArgs":"{\"path\":\"'"$PWD"'/.env\"}"}'
cd "$root"
