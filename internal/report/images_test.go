package report

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// testPNG is a w×h PNG in one colour (16-bit when deep: the PDF writer
// takes only 8-bit PNGs, so the renderer must convert it).
func testPNG(t *testing.T, w, h int, deep bool) []byte {
	t.Helper()
	var img image.Image
	if deep {
		m := image.NewRGBA64(image.Rect(0, 0, w, h))
		for x := range w {
			for y := range h {
				m.SetRGBA64(x, y, color.RGBA64{R: 0x1234, G: 0x8000, B: 0xffff, A: 0xffff})
			}
		}
		img = m
	} else {
		m := image.NewNRGBA(image.Rect(0, 0, w, h))
		for x := range w {
			for y := range h {
				m.SetNRGBA(x, y, color.NRGBA{R: 30, G: 120, B: 200, A: 255})
			}
		}
		img = m
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pdfImages lists a PDF's images as pdfimages -list sees them: one line
// "width height" each.
func pdfImages(t *testing.T, pdf []byte) []string {
	t.Helper()
	if _, err := exec.LookPath("pdfimages"); err != nil {
		t.Skip("pdfimages not installed (Debian package poppler-utils): skipping the check of the embedded images")
	}
	path := filepath.Join(t.TempDir(), "report.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	raw, err := exec.Command("pdfimages", "-list", path).CombinedOutput()
	if err != nil {
		t.Fatalf("pdfimages: %v: %s", err, raw)
	}
	out := string(raw)
	var sizes []string
	for _, line := range strings.Split(out, "\n")[2:] {
		f := strings.Fields(line)
		if len(f) > 4 && f[2] == "image" { // page num type width height …
			sizes = append(sizes, f[3]+" "+f[4])
		}
	}
	return sizes
}

func TestPDFImages(t *testing.T) {
	chart := testPNG(t, 640, 480, false)
	deep := testPNG(t, 300, 200, true)
	files := map[string][]byte{
		"/api/runs/r1/files/charts/c1/chart_1.png": chart,
		"charts/c2/deep.png":                       deep,
		"/broken.png":                              []byte("\x89PNG\r\n\x1a\nnot really"),
		"/huge.png":                                testPNG(t, 9000, 1, false),
	}
	source := func(dest string) ([]byte, bool) {
		b, ok := files[dest]
		return b, ok
	}
	md := "# GDP by decade\n\nGrowth was uneven [1].\n\n![GDP growth by decade](/api/runs/r1/files/charts/c1/chart_1.png)\n\n" +
		"Text with an inline ![chart](charts/c2/deep.png) stays text.\n\n![Second chart](charts/c2/deep.png)\n\n" +
		"![Broken](/broken.png)\n\n![Too wide](/huge.png)\n\n![Unknown](/missing.png)\n"

	cases := []struct {
		name   string
		images ImageSource
		want   []string // sizes of the embedded images
		text   []string // what the text shows
	}{
		{"with images", source, []string{"640 480", "300 200"}, []string{"GDP growth by decade", "Second chart", "Broken (/broken.png)", "Too wide (/huge.png)", "Unknown (/missing.png)"}},
		{"without a source", nil, nil, []string{"GDP growth by decade (/api/runs/r1/files/charts/c1/chart_1.png)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pdf := render(t, md, Options{Images: c.images})
			got := pdfImages(t, pdf)
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("embedded images %v, want %v", got, c.want)
			}
			text := strings.Join(strings.Fields(pdfText(t, pdf)), " ")
			for _, w := range c.text {
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%s", w, text)
				}
			}
		})
	}
}

// A report of charts alone, more than fit on a page, breaks pages between
// them and never draws one over the footer.
func TestPDFImagesPaging(t *testing.T) {
	chart := testPNG(t, 800, 900, false)
	var md strings.Builder
	for range 5 {
		md.WriteString("![Tall chart](c.png)\n\n")
	}
	pdf := render(t, md.String(), Options{Images: func(string) ([]byte, bool) { return chart, true }})
	if n := len(pdfImages(t, pdf)); n != 5 {
		t.Errorf("%d images embedded, want 5", n)
	}
	if n := pageCount(t, pdf); n < 3 {
		t.Errorf("%d pages for five tall charts, want at least 3", n)
	}
}
