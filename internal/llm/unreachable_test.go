package llm_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/sova-ai/sova/internal/errtext"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// countingClient is an HTTP client that counts its dials: one dial is one
// attempt to reach the endpoint. resolver, when set, resolves host names.
func countingClient(dials *atomic.Int32, resolver *net.Resolver) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, Resolver: resolver}
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return d.DialContext(ctx, network, addr)
		},
	}}
}

// refusedURL is the base URL of a port on which nothing listens: one that
// was just listened on and closed.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr + "/v1"
}

// nxdomainResolver is a Go resolver whose DNS server, in this process,
// answers every question with NXDOMAIN, as every resolver answers for a
// name under .invalid (RFC 6761): the test needs no network and no
// resolver of the machine's.
func nxdomainResolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		client, server := net.Pipe()
		go func() {
			defer server.Close()
			for {
				// A net.Conn that is not a PacketConn speaks DNS over TCP:
				// each message after its 2-byte length.
				var n [2]byte
				if _, err := io.ReadFull(server, n[:]); err != nil {
					return
				}
				q := make([]byte, binary.BigEndian.Uint16(n[:]))
				if _, err := io.ReadFull(server, q); err != nil {
					return
				}
				var p dnsmessage.Parser
				h, err := p.Start(q)
				if err != nil {
					return
				}
				qs, _ := p.AllQuestions()
				b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, RecursionDesired: h.RecursionDesired,
					RecursionAvailable: true, RCode: dnsmessage.RCodeNameError})
				_ = b.StartQuestions()
				for _, question := range qs {
					_ = b.Question(question)
				}
				msg, err := b.Finish()
				if err != nil {
					return
				}
				if _, err := server.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(msg))), msg...)); err != nil {
					return
				}
			}
		}()
		return client, nil
	}}
}

// An endpoint that cannot be reached for a reason another attempt would
// not change fails at once, after one attempt, saying what to fix —
// even with production-sized retries and backoff configured.
func TestUnreachableEndpointFailsAtOnce(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsSrv.Close)
	plainSrv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(plainSrv.Close)

	tests := []struct {
		name     string
		baseURL  string
		resolver *net.Resolver
		want     []string
	}{
		{"connection refused", refusedURL(t), nil,
			[]string{"the model endpoint cannot be reached: connection refused — is the server running? set SOVA_LLM_BASE_URL"}},
		{"no such host", "http://model.sova-test.invalid/v1", nxdomainResolver(),
			[]string{"the model endpoint cannot be reached: no such host — check the host name in SOVA_LLM_BASE_URL"}},
		{"untrusted certificate", tlsSrv.URL + "/v1", nil,
			[]string{"cannot be reached: its TLS certificate is signed by an unknown authority", "SSL_CERT_FILE"}},
		{"plain HTTP on an https URL", strings.Replace(plainSrv.URL, "http://", "https://", 1) + "/v1", nil,
			[]string{"cannot be reached: it does not speak TLS — use http:// instead of https://"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dials atomic.Int32
			c, err := llm.New(llm.Config{
				BaseURL: tt.baseURL, APIKey: testKey, Model: "main-model",
				MaxRetries: 5, BackoffBase: 500 * time.Millisecond, BackoffMax: 20 * time.Second,
				HTTPClient: countingClient(&dials, tt.resolver),
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, call := range []struct {
				name string
				fn   func() error
			}{
				{"Complete", func() error { _, err := c.Complete(context.Background(), ask("q")); return err }},
				{"Stream", func() error { _, err := c.Stream(context.Background(), ask("q"), nil); return err }},
				{"ListModels", func() error { _, err := c.ListModels(context.Background()); return err }},
			} {
				dials.Store(0)
				start := time.Now()
				err := call.fn()
				elapsed := time.Since(start)
				if err == nil {
					t.Fatalf("%s: want an error", call.name)
				}
				for _, want := range tt.want {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s: error %q lacks %q", call.name, err, want)
					}
				}
				// The address is for the log, not for the error's text.
				host := strings.TrimPrefix(strings.TrimPrefix(tt.baseURL, "https://"), "http://")
				host, _, _ = strings.Cut(host, "/")
				if strings.Contains(err.Error(), host) || !strings.Contains(errtext.Detail(err), tt.baseURL) {
					t.Errorf("%s: error %q shows the address, or its detail %q lacks it", call.name, err, errtext.Detail(err))
				}
				if strings.Contains(err.Error(), "giving up after") {
					t.Errorf("%s: retried: %v", call.name, err)
				}
				if n := dials.Load(); n != 1 {
					t.Errorf("%s: %d attempts, want 1", call.name, n)
				}
				if elapsed > time.Second {
					t.Errorf("%s: failed after %s, want < 1s", call.name, elapsed)
				}
			}
		})
	}
}

