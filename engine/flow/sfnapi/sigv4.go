package sfnapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Credentials is a key pair a request may be signed with (AWS Signature Version 4).
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
}

// The parts of SigV4 that are fixed for this service.
const (
	sigAlgorithm   = "AWS4-HMAC-SHA256"
	sigService     = "states"
	sigTerminator  = "aws4_request"
	amzDateLayout  = "20060102T150405Z"
	scopeDateFmt   = "20060102"
	maxClockSkew   = 15 * time.Minute
	defaultRegion  = "local"
	msgBadSig      = "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
	msgUnknownKey  = "The security token included in the request is invalid."
	msgMissingAuth = "Missing Authentication Token: sign the request with AWS Signature Version 4 and the key pair `jobdesk serve --print-credentials` prints"
)

func unrecognized(msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "UnrecognizedClientException", Message: msg}
}

func badSignature(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "InvalidSignatureException", Message: fmt.Sprintf(format, args...)}
}

// verify checks r's SigV4 Authorization header over body, as AWS does for a JSON protocol
// service: the access key must be one of the server's, the credential scope must be
// DATE/REGION/states/aws4_request with DATE the day of X-Amz-Date (or Date) and REGION the
// server's, the request time within 15 minutes of now, the host header signed, a given
// x-amz-content-sha256 equal to the body's hash, and the signature that of the canonical request.
// Errors are AWS's: UnrecognizedClientException for a missing signature or an unknown key,
// InvalidSignatureException for anything else.
func (s *Server) verify(r *http.Request, body []byte) *Error {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return unrecognized(msgMissingAuth)
	}
	rest, ok := strings.CutPrefix(auth, sigAlgorithm+" ")
	if !ok {
		return badSignature("Only the %s signing algorithm is accepted", sigAlgorithm)
	}
	var credential, signedHeaders, signature string
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			credential = v
		case "SignedHeaders":
			signedHeaders = v
		case "Signature":
			signature = v
		}
	}
	if credential == "" || signedHeaders == "" || signature == "" {
		return badSignature("Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters. Authorization=%s", sigAlgorithm)
	}
	scope := strings.Split(credential, "/")
	if len(scope) != 5 {
		return badSignature("Credential should have the form ACCESS_KEY_ID/YYYYMMDD/REGION/%s/%s, not '%s'.", sigService, sigTerminator, credential)
	}
	keyID, day, region, service, term := scope[0], scope[1], scope[2], scope[3], scope[4]
	secret, known := "", false
	for _, c := range s.o.Credentials {
		if c.AccessKeyID != "" && hmac.Equal([]byte(c.AccessKeyID), []byte(keyID)) {
			secret, known = c.SecretAccessKey, true
			break
		}
	}
	if !known {
		return unrecognized(msgUnknownKey)
	}
	if r.Header.Get("X-Amz-Security-Token") != "" {
		// JobDesk hands out long-term keys only: no session token is one of its own.
		return unrecognized(msgUnknownKey)
	}
	if term != sigTerminator {
		return badSignature("Credential should be scoped with a valid terminator: '%s', not '%s'.", sigTerminator, term)
	}
	if service != sigService {
		return badSignature("Credential should be scoped to correct service: '%s'.", sigService)
	}
	endpointRegion, ok := s.region(), region == s.region()
	switch {
	case s.o.SigningRegion != "":
		endpointRegion, ok = s.o.SigningRegion, region == s.o.SigningRegion
	case s.o.AnyRegion:
		ok = ok || validRegion(region)
	}
	if !ok {
		return badSignature("Credential should be scoped to a valid region, not '%s'. This endpoint's region is '%s'.", region, endpointRegion)
	}
	amzDate := r.Header.Get("X-Amz-Date")
	var when time.Time
	if amzDate != "" {
		t, err := time.Parse(amzDateLayout, amzDate)
		if err != nil {
			return badSignature("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\", not '%s'.", amzDate)
		}
		when = t
	} else if d := r.Header.Get("Date"); d != "" {
		t, err := http.ParseTime(d)
		if err != nil {
			return badSignature("Date must be an HTTP date, not '%s'.", d)
		}
		when, amzDate = t.UTC(), t.UTC().Format(amzDateLayout)
	} else {
		return badSignature("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. Authorization=%s", sigAlgorithm)
	}
	if day != amzDate[:8] {
		return badSignature("Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '%s' != '%s', from '%s'.", day, amzDate[:8], amzDate)
	}
	now := s.now().UTC()
	if when.Before(now.Add(-maxClockSkew)) {
		return badSignature("Signature expired: %s is now earlier than %s (%s - 15 min.)", amzDate,
			now.Add(-maxClockSkew).Format(amzDateLayout), now.Format(amzDateLayout))
	}
	if when.After(now.Add(maxClockSkew)) {
		return badSignature("Signature not yet current: %s is still later than %s (%s + 15 min.)", amzDate,
			now.Add(maxClockSkew).Format(amzDateLayout), now.Format(amzDateLayout))
	}
	sum := sha256.Sum256(body)
	payloadHash := hex.EncodeToString(sum[:])
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != payloadHash {
		return badSignature("The provided 'x-amz-content-sha256' header does not match what was computed.")
	}
	names := strings.Split(signedHeaders, ";")
	if !sort.StringsAreSorted(names) || !containsString(names, "host") {
		return badSignature("'Host' must be a signed header, and SignedHeaders must be lower-case names in order: '%s'.", signedHeaders)
	}
	canonical := canonicalRequest(r, names, signedHeaders, payloadHash)
	crHash := sha256.Sum256([]byte(canonical))
	stringToSign := sigAlgorithm + "\n" + amzDate + "\n" + strings.Join(scope[1:], "/") + "\n" + hex.EncodeToString(crHash[:])
	key := hmacSHA256([]byte("AWS4"+secret), day)
	key = hmacSHA256(key, region)
	key = hmacSHA256(key, service)
	key = hmacSHA256(key, term)
	want := hex.EncodeToString(hmacSHA256(key, stringToSign))
	if !hmac.Equal([]byte(want), []byte(strings.ToLower(signature))) {
		return badSignature("%s", msgBadSig)
	}
	return nil
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// canonicalRequest builds SigV4's canonical request: method, URI (each segment encoded twice,
// as for every service but S3), sorted query, the signed headers' trimmed values, their names
// and the payload hash.
func canonicalRequest(r *http.Request, names []string, signedHeaders, payloadHash string) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	path := r.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	b.WriteString(uriEncode(path, false))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(r.URL.Query()))
	b.WriteByte('\n')
	for _, name := range names {
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(headerValue(r, name))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(signedHeaders)
	b.WriteByte('\n')
	b.WriteString(payloadHash)
	return b.String()
}

