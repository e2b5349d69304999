// Package hostile builds, in code, the files on which document parsers hang
// or swell, for tests that they are stopped. It is its own package so that
// the parsers' own tests can use it (sovatest imports the spaces package).
package hostile

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
)

// PDF assembles a PDF from object bodies (object n is objects[n-1]) with a
// correct cross-reference table; object 1 is the catalogue.
func PDF(objects ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objects))
	for i, o := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj %s endobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer <</Size %d /Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return b.Bytes()
}

// SelfReferentialPDF is a PDF of about 230 bytes whose page tree lists
// itself as its own kid: a reader that walks the tree to find a page
// never comes back.
func SelfReferentialPDF() []byte {
	return PDF(
		"<</Type/Catalog/Pages 2 0 R>>",
		"<</Type/Pages/Kids[2 0 R]/Count 1>>",
	)
}

// PDFClaimingPages is a one-page PDF whose page tree claims n pages.
func PDFClaimingPages(n int64) []byte {
	return PDF(
		"<</Type/Catalog/Pages 2 0 R>>",
		fmt.Sprintf("<</Type/Pages/Kids[3 0 R]/Count %d>>", n),
		"<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Resources<</Font<</F1 4 0 R>>>>/Contents 5 0 R>>",
		"<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>",
		"<</Length 44>>\nstream\nBT /F1 12 Tf 72 720 Td (Hello pages) Tj ET\nendstream",
	)
}

// DOCXWithHugeRun is a Word document whose only paragraph is one text run
// of runBytes letters, deflated on the fly (about 1 KiB per MiB of text):
// a file of a few hundred KiB that unpacks to hundreds of MiB. With
// honestSize false the ZIP headers claim the part is small.
func DOCXWithHugeRun(runBytes int64, honestSize bool) []byte {
	const (
		head = `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>`
		tail = `</w:t></w:r></w:p></w:body></w:document>`
	)
	var (
		deflated bytes.Buffer
		crc      = crc32.NewIEEE()
		size     int64
	)
	fw, _ := flate.NewWriter(&deflated, flate.BestSpeed)
	w := io.MultiWriter(fw, crc)
	write := func(p []byte) {
		n, _ := w.Write(p)
		size += int64(n)
	}
	write([]byte(head))
	chunk := []byte(strings.Repeat("a", 1<<20))
	for left := runBytes; left > 0; left -= int64(len(chunk)) {
		write(chunk[:min(int64(len(chunk)), left)])
	}
	write([]byte(tail))
	_ = fw.Close()

	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	ct, _ := zw.Create("[Content_Types].xml")
	_, _ = io.WriteString(ct, `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`)
	declared := uint64(size)
	if !honestSize {
		declared = 4096
	}
	raw, _ := zw.CreateRaw(&zip.FileHeader{
		Name: "word/document.xml", Method: zip.Deflate, CRC32: crc.Sum32(),
		CompressedSize64: uint64(deflated.Len()), UncompressedSize64: declared,
	})
	_, _ = raw.Write(deflated.Bytes())
	_ = zw.Close()
	return out.Bytes()
}

// PDFObjectStreamLoop is a PDF whose page tree lives in an object stream
// that /Extends itself without holding it: the reader looks for the
// object forever, before any page tree can be checked.
func PDFObjectStreamLoop() []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n")
	off1 := b.Len()
	b.WriteString("1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n")
	off3 := b.Len()
	objs := "9 0 <<>>"
	fmt.Fprintf(&b, "3 0 obj <</Type/ObjStm/N 1/First 4/Extends 3 0 R/Length %d>>\nstream\n%s\nendstream endobj\n", len(objs), objs)
	off4 := b.Len()
	var xref bytes.Buffer
	entry := func(typ byte, f2 uint32, f3 uint16) {
		xref.Write([]byte{typ, byte(f2 >> 24), byte(f2 >> 16), byte(f2 >> 8), byte(f2), byte(f3 >> 8), byte(f3)})
	}
	entry(0, 0, 0xffff)
	entry(1, uint32(off1), 0)
	entry(2, 3, 0) // object 2: the first object of stream 3
	entry(1, uint32(off3), 0)
	entry(1, uint32(off4), 0)
	fmt.Fprintf(&b, "4 0 obj <</Type/XRef/Size 5/W[1 4 2]/Root 1 0 R/Length %d>>\nstream\n", xref.Len())
	b.Write(xref.Bytes())
	fmt.Fprintf(&b, "\nendstream endobj\nstartxref\n%d\n%%%%EOF\n", off4)
	return b.Bytes()
}

// PDFWithHugeXref is a PDF of about 200 bytes whose cross-reference
// table has an entry for object number two billion: a reader that sizes
// its table to fit asks for tens of GiB.
func PDFWithHugeXref() []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	off1 := b.Len()
	b.WriteString("1 0 obj <</Type/Catalog>> endobj\n")
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 2\n0000000000 65535 f \n%010d 00000 n \n2000000000 1\n%010d 00000 n \n", off1, off1)
	fmt.Fprintf(&b, "trailer <</Size 2 /Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n", xref)
	return b.Bytes()
}
