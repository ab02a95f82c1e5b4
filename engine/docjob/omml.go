package docjob

import (
	"strings"
)

// Office Math (OMML, the m: elements Word writes for equations) rendered as LaTeX, so an
// equation reads "\frac{-b \pm \sqrt{b^{2}-4ac}}{2a}" instead of its characters run together.

// ommlSymbols maps characters to LaTeX commands.
var ommlSymbols = map[rune]string{
	'±': `\pm `, '∓': `\mp `, '×': `\times `, '÷': `\div `, '·': `\cdot `, '⋅': `\cdot `,
	'≤': `\leq `, '≥': `\geq `, '≠': `\neq `, '≈': `\approx `, '≡': `\equiv `, '∞': `\infty `,
	'→': `\rightarrow `, '←': `\leftarrow `, '⇒': `\Rightarrow `, '⇔': `\Leftrightarrow `,
	'∈': `\in `, '∉': `\notin `, '⊂': `\subset `, '⊆': `\subseteq `, '∪': `\cup `, '∩': `\cap `,
	'∂': `\partial `, '∇': `\nabla `, '∀': `\forall `, '∃': `\exists `, '∅': `\emptyset `,
	'α': `\alpha `, 'β': `\beta `, 'γ': `\gamma `, 'δ': `\delta `, 'ε': `\epsilon `, 'ζ': `\zeta `,
	'η': `\eta `, 'θ': `\theta `, 'ι': `\iota `, 'κ': `\kappa `, 'λ': `\lambda `, 'μ': `\mu `,
	'ν': `\nu `, 'ξ': `\xi `, 'π': `\pi `, 'ρ': `\rho `, 'σ': `\sigma `, 'τ': `\tau `, 'υ': `\upsilon `,
	'φ': `\phi `, 'χ': `\chi `, 'ψ': `\psi `, 'ω': `\omega `, 'Γ': `\Gamma `, 'Δ': `\Delta `,
	'Θ': `\Theta `, 'Λ': `\Lambda `, 'Ξ': `\Xi `, 'Π': `\Pi `, 'Σ': `\Sigma `, 'Φ': `\Phi `,
	'Ψ': `\Psi `, 'Ω': `\Omega `, '…': `\ldots `, '⋯': `\cdots `, '′': `'`, '∝': `\propto `,
	'∑': `\sum `, '∏': `\prod `, '∫': `\int `, '∬': `\iint `, '∮': `\oint `, '∯': `\oiint `, '∰': `\oiiint `, '√': `\sqrt `,
	'{': `\{`, '}': `\}`, '%': `\%`, '#': `\#`, '&': `\&`, '_': `\_`, '$': `\$`,
}

var naryOps = map[string]string{
	"∑": `\sum`, "∏": `\prod`, "∫": `\int`, "∬": `\iint`, "∭": `\iiint`, "∮": `\oint`, "∯": `\oiint`, "∰": `\oiiint`,
	"⋃": `\bigcup`, "⋂": `\bigcap`, "∐": `\coprod`, "⋁": `\bigvee`, "⋀": `\bigwedge`,
}

var accents = map[string]string{
	"̂": `\hat`, "̃": `\tilde`, "̄": `\bar`, "̇": `\dot`, "̈": `\ddot`, "⃗": `\vec`, "̌": `\check`, "́": `\acute`, "̀": `\grave`, "̆": `\breve`,
}

var mathFuncs = map[string]bool{
	"sin": true, "cos": true, "tan": true, "cot": true, "sec": true, "csc": true, "log": true, "ln": true,
	"exp": true, "lim": true, "max": true, "min": true, "sinh": true, "cosh": true, "tanh": true,
	"arcsin": true, "arccos": true, "arctan": true, "det": true, "sup": true, "inf": true, "gcd": true,
}

// ommlLaTeX renders an m:oMath (or any OMML element) as LaTeX.
func ommlLaTeX(n *node) string {
	var b strings.Builder
	ommlKids(&b, n)
	return strings.Join(strings.Fields(b.String()), " ")
}

func ommlKids(b *strings.Builder, n *node) {
	if n == nil {
		return
	}
	for i := 0; i < len(n.kids); i++ {
		k := n.kids[i]
		if k.name != "r" {
			ommlNode(b, k)
			continue
		}
		// runs of one style read as one text: Word splits "group with" into "group ", "wit", "h"
		var text strings.Builder
		text.WriteString(ommlRunText(k))
		for i+1 < len(n.kids) && n.kids[i+1].name == "r" && ommlRunStyle(n.kids[i+1]) == ommlRunStyle(k) {
			i++
			text.WriteString(ommlRunText(n.kids[i]))
		}
		ommlText(b, text.String(), k.child("rPr"))
	}
}

