package sandbox

// WithCommand is p, a plan made for another command (the plan cache's),
// with what NewPlan takes from the command line of o rather than from
// the policy and the disk: the argv, and the limits (whose sizes follow
// the host's memory). p itself is not changed.
func (p *Plan) WithCommand(o Options) (*Plan, error) {
	argv, err := commandArgv(o)
	if err != nil {
		return nil, err
	}
	q := *p
	q.Argv = argv
	if o.Limits != nil {
		q.Limits = *o.Limits
	}
	return &q, nil
}
