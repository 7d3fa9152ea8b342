package policy

import (
	"strings"
	"testing"
)

func TestAddRule(t *testing.T) {
	tests := []struct {
		name, src, key, value, want string
	}{
		{
			name:  "append keeps comments and trailing comma",
			key:   "filesystem.allowWrite",
			value: "/x/y",
			src: `// project policy
{
  "extends": "code", // base
  "filesystem": {
    // build output
    "allowWrite": [
      "./build", // out
    ],
  },
}
`,
			want: `// project policy
{
  "extends": "code", // base
  "filesystem": {
    // build output
    "allowWrite": [
      "./build", // out
      "/x/y",
    ],
  },
}
`,
		},
		{
			name:  "append without trailing comma",
			key:   "filesystem.allowWrite",
			value: "/x/y",
			src:   "{\n\t\"filesystem\": {\n\t\t\"allowWrite\": [\n\t\t\t\"a\"\n\t\t]\n\t}\n}\n",
			want:  "{\n\t\"filesystem\": {\n\t\t\"allowWrite\": [\n\t\t\t\"a\",\n\t\t\t\"/x/y\"\n\t\t]\n\t}\n}\n",
		},
		{
			name:  "new section, tabs",
			key:   "network.allowedDomains",
			value: "example.com",
			src:   "{\n\t\"extends\": \"code\"\n}\n",
			want:  "{\n\t\"extends\": \"code\",\n\t\"network\": {\n\t\t\"allowedDomains\": [\"example.com\"]\n\t}\n}\n",
		},
		{
			name:  "new list in a section",
			key:   "filesystem.denyRead",
			value: "~/.aws",
			src:   "{\n  \"filesystem\": {\n    \"allowWrite\": [\".\"],\n  },\n}\n",
			want:  "{\n  \"filesystem\": {\n    \"allowWrite\": [\".\"],\n    \"denyRead\": [\"~/.aws\"],\n  },\n}\n",
		},
		{
			name:  "one line stays one line",
			key:   "filesystem.allowWrite",
			value: "/b",
			src:   `{"filesystem": {"allowWrite": ["/a"]}}`,
			want:  `{"filesystem": {"allowWrite": ["/a", "/b"]}}`,
		},
		{
			name:  "empty list",
			key:   "command.deny",
			value: "git push",
			src:   `{"command": {"deny": []}}`,
			want:  `{"command": {"deny": ["git push"]}}`,
		},
		{
			name:  "one line, new section",
			key:   "command.deny",
			value: "git push",
			src:   `{"extends": "code"}`,
			want:  `{"extends": "code", "command": {"deny": ["git push"]}}`,
		},
		{
			name:  "blank file",
			key:   "filesystem.allowRead",
			value: "/data",
			src:   "",
			want:  "{\n  \"filesystem\": {\n    \"allowRead\": [\"/data\"]\n  }\n}\n",
		},
		{
			name:  "comments only",
			key:   "filesystem.allowRead",
			value: "/data",
			src:   "// nothing yet\n",
			want:  "// nothing yet\n{\n  \"filesystem\": {\n    \"allowRead\": [\"/data\"]\n  }\n}\n",
		},
		{
			name:  "comment before the closing brace",
			key:   "network.deniedDomains",
			value: "evil.example",
			src:   "{\n  \"extends\": \"code\"\n  // more later\n}\n",
			want:  "{\n  \"extends\": \"code\",\n  // more later\n  \"network\": {\n    \"deniedDomains\": [\"evil.example\"]\n  }\n}\n",
		},
		{
			name:  "quotes and backslashes",
			key:   "filesystem.denyRead",
			value: `/a "b"\c`,
			src:   "{}",
			want:  `{"filesystem": {"denyRead": ["/a \"b\"\\c"]}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, added, err := AddRule("fence.jsonc", []byte(tt.src), tt.key, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if !added || string(out) != tt.want {
				t.Errorf("added=%v, got\n%s\nwant\n%s", added, out, tt.want)
			}
			again, added, err := AddRule("fence.jsonc", out, tt.key, tt.value)
			if err != nil || added || string(again) != string(out) {
				t.Errorf("adding it twice: added=%v err=%v", added, err)
			}
		})
	}
}

func TestAddRuleRefuses(t *testing.T) {
	tests := []struct{ name, src, key, value, want string }{
		{"unknown key", `{}`, "filesystem.allowEverything", "/", "not a list"},
		{"invalid value", `{}`, "network.allowedDomains", "http://x", "would not be valid"},
		{"not an object", `{"filesystem": []}`, "filesystem.allowRead", "/a", "not an object"},
		{"not a list", `{"filesystem": {"allowRead": "/a"}}`, "filesystem.allowRead", "/b", "not a list"},
		{"broken file", `{"filesystem": `, "filesystem.allowRead", "/b", "invalid JSONC"},
		{"top level array", `[]`, "filesystem.allowRead", "/b", "object at the top level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := AddRule("fence.jsonc", []byte(tt.src), tt.key, tt.value)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one saying %q", err, tt.want)
			}
		})
	}
}
