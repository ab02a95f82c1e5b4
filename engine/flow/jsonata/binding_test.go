package jsonata

import (
	"encoding/json"
	"strings"
	"testing"
)

// shop is test data of our own: two warehouses with their shelves and boxes, suppliers, and
// deliveries that name a supplier and a box code.
const shop = `{
  "site": "North",
  "warehouses": [
    {"wid": "W1", "shelves": [
      {"row": 1, "boxes": [{"code": "a", "kg": 3}, {"code": "b", "kg": 5}]},
      {"row": 2, "boxes": [{"code": "c", "kg": 1}]}
    ]},
    {"wid": "W2", "shelves": [
      {"row": 7, "boxes": [{"code": "d", "kg": 8}, {"code": "e", "kg": 2}]}
    ]}
  ],
  "suppliers": [{"sid": "s1", "name": "Acme"}, {"sid": "s2", "name": "Bolt"}, {"sid": "s3", "name": "Cord"}],
  "deliveries": [{"sid": "s2", "box": "c"}, {"sid": "s1", "box": "a"}, {"sid": "s2", "box": "e"}]
}`

func shopData(t *testing.T) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(shop), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestFocusIndexAndParent(t *testing.T) {
	data := shopData(t)
	for _, c := range []struct{ src, want string }{
		// @ binds the step's value and keeps the context: a join of deliveries and suppliers
		{`deliveries@$d.suppliers@$s[$d.sid = $s.sid].{"box": $d.box, "by": $s.name}`,
			`[{"box":"c","by":"Bolt"},{"box":"a","by":"Acme"},{"box":"e","by":"Bolt"}]`},
		{`deliveries@$d.warehouses.shelves.boxes[code = $d.box].kg`, `[1,3,2]`},
		// a join grouped by a key built from a bound variable
		{`deliveries@$d.suppliers@$s[$d.sid = $s.sid]{$s.name: $count($d)}`, `{"Acme":1,"Bolt":2}`},
		{`deliveries@$d.suppliers@$s[$d.sid = $s.sid]{$s.name: $d.box}`, `{"Acme":"a","Bolt":["c","e"]}`},
		// sorting on a bound variable
		{`deliveries@$d.suppliers@$s[$d.sid = $s.sid]^(>$d.box).$d.box`, `["e","c","a"]`},
		// # binds the position within the step's results
		{`warehouses.shelves#$i.{"row": row, "i": $i}`, `[{"i":0,"row":1},{"i":1,"row":2},{"i":0,"row":7}]`},
		{`suppliers#$i[$i > 0].name`, `["Bolt","Cord"]`},
		{`$#$i[$i < 2]`, `[10,20]`},
		{`suppliers[sid != "s1"]#$i.{"n": name, "i": $i}`, `[{"i":0,"n":"Bolt"},{"i":1,"n":"Cord"}]`},
		{`suppliers^(>name)#$i.($i & name)`, `["0Cord","1Bolt","2Acme"]`},
		// % is the parent of the current value
		{`warehouses.shelves.boxes.{"code": code, "row": %.row, "wid": %.%.wid}`,
			`[{"code":"a","row":1,"wid":"W1"},{"code":"b","row":1,"wid":"W1"},{"code":"c","row":2,"wid":"W1"},{"code":"d","row":7,"wid":"W2"},{"code":"e","row":7,"wid":"W2"}]`},
		{`warehouses.shelves.boxes[%.%.wid = "W2"].code`, `["d","e"]`},
		{`warehouses.shelves.boxes[kg > 2].%.row`, `[1,1,7]`},
		{`warehouses.shelves.boxes.code^(>%.%.row, %.kg)`, `["e","d","c","a","b"]`},
		{`warehouses.shelves.boxes.{%.%.wid: kg}`, `[{"W1":3},{"W1":5},{"W1":1},{"W2":8},{"W2":2}]`},
		{`warehouses.shelves.boxes.($p := %; $p.row * 10 + kg)`, `[13,15,21,78,72]`},
		{`(warehouses.shelves.boxes)[%.row = 2].code`, `"c"`},
		{`warehouses.shelves.boxes.kg.%[%.row = 7].code`, `["d","e"]`},
		// one evaluation of a shared expression does not change the next
		{`deliveries@$d.suppliers@$s[$d.sid = $s.sid]{$s.name: $d.box ~> $join(",")}`, `{"Acme":"a","Bolt":"c,e"}`},
	} {
		e, err := Compile(c.src)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		in := data
		if strings.HasPrefix(c.src, "$#") {
			in = []any{10.0, 20.0, 30.0}
		}
		for range 2 {
			v, ok, err := e.Eval(in, nil)
			if err != nil || !ok || js(v) != c.want {
				t.Errorf("%s = %s (%v, %v), want %s", c.src, js(v), ok, err, c.want)
				break
			}
		}
	}
}

func TestBindingErrors(t *testing.T) {
	for _, src := range []string{
		`%`, `(%)`, `$.%`, `{"a": 1}.%`, `warehouses.%.%.%`, // no parent to refer to
		`warehouses@w.shelves`, `warehouses#i`, `warehouses@1`, // the binding is not a variable
		`warehouses[0]@$w.shelves`,         // @ after a predicate
		`warehouses^(wid)@$w.shelves`,      // @ after a sort
		`warehouses.%%`, `warehouses.(%%)`, // % as modulo without its right operand
	} {
		if _, err := Compile(src); err == nil {
			t.Errorf("%s compiled", src)
		}
	}
	data := shopData(t)
	for _, src := range []string{`warehouses.shelves.(% % %)`, `warehouses.shelves.%()`} {
		e, err := Compile(src)
		if err != nil {
			continue // refused when compiled is as good as when evaluated
		}
		if _, _, err := e.Eval(data, nil); err == nil {
			t.Errorf("%s evaluated without an error", src)
		}
	}
}
