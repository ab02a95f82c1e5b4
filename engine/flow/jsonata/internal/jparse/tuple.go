package jparse

import "fmt"

// This file adds three features of JSONata 1.7+ to the parser: the focus variable binding
// (step@$v), the index variable binding (step#$i) and the parent operator (%). A path that
// uses them is evaluated as a stream of tuples: each item of the stream carries, besides the
// context value, the variables bound along the path. Steps that bind variables become
// StepNodes; after parsing, resolveAncestry finds, for every %, the path step whose input is
// the parent it refers to and marks that step to bind it under the %'s label.

// A Slot is the binding a parent operator reads: Label names the variable, Level counts the
// steps still to climb while the parser looks for the step that binds it.
type Slot struct {
	Label string
	Level int
}

// A ParentNode represents the parent operator %.
type ParentNode struct {
	Slot *Slot
}

func parseParent(p *parser, t token) (Node, error) {
	p.parents++
	return &ParentNode{Slot: &Slot{Label: fmt.Sprintf("!%d", p.parents-1), Level: 1}}, nil
}

func (n *ParentNode) optimize() (Node, error) { return n, nil }

func (n ParentNode) String() string { return "%" }

// A Stage is a filter (Filter set) or an index variable binding (Index set) applied, in
// order, to the tuple stream a step produces.
type Stage struct {
	Filter Node
	Index  string
}

// A StepNode is a path step that binds variables in the path's tuple stream.
type StepNode struct {
	Expr     Node   // the step; a *SortNode with a nil Expr sorts the stream
	Focus    string // @$Focus: the step's result is bound to Focus and the context stays
	Index    string // #$Index: the position of the result within the step's results
	Stages   []Stage
	Ancestor *Slot // the step's input is bound to Ancestor.Label (the parent operator)
}

func (n *StepNode) optimize() (Node, error) { return n, nil }

func (n StepNode) String() string {
	s := fmt.Sprint(n.Expr)
	if n.Focus != "" {
		s += "@$" + n.Focus
	}
	if n.Index != "" {
		s += "#$" + n.Index
	}
	for _, st := range n.Stages {
		if st.Filter != nil {
			s += "[" + st.Filter.String() + "]"
		} else {
			s += "#$" + st.Index
		}
	}
	return s
}

// bindingNode is the interim node of step@$v and step#$v.
type bindingNode struct {
	lhs   Node
	name  string
	index bool
}

func parseFocus(p *parser, t token, lhs Node) (Node, error) {
	return parseBinding(p, t, lhs, false)
}

func parseIndex(p *parser, t token, lhs Node) (Node, error) {
	return parseBinding(p, t, lhs, true)
}

func parseBinding(p *parser, t token, lhs Node, index bool) (Node, error) {
	rhs := p.parseExpression(p.bp(t.Type))
	v, ok := rhs.(*VariableNode)
	if !ok || v.Name == "" {
		return nil, newErrorHint(ErrBindingVariable, t, t.Value)
	}
	return &bindingNode{lhs: lhs, name: v.Name, index: index}, nil
}

func (n bindingNode) String() string {
	if n.index {
		return fmt.Sprintf("%s#$%s", n.lhs, n.name)
	}
	return fmt.Sprintf("%s@$%s", n.lhs, n.name)
}

func (n *bindingNode) optimize() (Node, error) {
	lhs, err := n.lhs.optimize()
	if err != nil {
		return nil, err
	}
	if s, ok := lhs.(*SortNode); ok {
		if !n.index {
			return nil, &Error{Type: ErrFocusAfterSort}
		}
		path := sortStep(s)
		path.Steps[len(path.Steps)-1].(*StepNode).Index = n.name
		return path, nil
	}
	path, ok := lhs.(*PathNode)
	if !ok {
		path = &PathNode{Steps: []Node{lhs}}
	}
	i := len(path.Steps) - 1
	step := toStep(path.Steps[i])
	path.Steps[i] = step
	if !n.index {
		if len(step.Stages) > 0 {
			return nil, &Error{Type: ErrFocusAfterPredicate}
		}
		if s, ok := step.Expr.(*SortNode); ok && s.Expr == nil {
			return nil, &Error{Type: ErrFocusAfterSort}
		}
		step.Focus = n.name
		return path, nil
	}
	if len(step.Stages) == 0 {
		step.Index = n.name
	} else {
		step.Stages = append(step.Stages, Stage{Index: n.name})
	}
	return path, nil
}

