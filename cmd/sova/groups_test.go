package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/sovatest"
)

// `sova ask --mode academic` runs the academic group against fakes of
// OpenAlex and arXiv: the tool's progress on stderr, the cited answer and
// its papers on stdout.
func TestAskAcademicGroup(t *testing.T) {
	w := newWorld(t)
	prov := sovatest.NewProviders(t)
	w.extra = sovatest.ProviderEnv(prov)
	out, errOut, err := w.sova(t, "ask", "--mode", "academic", "attention in transformer models")
	if err != nil {
		t.Fatalf("ask: %v\nstderr:\n%s", err, errOut)
	}
	if oa := prov.Requests(sovatest.OpenAlex); len(oa) != 1 || oa[0].Query.Get("search") != "attention in transformer models" {
		t.Errorf("OpenAlex requests: %+v", oa)
	}
	for _, want := range []string{"Searching papers for “attention in transformer models”", "attention in transformer models"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(out, "main point [1] and add detail [2]") || strings.Contains(out, "[9]") {
		t.Errorf("answer:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^\[1\] The state of OA.* — https://doi\.org/10\.7717/peerj\.4375$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^\[2\] Attention Is All You Need — https://arxiv\.org/abs/1706\.03762$`).MatchString(out) {
		t.Errorf("sources:\n%s", out)
	}
}