// headerValue is a signed header's canonical value: its values joined by commas, each trimmed
// with inner runs of spaces made one. Go's server keeps Host and Content-Length out of the
// header map (or may): they come from the request itself.
func headerValue(r *http.Request, name string) string {
	var vals []string
	switch name {
	case "host":
		vals = []string{r.Host}
	case "content-length":
		if vals = r.Header.Values("Content-Length"); len(vals) == 0 && r.ContentLength >= 0 {
			vals = []string{strconv.FormatInt(r.ContentLength, 10)}
		}
	default:
		vals = r.Header.Values(name)
	}
	for i, v := range vals {
		vals[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(vals, ",")
}

func canonicalQuery(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	var pairs [][2]string
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, [2]string{uriEncode(k, true), uriEncode(v, true)})
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i][0] != pairs[j][0] {
			return pairs[i][0] < pairs[j][0]
		}
		return pairs[i][1] < pairs[j][1]
	})
	out := make([]string, len(pairs))
	for i, p := range pairs {
		out[i] = p[0] + "=" + p[1]
	}
	return strings.Join(out, "&")
}

// uriEncode percent-encodes every byte but the unreserved characters (A-Z a-z 0-9 - . _ ~),
// and '/' too unless encodeSlash.
func uriEncode(s string, encodeSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' || c == '/' && !encodeSlash {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

func (s *Server) region() string {
	if s.o.Region != "" {
		return s.o.Region
	}
	return defaultRegion
}

func (s *Server) now() time.Time {
	if s.o.Now != nil {
		return s.o.Now()
	}
	return time.Now()
}

// validRegion tells whether a credential scope's region is a region's name (letters, digits
// and hyphens, as ap-northeast-1), so a request signed for it may be answered with its ARNs.
func validRegion(r string) bool {
	if r == "" || len(r) > 32 {
		return false
	}
	for _, c := range r {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// signedRegion is the region of a verified request's credential scope.
func signedRegion(r *http.Request) string {
	_, cred, _ := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	cred, _, _ = strings.Cut(cred, ",")
	if scope := strings.Split(cred, "/"); len(scope) == 5 {
		return scope[2]
	}
	return ""
}
