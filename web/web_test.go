package web_test

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/sova-ai/sova/web"
)

// The page must work under a Content-Security-Policy without
// 'unsafe-inline': no inline script, no inline event handler, no style
// attribute in the markup, and every referenced asset embedded.
func TestIndexHasNoInlineCode(t *testing.T) {
	b, err := fs.ReadFile(web.Files(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, m := range regexp.MustCompile(`<script\b[^>]*>`).FindAllString(page, -1) {
		if !strings.Contains(m, ` src="`) {
			t.Errorf("inline script: %s", m)
		}
	}
	if regexp.MustCompile(`<script\b[^>]*>[^<]+</script>`).MatchString(page) {
		t.Error("a script element has inline content")
	}
	if m := regexp.MustCompile(`\son[a-z]+\s*=`).FindString(page); m != "" {
		t.Errorf("inline event handler %q", m)
	}
	if strings.Contains(page, " style=") {
		t.Error("inline style attribute")
	}
	for _, m := range regexp.MustCompile(`(?:src|href)="(/assets/[^"]+)"`).FindAllStringSubmatch(page, -1) {
		if _, err := fs.Stat(web.Files(), strings.TrimPrefix(m[1], "/")); err != nil {
			t.Errorf("%s is referenced but not embedded", m[1])
		}
	}
}

// The scripts never turn strings into markup or code. The page's Trusted
// Types policy makes such a call throw at run time; this finds it sooner,
// and in code paths a browser test may not reach.
func TestScriptsUseNoHTMLSinks(t *testing.T) {
	sinks := regexp.MustCompile(`\.(innerHTML|outerHTML)\s*=[^=]|insertAdjacentHTML|document\.write|\beval\(|new Function\(|createContextualFragment|DOMParser|setAttribute\(\s*['"](on\w+|style|srcdoc)['"]`)
	imports := regexp.MustCompile(`(?m)^import .* from '(\./[^']+)';$`)
	n := 0
	err := fs.WalkDir(web.Files(), "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") {
			return err
		}
		n++
		b, err := fs.ReadFile(web.Files(), p)
		if err != nil {
			return err
		}
		src := string(b)
		for i, line := range strings.Split(src, "\n") {
			if sinks.MatchString(line) && !strings.HasPrefix(strings.TrimSpace(line), "//") {
				t.Errorf("%s:%d uses an HTML or code sink: %s", p, i+1, strings.TrimSpace(line))
			}
		}
		// Relative imports must resolve to embedded files.
		dir := p[:strings.LastIndex(p, "/")]
		for _, m := range imports.FindAllStringSubmatch(src, -1) {
			target := dir + "/" + strings.TrimPrefix(m[1], "./")
			if _, err := fs.Stat(web.Files(), target); err != nil {
				t.Errorf("%s imports %s, which is not embedded", p, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 5 {
		t.Fatalf("found %d scripts; the embed pattern lost files", n)
	}
}
