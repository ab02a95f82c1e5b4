// Package faultproxy is a fault-injecting TCP proxy for the tests of sync/: put it between an AWS
// client and a test server and choose, at any moment, what the network does — pass the bytes,
// refuse connections, swallow them (a blackhole), drop a request half sent, or answer every
// request with an HTTP error (500, 503, throttling) without reaching the server.
package faultproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Mode is what the proxy does with a new connection.
type Mode int

const (
	Pass      Mode = iota // forward both ways
	Refuse                // close at once (connection reset)
	Blackhole             // accept and never answer
	DropHalf              // forward half of the first request, then close both sides
	DropReply             // forward the first request whole, swallow the server's answer, close
	Status                // answer each request with Answer, not reaching the server
)

// Answer is the HTTP answer of Status mode.
type Answer struct {
	Code    int
	Headers map[string]string
	Body    string
}

// Throttling answers are what AWS JSON protocol services send when throttling.
var (
	Throttling = Answer{Code: 400, Headers: map[string]string{"Content-Type": "application/x-amz-json-1.0",
		"X-Amzn-ErrorType": "ThrottlingException"}, Body: `{"__type":"ThrottlingException","message":"Rate exceeded"}`}
	Unavailable = Answer{Code: 503, Headers: map[string]string{"Content-Type": "application/x-amz-json-1.0"},
		Body: `{"__type":"ServiceUnavailable","message":"unavailable"}`}
	InternalError = Answer{Code: 500, Headers: map[string]string{"Content-Type": "application/x-amz-json-1.0"},
		Body: `{"__type":"InternalServerError","message":"boom"}`}
)

// Proxy is a running proxy to one target address.
type Proxy struct {
	Addr   string // 127.0.0.1:PORT
	target string
	ln     net.Listener
	mode   atomic.Int32
	mu     sync.Mutex
	answer Answer
	conns  map[net.Conn]struct{}
	// Connections counts the connections accepted.
	Connections atomic.Int64
}

// Start listens on 127.0.0.1 in Pass mode, forwarding to target (host:port or http://host:port);
// it stops when the test ends.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	target = strings.TrimPrefix(strings.TrimPrefix(target, "http://"), "https://")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// URL is the proxy's address as an endpoint.
func (p *Proxy) URL() string { return "http://" + p.Addr }

// Set changes the mode for new connections and closes the open ones, so that a client's pooled
// connection meets the new network too.
func (p *Proxy) Set(m Mode) {
	p.mode.Store(int32(m))
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
}

// SetAnswer switches to Status mode with a.
func (p *Proxy) SetAnswer(a Answer) {
	p.mu.Lock()
	p.answer = a
	p.mu.Unlock()
	p.Set(Status)
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() {
	p.ln.Close()
	p.Set(Refuse)
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.Connections.Add(1)
		p.track(c)
		go p.handle(c)
	}
}

func (p *Proxy) handle(c net.Conn) {
	defer p.untrack(c)
	switch Mode(p.mode.Load()) {
	case Refuse:
		return
	case Blackhole:
		io.Copy(io.Discard, c) // until the client gives up or the mode changes
		return
	case Status:
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			p.mu.Lock()
			a := p.answer
			p.mu.Unlock()
			var b strings.Builder
			fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", a.Code, http.StatusText(a.Code))
			for k, v := range a.Headers {
				fmt.Fprintf(&b, "%s: %s\r\n", k, v)
			}
			fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(a.Body), a.Body)
			if _, err := io.WriteString(c, b.String()); err != nil {
				return
			}
		}
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	p.track(up)
	defer p.untrack(up)
	if m := Mode(p.mode.Load()); m == DropHalf || m == DropReply {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		var sb strings.Builder
		req.Write(&sb)
		raw := sb.String()
		if m == DropHalf {
			up.Write([]byte(raw[:len(raw)/2]))
			return
		}
		up.Write([]byte(raw))
		if resp, err := http.ReadResponse(bufio.NewReader(up), req); err == nil {
			io.Copy(io.Discard, resp.Body) // the server did the work; the client never hears of it
			resp.Body.Close()
		}
		return
	}
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
}
