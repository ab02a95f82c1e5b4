package csvjob

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// fastSchemas are schemas the fast row path takes: the seed's, one with an extra unmapped file
// column and a plain text column, one with a bounded integer and max/first rules, one whose ID
// prefix ends in a digit, and one whose key is plain text.
func fastSchemas() []*Schema {
	return []*Schema{
		DefaultSchema(),
		{Key: "id", Columns: []Column{
			{Name: "id", Type: TypeString, Pattern: `^U\d{5}$`, Field: FieldUserID},
			{Name: "note", Type: TypeString},
			{Name: "a", Type: TypeInteger, Required: true, Min: f64(0), Field: FieldLoginCount},
			{Name: "b", Type: TypeInteger, Field: FieldPostCount},
		}},
		{Key: "id", Columns: []Column{
			{Name: "id", Type: TypeString, Required: true, Pattern: `^A1[0-9]{3}$`, Field: FieldUserID},
			{Name: "a", Type: TypeInteger, Min: f64(-5), Max: f64(50), Field: FieldLoginCount, Combine: CombineMax},
			{Name: "b", Type: TypeInteger, Field: FieldPostCount, Combine: CombineFirst},
			{Name: "missing", Type: TypeString},
		}},
		{Key: "who", Columns: []Column{
			{Name: "who", Type: TypeString, Required: true, Field: FieldUserID},
			{Name: "a", Type: TypeInteger, Field: FieldLoginCount},
			{Name: "b", Type: TypeInteger, Field: FieldPostCount},
		}},
	}
}

// randomBody writes rows that are mostly plain, with every oddity the general path handles:
// quotes, signs, empty and out-of-range values, malformed IDs, non-ASCII bytes, blank lines,
// CRLF and lone CR endings, wrong field counts, a trailing delimiter and a last line without a
// line break.
func randomBody(r *rand.Rand, nfields int, delim byte) []byte {
	ids := []string{"U00001", "U00002", "U12345", "A1001", "A1999", "U0001", "U000001", "u00001", "\"U00003\"", "", "ユーザ", "A10x1", "bob", "U99999"}
	ints := []string{"0", "7", "42", "-3", "+4", "", "x", "1e3", "99999999999999999999", "007", "\"5\"", "５", "51"}
	var b strings.Builder
	rows := r.IntN(40)
	for range rows {
		n := nfields
		switch r.IntN(25) {
		case 0:
			n--
		case 1:
			n++
		case 2:
			b.WriteString("\n")
		}
		for j := range n {
			if j > 0 {
				b.WriteByte(delim)
			}
			if j == 0 || r.IntN(4) == 0 {
				b.WriteString(ids[r.IntN(len(ids))])
			} else {
				b.WriteString(ints[r.IntN(len(ints))])
			}
		}
		if r.IntN(30) == 0 {
			b.WriteByte(delim)
		}
		switch r.IntN(10) {
		case 0:
			b.WriteString("\r\n")
		case 1:
			b.WriteString("\r")
		default:
			b.WriteString("\n")
		}
	}
	s := b.String()
	if r.IntN(3) == 0 {
		s = strings.TrimRight(s, "\r\n")
	}
	return []byte(s)
}

// fastAndGeneral returns the plan of schema s for a file of nfields fields (every column but
// "missing", in order), and the same plan without the fast path.
func fastAndGeneral(t testing.TB, s *Schema, delim byte) (fast, general *plan, nfields int) {
	if err := s.Compile(); err != nil {
		t.Fatal(err)
	}
	names := s.Names()
	cols := make([]int, len(s.Columns))
	for i, c := range s.Columns {
		cols[i] = -1
		if c.Name != "missing" {
			cols[i] = nfields
			nfields++
		}
	}
	jc := &jobContext{Validation: Validation{Columns: cols, ColumnCount: nfields, Encoding: EncUTF8,
		Delimiter: string(delim), Header: names[:nfields]}, Options: Options{Schema: s, AuditAll: true}}
	pl, err := newPlan(jc)
	if err != nil {
		t.Fatal(err)
	}
	if pl.fast == nil {
		t.Fatalf("schema %s: the fast path does not take it", names)
	}
	slow := *pl
	slow.fast = nil
	return pl, &slow, nfields
}

// sameChunk fails t when body parses into different partials with and without the fast path.
func sameChunk(t testing.TB, fast, general *plan, body []byte) {
	c := Chunk{Index: 1, FirstLine: 2}
	want, err := parseChunk(context.Background(), append([]byte(nil), body...), general, c, true)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseChunk(context.Background(), append([]byte(nil), body...), fast, c, true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q\nfast    %+v\ngeneral %+v", body, got, want)
	}
}

// TestFastRowMatchesGeneral: a chunk parsed with the fast row path gives exactly the partial the
// general path gives (rows, errors, statistics, users in order, audit lines), on random bodies
// for each schema the fast path takes, with several delimiters.
func TestFastRowMatchesGeneral(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	for _, s := range fastSchemas() {
		for _, delim := range []byte{',', '\t', ';'} {
			fast, general, nfields := fastAndGeneral(t, s, delim)
			for range 150 {
				sameChunk(t, fast, general, randomBody(r, nfields, delim))
			}
		}
	}
}

// FuzzFastRow: on any bytes, the fast row path and the general path agree (second schema above:
// an ID key, a text column, a required and an optional integer).
func FuzzFastRow(f *testing.F) {
	f.Add([]byte("U00001,a,1,2\nU00002,,3,\r\n\"U00001\",b,-1,4\rU1,x,5,6"))
	f.Add([]byte("U00009,\xE3\x81\x82,7,8\n\n,,,\nU00009,a,9,99999999999999999999\n"))
	fast, general, _ := fastAndGeneral(f, fastSchemas()[1], ',')
	f.Fuzz(func(t *testing.T, body []byte) {
		sameChunk(t, fast, general, body)
	})
}

// TestFastPlanRefuses: schemas with a column the fast path does not check stay on the general
// path.
func TestFastPlanRefuses(t *testing.T) {
	for _, c := range []Column{
		{Name: "d", Type: TypeDecimal},
		{Name: "t", Type: TypeDate},
		{Name: "f", Type: TypeBoolean},
		{Name: "p", Type: TypeString, Pattern: `^[a-z]+$`},
		{Name: "i", Type: TypeInteger, Pattern: `^\d{3}$`},
	} {
		s := DefaultSchema()
		s.Columns = append(s.Columns, c)
		if err := s.Compile(); err != nil {
			t.Fatal(err)
		}
		jc := &jobContext{Validation: Validation{Columns: []int{0, 1, 2, 3}, ColumnCount: 4, Encoding: EncUTF8, Delimiter: ","},
			Options: Options{Schema: s}}
		pl, err := newPlan(jc)
		if err != nil {
			t.Fatal(err)
		}
		if pl.fast != nil {
			t.Errorf("column %s %s: fast path planned", c.Type, c.Pattern)
		}
	}
}
