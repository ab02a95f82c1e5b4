package asl

// Scope holds the workflow variables one thread of states sees: its own, assigned by its
// states' Assign fields, and those of the scopes around it (a Map iteration or a Parallel
// branch reads the variables of the state machine it runs in, but cannot assign them).
type Scope struct {
	Parent *Scope
	vars   map[string]any
}

// NewScope returns an empty scope inside parent (nil for the top level).
func NewScope(parent *Scope) *Scope { return &Scope{Parent: parent} }

// Get returns the value of the variable name, looking outwards.
func (s *Scope) Get(name string) (any, bool) {
	for ; s != nil; s = s.Parent {
		if v, ok := s.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

// Set assigns the variable name in this scope.
func (s *Scope) Set(name string, v any) {
	if s.vars == nil {
		s.vars = map[string]any{}
	}
	s.vars[name] = v
}

// Own returns the variables assigned in this scope itself (not in the scopes around it).
func (s *Scope) Own() map[string]any {
	if s == nil {
		return nil
	}
	return s.vars
}

// Outer reports whether name is a variable of a scope around this one.
func (s *Scope) Outer(name string) bool {
	if s == nil {
		return false
	}
	_, ok := s.Parent.Get(name)
	return ok
}
