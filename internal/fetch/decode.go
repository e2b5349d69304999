package fetch

// DecodeText converts a text or HTML document of unknown encoding to
// UTF-8 by the rules pages are decoded with: a byte-order mark, valid
// UTF-8, the charset of contentType (may be empty), a <meta> declaration,
// a Cyrillic single-byte guess, then windows-1252. Document spaces use it
// for files from disk, which carry no Content-Type.
func DecodeText(body []byte, contentType string) string {
	return decode(body, contentType)
}
