package spaces

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// A worker sends a document's body paragraphs joined, one block per run
// of them (parseWorker); the parent's chunks are those of the paragraphs
// as parsed, cut at the same places, and far fewer blocks cross.
func TestWireJoinsParagraphsAndChunksAlike(t *testing.T) {
	var body strings.Builder
	for i := range 40 {
		if i%10 == 0 {
			body.WriteString(para("Heading1", fmt.Sprintf("Раздел %d", i/10)))
		}
		fmt.Fprintf(&body, `<w:p><w:r><w:t xml:space="preserve">Абзац %d о бюджете города. Ещё одно предложение о цифрах %d. </w:t></w:r></w:p>`, i, i*7)
		if i == 13 {
			// Two breaks: a blank line inside one paragraph, sent apart.
			body.WriteString(`<w:p><w:r><w:t>До паузы.</w:t><w:br/><w:br/><w:t>После паузы.</w:t></w:r></w:p>`)
		}
		if i == 25 {
			body.WriteString(`<w:tbl><w:tr><w:tc>` + para("", "Риск") + `</w:tc><w:tc>` + para("", "высокий") + `</w:tc></w:tr></w:tbl>`)
		}
	}
	data := testDOCX(t, body.String(), "")
	local, err := parse("doc.docx", FormatDOCX, data)
	if err != nil {
		t.Fatal(err)
	}
	out, err := parseWorker(FormatDOCX, data)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := readWire(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(sent.blocks) >= len(local.blocks)/4 || cap(sent.blocks) != len(sent.blocks) {
		t.Errorf("%d blocks (capacity %d) crossed for %d parsed", len(sent.blocks), cap(sent.blocks), len(local.blocks))
	}
	for _, size := range []int{100, 300, 1000} {
		want, got := chunkBlocks(local.blocks, size, size/5), chunkBlocks(sent.blocks, size, size/5)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("chunks of %d characters differ once sent:\n got %d: %+v\nwant %d: %+v", size, len(got), got, len(want), want)
		}
	}
	if _, err := readWire(append(out[:len(out):len(out)], 7, 0, 0, 0)); err == nil {
		t.Error("a block of an unknown kind was read")
	}
}