// ommlRunStyle is what of an m:r's properties changes how its text is written.
func ommlRunStyle(r *node) string {
	pr := r.child("rPr")
	if pr == nil {
		return ""
	}
	st := ""
	if pr.child("nor") != nil {
		st = "nor"
	}
	if s := pr.child("sty"); s != nil {
		st += "/" + s.a("val")
	}
	return st
}

func ommlRunText(r *node) string {
	var text strings.Builder
	for _, k := range r.kids {
		if k.name == "t" {
			text.WriteString(k.text)
		}
	}
	return text.String()
}

func ommlArg(n *node) string {
	var b strings.Builder
	ommlKids(&b, n)
	return strings.TrimSpace(b.String())
}

func ommlChr(pr *node, def string) string {
	if pr == nil {
		return def
	}
	if c := pr.child("chr"); c != nil {
		if v, ok := c.attr["val"]; ok {
			return v
		}
	}
	return def
}

func latexDelim(s string, left bool) string {
	switch s {
	case "":
		return "."
	case "{":
		return `\{`
	case "}":
		return `\}`
	case "⟨", "〈":
		return `\langle`
	case "⟩", "〉":
		return `\rangle`
	case "|":
		return "|"
	case "‖":
		return `\|`
	case "⌊":
		return `\lfloor`
	case "⌋":
		return `\rfloor`
	case "⌈":
		return `\lceil`
	case "⌉":
		return `\rceil`
	}
	return s
}

