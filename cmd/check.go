package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/spf13/cobra"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

type checkOptions struct {
	policy *policyFlags
	json   bool
	stdin  bool
}

func newCheckCmd(pf *policyFlags, stdin io.Reader, stdout io.Writer) *cobra.Command {
	o := &checkOptions{policy: pf}
	c := &cobra.Command{
		Use:   "check read|write|exec PATH... | check command 'STRING' | check url URL | check --stdin",
		Short: "Ask the policy about paths, commands and URLs, as the sandbox would decide (exit 1 when any is denied)",
		RunE: func(_ *cobra.Command, args []string) error {
			pol, _, err := compilePolicy(o.policy)
			if err != nil {
				return err
			}
			dir, _ := os.Getwd()
			var denied bool
			if o.stdin {
				denied, err = checkStream(pol, dir, stdin, stdout)
			} else {
				var decisions []policy.Decision
				decisions, err = checkArgs(pol, dir, args)
				if err == nil {
					printDecisions(stdout, decisions, o.json)
				}
				denied = slices.ContainsFunc(decisions, func(d policy.Decision) bool { return !d.Allowed })
			}
			if err != nil {
				return err
			}
			if denied {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "one JSON object per decision")
	c.Flags().BoolVar(&o.stdin, "stdin", false, `read newline-delimited JSON queries ({"access":"read","path":"…"}, {"command":"…"}, {"url":"…"}) and answer each on a line`)
	return c
}

func checkArgs(pol *policy.Policy, dir string, args []string) ([]policy.Decision, error) {
	res := newResolver(dir)
	if len(args) < 2 {
		return nil, errors.New(`want "check read|write|exec PATH...", "check command STRING" or "check url URL"`)
	}
	var out []policy.Decision
	for _, a := range args[1:] {
		d, err := decide(pol, res, query{Access: args[0], Path: a, Command: a, URL: a})
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// query is one question, on the command line or a line of --stdin.
type query struct {
	Access  string `json:"access"`
	Path    string `json:"path"`
	Command string `json:"command"`
	URL     string `json:"url"`
}

func decide(pol *policy.Policy, res *resolver, q query) (policy.Decision, error) {
	switch {
	case q.Access == "command" || q.Access == "" && q.Command != "":
		return commandDecision(pol, q.Command), nil
	case q.Access == "url" || q.Access == "" && q.URL != "":
		return urlDecision(pol, q.URL)
	case slices.Contains(policy.Accesses, q.Access):
		return createdNote(pol, pol.CheckPath(q.Access, q.Path, res.resolve(q.Path))), nil
	}
	return policy.Decision{}, fmt.Errorf("unknown access %q: want read, write, exec, command or url", q.Access)
}

func commandDecision(pol *policy.Policy, s string) policy.Decision {
	d := sandbox.PreflightShell(pol, s).Decision()
	d.Requested = s
	return d
}

func urlDecision(pol *policy.Policy, raw string) (policy.Decision, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return policy.Decision{}, fmt.Errorf("%q is not a URL with a host", raw)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443", "ssh": "22"}[u.Scheme]
	}
	nd := pol.DecideHostPort(u.Hostname(), port)
	if a, err := netip.ParseAddr(nd.Host); err == nil && nd.Upstream != "" {
		// The proxies hold an address to the address rules before they
		// forward it, as they do every address a forwarded name has.
		if ad := pol.DecideAddr(nd.Host, port, a); !ad.Allowed {
			nd = ad
		}
	}
	return pol.NetworkDecision("url", raw, net.JoinHostPort(nd.Host, port), nd), nil
}

// maxBurst bounds how many queries fence reads before it answers.
const maxBurst = 4096

// checkStream answers newline-delimited queries, in order. The queries
// that arrive together make a burst: they are decided in parallel and
// answered together, and the answers are flushed before fence waits for
// more input, so a client asking one question at a time gets each answer
// at once. It stops at the first line that is not a query, after
// answering the ones before it.
func checkStream(pol *policy.Policy, dir string, in io.Reader, out io.Writer) (denied bool, err error) {
	w := bufio.NewWriter(out)
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		lines, rerr := readBurst(r)
		for _, a := range decideBurst(pol, dir, lines) {
			if a.err != nil {
				return denied, errors.Join(a.err, w.Flush())
			}
			w.Write(a.line)
			denied = denied || a.denied
		}
		if err := w.Flush(); err != nil {
			return denied, err
		}
		if rerr == io.EOF {
			return denied, nil
		}
		if rerr != nil {
			return denied, rerr
		}
	}
}

// readBurst reads the lines that are waiting, at least one unless the
// input ends, at most maxBurst.
func readBurst(r *bufio.Reader) ([][]byte, error) {
	var lines [][]byte
	for len(lines) < maxBurst {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			lines = append(lines, line)
		}
		if err != nil {
			return lines, err
		}
		if r.Buffered() == 0 && len(lines) > 0 {
			return lines, nil
		}
	}
	return lines, nil
}

// answer is the encoded decision on one line of input, or why the line
// is not a query.
type answer struct {
	line   []byte
	denied bool
	err    error
}

// minPerWorker is the smallest share of a burst worth a goroutine.
const minPerWorker = 64

// decideBurst decides lines on up to GOMAXPROCS goroutines, each with its
// own resolver, and returns the answers in input order.
func decideBurst(pol *policy.Policy, dir string, lines [][]byte) []answer {
	out := make([]answer, len(lines))
	workers := min(runtime.GOMAXPROCS(0), len(lines)/minPerWorker)
	if workers <= 1 {
		decideLines(pol, newResolver(dir), lines, out)
		return out
	}
	chunk := (len(lines) + workers - 1) / workers
	var wg sync.WaitGroup
	for i := 0; i < len(lines); i += chunk {
		end := min(i+chunk, len(lines))
		wg.Go(func() { decideLines(pol, newResolver(dir), lines[i:end], out[i:end]) })
	}
	wg.Wait()
	return out
}

func decideLines(pol *policy.Policy, res *resolver, lines [][]byte, out []answer) {
	for i, line := range lines {
		var q query
		if err := json.Unmarshal(line, &q); err != nil {
			out[i].err = fmt.Errorf("--stdin: %q is not a query: %w", bytes.TrimSpace(line), err)
			return
		}
		d, err := decide(pol, res, q)
		if err != nil {
			out[i].err = err
			return
		}
		b, _ := json.Marshal(d)
		out[i] = answer{line: append(b, '\n'), denied: !d.Allowed}
	}
}

func printDecisions(w io.Writer, ds []policy.Decision, asJSON bool) {
	enc := json.NewEncoder(w)
	for _, d := range ds {
		if asJSON {
			enc.Encode(d)
			continue
		}
		verdict := "allowed"
		if !d.Allowed {
			verdict = "denied"
		}
		what := d.Path
		if what == "" {
			what = d.Requested
		}
		line := fmt.Sprintf("%s %s %s: %s", verdict, d.Access, what, d.Rule)
		if d.Pattern != nil {
			line += fmt.Sprintf(" %q", *d.Pattern)
		}
		if d.Source != "" {
			line += " (" + d.Source + ")"
		}
		if d.Suggestion != "" && !d.Allowed {
			line += "; " + d.Suggestion
		}
		if d.Note != "" {
			line += "; " + d.Note
		}
		fmt.Fprintln(w, line)
	}
}
