package sandbox

import (
	"strings"
	"testing"
)

// FuzzPreflight feeds arbitrary shell text to preflight: it must never
// panic, and a string that preflight cannot parse must count as dynamic.
func FuzzPreflight(f *testing.F) {
	for _, s := range []string{"git push", "bash -c 'eval \"$(echo x)\"'", "f() { g; }; f", "cat <<EOF\nx\nEOF", "a | b && c || d &", "echo ${x//a/b} $((1+2)) <(ls)",
		"g\\\nit push", "'g'it push", "/usr/bin/git push", "x=1 git push", "(git push)", "`git push`", "{git,x} push", "mkfs.ext4 /dev/x", "sudo\tls", "$'git' push", "git pu\\\nsh", "git 'pu'\"sh\"", "dd i''f=/dev/zero", "docker run --privileged=true x", `say it\'s`, `say "it's" now`} {
		f.Add(s)
	}
	deny, allow := commandPolicy("deny"), commandPolicy("allow")
	f.Fuzz(func(t *testing.T, src string) {
		v := PreflightShell(allow, src)
		if v.Blocked && v.Rule == nil {
			t.Fatalf("dynamic=allow blocked %q for a dynamic reason: %s", src, v.Message())
		}
		// The text screen that skips parsing must never let through
		// what the parser would block.
		full := (&preflight{pol: allow, unscreened: true}).shell(src, lazyText{text: src}, 0)
		if full.Blocked != v.Blocked || full.Rule != v.Rule {
			t.Fatalf("with the text screen %q is %q, without %q", src, v.Message(), full.Message())
		}
		PreflightShell(deny, src)
	})
}

// FuzzPlainDenyIsBlocked builds command lines from fuzz bytes, with a
// denied command placed somewhere as a plain simple command (in a list, a
// pipeline, a group, a substitution, a nested shell, behind wrappers),
// and requires preflight to block it by its rule.
func FuzzPlainDenyIsBlocked(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3})
	f.Add([]byte{7, 7, 7, 7, 7, 7})
	f.Add([]byte{255, 3, 9, 27, 81})
	fragments := []string{"echo hi", "ls -la", "true", "cd /tmp", "x=1", "echo \"$HOME\"", "cat f", "printf '%s\\n' a", "grep -r x .", "npm test", "git status", "git push --dry-run"}
	seps := []string{"; ", " && ", " || ", " | ", "\n", " & "}
	wrappers := []func(string) string{
		func(s string) string { return s },
		func(s string) string { return "(" + s + ")" },
		func(s string) string { return "{ " + s + "; }" },
		func(s string) string { return "echo $(" + s + ")" },
		func(s string) string { return "bash -c '" + s + "'" },
		func(s string) string { return "if true; then " + s + "; fi" },
		func(s string) string { return "env A=1 " + s },
		func(s string) string { return "nice -n 5 " + s },
		func(s string) string { return "timeout 9 " + s },
		func(s string) string { return "f() { " + s + "; }" },
		func(s string) string { return "eval '" + s + "'" },
		func(s string) string { return "for i in 1; do " + s + "; done" },
	}
	p := commandPolicy("allow")
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		var parts []string
		for _, b := range data[1:] {
			parts = append(parts, fragments[int(b)%len(fragments)])
		}
		at := int(data[0]) % (len(parts) + 1)
		denied := wrappers[int(data[0]/16)%len(wrappers)](gitPushForm(data))
		parts = append(parts[:at], append([]string{denied}, parts[at:]...)...)
		var b strings.Builder
		for i, part := range parts {
			if i > 0 {
				b.WriteString(seps[(int(data[i%len(data)])+i)%len(seps)])
			}
			b.WriteString(part)
		}
		src := b.String()
		if v := PreflightShell(p, src); v.Rule == nil || v.Rule.Text != "git push" {
			t.Fatalf("PreflightShell(%q) = %+v, want blocked by \"git push\"", src, v)
		}
	})
}

// gitPushForm builds, from fuzz bytes, a command line that asks git for a
// push: git's global options before the subcommand, and the subcommand as
// push, the plumbing that does its job, a dashed program or an alias the
// line defines.
func gitPushForm(data []byte) string {
	options := []string{"-C /w", "-c core.pager=cat", "--git-dir=/w/.git", "--git-dir /w/.git", "--work-tree /w", "--no-pager", "-P", "--bare",
		"--namespace ns", "--exec-path=/usr/lib/git-core", "-c user.name=x", "--literal-pathspecs", "--no-replace-objects"}
	var opts []string
	for i, b := range data {
		if i >= 3 {
			break
		}
		if b%3 != 0 {
			opts = append(opts, options[int(b)%len(options)])
		}
	}
	o := strings.Join(opts, " ")
	switch int(data[len(data)-1]) % 5 {
	case 1:
		return strings.TrimSpace("git "+o) + " send-pack origin"
	case 2:
		return "/usr/lib/git-core/git-push origin"
	case 3:
		return strings.TrimSpace("git -c alias.zz=push "+o) + " zz origin"
	case 4:
		return "git-push --force origin"
	}
	return strings.TrimSpace("git "+o) + " push origin"
}
