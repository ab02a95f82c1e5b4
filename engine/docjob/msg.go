package docjob

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	u16 "unicode/utf16"

	"golang.org/x/text/encoding/charmap"
)

// MAPI property ids read from an Outlook .msg file ([MS-OXMSG], [MS-OXPROPS]).
const (
	prSubject            = 0x0037
	prClientSubmitTime   = 0x0039
	prSentReprName       = 0x0042
	prSentReprEmail      = 0x0065
	prTransportHeaders   = 0x007D
	prSenderName         = 0x0C1A
	prSenderEmail        = 0x0C1F
	prRecipientType      = 0x0C15
	prDisplayCc          = 0x0E03
	prDisplayTo          = 0x0E04
	prDeliveryTime       = 0x0E06
	prBody               = 0x1000
	prRTFCompressed      = 0x1009
	prBodyHTML           = 0x1013
	prDisplayName        = 0x3001
	prEmailAddress       = 0x3003
	prAttachDataBin      = 0x3701
	prAttachFilename     = 0x3704
	prAttachMethod       = 0x3705
	prAttachLongFilename = 0x3707
	prAttachContentID    = 0x3712
	prSMTPAddress        = 0x39FE
	prCodepage           = 0x3FFD
	prSenderSMTP         = 0x5D01
	prAttachmentHidden   = 0x7FFE
)

// msgProps are one object's properties (message, recipient or attachment): variable-length
// values from their __substg1.0_ streams and storages, fixed-length ones from the property
// stream.
type msgProps struct {
	c        *cfb
	entry    int
	streams  map[uint32]int // id<<16|type → directory entry
	fixed    map[uint16][8]byte
	codepage int
}

// readProps indexes the properties of storage entry i; header is the length of the property
// stream's header (32 for a top-level message, 24 for an attached one, 8 for recipients and
// attachments).
func readProps(c *cfb, i, header int) *msgProps {
	p := &msgProps{c: c, entry: i, streams: map[uint32]int{}, fixed: map[uint16][8]byte{}}
	for _, k := range c.children(i) {
		name := c.entries[k].Name
		if tag, ok := strings.CutPrefix(name, "__substg1.0_"); ok && len(tag) == 8 {
			if v, err := strconv.ParseUint(tag, 16, 32); err == nil {
				p.streams[uint32(v)] = k
			}
		}
		if name == "__properties_version1.0" {
			b, err := c.read(k)
			if err != nil || len(b) < header {
				continue
			}
			for off := header; off+16 <= len(b); off += 16 {
				id := binary.LittleEndian.Uint16(b[off+2:])
				var v [8]byte
				copy(v[:], b[off+8:off+16])
				p.fixed[id] = v
			}
		}
	}
	if v, ok := p.fixed[prCodepage]; ok {
		p.codepage = int(binary.LittleEndian.Uint32(v[:]))
	}
	return p
}

// str returns a string property: Unicode (PT_UNICODE) or 8-bit in the message's code page
// (PT_STRING8: CP932 for Japanese Outlook).
func (p *msgProps) str(id uint16) string {
	if k, ok := p.streams[uint32(id)<<16|0x001F]; ok {
		if b, err := p.c.read(k); err == nil {
			u := make([]uint16, len(b)/2)
			for i := range u {
				u[i] = binary.LittleEndian.Uint16(b[2*i:])
			}
			return strings.TrimRight(string(u16.Decode(u)), "\x00")
		}
	}
	if k, ok := p.streams[uint32(id)<<16|0x001E]; ok {
		if b, err := p.c.read(k); err == nil {
			return strings.TrimRight(p.decode8(b), "\x00")
		}
	}
	return ""
}

// decode8 decodes 8-bit text in the message's code page.
func (p *msgProps) decode8(b []byte) string {
	switch p.codepage {
	case 932:
		return decodeRaw(b, "shift_jis")
	case 20932, 51932:
		return decodeRaw(b, "euc-jp")
	case 50220, 50221, 50222:
		return decodeRaw(b, "iso-2022-jp")
	case 65001:
		return decodeRaw(b, "utf-8")
	case 1252:
		if s, err := charmap.Windows1252.NewDecoder().Bytes(b); err == nil {
			return string(s)
		}
	}
	return decodeRaw(b, "")
}