// The same through the machine's own resolver, when it has one that
// answers: a name under .invalid never resolves.
func TestUnresolvableHostSystemResolver(t *testing.T) {
	const host = "model.sova-test.invalid"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := net.DefaultResolver.LookupHost(ctx, host)
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Skipf("this machine's resolver does not answer NXDOMAIN for %s: %v", host, err)
	}
	var dials atomic.Int32
	c, err := llm.New(llm.Config{BaseURL: "http://" + host + "/v1", Model: "m", MaxRetries: 5,
		BackoffBase: 500 * time.Millisecond, HTTPClient: countingClient(&dials, nil)})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Complete(context.Background(), ask("q"))
	if err == nil || !strings.Contains(err.Error(), "cannot be reached: no such host") || dials.Load() != 1 || time.Since(start) > time.Second {
		t.Errorf("after %s and %d attempts: %v", time.Since(start), dials.Load(), err)
	}
}

// Failures that may pass stay retried: 503 answers, dropped connections
// and timeouts.
func TestTransientFailuresStillRetried(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Fail(503, "busy"), llmtest.Reply{Drop: true}, llmtest.Reply{Content: "late", Delay: 2 * time.Second}, llmtest.Text("ok"))
	c := newClient(t, srv, func(c *llm.Config) { c.Timeout = 200 * time.Millisecond })
	resp, err := c.Complete(context.Background(), ask("q"))
	if err != nil || resp.Content != "ok" || srv.Count() != 4 {
		t.Fatalf("after %d requests: %+v %v", srv.Count(), resp, err)
	}

	srv.Enqueue(llmtest.Fail(503, "busy"), llmtest.Fail(503, "busy"), llmtest.Fail(503, "busy"), llmtest.Fail(503, "busy"))
	_, err = c.Complete(context.Background(), ask("q"))
	if err == nil || !strings.Contains(err.Error(), "giving up after 4 attempts") || srv.Count() != 8 {
		t.Errorf("after %d requests: %v", srv.Count(), err)
	}
}

// 401, 403 and a 404 for an unknown model are final and say what to fix.
func TestRefusedKeyAndUnknownModel(t *testing.T) {
	tests := []struct {
		reply llmtest.Reply
		want  string
	}{
		{llmtest.FailWith(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided"),
			"the model endpoint refused the API key: set SOVA_LLM_API_KEY or OPENAI_API_KEY"},
		{llmtest.Fail(403, "forbidden"), "check SOVA_LLM_API_KEY and that the key may use this model"},
		{llmtest.FailWith(404, "invalid_request_error", "model_not_found", "The model `main-model` does not exist"),
			`the endpoint does not serve model "main-model": set SOVA_MODEL`},
		{llmtest.Reply{Status: 404, ErrorBody: `{"error":{"message":"model \"main-model\" not found, try pulling it first"}}`},
			`the endpoint does not serve model "main-model"`},
		{llmtest.Reply{Status: 404, ErrorBody: `404 page not found`}, "check SOVA_LLM_BASE_URL (it usually ends in /v1)"},
	}
	for _, tt := range tests {
		srv := llmtest.New(t)
		srv.Enqueue(tt.reply, llmtest.Text("unused"))
		c := newClient(t, srv)
		_, err := c.Complete(context.Background(), ask("q"))
		if err == nil || !strings.Contains(err.Error(), tt.want) || srv.Count() != 1 {
			t.Errorf("%d: after %d requests: %v, want %q", tt.reply.Status, srv.Count(), err, tt.want)
		}
	}
}
