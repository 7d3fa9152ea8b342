package policy

import (
	"fmt"
	"strings"
)

// Starter returns a commented fence.jsonc that extends the template base
// and adds nothing, so that it resolves exactly as base does until edited.
func Starter(base string) ([]byte, error) {
	t, ok := LookupTemplate(base)
	if !ok {
		return nil, fmt.Errorf("%s", unknownTemplate(base))
	}
	r := strings.NewReplacer("{{base}}", t.Name, "{{summary}}", t.Summary)
	return []byte(r.Replace(starterText)), nil
}

const starterText = `// fence policy. Comments and trailing commas are allowed.
// Check what it resolves to with "fence config show" and "fence config lint".
{
  // Start from the builtin template "{{base}}":
  // {{summary}}
  // Lists below add to the template's; they cannot remove its rules.
  "extends": "{{base}}",

  "filesystem": {
    // Paths may be absolute, "~/..." or relative to the working directory,
    // with globs such as "**/.env". Deny rules match case-insensitively.
    "allowRead": [],
    "allowWrite": [],
    "denyRead": [],
    "denyWrite": [],
  },

  "network": {
    // Exact host names, "*.example.com" (subdomains only), or IP addresses.
    "allowedDomains": [],
    "deniedDomains": [],
  },

  "command": {
    // Token prefixes: "git push" also blocks "git push origin main".
    "deny": [],
    "allow": [],
  },
}
`