// bin returns a binary property (PT_BINARY), or nil.
func (p *msgProps) bin(id uint16) ([]byte, bool, error) {
	k, ok := p.streams[uint32(id)<<16|0x0102]
	if !ok {
		return nil, false, nil
	}
	b, err := p.c.read(k)
	return b, true, err
}

func (p *msgProps) long(id uint16) (uint32, bool) {
	v, ok := p.fixed[id]
	return binary.LittleEndian.Uint32(v[:]), ok
}

func (p *msgProps) time(id uint16) string {
	v, ok := p.fixed[id]
	if !ok {
		return ""
	}
	ft := int64(binary.LittleEndian.Uint64(v[:]))
	if ft <= 0 {
		return ""
	}
	// FILETIME: 100 ns ticks since 1601-01-01 UTC.
	t := time.Unix((ft-116444736000000000)/10000000, 0).UTC()
	if t.Year() < 1980 || t.Year() > 2200 {
		return ""
	}
	return t.Format("Mon, 02 Jan 2006 15:04:05 -0700")
}

// convertMSG reads an Outlook message (.msg) and renders it with renderMail.
func convertMSG(ctx context.Context, data []byte, opt Options) (*Doc, error) {
	c, err := openCFB(data)
	if err != nil {
		return nil, errDamaged(KindMSG, err)
	}
	m, err := readMSG(c, 0, 32, 0)
	if err != nil {
		return nil, errDamaged(KindMSG, err)
	}
	return renderMail(ctx, m, KindMSG, opt)
}

// readMSG reads the message in storage entry i (the root, or an attached message's storage).
func readMSG(c *cfb, i, header, depth int) (*mailMessage, error) {
	if depth > maxMailDepth {
		return nil, reason("attached messages are nested too deep")
	}
	p := readProps(c, i, header)
	m := &mailMessage{Subject: p.str(prSubject)}
	from := p.str(prSenderName)
	email := p.str(prSenderSMTP)
	if email == "" {
		email = p.str(prSenderEmail)
	}
	if email == "" {
		email = p.str(prSentReprEmail)
	}
	if from == "" {
		from = p.str(prSentReprName)
	}
	m.From = joinAddress(from, email)
	m.Date = p.time(prClientSubmitTime)
	if m.Date == "" {
		m.Date = p.time(prDeliveryTime)
	}
	// Recipients: To and Cc from the recipient table, with their SMTP addresses.
	var to, cc []string
	for _, k := range c.children(i) {
		e := c.entries[k]
		switch {
		case e.Type == cfbStorage && strings.HasPrefix(e.Name, "__recip_version1.0_"):
			r := readProps(c, k, 8)
			addr := r.str(prSMTPAddress)
			if addr == "" {
				addr = r.str(prEmailAddress)
			}
			s := joinAddress(r.str(prDisplayName), addr)
			if s == "" {
				continue
			}
			switch t, _ := r.long(prRecipientType); t {
			case 2:
				cc = append(cc, s)
			case 3: // Bcc: not shown, as a receiver would not see it
			default:
				to = append(to, s)
			}
		}
	}
	m.To, m.Cc = strings.Join(to, ", "), strings.Join(cc, ", ")
	if m.To == "" {
		m.To = p.str(prDisplayTo)
	}
	if m.Cc == "" {
		m.Cc = p.str(prDisplayCc)
	}
	if hdr := p.str(prTransportHeaders); hdr != "" && (m.From == "" || m.Date == "") {
		if em, err := parseEML([]byte(hdr+"\r\n\r\n"), depth+1); err == nil {
			if m.From == "" {
				m.From = em.From
			}
			if m.Date == "" {
				m.Date = em.Date
			}
		}
	}
	// The body: plain text, else the HTML body, else the compressed RTF (which may carry HTML).
	m.Text = p.str(prBody)
	if strings.TrimSpace(m.Text) == "" {
		if b, ok, _ := p.bin(prBodyHTML); ok {
			m.HTML, _, _ = decodeHTML(b)
		} else if s := p.str(prBodyHTML); s != "" {
			m.HTML = s
		}
	}
	if strings.TrimSpace(m.Text) == "" && strings.TrimSpace(m.HTML) == "" {
		if b, ok, err := p.bin(prRTFCompressed); ok && err == nil {
			if rtf, err := decompressRTF(b); err == nil {
				html, text := rtfText(rtf)
				m.HTML, m.Text = html, text
			}
		}
	}
	// Attachments: files, and attached messages (PR_ATTACH_METHOD 5, an embedded storage).
	for _, k := range c.children(i) {
		e := c.entries[k]
		if e.Type != cfbStorage || !strings.HasPrefix(e.Name, "__attach_version1.0_") {
			continue
		}
		a := readProps(c, k, 8)
		name := a.str(prAttachLongFilename)
		if name == "" {
			name = a.str(prAttachFilename)
		}
		if name == "" {
			name = a.str(prDisplayName)
		}
		if hidden, ok := a.fixed[prAttachmentHidden]; ok && hidden[0] != 0 {
			m.Skipped = append(m.Skipped, name)
			continue
		}
		if cid := a.str(prAttachContentID); cid != "" && strings.Contains(m.HTML, "cid:"+cid) {
			m.Skipped = append(m.Skipped, name)
			continue
		}
		if sub := c.find(k, "__substg1.0_3701000D"); sub >= 0 && c.entries[sub].Type == cfbStorage {
			em, err := readMSG(c, sub, 24, depth+1)
			if name == "" && em != nil {
				name = em.Subject + ".msg"
			}
			at := mailAttachment{Name: name, Message: em}
			if err != nil {
				at.Err = errDamaged(KindMSG, err)
			}
			m.Attachments = append(m.Attachments, at)
			continue
		}
		data, ok, err := a.bin(prAttachDataBin)
		at := mailAttachment{Name: name, Data: data}
		switch {
		case err != nil:
			at.Err = errDamaged(KindMSG, err)
		case !ok:
			at.Err = errUnsupported(KindOLE) // an OLE object or a link, no file to convert
		}
		m.Attachments = append(m.Attachments, at)
	}
	return m, nil
}

