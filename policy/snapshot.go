package policy

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"strings"
)

// policySnapshot is a Policy with the fields it keeps unexported, for
// EncodeSnapshot; the indexes derived from exported fields are rebuilt.
type policySnapshot struct {
	Policy        *Policy
	DomainOrigins map[string]string
	EnvOrigins    map[string]string
}

// EncodeSnapshot is the whole of p as bytes, for the plan cache:
// DecodeSnapshot gives back a Policy that decides as p does.
func EncodeSnapshot(p *Policy) ([]byte, error) {
	var buf bytes.Buffer
	s := policySnapshot{Policy: p, DomainOrigins: p.domainOrigins, EnvOrigins: p.envOrigins}
	if err := gob.NewEncoder(&buf).Encode(s); err != nil {
		return nil, fmt.Errorf("encode policy: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeSnapshot is the Policy EncodeSnapshot encoded.
func DecodeSnapshot(b []byte) (*Policy, error) {
	var s policySnapshot
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&s); err != nil {
		return nil, fmt.Errorf("decode policy: %w", err)
	}
	p := s.Policy
	if p == nil {
		return nil, fmt.Errorf("decode policy: empty")
	}
	p.domainOrigins, p.envOrigins = s.DomainOrigins, s.EnvOrigins
	for _, rules := range [][]Rule{p.Read, p.Execute, p.Write, p.DenyRead, p.DenyWrite, p.UnixSockets} {
		for i := range rules {
			if rules[i].Fold {
				rules[i].folded = strings.ToLower(rules[i].Pattern)
			}
		}
	}
	for _, rules := range [][]CommandRule{p.CommandDeny, p.CommandAllow, p.SSH.AllowedCommands, p.SSH.DeniedCommands} {
		ReindexCommandRules(rules)
	}
	p.denyIndex = newCommandIndex(p.CommandDeny)
	return p, nil
}

// ReindexCommandRules rebuilds what rules derive from their tokens, for
// command rules decoded from a snapshot (a plan's ssh rules).
func ReindexCommandRules(rules []CommandRule) {
	for i := range rules {
		rules[i].glob = nil
		for _, tok := range rules[i].Tokens {
			rules[i].glob = append(rules[i].glob, strings.ContainsAny(tok, "*?["))
		}
	}
}
