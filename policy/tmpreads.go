package policy

// OriginHomeBelowTmp marks the rule that makes a home below /tmp
// readable when reads are open: the sandbox's /tmp is its own, and
// without the rule the home would not be in it at all.
const OriginHomeBelowTmp = "the home (reads are open; the sandbox's /tmp is its own)"

// openReadsBelowTmp are the read rules of an open-read policy: reads
// need no rule anywhere but below /tmp, where the sandbox has a /tmp of
// its own and binds into it only what a rule names. There, allowRead
// binds its paths read-only, and a home below /tmp is bound the same
// way, as the working directory is.
func openReadsBelowTmp(allowRead []string, exp expander) []Rule {
	var out []Rule
	for _, r := range exp.rules(allowRead, "filesystem.allowRead", false) {
		if under(r.Pattern, "/tmp") {
			out = append(out, r)
		}
	}
	if home := exp.env.Home; home != "" && under(home, "/tmp") && home != "/tmp" {
		r := exp.rule(home, OriginHomeBelowTmp, false)
		r.Key = "home"
		out = append(out, r)
	}
	return out
}
