package darwin

import (
	"strconv"
	"strings"
)

// -m follows the unified log for the sandbox's denials. Each deny of the
// profile carries the run's tag and its rule as its message
// ("fence-<hex>:filesystem.denyRead"), which the kernel's report of the
// denial ends with; the log stream's predicate selects the reports that
// carry this run's tag, and only those print.

// logPredicate selects the log messages that carry tag.
func logPredicate(tag string) string {
	return "eventMessage CONTAINS " + strconv.Quote(tag+":")
}

// logStreamArgs is the argv of the log stream -m follows.
func logStreamArgs(tag string) []string {
	return []string{"/usr/bin/log", "stream", "--style", "compact", "--predicate", logPredicate(tag)}
}

// denial is how fence prints a line of the log stream: what was denied
// (the kernel's report, from "Sandbox: " on, without its message), and
// the rule that denied it. ok is false for a line that is not a report
// carrying tag: the stream's headers (which echo the predicate), and
// anything not of this run.
func denial(line, tag string) (text string, ok bool) {
	i := strings.Index(line, tag+":")
	j := strings.Index(line, "Sandbox: ")
	if i < 0 || j < 0 || j > i {
		return "", false
	}
	rule := line[i+len(tag)+1:]
	if k := strings.IndexAny(rule, " \t\"')"); k >= 0 {
		rule = rule[:k]
	}
	if rule == "" {
		rule = "default"
	}
	what := strings.TrimRight(line[j+len("Sandbox: "):i], " \t\"'(")
	return singleLine(what) + " (rule " + singleLine(rule) + ")", true
}

// singleLine is s with its control characters escaped as Go writes them
// in a quoted string (\n, \x1b, …), so that a name from the sandbox can
// neither start a line of its own nor send the terminal escapes.
func singleLine(s string) string {
	q := strconv.Quote(s)
	return strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
}

// logEnd says why the log stream ended: the first line of what it said,
// else how it exited.
func logEnd(said string, waitErr error) string {
	if line, _, _ := strings.Cut(strings.TrimSpace(said), "\n"); line != "" {
		return strconv.Quote(line)
	}
	if waitErr != nil {
		return waitErr.Error()
	}
	return "exit status 0"
}