// joinAddress writes a mailbox as "address (name)": the address first, so it can be searched
// and copied, the display name after it.
func joinAddress(name, addr string) string {
	name, addr = strings.TrimSpace(name), strings.TrimSpace(addr)
	switch {
	case addr == "" || strings.EqualFold(name, addr) || !strings.Contains(addr, "@"):
		if name == "" {
			return addr
		}
		return name
	case name == "":
		return addr
	}
	return fmt.Sprintf("%s (%s)", addr, name)
}

// lzfuDict is the dictionary compressed RTF starts from ([MS-OXRTFCP] 2.1.3.1.1).
const lzfuDict = "{\\rtf1\\ansi\\mac\\deff0\\deftab720{\\fonttbl;}{\\f0\\fnil \\froman \\fswiss \\fmodern \\fscript \\fdecor MS Sans SerifSymbolArialTimes New RomanCourier{\\colortbl\\red0\\green0\\blue0\r\n\\par \\pard\\plain\\f0\\fs20\\b\\i\\u\\tab\\tx"

// decompressRTF undoes PR_RTF_COMPRESSED: LZFu-compressed ("LZFu") or stored ("MELA") RTF.
func decompressRTF(b []byte) ([]byte, error) {
	if len(b) < 16 {
		return nil, errors.New("compressed RTF header too short")
	}
	le := binary.LittleEndian
	compSize, rawSize, magic := le.Uint32(b), le.Uint32(b[4:]), le.Uint32(b[8:])
	src := b[16:]
	if int(compSize)-12 >= 0 && int(compSize)-12 < len(src) {
		src = src[:compSize-12]
	}
	if rawSize > MaxFileSize {
		return nil, errors.New("compressed RTF too large")
	}
	switch magic {
	case 0x414C454D: // MELA: not compressed
		return src[:min(len(src), int(rawSize))], nil
	case 0x75465A4C: // LZFu
	default:
		return nil, errors.New("unknown compressed RTF type")
	}
	var dict [4096]byte
	copy(dict[:], lzfuDict)
	wp := len(lzfuDict)
	out := make([]byte, 0, rawSize)
	for i := 0; i < len(src) && len(out) < int(rawSize); {
		ctl := src[i]
		i++
		for bit := 0; bit < 8 && i < len(src) && len(out) < int(rawSize); bit++ {
			if ctl&(1<<bit) == 0 {
				c := src[i]
				i++
				out = append(out, c)
				dict[wp] = c
				wp = (wp + 1) % 4096
				continue
			}
			if i+1 >= len(src) {
				return out, nil
			}
			tok := int(src[i])<<8 | int(src[i+1])
			i += 2
			off, n := tok>>4, tok&0xF+2
			if off == wp {
				return out, nil // end of stream
			}
			for j := 0; j < n; j++ {
				c := dict[(off+j)%4096]
				out = append(out, c)
				dict[wp] = c
				wp = (wp + 1) % 4096
			}
		}
	}
	return out, nil
}

