package docjob

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledongthuc/pdf"
)

// opText writes an operator and its operands as text for comparing two readings.
func opText(op string, args []string) string { return op + "(" + strings.Join(args, " ") + ")" }

func valueText(v pdf.Value) string {
	switch v.Kind() {
	case pdf.Integer, pdf.Real:
		return fmt.Sprintf("%g", v.Float64())
	case pdf.String:
		return fmt.Sprintf("%q", v.RawString())
	case pdf.Name:
		return "/" + v.Name()
	case pdf.Array:
		var es []string
		for i := 0; i < v.Len(); i++ {
			es = append(es, valueText(v.Index(i)))
		}
		return "[" + strings.Join(es, " ") + "]"
	}
	return "?"
}

func operandText(o operand) string {
	switch o.kind {
	case opNumber:
		return fmt.Sprintf("%g", o.num)
	case opString:
		return fmt.Sprintf("%q", o.bytes)
	case opName:
		return "/" + string(o.bytes)
	case opArray:
		var es []string
		for _, e := range o.arr {
			es = append(es, operandText(e))
		}
		return "[" + strings.Join(es, " ") + "]"
	}
	return "?"
}

// TestContentLexerSameOperators: on every page of the corpus PDFs (the files in testdata and the
// reading-order pages), the content lexer hands pageSpans the same text operators with the same
// operands as the PDF reader's interpreter.
func TestContentLexerSameOperators(t *testing.T) {
	docs := map[string][]byte{}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.pdf"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = data
	}
	for _, c := range layoutCorpus() {
		docs[c.name] = c.data
	}
	pages := 0
	for name, data := range docs {
		rd, _, err := openPDF(data)
		if err != nil {
			continue // damaged or encrypted: nothing to compare
		}
		for i := 1; i <= min(rd.NumPage(), 50); i++ {
			strm := rd.Page(i).V.Key("Contents")
			if strm.IsNull() {
				continue
			}
			var want, got []string
			err := safeCall(func() error {
				pdf.Interpret(strm, func(stk *pdf.Stack, op string) {
					args := make([]string, stk.Len())
					for k := len(args) - 1; k >= 0; k-- {
						args[k] = valueText(stk.Pop())
					}
					if contentOps[op] != "" {
						want = append(want, opText(op, args))
					}
				})
				return nil
			})
			if err != nil {
				continue // the interpreter fails on this page: nothing to compare
			}
			interpretContent(contentReader(strm), func(op string, args []operand) {
				if op == "" {
					return
				}
				as := make([]string, len(args))
				for k, a := range args {
					as[k] = operandText(a)
				}
				got = append(got, opText(op, as))
			})
			if len(want) == 0 {
				continue
			}
			pages++
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				for k := range min(len(got), len(want)) {
					if got[k] != want[k] {
						t.Errorf("%s page %d operator %d: lexer %s, interpreter %s", name, i, k, got[k], want[k])
						break
					}
				}
				t.Errorf("%s page %d: %d operators, interpreter %d", name, i, len(got), len(want))
			}
		}
	}
	if pages < 20 {
		t.Fatalf("only %d pages compared", pages)
	}
}

// FuzzContentLexer: any bytes as a page's content are read to their end without a panic, and
// what the operators get stays within the bounds on operands.
func FuzzContentLexer(f *testing.F) {
	f.Add([]byte("BT /F1 12 Tf 72 700 Td (Hello \\(world\\) \\101\\\n) Tj [(A) -300 <0041 42> 5] TJ ET"))
	f.Add([]byte("q 1 0 0 1 0 0 cm BI /W 2 /H 1 /BPC 8 /CS /G ID \x00EI\xff EI Q BDC << /A [1 [2 [3]]] >> EMC"))
	f.Add([]byte("%comment\r(unbalanced ( [ << /N#41me 1.5.5 -.5 +3 ]] >> ) Tj <4 1> Tj"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ops := 0
		interpretContent(bytes.NewReader(data), func(op string, args []operand) {
			ops++
			if len(args) > maxOperands {
				t.Fatalf("%d operands", len(args))
			}
			for _, a := range args {
				if len(a.bytes) > maxOperandBytes || len(a.arr) > maxArrayLen {
					t.Fatalf("operand beyond the bounds: %d bytes, %d elements", len(a.bytes), len(a.arr))
				}
			}
		})
		if ops > len(data) {
			t.Fatalf("%d operators from %d bytes", ops, len(data))
		}
	})
}
