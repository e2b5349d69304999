package apitest

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

func TestByPathRecordsRequests(t *testing.T) {
	srv := New(t, ByPath(map[string]Reply{"/a b": {Body: "a"}}, Reply{Status: http.StatusTeapot}))
	for _, p := range []string{"/a%20b?x=1", "/other"} {
		resp, err := srv.Client().Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := map[string]int{"/a%20b?x=1": 200, "/other": 418}[p]; resp.StatusCode != want {
			t.Errorf("%s: status %d, want %d", p, resp.StatusCode, want)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Path != "/a b" || reqs[0].Raw != "/a%20b" || reqs[0].Query.Get("x") != "1" || reqs[1].Path != "/other" {
		t.Errorf("requests = %+v", reqs)
	}
}

func TestDocumented(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "doc.md")
	if err := os.WriteFile(doc, []byte("| `SOVA_A` | x |\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		A string `env:"SOVA_A,required"`
		B string // no setting
	}
	Documented(t, cfg, doc)

	rec := &recorder{TB: t}
	var missing struct {
		C string `env:"SOVA_C"`
	}
	Documented(rec, missing, doc)
	if rec.errors != 1 {
		t.Errorf("an undocumented setting gave %d errors, want 1", rec.errors)
	}
}

// recorder counts the errors a check reports instead of failing the test.
type recorder struct {
	testing.TB
	errors int
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.errors++ }
