package server

import (
	"net/http"

	"github.com/sova-ai/sova"
)

// Usage is what a user's limits leave for today.
type Usage struct{}

// usage is the user's usage and limits; nil without limits.
func (s *Server) usage(*http.Request, sova.User) *Usage { return nil }
