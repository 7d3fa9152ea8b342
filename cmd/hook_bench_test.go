package cmd

import (
	"io"
	"slices"
	"testing"
	"time"
)

// BenchmarkHookClaude measures one Claude Code hook decision in process,
// as `fence hook claude` makes it for each call: decode the event, load
// and compile the policy from the event's cwd, judge, encode the answer.
// The issue asks for a p99 under 5 ms for a shell and for a file call;
// the process start of the hook is not in it.
func BenchmarkHookClaude(b *testing.B) {
	work := hookWorkspace(b)
	for _, bb := range []struct{ name, event string }{
		{"Bash", `{"cwd":"` + work + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./... && git status | head -5"}}`},
		{"Read", `{"cwd":"` + work + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` + work + `/innocent"}}`},
	} {
		b.Run(bb.name, func(b *testing.B) {
			o := &hookOptions{policy: &policyFlags{settings: work + "/fence.jsonc", stderr: io.Discard}, stderr: io.Discard}
			event := []byte(bb.event)
			took := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				if err := o.claude(event, nil, io.Discard); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