// toStep returns n as a StepNode; a predicate's filters become the step's stages.
func toStep(n Node) *StepNode {
	switch n := n.(type) {
	case *StepNode:
		return n
	case *PredicateNode:
		step := toStep(n.Expr)
		for _, f := range n.Filters {
			step.Stages = append(step.Stages, Stage{Filter: f})
		}
		return step
	}
	return &StepNode{Expr: n}
}

// sortStep turns expr^(terms) into a path whose last step sorts the stream.
func sortStep(s *SortNode) *PathNode {
	path, ok := s.Expr.(*PathNode)
	if !ok {
		path = &PathNode{Steps: []Node{s.Expr}}
	}
	path.Steps = append(path.Steps, &StepNode{Expr: &SortNode{Terms: s.Terms}})
	return path
}

// hasStep reports whether path has a StepNode.
func hasStep(path *PathNode) bool {
	for _, s := range path.Steps {
		if _, ok := s.(*StepNode); ok {
			return true
		}
	}
	return false
}

// resolveAncestry finds the step each parent operator of the tree refers to.
func resolveAncestry(root *Node) error {
	slots, err := resolve(root)
	if err != nil {
		return err
	}
	for _, s := range slots {
		if s.Level > 0 {
			return &Error{Type: ErrNoAncestor}
		}
	}
	return nil
}

// resolve resolves the parent operators inside *ref that it can and returns those that
// refer beyond it (the slots still seeking their step).
func resolve(ref *Node) ([]*Slot, error) {
	var out []*Slot
	add := func(refs ...*Node) error {
		for _, r := range refs {
			if r == nil || *r == nil {
				continue
			}
			s, err := resolve(r)
			if err != nil {
				return err
			}
			out = append(out, s...)
		}
		return nil
	}
	var err error
	switch n := (*ref).(type) {
	case *ParentNode:
		return []*Slot{n.Slot}, nil
	case *PathNode:
		return resolvePath(n, nil)
	case *StepNode:
		return resolveStep(ref)
	case *PredicateNode:
		return resolveStep(ref)
	case *SortNode:
		var ts []*Slot
		for i := range n.Terms {
			s, err := resolve(&n.Terms[i].Expr)
			if err != nil {
				return nil, err
			}
			ts = append(ts, s...)
		}
		if len(ts) > 0 && n.Expr != nil {
			path := sortStep(n)
			*ref = path
			return resolvePath(path, ts)
		}
		if n.Expr != nil {
			err = add(&n.Expr)
		}
		out = append(out, ts...)
	case *NegationNode:
		err = add(&n.RHS)
	case *RangeNode:
		err = add(&n.LHS, &n.RHS)
	case *ArrayNode:
		for i := range n.Items {
			if err = add(&n.Items[i]); err != nil {
				break
			}
		}
	case *ObjectNode:
		err = resolvePairs(n, add)
	case *BlockNode:
		for i := range n.Exprs {
			if err = add(&n.Exprs[i]); err != nil {
				break
			}
		}
	case *ObjectTransformationNode:
		err = add(&n.Pattern, &n.Updates, &n.Deletes)
	case *LambdaNode:
		_, err = resolve(&n.Body) // a function's body is not part of the path around it
	case *TypedLambdaNode:
		_, err = resolve(&n.Body)
	case *PartialNode:
		if err = add(&n.Func); err == nil {
			for i := range n.Args {
				if err = add(&n.Args[i]); err != nil {
					break
				}
			}
		}
	case *FunctionCallNode:
		if err = add(&n.Func); err == nil {
			for i := range n.Args {
				if err = add(&n.Args[i]); err != nil {
					break
				}
			}
		}
	case *GroupNode:
		if err = add(&n.Expr); err == nil {
			err = resolvePairs(n.ObjectNode, add)
		}
	case *ConditionalNode:
		err = add(&n.If, &n.Then, &n.Else)
	case *AssignmentNode:
		err = add(&n.Value)
	case *NumericOperatorNode:
		err = add(&n.LHS, &n.RHS)
	case *ComparisonOperatorNode:
		err = add(&n.LHS, &n.RHS)
	case *BooleanOperatorNode:
		err = add(&n.LHS, &n.RHS)
	case *StringConcatenationNode:
		err = add(&n.LHS, &n.RHS)
	case *FunctionApplicationNode:
		err = add(&n.LHS, &n.RHS)
	}
	return out, err
}