// rtfText reads RTF: the HTML when the RTF encapsulates an HTML body (\fromhtml1, what Outlook
// writes for HTML mail), else the plain text (paragraphs, tabs, \'hh bytes in the document's
// code page, \uN characters), leaving out font and colour tables, pictures and other
// destinations.
func rtfText(rtf []byte) (html, text string) {
	fromHTML := strings.Contains(string(rtf[:min(len(rtf), 4096)]), "\\fromhtml")
	type state struct {
		skip    bool
		htmltag bool
		uc      int
	}
	st := state{uc: 1}
	var stack []state
	var out []byte // bytes in the code page until flushed
	var res strings.Builder
	cp := "windows-1252"
	flush := func() {
		if len(out) > 0 {
			res.WriteString(decodeRaw(out, cp))
			out = out[:0]
		}
	}
	htmlrtf := false
	skipChars := 0
	emit := func(c byte) {
		if skipChars > 0 {
			skipChars--
			return
		}
		if st.skip || (fromHTML && htmlrtf && !st.htmltag) {
			return
		}
		out = append(out, c)
	}
	for i := 0; i < len(rtf); i++ {
		c := rtf[i]
		switch c {
		case '{':
			if len(stack) > 1000 {
				return "", ""
			}
			stack = append(stack, st)
			st.htmltag = false
		case '}':
			if len(stack) > 0 {
				st = stack[len(stack)-1]
				stack = stack[:len(stack)-1]
			}
		case '\r', '\n':
		case '\\':
			if i+1 >= len(rtf) {
				break
			}
			n := rtf[i+1]
			switch {
			case n == '\\' || n == '{' || n == '}':
				emit(n)
				i++
			case n == '\'':
				if i+3 < len(rtf) {
					if v, err := strconv.ParseUint(string(rtf[i+2:i+4]), 16, 8); err == nil {
						emit(byte(v))
					}
				}
				i += 3
			case n == '*':
				i++
				// \*\htmltag keeps its text (the HTML); other \* destinations are skipped
				if !strings.HasPrefix(string(rtf[i+1:min(len(rtf), i+10)]), "\\htmltag") {
					st.skip = true
				}
			case n == '~':
				emit(' ')
				i++
			case (n >= 'a' && n <= 'z') || (n >= 'A' && n <= 'Z'):
				j := i + 1
				for j < len(rtf) && ((rtf[j] >= 'a' && rtf[j] <= 'z') || (rtf[j] >= 'A' && rtf[j] <= 'Z')) {
					j++
				}
				word := string(rtf[i+1 : j])
				k := j
				if k < len(rtf) && (rtf[k] == '-' || (rtf[k] >= '0' && rtf[k] <= '9')) {
					k++
					for k < len(rtf) && rtf[k] >= '0' && rtf[k] <= '9' {
						k++
					}
				}
				param, hasParam := 0, k > j
				if hasParam {
					param, _ = strconv.Atoi(string(rtf[j:k]))
				}
				if k < len(rtf) && rtf[k] == ' ' {
					k++
				}
				i = k - 1
				switch word {
				case "par", "line":
					if !fromHTML || !htmlrtf {
						emit('\n')
					}
				case "tab":
					emit('\t')
				case "ansicpg":
					cp = "windows-" + strconv.Itoa(param)
					if param == 932 {
						cp = "shift_jis"
					}
				case "uc":
					st.uc = param
				case "u":
					if !st.skip && !(fromHTML && htmlrtf && !st.htmltag) {
						flush()
						r := rune(param)
						if r < 0 {
							r += 65536
						}
						res.WriteRune(r)
					}
					skipChars = st.uc
				case "htmlrtf":
					htmlrtf = !hasParam || param != 0
				case "htmltag":
					st.htmltag = true
				case "fonttbl", "colortbl", "stylesheet", "info", "pict", "object", "header", "footer", "listtable", "listoverridetable", "rsidtbl", "generator", "xmlnstbl", "themedata", "datastore", "latentstyles":
					st.skip = true
				}
			default:
				i++
			}
		default:
			emit(c)
		}
	}
	flush()
	if fromHTML {
		return res.String(), ""
	}
	return "", res.String()
}
