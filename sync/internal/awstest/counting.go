package awstest

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// CountingProxy is an HTTP reverse proxy in front of an S3 server that counts the requests it
// passes by operation and object path: what a test counts when the client runs in another
// process (a child killed with SIGKILL takes its own counters with it). The client signs for
// the proxy's address, which the proxy passes on as the Host, so signatures still match.
type CountingProxy struct {
	URL string // http://127.0.0.1:PORT
	mu  sync.Mutex
	ops map[[2]string]int // {operation, path} → requests
}

// StartCountingProxy starts a proxy to target (http://host:port) on 127.0.0.1; it stops when
// the test ends.
func StartCountingProxy(t testing.TB, target string) *CountingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &CountingProxy{URL: "http://" + ln.Addr().String(), ops: map[[2]string]int{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.ops[[2]string{Operation(r), r.URL.Path}]++
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return p
}

// Count returns how many requests of op (see Operation) went to paths ending in suffix
// (path-style: /BUCKET/KEY).
func (p *CountingProxy) Count(op, suffix string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for k, c := range p.ops {
		if k[0] == op && strings.HasSuffix(k[1], suffix) {
			n += c
		}
	}
	return n
}

// Reset forgets the counts.
func (p *CountingProxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ops = map[[2]string]int{}
}
