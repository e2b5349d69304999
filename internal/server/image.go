package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/sova-ai/sova/internal/errtext"
	"github.com/sova-ai/sova/internal/imageproxy"
)

// image answers GET /api/image?url=…: a remote image fetched through the
// guarded image proxy, so that the page loads images from its own origin
// only (its Content-Security-Policy allows no other). Only signed-in users
// may ask (the route is behind withUser); what comes back is a raster
// image under its own strict policy, cached by the browser for a day.
func (s *Server) image(w http.ResponseWriter, r *http.Request) {
	if s.opt.Images == nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_found", "the image proxy is not enabled")
		return
	}
	img, err := s.opt.Images.Fetch(r.Context(), r.URL.Query().Get("url"))
	if err != nil {
		var pe *imageproxy.Error
		if !errors.As(err, &pe) {
			pe = &imageproxy.Error{Status: http.StatusBadGateway, Code: imageproxy.CodeUpstream, Message: "the image could not be fetched"}
		}
		if pe.Status >= 500 || pe.Status == http.StatusForbidden {
			s.opt.Logger.Info("image proxy", "status", pe.Status, "code", pe.Code, "err", errtext.Detail(err))
		}
		// Errors are not cached for long: a thumbnail may come back.
		w.Header().Set("Cache-Control", "private, max-age=60")
		writeError(w, pe.Status, "image_error", pe.Code, pe.Message)
		return
	}
	h := w.Header()
	h.Set("Content-Type", img.Type)
	h.Set("Content-Length", strconv.Itoa(len(img.Body)))
	h.Set("Cache-Control", "private, max-age=86400, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Content-Disposition", "inline")
	if img.Modified != "" {
		h.Set("Last-Modified", img.Modified)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(img.Body)
}
