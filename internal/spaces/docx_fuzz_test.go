package spaces

import (
	"archive/zip"
	"bytes"
	"testing"
)

// FuzzDOCX: a Word document whose document.xml and styles.xml are any
// text, or any bytes at all, is read or refused with an error; the parser
// never panics nor hangs. Seeds: testdata/fuzz/FuzzDOCX.
func FuzzDOCX(f *testing.F) {
	f.Add([]byte("PK"), `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Hi</w:t></w:r></w:p></w:body></w:document>`, "")
	f.Fuzz(func(t *testing.T, raw []byte, document, styles string) {
		_, _ = parseDOCX(raw)
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for name, content := range map[string]string{"word/document.xml": document, "word/styles.xml": styles} {
			w, err := zw.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = w.Write([]byte(content))
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		p, err := parseDOCX(buf.Bytes())
		if err == nil && p == nil {
			t.Fatal("no document and no error")
		}
	})
}
