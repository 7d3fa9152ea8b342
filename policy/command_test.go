package policy

import (
	"strings"
	"testing"
)

// TestCommandLongOptionPrefix: a long option in a rule matches the starts
// of it that git and getopt_long take (--har for --hard, with =value
// too), and nothing shorter than one letter.
func TestCommandLongOptionPrefix(t *testing.T) {
	p := Compile(Config{Command: Command{Deny: []string{"git reset --hard", "rm --recursive"}}}, Env{Dir: "/w", Home: "/h"})
	for argv, denied := range map[string]bool{
		"git reset --hard":      true,
		"git reset --har HEAD":  true,
		"git reset --h":         true,
		"git reset --hard=x":    true,
		"git reset --soft":      false,
		"git reset -- file":     false,
		"git reset --hardest":   false,
		"rm --recu d":           true,
		"rm --recursive=always": true,
		"rm --force d":          false,
	} {
		if d := p.DecideCommand(strings.Fields(argv)); d.Allowed == denied {
			t.Errorf("%s: allowed %v, want denied %v", argv, d.Allowed, denied)
		}
	}
}
