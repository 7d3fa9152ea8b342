package sandbox

import (
	"encoding/json"
	"fmt"
)

// planData is a Plan with what its JSON leaves out for people to read:
// the command's environment and the upstream proxy's credentials. It is
// what a store of plans keeps, so that a plan read back is the plan that
// was made.
type planData struct {
	Plan *Plan    `json:"plan"`
	Env  []string `json:"env"`
	// UpstreamAuthorization is Proxy.Upstream.Authorization.
	UpstreamAuthorization string `json:"upstreamAuthorization,omitempty"`
}

// MarshalData encodes the whole plan, its environment and credentials
// included: for a store the user alone can read, never for printing.
func (p *Plan) MarshalData() ([]byte, error) {
	d := planData{Plan: p, Env: p.Env}
	if p.Proxy != nil && p.Proxy.Upstream != nil {
		d.UpstreamAuthorization = p.Proxy.Upstream.Authorization
	}
	return json.Marshal(d)
}

// UnmarshalPlanData decodes what MarshalData encoded.
func UnmarshalPlanData(b []byte) (*Plan, error) {
	var d planData
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("decode plan: %w", err)
	}
	if d.Plan == nil {
		return nil, fmt.Errorf("decode plan: no plan")
	}
	d.Plan.Env = d.Env
	if d.UpstreamAuthorization != "" {
		if d.Plan.Proxy == nil || d.Plan.Proxy.Upstream == nil {
			return nil, fmt.Errorf("decode plan: credentials for no upstream proxy")
		}
		d.Plan.Proxy.Upstream.Authorization = d.UpstreamAuthorization
	}
	return d.Plan, nil
}