func ommlNode(b *strings.Builder, k *node) {
	switch k.name {
	case "r":
		ommlRun(b, k)
	case "f":
		num, den := ommlArg(k.child("num")), ommlArg(k.child("den"))
		if pr := k.child("fPr"); pr != nil {
			if t := pr.child("type"); t != nil {
				switch t.a("val") {
				case "lin", "skw":
					b.WriteString(num + "/" + den)
					return
				case "noBar":
					// stacked without a line (a binomial coefficient inside its brackets)
					b.WriteString(`\genfrac{}{}{0pt}{}{` + num + `}{` + den + `}`)
					return
				}
			}
		}
		b.WriteString(`\frac{` + num + `}{` + den + `}`)
	case "sSup":
		b.WriteString(ommlBase(k.child("e")) + `^{` + ommlArg(k.child("sup")) + `}`)
	case "sSub":
		b.WriteString(ommlBase(k.child("e")) + `_{` + ommlArg(k.child("sub")) + `}`)
	case "sSubSup":
		b.WriteString(ommlBase(k.child("e")) + `_{` + ommlArg(k.child("sub")) + `}^{` + ommlArg(k.child("sup")) + `}`)
	case "sPre":
		b.WriteString(`{}_{` + ommlArg(k.child("sub")) + `}^{` + ommlArg(k.child("sup")) + `}` + ommlArg(k.child("e")))
	case "rad":
		deg := ommlArg(k.child("deg"))
		if deg != "" {
			b.WriteString(`\sqrt[` + deg + `]{` + ommlArg(k.child("e")) + `}`)
		} else {
			b.WriteString(`\sqrt{` + ommlArg(k.child("e")) + `}`)
		}
	case "nary":
		op := ommlChr(k.child("naryPr"), "∫")
		cmd, ok := naryOps[op]
		if !ok {
			cmd = op
		}
		b.WriteString(cmd)
		if s := ommlArg(k.child("sub")); s != "" {
			b.WriteString(`_{` + s + `}`)
		}
		if s := ommlArg(k.child("sup")); s != "" {
			b.WriteString(`^{` + s + `}`)
		}
		b.WriteString(" " + ommlArg(k.child("e")) + " ")
	case "d":
		pr := k.child("dPr")
		beg, end, sep := "(", ")", "|"
		if pr != nil {
			if c := pr.child("begChr"); c != nil {
				beg = c.a("val")
			}
			if c := pr.child("endChr"); c != nil {
				end = c.a("val")
			}
			if c := pr.child("sepChr"); c != nil {
				sep = c.a("val")
			}
		}
		var parts []string
		for _, e := range k.kids {
			if e.name == "e" {
				parts = append(parts, ommlArg(e))
			}
		}
		b.WriteString(`\left` + latexDelim(beg, true) + strings.Join(parts, sep) + `\right` + latexDelim(end, false))
	case "func":
		name := strings.TrimSpace(ommlArg(k.child("fName")))
		if mathFuncs[name] {
			name = `\` + name
		}
		b.WriteString(name + ommlGroup(ommlArg(k.child("e"))))
	case "acc":
		chr := ommlChr(k.child("accPr"), "̂")
		cmd, ok := accents[chr]
		if !ok {
			cmd = `\hat`
		}
		b.WriteString(cmd + `{` + ommlArg(k.child("e")) + `}`)
	case "bar":
		pos := "top"
		if pr := k.child("barPr"); pr != nil {
			if p := pr.child("pos"); p != nil {
				pos = p.a("val")
			}
		}
		if pos == "bot" {
			b.WriteString(`\underline{` + ommlArg(k.child("e")) + `}`)
		} else {
			b.WriteString(`\overline{` + ommlArg(k.child("e")) + `}`)
		}
	case "limLow":
		b.WriteString(ommlArg(k.child("e")) + `_{` + ommlArg(k.child("lim")) + `}`)
	case "limUpp":
		b.WriteString(ommlArg(k.child("e")) + `^{` + ommlArg(k.child("lim")) + `}`)
	case "groupChr":
		chr := ommlChr(k.child("groupChrPr"), "⏟")
		if chr == "⏞" {
			b.WriteString(`\overbrace{` + ommlArg(k.child("e")) + `}`)
		} else {
			b.WriteString(`\underbrace{` + ommlArg(k.child("e")) + `}`)
		}
	case "m":
		var rows []string
		for _, mr := range k.kids {
			if mr.name != "mr" {
				continue
			}
			var cells []string
			for _, e := range mr.kids {
				if e.name == "e" {
					cells = append(cells, ommlArg(e))
				}
			}
			rows = append(rows, strings.Join(cells, " & "))
		}
		b.WriteString(`\begin{matrix}` + strings.Join(rows, ` \\ `) + `\end{matrix}`)
	case "eqArr":
		var rows []string
		for _, e := range k.kids {
			if e.name == "e" {
				rows = append(rows, ommlArg(e))
			}
		}
		if len(rows) == 1 {
			b.WriteString(rows[0])
			return
		}
		b.WriteString(`\begin{array}{l}` + strings.Join(rows, ` \\ `) + `\end{array}`)
	case "rPr", "ctrlPr", "fPr", "sSupPr", "sSubPr", "sSubSupPr", "radPr", "naryPr", "dPr", "funcPr",
		"accPr", "barPr", "limLowPr", "limUppPr", "mPr", "eqArrPr", "oMathParaPr", "boxPr", "borderBoxPr",
		"groupChrPr", "sPrePr", "phantPr":
	default:
		// e, box, borderBox, phant, oMath and wrappers: their content
		ommlKids(b, k)
	}
}

// ommlBase is a script's base, braced when it is more than one symbol.
func ommlBase(e *node) string {
	s := ommlArg(e)
	if len([]rune(s)) <= 1 || (strings.HasPrefix(s, `\`) && !strings.ContainsAny(s[1:], ` {\`)) {
		return s
	}
	if strings.HasPrefix(s, `\left`) {
		return s
	}
	return `{` + s + `}`
}

func ommlGroup(s string) string {
	if strings.HasPrefix(s, `\left`) {
		return s
	}
	return `(` + s + `)`
}

// ommlRun writes an m:r's text, with symbols as LaTeX commands; plain-text runs (m:nor or a
// w:t inside) are kept as words.
func ommlRun(b *strings.Builder, r *node) {
	ommlText(b, ommlRunText(r), r.child("rPr"))
}

// ommlText writes the text of runs with properties pr (see ommlRun).
func ommlText(b *strings.Builder, s string, pr *node) {
	if pr != nil && pr.child("nor") != nil {
		b.WriteString(`\text{` + s + `}`)
		return
	}
	if mathFuncs[strings.TrimSpace(s)] {
		b.WriteString(`\` + strings.TrimSpace(s) + " ")
		return
	}
	if w := strings.TrimSpace(s); len(w) > 1 && asciiWord(w) {
		if pr != nil && pr.child("sty") != nil && pr.child("sty").a("val") == "p" {
			// an upright word (a function name Word does not know: argmax)
			b.WriteString(`\operatorname{` + w + `} `)
			return
		}
	}
	if words := strings.Fields(s); len(words) > 1 && allWords(words) {
		// words with spaces between them (a label under a brace): spaces in math are dropped
		b.WriteString(`\text{` + strings.Join(words, " ") + `}`)
		return
	}
	for _, c := range s {
		if cmd, ok := ommlSymbols[c]; ok {
			b.WriteString(" " + cmd)
			continue
		}
		b.WriteRune(c)
	}
}

// asciiWord reports whether s is ASCII letters only.
func asciiWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isASCIILetter(s[i]) {
			return false
		}
	}
	return s != ""
}

func allWords(ws []string) bool {
	for _, w := range ws {
		if !asciiWord(w) {
			return false
		}
	}
	return true
}
