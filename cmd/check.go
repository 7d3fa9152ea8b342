package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"

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
			pol, err := compilePolicy(o.policy)
			if err != nil {
				return err
			}
			dir, _ := os.Getwd()
			var decisions []policy.Decision
			if o.stdin {
				decisions, err = checkStream(pol, dir, stdin, stdout, o.json)
			} else {
				decisions, err = checkArgs(pol, dir, args)
				if err == nil {
					printDecisions(stdout, decisions, o.json)
				}
			}
			if err != nil {
				return err
			}
			if slices.ContainsFunc(decisions, func(d policy.Decision) bool { return !d.Allowed }) {
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
	if len(args) < 2 {
		return nil, errors.New(`want "check read|write|exec PATH...", "check command STRING" or "check url URL"`)
	}
	var out []policy.Decision
	for _, a := range args[1:] {
		d, err := decide(pol, dir, query{Access: args[0], Path: a, Command: a, URL: a})
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

func decide(pol *policy.Policy, dir string, q query) (policy.Decision, error) {
	switch {
	case q.Access == "command" || q.Access == "" && q.Command != "":
		return commandDecision(pol, q.Command), nil
	case q.Access == "url" || q.Access == "" && q.URL != "":
		return urlDecision(pol, q.URL)
	case slices.Contains(policy.Accesses, q.Access):
		return pol.CheckPath(q.Access, q.Path, sandbox.ResolvePath(q.Path, dir)), nil
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
	return pol.NetworkDecision("url", raw, net.JoinHostPort(nd.Host, port), nd), nil
}

// checkStream answers queries line by line, flushing each answer, so
// that one process serves thousands of checks.
func checkStream(pol *policy.Policy, dir string, in io.Reader, out io.Writer, _ bool) ([]policy.Decision, error) {
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	r := bufio.NewReader(in)
	var all []policy.Decision
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var q query
			if jerr := json.Unmarshal(line, &q); jerr != nil {
				return nil, fmt.Errorf("--stdin: %q is not a query: %w", bytes.TrimSpace(line), jerr)
			}
			d, derr := decide(pol, dir, q)
			if derr != nil {
				return nil, derr
			}
			enc.Encode(d)
			all = append(all, d)
			if r.Buffered() == 0 {
				w.Flush() // answer now when no more input is waiting
			}
		}
		if err == io.EOF {
			return all, w.Flush()
		}
		if err != nil {
			return nil, err
		}
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
		fmt.Fprintln(w, line)
	}
}
