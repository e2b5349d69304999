package fetch

import (
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

func TestDecode(t *testing.T) {
	enc := func(e *charmap.Charmap, s string) []byte {
		b, err := e.NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	utf16 := func(s string) []byte {
		b, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	french := "<p>Le café de la gare est fermé le lundi. Où aller ? À côté, la crêperie reste ouverte.</p>"
	german := "<p>Die Größe der Straße überrascht: über fünf Kilometer, schöne Häuser, Bäume und Grün.</p>"
	russian := "<p>Привет, мир! Это проверка кодировки страницы без объявления.</p>"
	tests := []struct {
		name        string
		body        []byte
		contentType string
		want        string
	}{
		{"utf-8 plain", []byte(russian), "", russian},
		{"utf-8 bom", append([]byte{0xEF, 0xBB, 0xBF}, russian...), "", russian},
		{"utf-16le bom", utf16(russian), "", russian},
		{"header latin1", enc(charmap.ISO8859_1, french), "text/html; charset=ISO-8859-1", french},
		{"undeclared windows-1252 french", enc(charmap.Windows1252, french), "text/html", french},
		{"undeclared windows-1252 german", enc(charmap.Windows1252, german), "", german},
		{"undeclared windows-1251", enc(charmap.Windows1251, russian), "", russian},
		{"undeclared koi8-r", enc(charmap.KOI8R, russian), "", russian},
		{"meta http-equiv koi8-r", append([]byte(`<meta http-equiv="content-type" content="text/html; charset=koi8-r">`), enc(charmap.KOI8R, russian)...), "", russian},
		{"header overrides meta", append([]byte(`<meta charset="iso-8859-5">`), enc(charmap.Windows1251, russian)...), "text/html; charset=windows-1251", russian},
		{"unknown header label falls back to meta", append([]byte(`<meta charset="windows-1251">`), enc(charmap.Windows1251, russian)...), "text/html; charset=x-bogus", russian},
		{"utf-8 truncated mid-character", []byte(russian)[:len(russian)-len("ния.</p>")+1], "", ""},
		{"ascii only", []byte("<p>plain</p>"), "text/html; charset=windows-1251", "<p>plain</p>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decode(tt.body, tt.contentType)
			if tt.want == "" {
				// Truncated input: the valid prefix must survive intact.
				if !strings.HasPrefix(got, "<p>Привет, мир! Это проверка кодировки страницы без объявле") {
					t.Errorf("decode = %q", got)
				}
				return
			}
			if !strings.HasSuffix(got, tt.want) {
				t.Errorf("decode = %q, want suffix %q", got, tt.want)
			}
		})
	}
}