func resolvePairs(n *ObjectNode, add func(...*Node) error) error {
	for i := range n.Pairs {
		if err := add(&n.Pairs[i][0], &n.Pairs[i][1]); err != nil {
			return err
		}
	}
	return nil
}

// resolveStep resolves a step's own expression and its filters: a % at level 1 in a filter
// is the input of the step itself; deeper ones climb on from the step.
func resolveStep(ref *Node) ([]*Slot, error) {
	var inner *Node
	var filters []*Node
	switch n := (*ref).(type) {
	case *StepNode:
		inner = &n.Expr
		for i := range n.Stages {
			if n.Stages[i].Filter != nil {
				filters = append(filters, &n.Stages[i].Filter)
			}
		}
	case *PredicateNode:
		inner = &n.Expr
		for i := range n.Filters {
			filters = append(filters, &n.Filters[i])
		}
	default:
		return resolve(ref)
	}
	var out []*Slot
	if s, ok := (*inner).(*SortNode); ok && s.Expr == nil {
		for i := range s.Terms {
			ts, err := resolve(&s.Terms[i].Expr)
			if err != nil {
				return nil, err
			}
			out = append(out, ts...)
		}
	} else {
		s, err := resolve(inner)
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
	}
	var own []*Slot
	for _, f := range filters {
		fs, err := resolve(f)
		if err != nil {
			return nil, err
		}
		for _, s := range fs {
			if s.Level == 1 {
				own = append(own, s)
			} else if s.Level > 1 {
				s.Level--
				out = append(out, s)
			}
		}
	}
	for _, s := range own {
		if err := seekParent(ref, s); err != nil {
			return nil, err
		}
		out = append(out, s) // still seeking when the step was itself a %
	}
	return out, nil
}

// resolvePath resolves the parent operators of each step against the steps before it;
// lastSlots, when set, are those of the last step, already resolved inside it.
func resolvePath(path *PathNode, lastSlots []*Slot) ([]*Slot, error) {
	var out []*Slot
	for i := range path.Steps {
		slots := lastSlots
		if lastSlots == nil || i < len(path.Steps)-1 {
			var err error
			if slots, err = resolveStep(&path.Steps[i]); err != nil {
				return nil, err
			}
		}
		for _, s := range slots {
			idx := i - 1
			for s.Level > 0 {
				if idx < 0 {
					out = append(out, s)
					break
				}
				j := idx
				idx--
				for idx >= 0 && isFocus(path.Steps[j]) && isFocus(path.Steps[idx]) {
					j = idx
					idx--
				}
				if err := seekParent(&path.Steps[j], s); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

func isFocus(n Node) bool {
	s, ok := n.(*StepNode)
	return ok && s.Focus != ""
}

// seekParent climbs one step of the slot's search through *ref: a name or wildcard step
// counts one level, and binds its input to the slot when the count reaches 0.
func seekParent(ref *Node, slot *Slot) error {
	switch n := (*ref).(type) {
	case *NameNode, *WildcardNode:
		slot.Level--
		if slot.Level == 0 {
			step := &StepNode{Expr: n}
			*ref = step
			setAncestor(step, slot)
		}
	case *StepNode:
		switch n.Expr.(type) {
		case *NameNode, *WildcardNode:
			slot.Level--
			if slot.Level == 0 {
				setAncestor(n, slot)
			}
		default:
			return seekParent(&n.Expr, slot)
		}
	case *PredicateNode:
		switch n.Expr.(type) {
		case *NameNode, *WildcardNode:
			step := toStep(n)
			*ref = step
			return seekParent(ref, slot)
		default:
			return seekParent(&n.Expr, slot)
		}
	case *ParentNode:
		slot.Level++
	case *BlockNode:
		if len(n.Exprs) > 0 {
			n.Tuple = true
			return seekParent(&n.Exprs[len(n.Exprs)-1], slot)
		}
	case *PathNode:
		n.Tuple = true
		i := len(n.Steps) - 1
		if err := seekParent(&n.Steps[i], slot); err != nil {
			return err
		}
		for i--; slot.Level > 0 && i >= 0; i-- {
			if err := seekParent(&n.Steps[i], slot); err != nil {
				return err
			}
		}
	default:
		return &Error{Type: ErrNoAncestor, Token: fmt.Sprint(n)}
	}
	return nil
}

func setAncestor(step *StepNode, slot *Slot) {
	if step.Ancestor != nil {
		slot.Label = step.Ancestor.Label
	}
	step.Ancestor = slot
}
