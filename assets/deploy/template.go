// Package deploy holds JobDesk's CloudFormation template (template.yaml) and reads it as
// CloudFormation will, intrinsic functions kept: its check (template_test.go) proves the
// template parses strictly, references only what exists, grants only on its own resources and
// deploys exactly the workflows of assets/workflows with the functions they call, and Policy
// answers whether a principal of a deployed stack may make a given AWS call.
package deploy

import (
	_ "embed"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Template is template.yaml as shipped.
//
//go:embed template.yaml
var Template []byte

// ---- reading the template with its intrinsics ----

// shortTags are the YAML short forms of the intrinsic functions, as their long form keys.
var shortTags = map[string]string{
	"!Ref": "Ref", "!Condition": "Condition", "!GetAtt": "Fn::GetAtt", "!Sub": "Fn::Sub", "!If": "Fn::If",
	"!Join": "Fn::Join", "!Select": "Fn::Select", "!Split": "Fn::Split", "!Equals": "Fn::Equals",
	"!Not": "Fn::Not", "!And": "Fn::And", "!Or": "Fn::Or", "!FindInMap": "Fn::FindInMap",
	"!Base64": "Fn::Base64", "!GetAZs": "Fn::GetAZs", "!ImportValue": "Fn::ImportValue", "!Cidr": "Fn::Cidr",
}

func decodeNode(n *yaml.Node) (any, error) {
	var v any
	switch n.Kind {
	case yaml.DocumentNode:
		return decodeNode(n.Content[0])
	case yaml.AliasNode:
		return nil, fmt.Errorf("line %d: YAML aliases are not allowed in a CloudFormation template", n.Line)
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("line %d: duplicate key %q", n.Content[i].Line, k)
			}
			val, err := decodeNode(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[k] = val
		}
		v = m
	case yaml.SequenceNode:
		s := []any{}
		for _, c := range n.Content {
			val, err := decodeNode(c)
			if err != nil {
				return nil, err
			}
			s = append(s, val)
		}
		v = s
	case yaml.ScalarNode:
		if strings.HasPrefix(n.Tag, "!!") {
			if err := n.Decode(&v); err != nil {
				return nil, err
			}
		} else {
			v = n.Value
		}
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		long, ok := shortTags[n.Tag]
		if !ok {
			return nil, fmt.Errorf("line %d: unknown tag %s", n.Line, n.Tag)
		}
		if long == "Fn::GetAtt" {
			if s, ok := v.(string); ok {
				a, b, _ := strings.Cut(s, ".")
				v = []any{a, b}
			}
		}
		return map[string]any{long: v}, nil
	}
	return v, nil
}

// tmpl is the template as CloudFormation sees it, intrinsics kept.
type tmpl struct {
	root       map[string]any
	resources  map[string]map[string]any
	parameters map[string]any
	conditions map[string]any
	outputs    map[string]any
}

func (t *tmpl) props(id string) map[string]any {
	p, _ := t.resources[id]["Properties"].(map[string]any)
	return p
}

func (t *tmpl) ofType(typ string) []string {
	var ids []string
	for id, r := range t.resources {
		if r["Type"] == typ {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

func parseTemplate(data []byte) (*tmpl, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	v, err := decodeNode(&doc)
	if err != nil {
		return nil, err
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the template is not a mapping")
	}
	t := &tmpl{root: root, resources: map[string]map[string]any{}}
	t.parameters, _ = root["Parameters"].(map[string]any)
	t.conditions, _ = root["Conditions"].(map[string]any)
	t.outputs, _ = root["Outputs"].(map[string]any)
	res, _ := root["Resources"].(map[string]any)
	for id, r := range res {
		m, ok := r.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("resource %s is not a mapping", id)
		}
		t.resources[id] = m
	}
	return t, nil
}

// subVar is a ${…} of a Sub string.
var subVar = regexp.MustCompile(`\$\{([^}]*)\}`)

// list is v as a list (a scalar is a list of one).
func list(v any) []any {
	if a, ok := v.([]any); ok {
		return a
	}
	if v == nil {
		return nil
	}
	return []any{v}
}
