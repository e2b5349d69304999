package report

import (
	"bytes"
	"image"
	"image/draw"
	"image/png"
	"strconv"
	"strings"

	"codeberg.org/go-pdf/fpdf"
	"github.com/yuin/goldmark/ast"
)

// ImageSource gives the bytes of an image a report references by its
// Markdown destination ("/api/runs/…/files/charts/….png"), or false for an
// image it does not have. Only PNG is embedded; anything else, and an
// image it does not give, is shown as its description and link.
type ImageSource func(dest string) ([]byte, bool)

// Bounds on an embedded image, so a crafted file cannot make rendering
// allocate without end: its side and its pixel count (4 bytes each when
// decoded), and the images of one document.
const (
	maxImageSide   = 8000
	maxImagePixels = 24_000_000
	maxImages      = 200
)

// picture is an image ready to place: registered with the PDF under name.
type picture struct {
	name string
	w, h int // pixels
	alt  string
}

// imageParagraph sets a paragraph that holds only images (a chart on its
// own line) as pictures scaled to the column, each with its description
// under it. It reports false, drawing nothing, when the paragraph holds
// anything else or an image cannot be embedded: the paragraph is then
// text, as without images.
func (r *renderer) imageParagraph(b box, n ast.Node) bool {
	if r.images == nil {
		return false
	}
	var imgs []*ast.Image
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Image:
			imgs = append(imgs, c)
		case *ast.Text:
			if len(bytes.TrimSpace(c.Value(r.src))) != 0 {
				return false
			}
		default:
			return false
		}
	}
	if len(imgs) == 0 || r.embedded+len(imgs) > maxImages {
		return false
	}
	pics := make([]picture, 0, len(imgs))
	for _, img := range imgs {
		data, ok := r.images(string(img.Destination))
		if !ok {
			return false
		}
		clean, w, h, ok := cleanPNG(data)
		if !ok {
			return false
		}
		r.embedded++
		name := "img" + strconv.Itoa(r.embedded)
		r.pdf.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(clean))
		if r.pdf.Err() {
			return false
		}
		pics = append(pics, picture{name: name, w: w, h: h, alt: plainText(img, r.src)})
	}
	for i, p := range pics {
		if i > 0 {
			r.space(paraGap)
		}
		r.picture(b, p)
	}
	return true
}

// picture draws one image at the column's width at most (at 96 pixels to
// the inch), no taller than most of a page, centred, with its caption.
func (r *renderer) picture(b box, p picture) {
	w := min(b.w, float64(p.w)*72/96)
	h := w * float64(p.h) / float64(p.w)
	if maxH := (r.maxY - pageMarginTop) * 0.8; h > maxH {
		w, h = w*maxH/h, maxH
	}
	r.need(h)
	if r.full {
		return
	}
	r.pdf.ImageOptions(p.name, b.x+(b.w-w)/2, r.y, w, h, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	r.y += h
	if alt := strings.TrimSpace(p.alt); alt != "" {
		ts := textStyle{size: 9, leading: 1.35, color: colorMuted, base: styleItalic, align: alignCenter}
		r.space(4)
		r.lines(b, r.m.layout([]span{{text: alt}}, ts, b.w), ts)
	}
}

// cleanPNG decodes a PNG within the bounds and encodes it again as 8-bit
// RGBA, not interlaced: a form the PDF writer takes whatever the file was
// (it refuses 16-bit and interlaced PNGs, and a broken one would spoil the
// whole document).
func cleanPNG(data []byte) ([]byte, int, int, bool) {
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > maxImageSide || cfg.Height > maxImageSide ||
		cfg.Width*cfg.Height > maxImagePixels {
		return nil, 0, 0, false
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, 0, 0, false
	}
	rgba := image.NewNRGBA(img.Bounds())
	draw.Draw(rgba, rgba.Bounds(), img, img.Bounds().Min, draw.Src)
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, rgba); err != nil {
		return nil, 0, 0, false
	}
	return buf.Bytes(), cfg.Width, cfg.Height, true
}
