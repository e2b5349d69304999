package sandbox

import (
	"bufio"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// status is the launcher's last line on fd 3: how the code's process
// ended.
type status struct {
	Exit     int      `json:"exit"`
	Signal   int      `json:"signal"`
	CPU      float64  `json:"cpu"`
	MaxRSSKB int64    `json:"maxrss_kb"`
	Skipped  []string `json:"skipped"`
}

type results struct {
	files  []File
	status *status
}

// maxHeader bounds a header line on fd 3.
const maxHeader = 8 << 10

// readResults reads what the launcher sends on fd 3: for each file a JSON
// header line {"file": name, "size": n} then n bytes, and last a line
// {"status": …}. It trusts none of it: sizes, counts and names are checked
// against the sandbox's own limits, and a stream that breaks them is
// drained and ignored from there on (status nil: no result).
func readResults(r io.Reader, cfg Config) results {
	var out results
	br := bufio.NewReaderSize(r, 64<<10)
	// Drained to the end, so that the launcher never blocks on a full pipe.
	defer func() { _, _ = io.Copy(io.Discard, br) }()
	var total int64
	for {
		line, err := br.ReadSlice('\n')
		if err != nil || len(line) > maxHeader {
			return out
		}
		var h struct {
			File   *string `json:"file"`
			Size   int64   `json:"size"`
			Status *status `json:"status"`
		}
		if json.Unmarshal(line, &h) != nil {
			return results{files: out.files}
		}
		if h.Status != nil {
			out.status = h.Status
			slices.SortFunc(out.files, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
			return out
		}
		if h.File == nil || !validName(*h.File) || h.Size < 0 || h.Size > cfg.FileBytes ||
			total+h.Size > cfg.WorkBytes || len(out.files) >= cfg.MaxFiles {
			return results{files: out.files}
		}
		data := make([]byte, h.Size)
		if _, err := io.ReadFull(br, data); err != nil {
			return results{files: out.files}
		}
		total += h.Size
		out.files = append(out.files, File{Name: *h.File, Size: h.Size, MIME: mimeType(*h.File, data), Data: data})
	}
}

// validName accepts a relative path inside the work folder.
func validName(name string) bool {
	if name == "" || len(name) > 1024 || !utf8.ValidString(name) || strings.ContainsAny(name, "\x00\\") {
		return false
	}
	c := path.Clean(name)
	return c == name && !path.IsAbs(c) && c != ".." && !strings.HasPrefix(c, "../")
}

// mimeType is a file's media type by its extension, else by its content.
func mimeType(name string, data []byte) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return http.DetectContentType(data[:min(len(data), 512)])
}
