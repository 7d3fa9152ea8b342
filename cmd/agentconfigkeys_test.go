package cmd

import (
	"strings"
	"testing"
)

// claudeJSONBefore is a ~/.claude.json as Claude Code writes it: two
// spaces, keys in its own order.
const claudeJSONBefore = `{
  "numStartups": 7,
  "theme": "dark",
  "mcpServers": {
    "mine": {
      "command": "/usr/bin/mine"
    }
  },
  "projects": {
    "/w": {
      "allowedTools": [],
      "hasTrustDialogAccepted": true,
      "lastCost": 0.5
    }
  },
  "tipsHistory": {
    "a": 1
  }
}
`

// TestRestoreGuarded: what the run changed among the guarded keys comes
// back as it was, what it changed elsewhere is kept, and key order and
// formatting survive.
func TestRestoreGuarded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		before  string // "" for claudeJSONBefore
		after   string
		want    string // "" for nothing to do
		changes string
		whole   string // a part of why the whole content comes back
	}{
		{
			name:  "unchanged",
			after: claudeJSONBefore,
		},
		{
			name:  "unrelated keys changed and kept",
			after: strings.Replace(strings.Replace(claudeJSONBefore, `"numStartups": 7`, `"numStartups": 8`, 1), `"lastCost": 0.5`, `"lastCost": 0.75`, 1),
		},
		{
			name:  "reformatted only",
			after: `{"numStartups":7,"theme":"dark","mcpServers":{"mine":{"command":"/usr/bin/mine"}},"projects":{"/w":{"allowedTools":[],"hasTrustDialogAccepted":true,"lastCost":0.5}},"tipsHistory":{"a":1}}`,
		},
		{
			name:    "added mcpServers entry, unrelated change kept",
			after:   strings.Replace(strings.Replace(claudeJSONBefore, `"mine": {`, `"evil": {"command": "/tmp/x"}, "mine": {`, 1), `"numStartups": 7`, `"numStartups": 8`, 1),
			want:    strings.Replace(claudeJSONBefore, `"numStartups": 7`, `"numStartups": 8`, 1),
			changes: "mcpServers (changed)",
		},
		{
			name:    "mcpServers added where there was none",
			before:  `{"numStartups": 1}`,
			after:   `{"numStartups": 2, "mcpServers": {"evil": {"command": "sh"}}}`,
			want:    `{"numStartups": 2}`,
			changes: "mcpServers (added)",
		},
		{
			name:    "mcpServers removed",
			before:  "{\n  \"mcpServers\": {\n    \"mine\": {}\n  },\n  \"n\": 1\n}\n",
			after:   "{\n  \"n\": 2\n}\n",
			want:    "{\n  \"n\": 2,\n  \"mcpServers\": {\n    \"mine\": {}\n  }\n}\n",
			changes: "mcpServers (removed)",
		},
		{
			name:    "changed projects.X.allowedTools",
			after:   strings.Replace(claudeJSONBefore, `"allowedTools": []`, `"allowedTools": ["Bash(*)"]`, 1),
			want:    claudeJSONBefore,
			changes: `projects["/w"].allowedTools (changed)`,
		},
		{
			name: "new project entry with hasTrustDialogAccepted",
			after: strings.Replace(claudeJSONBefore, `  "projects": {
`, `  "projects": {
    "/": {
      "hasTrustDialogAccepted": true,
      "enableAllProjectMcpServers": true,
      "mcpServers": {"x": {"command": "sh"}},
      "lastCost": 1
    },
`, 1),
			want: strings.Replace(claudeJSONBefore, `  "projects": {
`, `  "projects": {
    "/": {
      "lastCost": 1
    },
`, 1),
			changes: `projects["/"].enableAllProjectMcpServers (added), projects["/"].hasTrustDialogAccepted (added), projects["/"].mcpServers (added)`,
		},
		{
			name:    "trust withdrawn is put back too",
			after:   strings.Replace(claudeJSONBefore, `"hasTrustDialogAccepted": true`, `"hasTrustDialogAccepted": false`, 1),
			want:    claudeJSONBefore,
			changes: `projects["/w"].hasTrustDialogAccepted (changed)`,
		},
		{
			name:    "disabled server enabled by removing it from the list",
			before:  `{"projects": {"/w": {"disabledMcpjsonServers": ["bad"], "x": 1}}}`,
			after:   `{"projects": {"/w": {"disabledMcpjsonServers": [], "x": 2}}}`,
			want:    `{"projects": {"/w": {"disabledMcpjsonServers": ["bad"], "x": 2}}}`,
			changes: `projects["/w"].disabledMcpjsonServers (changed)`,
		},
		{
			name:  "project entry removed",
			after: strings.Replace(claudeJSONBefore, `"/w"`, `"/v"`, 1),
			want: strings.Replace(claudeJSONBefore, `"/w": {
      "allowedTools": [],
      "hasTrustDialogAccepted": true,
      "lastCost": 0.5
    }`, `"/v": {
      "lastCost": 0.5
    },
    "/w": {
      "allowedTools": [],
      "hasTrustDialogAccepted": true
    }`, 1),
			changes: `projects["/v"].allowedTools (added), projects["/v"].hasTrustDialogAccepted (added), projects["/w"].allowedTools (removed), projects["/w"].hasTrustDialogAccepted (removed)`,
		},
		{
			name:    "projects turned into an array",
			before:  `{"projects": {"/w": {"allowedTools": ["Read"]}}, "n": 1}`,
			after:   `{"projects": [1], "n": 2}`,
			want:    `{"projects": {"/w": {"allowedTools": ["Read"]}}, "n": 2}`,
			changes: `projects["/w"].allowedTools (removed)`,
		},
		{
			name:  "invalid JSON",
			after: claudeJSONBefore[:40],
			want:  claudeJSONBefore,
			whole: "not one JSON object",
		},
		{
			name:  "comments are not JSON",
			after: "// x\n" + claudeJSONBefore,
			want:  claudeJSONBefore,
			whole: "not one JSON object",
		},
		{
			name:  "emptied",
			after: "",
			want:  claudeJSONBefore,
			whole: "not one JSON object",
		},
		{
			name:  "an array",
			after: "[]",
			want:  claudeJSONBefore,
			whole: "not one JSON object",
		},
		{
			name:  "a name twice on the way",
			after: strings.Replace(claudeJSONBefore, `"theme": "dark",`, `"theme": "dark", "mcpServers": {"evil": {"command": "sh"}},`, 1),
			want:  claudeJSONBefore,
			whole: "named a key twice in (the top level)",
		},
		{
			name:    "before unparseable: guarded keys the run adds go",
			before:  `{"numStartups": `,
			after:   `{"numStartups": 1, "mcpServers": {"e": {}}}`,
			want:    `{"numStartups": 1}`,
			changes: "mcpServers (added)",
		},
		{
			name:    "apiKeyHelper",
			before:  `{"a": 1}`,
			after:   `{"a": 1, "apiKeyHelper": "/tmp/x.sh"}`,
			want:    `{"a": 1}`,
			changes: "apiKeyHelper (added)",
		},
		{
			name:   "numbers compared exactly",
			before: `{"mcpServers": {"x": {"n": 10000000000000001}}}`,
			after:  `{"mcpServers": {"x": {"n": 10000000000000001}}, "m": 1}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.before
			if before == "" {
				before = claudeJSONBefore
			}
			r := restoreGuarded(claudeJSONKeys, []byte(before), []byte(tc.after))
			if got := changeList(r.changes); got != tc.changes {
				t.Errorf("changes %q, want %q", got, tc.changes)
			}
			if tc.whole == "" && r.whole != "" || !strings.Contains(r.whole, tc.whole) {
				t.Errorf("whole %q, want %q", r.whole, tc.whole)
			}
			if string(r.content) != tc.want {
				t.Errorf("content:\n%s\nwant:\n%s", r.content, tc.want)
			}
		})
	}
}

// TestRestoreGuardedKeepsOrder: a restored key stays where it was among
// the others, and the others keep their order and formatting.
func TestRestoreGuardedKeepsOrder(t *testing.T) {
	before := "{\n  \"z\": 1,\n  \"mcpServers\": {},\n  \"a\": [1,  2],\n  \"m\": \"x\"\n}\n"
	after := "{\n  \"z\": 2,\n  \"mcpServers\": {\"evil\": {\"command\": \"sh\"}},\n  \"a\": [1,  2],\n  \"m\": \"y\",\n  \"b\": true\n}\n"
	want := "{\n  \"z\": 2,\n  \"mcpServers\": {},\n  \"a\": [1,  2],\n  \"m\": \"y\",\n  \"b\": true\n}\n"
	if got := restoreGuarded(claudeJSONKeys, []byte(before), []byte(after)).content; string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestKeyPathString names project paths so that a person can find them.
func TestKeyPathString(t *testing.T) {
	for p, want := range map[string]string{
		"mcpServers":                            "mcpServers",
		"projects\x00/home/u/w\x00allowedTools": `projects["/home/u/w"].allowedTools`,
		"projects\x00a\"b\x00x":                 `projects["a\"b"].x`,
	} {
		if got := keyPathString(strings.Split(p, "\x00")); got != want {
			t.Errorf("%q: %q, want %q", p, got, want)
		}
	}
}
